"""Network namespaces, veth pairs and the real daemons (strongSwan's charon, FRR's zebra and bgpd) for the
integration tier, each started by us, in a namespace and directory of our own, and always stopped.

Nothing here touches the host's configuration: every daemon reads a configuration file under the session's
run directory and talks over sockets there (charon: ``STRONGSWAN_CONF`` and its vici socket; FRR: ``-f``,
``--vty_socket``, ``-z``, ``-i``), and every namespace is named after this process, so two runs, or a system
strongSwan / FRR, never collide. ``LAB`` records what it started; ``leftovers()`` is what the session's last
check asserts empty: no namespace of this run, no process whose command line or environment names the run
directory.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

CHARON = "/usr/sbin/charon-systemd"  # Debian's charon-systemd: charon with vici, no starter / ipsec.conf
FRR_DIR = Path("/usr/lib/frr")
TOOLS = {
    "ip": "iproute2",
    "swanctl": "strongswan-swanctl",
    "vtysh": "frr",
    "shellcheck": "shellcheck",
}
NAMESPACE_PREFIX = f"lattice-it-{os.getpid()}-"
RUN_DIR = Path(tempfile.gettempdir()) / f"lattice-it-{os.getpid()}"

# charon's plugins, in load order. kernel-libipsec comes before kernel-netlink so that it, not the kernel's XFRM,
# holds the SAs: this machine's kernel has no AES-GCM for ESP and no XFRM interfaces (the gateway's production
# data plane), so IPsec runs in user space over a TUN device (ipsec0), ESP in UDP 4500. kernel-netlink still
# provides addresses and routes. openssl brings AES-GCM and the ECP groups, gmp the MODP groups.
CHARON_PLUGINS = (
    "random nonce openssl pem pkcs1 pubkey x509 revocation constraints sha1 sha2 hmac gcm aes kdf curve25519 gmp"
    " kernel-libipsec kernel-netlink socket-default vici"
)


def missing_requirements() -> list[str]:
    """What this machine lacks for the strongSwan / FRR tests, each with the package that provides it."""
    problems = [] if os.geteuid() == 0 else ["root (network namespaces, charon and FRR need it)"]
    problems += [f"{tool} (Debian package {package})" for tool, package in TOOLS.items() if not shutil.which(tool)]
    if not Path(CHARON).exists():
        problems.append(f"{CHARON} (Debian package charon-systemd)")
    if not Path("/usr/lib/ipsec/plugins/libstrongswan-kernel-libipsec.so").exists():
        problems.append("strongSwan's kernel-libipsec plugin (Debian package libcharon-extra-plugins)")
    if not Path("/usr/lib/ipsec/plugins/libstrongswan-openssl.so").exists():
        problems.append(
            "strongSwan's openssl plugin: AES-GCM, ECP groups (Debian package libstrongswan-standard-plugins)"
        )
    for daemon in ("zebra", "bgpd"):
        if not (FRR_DIR / daemon).exists():
            problems.append(f"{FRR_DIR / daemon} (Debian package frr)")
    return problems


def run(*argv: str, check: bool = True, timeout: float = 30, env: dict | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {result.returncode}: {result.stdout}{result.stderr}")
    return result


def wait_for(
    condition: Callable[[], object],
    timeout: float,
    what: str,
    *,
    detail: Callable[[], str] | None = None,
    interval: float = 0.25,
):
    """Poll until ``condition`` holds; on timeout fail saying what was awaited and (``detail``) what there was."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:g} s waiting for {what}" + (f":\n{detail()}" if detail else "")
            )
        time.sleep(interval)


