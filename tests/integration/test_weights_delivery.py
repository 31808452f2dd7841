"""An inference endpoint's weights from where they were trained to the serving site's volume, walked with the real
programs the plan runs there: prod's planned export (nginx, Debian `nginx-light`, with the planned nginx.conf and
user file) serving a stand-in model directory on loopback, and the planned copy (rclone, Debian `rclone`, with the
copy Job's arguments and its Secret's environment) mirroring it. The copy holds exactly the model's files; the
directory beside it on the same file system, a wrong password and a write are refused.

Only what cannot run here is changed in the planned config and arguments, textually: the export's root (the pod mounts
the model's directory at /weights), its user file's path (/etc/nginx/auth), its listen port and the pid / temp paths;
the copy's destination (/cache) and the export's address (10.50.0.41:8080, a free port on loopback).
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from lattice.components.serving.weights_export import EXPORT_PORT

CONFIGMAP = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"
JOB = "kubernetes:batch/v1:Job"
EXPORT_ADDRESS = "10.50.0.41"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tree(root) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def export(prod_plan, tmp_path):
    assert shutil.which("nginx"), "nginx is missing: `make integration` installs the Debian package nginx-light"
    mount = tmp_path / "lustre"
    model = mount / "beamline-ops" / "models" / "xpcs-8b"
    (model / "tokenizer").mkdir(parents=True)
    (model / "config.json").write_text('{"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32}\n')
    (model / "model-00001-of-00002.safetensors").write_bytes(os.urandom(3 * 2**20 + 17))
    (model / "model-00002-of-00002.safetensors").write_bytes(os.urandom(2**20))
    (model / "tokenizer" / "tokenizer.json").write_text('{"version": "1.0"}\n')
    beside = mount / "beamline-ops" / "models" / "unreleased"
    beside.mkdir(parents=True)
    (beside / "secret.safetensors").write_bytes(b"not for the beamline")
    config = prod_plan.one(CONFIGMAP, "grid-hpc-xpcs-8b-weights-config")["inputs"]["data"]["nginx.conf"]
    users = prod_plan.state(prod_plan.one(SECRET, "grid-hpc-xpcs-8b-weights-users"))["stringData"]["value"]
    (tmp_path / "auth").mkdir()
    (tmp_path / "auth" / "htpasswd").write_text(users["htpasswd"])
    listen = _free_port()
    replacements = {  # the temp paths first, since tmp_path itself lies under /tmp
        "/tmp/": f"{tmp_path}/",
        "root /weights;": f"root {model};",  # the pod's subPath mount of the model's directory
        "/etc/nginx/auth/htpasswd": str(tmp_path / "auth" / "htpasswd"),
        f"listen {EXPORT_PORT};": f"listen 127.0.0.1:{listen};",
        "access_log /dev/stdout;": "access_log off;",
    }
    for old, new in replacements.items():
        assert old in config, old
        config = config.replace(old, new)
    (tmp_path / "nginx.conf").write_text(config)
    # As root, nginx's workers would drop to nobody, who cannot read pytest's private tmp_path.
    check = subprocess.run(
        ["nginx", "-t", "-c", str(tmp_path / "nginx.conf"), "-p", str(tmp_path), "-g", "user root;"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stderr
    nginx = subprocess.Popen(
        ["nginx", "-c", str(tmp_path / "nginx.conf"), "-p", str(tmp_path), "-g", "daemon off; user root;"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", listen)) == 0:
                    break
            time.sleep(0.05)
        yield model, f"127.0.0.1:{listen}"
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)


def _copy(prod_plan, tmp_path, address: str, header: str) -> subprocess.CompletedProcess:
    assert shutil.which("rclone"), "rclone is missing: `make integration` installs the Debian package rclone"
    job = prod_plan.one(JOB, "edge-beamline-xpcs-8b-copy")["inputs"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    args = [
        a.replace("/cache", str(tmp_path / "cache")).replace(f"{EXPORT_ADDRESS}:{EXPORT_PORT}", address)
        for a in container["args"]
    ]
    env = {e["name"]: e["value"].replace("/tmp", str(tmp_path)) for e in container["env"]}
    return subprocess.run(
        ["rclone", *args, "--retries", "1", "--low-level-retries", "1"],
        env={**os.environ, **env, "RCLONE_HTTP_HEADERS": header},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_copy_job_mirrors_exactly_the_models_directory(prod_plan, export, tmp_path):
    model, address = export
    header = prod_plan.state(prod_plan.one(SECRET, "edge-beamline-xpcs-8b-copy-credentials"))["stringData"]["value"]
    copied = _copy(prod_plan, tmp_path, address, header["RCLONE_HTTP_HEADERS"])
    assert copied.returncode == 0, copied.stderr
    assert _tree(tmp_path / "cache") == _tree(model)
    assert "secret.safetensors" not in str(_tree(tmp_path / "cache"))
    # sync: a file the model's directory no longer has leaves the volume on the next copy
    (model / "model-00002-of-00002.safetensors").unlink()
    again = _copy(prod_plan, tmp_path, address, header["RCLONE_HTTP_HEADERS"])
    assert again.returncode == 0, again.stderr
    assert _tree(tmp_path / "cache") == _tree(model)


def test_a_wrong_password_copies_nothing(prod_plan, export, tmp_path):
    _, address = export
    wrong = "Authorization,Basic " + base64.b64encode(b"weights:not-the-password").decode()
    copied = _copy(prod_plan, tmp_path, address, wrong)
    assert copied.returncode != 0
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*"))


def _status(url: str, header: str | None, method: str = "GET") -> int:
    request = urllib.request.Request(url, method=method, data=b"x" if method == "PUT" else None)
    if header is not None:
        name, value = header.split(",", 1)
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_the_export_serves_nothing_beside_the_model_and_takes_no_writes(prod_plan, export):
    _, address = export
    header = prod_plan.state(prod_plan.one(SECRET, "edge-beamline-xpcs-8b-copy-credentials"))["stringData"]["value"]
    token = header["RCLONE_HTTP_HEADERS"]
    assert _status(f"http://{address}/config.json", token) == 200
    assert _status(f"http://{address}/config.json", None) == 401
    assert _status(f"http://{address}/../unreleased/secret.safetensors", token) in (400, 404)
    assert _status(f"http://{address}/%2e%2e/unreleased/secret.safetensors", token) in (400, 404)
    assert _status(f"http://{address}/config.json", token, method="PUT") == 403
