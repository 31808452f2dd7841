"""The corpus of broken stack files: each names the key path and the message it must produce."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lattice.components.spec import SpecError, load_stack_file

CORPUS = sorted((Path(__file__).parents[2] / "fixtures" / "broken").glob("Pulumi.*.yaml"))


def expectations(path: Path) -> tuple[str, str, int | None]:
    """The key path and message a file must produce, and (``expect-count``) how many problems in all."""
    header = dict(re.findall(r"^# (expect-path|expect|expect-count): (.*)$", path.read_text(), flags=re.MULTILINE))
    count = header.get("expect-count")
    return header["expect-path"], header["expect"], int(count) if count is not None else None


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 15


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name.removeprefix("Pulumi.").removesuffix(".yaml"))
def test_broken_stack_file_reports_path_and_fix(path: Path):
    expected_path, expected_message, count = expectations(path)
    with pytest.raises(SpecError) as caught:
        load_stack_file(path)
    error = caught.value
    if count is not None:  # one mistake, one message: its consequences are not reported
        assert len(error.issues) == count, [(i.path, i.message) for i in error.issues]
    matching = [issue for issue in error.issues if issue.path == expected_path]
    assert matching, f"no issue at {expected_path}; got {[i.path for i in error.issues]}"
    assert any(expected_message in issue.message for issue in matching), [i.message for i in matching]
    report = str(error)
    assert report.startswith(f"{path}: ")
    assert expected_path in report