@dataclass
class Lab:
    """Everything one test started: namespaces and processes, torn down in reverse by ``close``."""

    directory: Path
    namespaces: list[str] = field(default_factory=list)
    processes: list[subprocess.Popen] = field(default_factory=list)
    _counter = itertools.count()

    def namespace(self, role: str) -> str:
        name = f"{NAMESPACE_PREFIX}{next(self._counter)}-{role}"
        run("ip", "netns", "add", name)
        self.namespaces.append(name)
        run("ip", "-n", name, "link", "set", "lo", "up")
        return name

    def veth(self, left: str, left_addresses: list[str], right: str, right_addresses: list[str]) -> None:
        """A veth pair between two namespaces (created inside them: nothing is left in the host's), each end
        holding its /32 addresses, with host routes to the other end's."""
        n = next(self._counter)
        ends = ((left, f"lv{n}a", left_addresses), (right, f"lv{n}b", right_addresses))
        run("ip", "link", "add", ends[0][1], "netns", left, "type", "veth", "peer", "name", ends[1][1], "netns", right)
        for (namespace, device, addresses), (_, _, others) in (ends, ends[::-1]):
            for address in addresses:
                run("ip", "-n", namespace, "addr", "add", f"{address}/32", "dev", device)
            run("ip", "-n", namespace, "link", "set", device, "up")
            for address in others:
                run("ip", "-n", namespace, "route", "add", f"{address}/32", "dev", device)

    def start(self, namespace: str, argv: list[str], *, env: dict | None = None, log: Path) -> subprocess.Popen:
        handle = log.open("ab")
        process = subprocess.Popen(
            ["ip", "netns", "exec", namespace, *argv],  # ip execs the daemon: the Popen's pid is the daemon's
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
        handle.close()
        self.processes.append(process)
        return process

    def close(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
        for name in reversed(self.namespaces):
            # Anything still running in the namespace was started by us (a daemon's own child): end it by pid.
            for pid in run("ip", "netns", "pids", name, check=False).stdout.split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), 9)
            run("ip", "netns", "del", name, check=False)
        self.processes.clear()
        self.namespaces.clear()


def leftovers() -> list[str]:
    """Namespaces of this run and processes that name its run directory (daemons we started), still there."""
    found = [
        f"namespace {line.split()[0]}"
        for line in run("ip", "netns", "list", check=False).stdout.splitlines()
        if line.startswith(NAMESPACE_PREFIX)
    ]
    marker = str(RUN_DIR).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().split(") ", 1)[1][0]
        except OSError:
            continue
        if state != "Z" and (marker in cmdline or marker in environ):
            command = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
            found.append(f"process {entry.name}: {command}")
    return found


