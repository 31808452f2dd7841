"""The central metrics store's receiver, walked with the real nginx (Debian `nginx-light`): prod's planned nginx.conf
and user file (SSHA hashes of the senders' passwords) in front of a stand-in for Prometheus's remote-write receiver.
A sender's remote write with its planned credentials is passed on; a wrong password, no credentials, or any other
path of the Prometheus behind it is refused.

Only what cannot run here is changed in the planned config, textually: the user file's path (the pod mounts the
Secret at /etc/nginx/auth), the listen port and the upstream port (free ports on loopback), and the pid / temp paths.
"""

from __future__ import annotations

import base64
import http.server
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from lattice.components.observability.cluster_metrics import RECEIVER_PORT

CONFIGMAP = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"
CENTRAL = "grid-hpc"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Receiver(http.server.BaseHTTPRequestHandler):
    """Prometheus's /api/v1/write answers 204 to a write it accepts; it records what reached it."""

    seen: list[tuple[str, str]] = []

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        self.rfile.read(length)
        type(self).seen.append((self.path, self.headers.get("X-Forwarded-User", "")))
        self.send_response(204)
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver(prod_plan, tmp_path):
    assert shutil.which("nginx"), "nginx is missing: `make integration` installs the Debian package nginx-light"
    config = prod_plan.one(CONFIGMAP, f"{CENTRAL}-metrics-receiver-config")["inputs"]["data"]["nginx.conf"]
    users = prod_plan.state(prod_plan.one(SECRET, f"{CENTRAL}-metrics-receiver-users"))["stringData"]["value"]
    (tmp_path / "auth").mkdir()
    (tmp_path / "auth" / "htpasswd").write_text(users["htpasswd"])
    listen, upstream = _free_port(), _free_port()
    replacements = {  # in this order: the temp paths first, since tmp_path itself lies under /tmp
        "/tmp/": f"{tmp_path}/",
        "/etc/nginx/auth/htpasswd": str(tmp_path / "auth" / "htpasswd"),
        f"listen {RECEIVER_PORT};": f"listen 127.0.0.1:{listen};",
        "proxy_pass http://127.0.0.1:9090;": f"proxy_pass http://127.0.0.1:{upstream};",
    }
    for old, new in replacements.items():
        assert old in config, old
        config = config.replace(old, new)
    (tmp_path / "nginx.conf").write_text(config)
    backend = http.server.ThreadingHTTPServer(("127.0.0.1", upstream), _Receiver)
    threading.Thread(target=backend.serve_forever, daemon=True).start()
    _Receiver.seen = []
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
        yield f"http://127.0.0.1:{listen}"
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)
        backend.shutdown()
        backend.server_close()


def _post(url: str, user: str | None = None, password: str | None = None) -> int:
    request = urllib.request.Request(url, data=b"\x00snappy-protobuf", method="POST")
    request.add_header("Content-Type", "application/x-protobuf")
    if user is not None:
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_each_sender_writes_with_its_planned_credentials_and_nothing_else_passes(prod_plan, receiver):
    senders = ("aws-use1", "gcp-usc1", "edge-beamline")
    for site in senders:
        sent = prod_plan.state(prod_plan.one(SECRET, f"{site}-metrics-remote-write"))["stringData"]["value"]
        assert _post(f"{receiver}/api/v1/write", sent["username"], sent["password"]) == 204
        assert _post(f"{receiver}/api/v1/write", sent["username"], sent["password"][:-1] + "x") == 401
    assert _post(f"{receiver}/api/v1/write") == 401
    aws = prod_plan.state(prod_plan.one(SECRET, "aws-use1-metrics-remote-write"))["stringData"]["value"]
    # Prometheus's query API and the rest stay unreachable through the receiver, credentials or not.
    assert _post(f"{receiver}/api/v1/query", aws["username"], aws["password"]) == 404
    assert _Receiver.seen == [("/api/v1/write", site) for site in senders]
