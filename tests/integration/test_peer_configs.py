"""Every grid / edge gateway's rendered files through the real strongSwan, FRR and shellcheck, and the tunnels they
describe negotiated against a stand-in for the cloud built from the plan (`make integration`: root, Debian).

The files are those an operator gets after `pulumi up`: `pulumi stack output --json --show-secrets > outputs.json`
(here the plan's outputs with the secrets revealed, which is what that prints), then `lattice links render SITE
--from-outputs outputs.json --gateway IP --output-dir DIR` (the real pre-shared keys in swanctl.conf). Prod's grid and
edge sites link only to AWS, so the GCP kind of link (HA VPN to a grid / edge gateway) is exercised on prod with one
spoke added, edge-beamline to gcp-usc1 (`prod+gcp`), planned and rendered the same way. The stand-in's keys are the
cloud resources' own (the VpnConnection's tunnelN_preshared_key, the VPNTunnel's shared_secret), so a key handed to
the wrong tunnel fails to authenticate.

How the tunnels run here. This kernel has network namespaces and veth pairs, but neither XFRM interfaces (what
`xfrm-interfaces.sh` creates on a real gateway) nor AES-GCM for kernel ESP. So charon uses strongSwan's user-space
IPsec (the kernel-libipsec plugin: ESP in UDP through a TUN device, ipsec0). It works, and carries the data plane:
BGP runs through the negotiated SAs, not beside them. What differs from the gateway: the inside addresses the script
puts on each XFRM interface go on ipsec0 instead, and libipsec ignores the children's if_ids, so with every child
covering 0.0.0.0/0 it sends all inside traffic through one installed SA (each tunnel's IKE and CHILD SA is still
negotiated and installed on its own). The outside addresses are the rendered ones, unchanged: the gateway's public
address and the clouds' tunnel endpoints sit on the two ends of a veth pair, which exists only in our namespaces.
Nothing in the rendered files is rewritten.
"""

from __future__ import annotations

import copy
import ipaddress
import itertools
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from lattice.components import clock
from lattice.components.flows.reachability import Estate
from lattice.components.spec import load_stack_file
from lattice.engine.plan import Plan, run_plan
from tests.conftest import NOW, ROOT
from tests.integration import netlab
from tests.integration.cloud_ends import CloudEnd, cloud_ends, stand_in_frr, stand_in_swanctl

PROD = ROOT / "stacks" / "Pulumi.prod.yaml"
GCP_SPOKE = {"sites": ["gcp-usc1", "edge-beamline"], "bandwidth_gbps": 1}


@pytest.fixture(scope="module", autouse=True)
def requirements():
    missing = netlab.missing_requirements()
    if missing:
        pytest.fail("the strongSwan / FRR tests need " + "; ".join(missing) + ": run them with `make integration`")


def _stack_files() -> dict[str, Path]:
    netlab.RUN_DIR.mkdir(parents=True, exist_ok=True)
    document = yaml.safe_load(PROD.read_text())
    with_gcp = copy.deepcopy(document)
    with_gcp["config"]["lattice:spec"]["links"].append(GCP_SPOKE)
    path = netlab.RUN_DIR / "Pulumi.prod-gcp.yaml"
    path.write_text(yaml.safe_dump(with_gcp, sort_keys=False))
    return {"prod": PROD, "prod+gcp": path}


STACKS = _stack_files()
_PLANS: dict[str, Plan] = {}


def plan_of(stack: str) -> Plan:
    if stack not in _PLANS:
        with clock.frozen_at(NOW):
            _PLANS[stack] = run_plan(STACKS[stack])
    return _PLANS[stack]


@dataclass(frozen=True)
class Gateway:
    stack: str
    site: str
    address: str

    def __str__(self) -> str:
        return f"{self.stack}:{self.site}@{self.address}"


def _gateways(stack: str) -> list[Gateway]:
    sites = plan_of(stack).revealed_outputs["sites"]
    return [Gateway(stack, site, address) for site, out in sorted(sites.items()) for address in out.get("vpn", {})]