class Charon:
    """strongSwan's charon in a namespace, with its own strongswan.conf, vici socket and log."""

    def __init__(self, lab: Lab, namespace: str, name: str):
        self.directory = lab.directory / f"charon-{name}"
        self.directory.mkdir(parents=True)
        self.socket = f"unix://{self.directory}/charon.vici"
        self.log = self.directory / "charon.log"
        self.conf = self.directory / "strongswan.conf"
        self.conf.write_text(
            "charon-systemd {\n"
            f"  load = {CHARON_PLUGINS}\n"
            "  install_routes = no\n"
            "  retransmit_tries = 2\n"
            "  retransmit_timeout = 1.0\n"
            "  plugins {\n"
            f"    vici {{\n      socket = {self.socket}\n    }}\n"
            "  }\n"
            "  journal {\n    default = -1\n  }\n"
            "  filelog {\n"
            f"    lab {{\n      path = {self.log}\n      default = 1\n      cfg = 2\n      ike = 2\n"
            "      flush_line = yes\n      time_format = %T\n    }\n"
            "  }\n"
            "}\n"
            "swanctl {\n"
            "  load = pem pkcs1 x509 revocation constraints pubkey openssl random\n"
            f"  socket = {self.socket}\n"
            "}\n"
        )
        self.env = {"STRONGSWAN_CONF": str(self.conf)}
        self.process = lab.start(namespace, [CHARON], env=self.env, log=self.directory / "charon.out")
        wait_for((self.directory / "charon.vici").exists, 15, f"charon's vici socket in {namespace}")
        # kernel-libipsec routes each child's remote_ts into ipsec0 whatever install_routes says, in charon's table
        # 220, with an exclude route for one IKE peer only: with several 0.0.0.0/0 children that sends the other
        # peers' ESP into ipsec0 (a loop). On the real gateway (XFRM interfaces, if_id) charon installs no routes,
        # so the harness stops consulting table 220 (kernel-netlink added its rule at start-up, before vici
        # listened): ipsec0 then carries only the inside /30s the tests put on it, like the XFRM interfaces.
        run("ip", "-n", namespace, "rule", "del", "table", "220")

    def swanctl(self, *args: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
        return run("swanctl", *args, "--uri", self.socket, check=check, timeout=timeout, env={**os.environ, **self.env})

    def load(self, swanctl_conf: str) -> subprocess.CompletedProcess:
        """Load a swanctl.conf the way the operator does: as conf.d/lattice.conf of a swanctl directory whose
        swanctl.conf includes conf.d/*.conf (Debian's /etc/swanctl layout), then ``swanctl --load-all``."""
        root = self.directory / "swanctl"
        for sub in ("conf.d", "x509", "x509ca", "x509ocsp", "x509aa", "x509ac", "x509crl", "pubkey", "private",
                    "rsa", "ecdsa", "bliss", "pkcs8", "pkcs12"):  # fmt: skip
            (root / sub).mkdir(parents=True, exist_ok=True)
        (root / "swanctl.conf").write_text("include conf.d/*.conf\n")
        target = root / "conf.d" / "lattice.conf"
        target.write_text(swanctl_conf)
        target.chmod(0o600)
        return self.swanctl("--load-all", "--file", str(root / "swanctl.conf"))

    def log_text(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def state(self) -> str:
        """For failure messages: the SAs, and the end of the log."""
        sas = self.swanctl("--list-sas", check=False).stdout
        return f"{sas}\n--- {self.log} (last 60 lines)\n" + "\n".join(self.log_text().splitlines()[-60:])


class Frr:
    """FRR's zebra and bgpd in a namespace, configured as Debian's frrinit does it: the daemons start with the
    traditional profile, then ``vtysh -b`` applies the integrated frr.conf of the configuration directory."""

    def __init__(self, lab: Lab, namespace: str, name: str, frr_conf: str):
        self.directory = lab.directory / f"frr-{name}"
        self.directory.mkdir(parents=True)
        (self.directory / "frr.conf").write_text(frr_conf)
        (self.directory / "vtysh.conf").write_text("service integrated-vtysh-config\n")
        for daemon in ("zebra", "bgpd"):
            (self.directory / f"{daemon}.conf").write_text("")
        shutil.chown(self.directory, "frr", "frr")
        for path in self.directory.iterdir():
            shutil.chown(path, "frr", "frr")
        socket = self.directory / "zserv.api"
        for daemon in ("zebra", "bgpd"):
            lab.start(
                namespace,
                [
                    str(FRR_DIR / daemon),
                    "-F", "traditional",
                    "-f", str(self.directory / f"{daemon}.conf"),  # empty: the integrated frr.conf comes by vtysh -b
                    "-i", str(self.directory / f"{daemon}.pid"),
                    "-z", str(socket),
                    "--vty_socket", str(self.directory),
                    "-P", "0",  # no TCP vty: vtysh reaches the daemons through the socket directory only
                    "--log", f"file:{self.directory / daemon}.log",
                ],
                log=self.directory / f"{daemon}.out",
            )  # fmt: skip
            wait_for(lambda d=daemon: (self.directory / f"{d}.vty").exists(), 15, f"{daemon}'s vty socket")
        self.boot = self.vtysh("-b", "--config_dir", str(self.directory), check=False)

    def vtysh(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return run("vtysh", "--vty_socket", str(self.directory), *args, check=check)

    def show(self, command: str) -> str:
        return self.vtysh("-c", command).stdout

    def log_text(self, daemon: str) -> str:
        path = self.directory / f"{daemon}.log"
        return path.read_text() if path.exists() else ""
