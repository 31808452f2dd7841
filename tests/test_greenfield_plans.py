"""The greenfield stacks' plans are byte-identical to their golden digests: work on brownfield (or anything else)
cannot change what a fresh dev or prod deployment creates by accident. A deliberate change updates
tests/fixtures/greenfield-plan-digests.json in the same commit and says why in its message."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.conftest import ROOT, cached_plan

DIGESTS = ROOT / "tests" / "fixtures" / "greenfield-plan-digests.json"


@pytest.mark.parametrize("mode", ["plan", "preview"])
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_greenfield_plan_is_byte_identical_to_its_golden_digest(stack, mode):
    text = cached_plan(ROOT / "stacks" / f"Pulumi.{stack}.yaml", preview=mode == "preview").to_json()
    digest = hashlib.sha256(text.encode()).hexdigest()
    golden = json.loads(DIGESTS.read_text())[stack][mode]
    assert digest == golden, (
        f"`lattice plan --stack {stack}{' --preview' if mode == 'preview' else ''} --json` changed (sha256 {digest}, "
        f"golden {golden}); if the change is deliberate, write the new digest into {DIGESTS.name} and say why"
    )