PROD_GATEWAYS = _gateways("prod")
# The GCP spoke's gateway (the rest of prod+gcp is prod's, tested above).
GCP_GATEWAY = Gateway("prod+gcp", "edge-beamline", "192.0.2.20")
GATEWAYS = [*PROD_GATEWAYS, GCP_GATEWAY]


def test_every_linked_grid_and_edge_gateway_of_prod_is_tested():
    # Prod's spec: grid-hpc has two gateway hosts, edge-beamline one; each host has its own files.
    assert [str(g) for g in PROD_GATEWAYS] == [
        "prod:edge-beamline@192.0.2.20",
        "prod:grid-hpc@192.0.2.10",
        "prod:grid-hpc@192.0.2.11",
    ]
    assert {e.kind for e in ends_of(GCP_GATEWAY)} == {"aws", "gcp"}


_RENDERED: dict[Gateway, dict[str, str]] = {}


def rendered(gateway: Gateway) -> dict[str, str]:
    """The gateway's files as the operator writes them after `pulumi up`: `pulumi stack output --json
    --show-secrets > outputs.json` (here: the plan's outputs, secrets revealed, which is what that prints), then
    `lattice links render SITE --from-outputs outputs.json --gateway IP --output-dir DIR`."""
    if gateway not in _RENDERED:
        outputs = netlab.RUN_DIR / f"outputs-{gateway.stack}.json"
        if not outputs.exists():
            outputs.write_text(json.dumps(plan_of(gateway.stack).revealed_outputs))
        directory = netlab.RUN_DIR / "rendered" / str(gateway).replace(":", "-").replace("@", "-")
        stack = ["--stack", "prod"] if gateway.stack == "prod" else ["--stack-file", str(STACKS[gateway.stack])]
        argv = [
            sys.executable,
            "-m",
            "lattice",
            "links",
            "render",
            gateway.site,
            *stack,
            "--from-outputs",
            str(outputs),
        ]
        result = subprocess.run(
            [*argv, "--gateway", gateway.address, "--output-dir", str(directory)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        _RENDERED[gateway] = {p.name: p.read_text() for p in directory.iterdir()}
    return _RENDERED[gateway]


def ends_of(gateway: Gateway) -> list[CloudEnd]:
    return [end for end in cloud_ends(plan_of(gateway.stack)) if end.gateway_ip == gateway.address]


_ESTATES: dict[str, Estate] = {}


def estate(stack: str) -> Estate:
    """The reachability model over the stack's plan: the source of truth for what each BGP speaker announces."""
    if stack not in _ESTATES:
        _ESTATES[stack] = Estate(plan_of(stack), load_stack_file(STACKS[stack]).spec)
    return _ESTATES[stack]


def model_learns_from(gateway: Gateway, end: CloudEnd) -> set[str]:
    """What the model says the cloud end learns from this gateway over their link: a transit gateway attachment's
    propagated routes, or a Cloud Router's learned routes (both the gateway's announcement, gateway_announcements)."""
    world = estate(gateway.stack)
    link = f"{end.cloud_site}--{gateway.site}"
    if end.kind == "aws":
        tgw = world.aws[end.cloud_site].tgw
        attachment = next(a for a in tgw.attachments.values() if a.link == link)
        return {str(route.prefix) for route in world.propagated(tgw, attachment)}
    return {str(route.prefix) for route in world.learned(end.cloud_site, link)}


def model_announces_to(gateway: Gateway) -> list[str]:
    """What the model says the clouds announce to this gateway (the hub's transit gateway table, a Cloud Router's
    advertisement), its own ranges left out by BGP's loop check: what the stand-in announces."""
    world = estate(gateway.stack)
    prefixes = {str(r.prefix) for plan in world.links_of(gateway.site) for r in world.learned(gateway.site, plan.key)}
    return sorted(prefixes)


def plan_spec(stack: str) -> dict:
    return yaml.safe_load(STACKS[stack].read_text())["config"]["lattice:spec"]


_TESTS = itertools.count()


@pytest.fixture
def lab(request):
    # Short: charon's and FRR's unix sockets live here, and a socket path has at most 107 characters.
    directory = netlab.RUN_DIR / f"t{next(_TESTS)}"
    directory.mkdir(parents=True)
    (directory / "test").write_text(request.node.nodeid + "\n")
    lab = netlab.Lab(directory)
    try:
        yield lab
    finally:
        lab.close()


# --- swanctl.conf, frr.conf and the interface script, each loaded by its real consumer -------------------------


@pytest.mark.parametrize("gateway", GATEWAYS, ids=str)
def test_swanctl_conf_loads_into_charon_with_every_connection_child_and_secret(gateway, lab):
    files = rendered(gateway)
    charon = netlab.Charon(lab, lab.namespace("load"), "gateway")
    result = charon.load(files["swanctl.conf"])
    names = [end_name for end_name in re.findall(r"^  ([a-z0-9-]+) \{$", files["swanctl.conf"], re.MULTILINE)]
    tunnels = [n for n in names if not n.startswith("ike-")]
    assert tunnels and len(tunnels) == len(ends_of(gateway))  # one connection per cloud tunnel end of this host
    assert result.stderr == ""  # no warning, no ignored option, no missing credential directory
    assert result.stdout.splitlines() == [
        *[f"loaded ike secret 'ike-{name}'" for name in tunnels],
        "no authorities found, 0 unloaded",
        "no pools found, 0 unloaded",
        *[f"loaded connection '{name}'" for name in tunnels],
        f"successfully loaded {len(tunnels)} connections, 0 unloaded",
    ]
    # charon holds each connection with its child, and a key for each tunnel's pair of identities.
    listed = charon.swanctl("--list-conns").stdout
    for name in tunnels:
        assert re.search(rf"^{name}: IKEv2, no reauthentication, rekeying every \d+s", listed, re.MULTILINE)
        assert re.search(rf"^  {name}: TUNNEL, rekeying every \d+s", listed, re.MULTILINE)
    log = charon.log_text()
    assert log.count("loaded IKE shared key with id 'ike-") == len(tunnels)
    assert not re.search(r"invalid|unknown|not supported|skipped|ignor", log, re.IGNORECASE), log


@pytest.mark.parametrize("gateway", GATEWAYS, ids=str)
def test_frr_conf_is_accepted_as_written(gateway, lab):
    files = rendered(gateway)
    conf = netlab.RUN_DIR / f"frr-dry-run-{gateway.address}-{gateway.stack}.conf"
    conf.write_text(files["frr.conf"])
    dry_run = netlab.run("vtysh", "-C", "-f", str(conf), check=False)
    assert (dry_run.returncode, dry_run.stdout, dry_run.stderr) == (0, "", "")

    frr = netlab.Frr(lab, lab.namespace("frr"), "gateway", files["frr.conf"])
    assert (frr.boot.returncode, frr.boot.stderr) == (0, ""), frr.boot.stdout
    running = _statements(frr.show("show running-config"))
    written = _statements(files["frr.conf"])
    # Every statement is in the running configuration as written, except `neighbor X activate`: with the
    # traditional profile, `bgp default ipv4-unicast` activates every neighbour already, so FRR does not print it.
    missing = [s for s in written if s not in running]
    assert missing and all(re.fullmatch(r"router bgp \d+ > address-family ipv4 unicast > neighbor \S+ activate", s)
                           for s in missing), missing  # fmt: skip
    assert len(missing) == files["frr.conf"].count(" activate")
    for daemon in ("zebra", "bgpd"):
        assert not re.search(r"No such command|Unknown command|error", frr.log_text(daemon), re.IGNORECASE)


def _statements(text: str) -> list[str]:
    """A configuration's statements with their block context (`router bgp N > address-family ipv4 unicast >
    network ...`); comments, `!`, `exit`, `end` and the header lines FRR adds are dropped."""
    statements, context = [], []
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if (
            not stripped
            or stripped.startswith("!")
            or stripped in ("end", "exit")
            or raw.startswith(
                ("frr version", "hostname", "Building configuration", "Current configuration", "service ", "no ip")
            )
        ):
            continue
        depth = len(line) - len(line.lstrip())
        if stripped == "exit-address-family":
            context = context[:1]
            continue
        context = context[:depth]
        statements.append(" > ".join([*context, stripped]))
        if stripped.startswith(("router bgp", "address-family")):
            context = [*context, stripped]
    return statements


@pytest.mark.parametrize("gateway", GATEWAYS, ids=str)
def test_interface_script_passes_shellcheck(gateway, tmp_path):
    script = tmp_path / "xfrm-interfaces.sh"
    script.write_text(rendered(gateway)["xfrm-interfaces.sh"])
    result = netlab.run("shellcheck", "--shell=sh", "--severity=style", str(script), check=False)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


# --- the tunnels negotiated, and BGP through them ------------------------------------------------------------


def _sas(charon: netlab.Charon) -> dict[str, dict]:
    """`swanctl --list-sas`: per IKE SA its state, proposal, rekey time and children (state, ESP proposal)."""
    sas: dict[str, dict] = {}
    current = None
    for line in charon.swanctl("--list-sas").stdout.splitlines():
        if m := re.match(r"^(\S+): #\d+, (\w+), IKEv(\d)", line):
            current = sas.setdefault(m[1], {"state": m[2], "version": int(m[3]), "children": {}})
        elif current is None:
            continue
        elif m := re.match(r"^  ([A-Z0-9_/-]+)$", line):
            current["proposal"] = m[1]
        elif m := re.match(r"^  established \d+s ago, rekeying in (\d+)s", line):
            current["rekey_in"] = int(m[1])
        elif m := re.match(r"^  (\S+): #(\d+), reqid \d+, (\w+), [\w-]+, ESP:(\S+)", line):
            current["children"][f"{m[1]}#{m[2]}"] = {"state": m[3], "esp": m[4]}
        elif (m := re.search(r"rekeying in (\d+)s, expires in (\d+)s", line)) and current["children"]:
            child = list(current["children"].values())[-1]
            child["rekey_in"], child["expires_in"] = int(m[1]), int(m[2])
    return sas


def _connections(files: dict[str, str]) -> dict[str, str]:
    """Rendered connection name -> its cloud endpoint (remote_addrs)."""
    return dict(re.findall(r"^  ([a-z0-9-]+) \{\n(?:    .*\n)*?    remote_addrs = (\S+)$", files["swanctl.conf"], re.M))


def _up(lab: netlab.Lab, gateway: Gateway, ends: list[CloudEnd]) -> tuple[str, str, netlab.Charon, netlab.Charon]:
    """Two namespaces joined by a veth: the gateway (its rendered swanctl.conf) and the stand-in cloud."""
    site, cloud = lab.namespace("gateway"), lab.namespace("cloud")
    lab.veth(site, [gateway.address], cloud, sorted({e.outside_ip for e in ends}))
    stand_in = netlab.Charon(lab, cloud, "cloud")
    stand_in.load(stand_in_swanctl(ends))
    charon = netlab.Charon(lab, site, "gateway")
    charon.load(rendered(gateway)["swanctl.conf"])  # start_action = start: the gateway initiates every tunnel
    return site, cloud, charon, stand_in


@pytest.mark.parametrize("gateway", GATEWAYS, ids=str)
def test_every_tunnel_negotiates_with_the_planned_cloud_end_and_bgp_reaches_established(gateway, lab):
    files, ends = rendered(gateway), ends_of(gateway)
    by_address = {end.outside_ip: end for end in ends}
    connections = _connections(files)
    assert set(connections.values()) == set(by_address)  # the gateway dials exactly the cloud's tunnel endpoints
    site, cloud, charon, _ = _up(lab, gateway, ends)

    def all_installed():
        sas = _sas(charon)
        return all(
            name in sas and sas[name]["state"] == "ESTABLISHED"
            and any(c["state"] == "INSTALLED" for c in sas[name]["children"].values())
            for name in connections
        ) and sas  # fmt: skip

    sas = netlab.wait_for(
        all_installed, 30, f"every tunnel of {gateway} ESTABLISHED and INSTALLED", detail=charon.state
    )
    for name, address in connections.items():
        end = by_address[address]
        assert sas[name]["version"] == 2 and end.ike_versions == (2,)
        assert sas[name]["proposal"] == end.phase1.listed(ike=True), (name, end.resource)
        child = next(c for c in sas[name]["children"].values() if c["state"] == "INSTALLED")
        # The first child comes with IKE_AUTH, which carries no key exchange: its proposal shows no DH group.
        assert child["esp"] == end.phase2.listed(ike=False, with_dh=False), (name, end.resource)
        # Lifetimes: the gateway rekeys both SAs before the cloud's lifetime runs out.
        assert 0 < sas[name]["rekey_in"] < end.phase1_lifetime
        assert 0 < child["rekey_in"] < child["expires_in"] <= end.phase2_lifetime

    # A rekeyed child uses PFS with the cloud's phase 2 DH group: one tunnel of each kind of cloud.
    for kind in sorted({e.kind for e in ends}):
        name, address = next((n, a) for n, a in connections.items() if by_address[a].kind == kind)
        charon.swanctl("--rekey", "--child", name)
        expected = by_address[address].phase2.listed(ike=False)
        netlab.wait_for(
            lambda n=name, e=expected: any(
                c["state"] == "INSTALLED" and c["esp"] == e for c in _sas(charon)[n]["children"].values()
            ),
            15,
            f"{name}'s rekeyed child with ESP {expected}",
            detail=charon.state,
        )

    # BGP through the tunnels: the inside addresses on ipsec0 (where xfrm-interfaces.sh puts them on xfrm-N).
    for namespace, addresses in ((site, [e.gateway_inside for e in ends]), (cloud, [e.cloud_inside for e in ends])):
        for address in addresses:
            netlab.run("ip", "-n", namespace, "addr", "add", f"{address}/30", "dev", "ipsec0")
    gateway_frr = netlab.Frr(lab, site, "gateway", files["frr.conf"])
    assert gateway_frr.boot.returncode == 0, gateway_frr.boot.stdout
    cloud_frr = netlab.Frr(lab, cloud, "cloud", stand_in_frr(ends, model_announces_to(gateway)))
    assert cloud_frr.boot.returncode == 0, cloud_frr.boot.stdout

    def peers():
        return json.loads(gateway_frr.show("show bgp ipv4 unicast summary json"))["peers"]

    netlab.wait_for(
        lambda: len(peers()) == len(ends) and all(p["state"] == "Established" for p in peers().values()),
        60,
        f"BGP Established on every neighbour of {gateway}",
    )
    assert {address: p["remoteAs"] for address, p in peers().items()} == {e.cloud_inside: e.cloud_asn for e in ends}

    def announced():
        routes = {}
        for end in ends:
            # What the cloud end accepted from the gateway over this session.
            shown = json.loads(cloud_frr.show(f"show bgp ipv4 unicast neighbors {end.gateway_inside} routes json"))
            routes[end.resource] = set(shown.get("routes", {}))
        return routes

    # The gateway announces its own ranges only (frr.conf's outbound prefix list), exactly what the reachability
    # model says each cloud end learns from it (components/flows/reachability.py reads the same
    # link_plan.gateway_announcements the renderer writes). This bites where a gateway peers with two clouds
    # (prod+gcp): without the list it passes AWS's routes on to GCP. Towards one cloud's AS, FRR's own AS-path loop
    # check would hold them back anyway.
    expected = {end.resource: model_learns_from(gateway, end) for end in ends}
    site = next(s for s in plan_spec(gateway.stack)["sites"] if s["name"] == gateway.site)
    own = {site["network"]["cidr"], *site["network"].get("routed_cidrs", [])}
    assert all(announcement == own for announcement in expected.values())
    netlab.wait_for(
        lambda: announced() == expected,
        20,
        f"exactly the model's {sorted(next(iter(expected.values())))} from {gateway} on every session",
        detail=lambda: str(announced()),
    )
    # ... and not because the gateway had nothing else: it learned what the model says the clouds announce to it
    # (the hub's table, a Cloud Router's advertisement: the GKE control plane's /28 among them).
    table = set(json.loads(gateway_frr.show("show bgp ipv4 unicast json"))["routes"])  # its own networks too
    assert table - own == set(model_announces_to(gateway))
    assert announced() == expected


# --- a cloud that proposes something else is refused -----------------------------------------------------------

MISMATCHES = {
    # (gateway, kind of cloud end, what the stand-in changes, the failure the gateway must see)
    "aws-phase1-dh-group-19": (0, "aws", ("phase1", {"dh": ("ecp256",)}), "ike"),
    "aws-phase1-cipher-aes128-gcm": (0, "aws", ("phase1", {"encryption": ("aes128gcm16",)}), "ike"),
    "aws-phase2-cipher-aes128-gcm": (0, "aws", ("phase2", {"encryption": ("aes128gcm16",)}), "child"),
    "aws-other-pre-shared-key": (0, "aws", ("psk", "Another_0key_of_48_characters_for_this_test_.xyz"), "auth"),
    "gcp-phase1-dh-group-21": (1, "gcp", ("phase1", {"dh": ("ecp521",)}), "ike"),
    "gcp-phase2-cipher-aes128-gcm": (1, "gcp", ("phase2", {"encryption": ("aes128gcm16",)}), "child"),
}
EXPECTED_REFUSAL = {
    "ike": "received NO_PROPOSAL_CHOSEN notify error",
    "child": "received NO_PROPOSAL_CHOSEN notify, no CHILD_SA built",
    "auth": "received AUTHENTICATION_FAILED notify error",
}
STAND_IN_REFUSAL = {"ike": "received proposals unacceptable", "child": "no acceptable proposal found"}


@pytest.mark.parametrize("case", MISMATCHES)
def test_a_cloud_end_that_proposes_something_else_is_refused(case, lab):
    which, kind, (what, change), failure = MISMATCHES[case]
    gateway = (PROD_GATEWAYS[1], GCP_GATEWAY)[which]
    end = next(e for e in ends_of(gateway) if e.kind == kind)
    changed = end.changed(what, **change) if what != "psk" else _with_psk(end, change)
    name = next(n for n, a in _connections(rendered(gateway)).items() if a == end.outside_ip)
    _, _, charon, stand_in = _up(lab, gateway, [changed])
    netlab.wait_for(lambda: EXPECTED_REFUSAL[failure] in charon.log_text(), 20, f"{name}: {EXPECTED_REFUSAL[failure]}")
    sa = _sas(charon).get(name, {"children": {}})
    assert not any(c["state"] == "INSTALLED" for c in sa["children"].values())
    if failure != "child":
        assert sa.get("state") != "ESTABLISHED"
    if failure in STAND_IN_REFUSAL:  # and the cloud end said why: it found no proposal it accepts
        assert STAND_IN_REFUSAL[failure] in stand_in.log_text()


def _with_psk(end: CloudEnd, psk: str) -> CloudEnd:
    from dataclasses import replace

    return replace(end, psk=psk)


def test_the_stand_in_is_not_more_lenient_than_the_plan():
    # The stand-in proposes exactly the plan's algorithms: one proposal, AES-GCM with its PRF and DH group.
    end = next(e for e in ends_of(PROD_GATEWAYS[1]) if e.kind == "aws")
    assert end.phase1.proposal(ike=True) == "aes256gcm16-prfsha384-ecp384"
    assert end.phase2.proposal(ike=False) == "aes256gcm16-ecp384"
    gcp = next(e for e in ends_of(GCP_GATEWAY) if e.kind == "gcp")
    assert (gcp.phase1.proposal(ike=True), gcp.phase2.proposal(ike=False)) == (
        "aes256gcm16-prfsha384-ecp384",
        "aes256gcm16-ecp384",
    )
    assert ipaddress.ip_address(gcp.cloud_inside) in ipaddress.ip_network(f"{gcp.gateway_inside}/30", strict=False)
