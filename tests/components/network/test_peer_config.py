"""The gateway configuration a grid / edge operator applies: swanctl.conf, frr.conf and the XFRM interface script."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess

import pytest

from lattice.components.network.peer_config import (
    REDACTED,
    PeerConfig,
    PeerTunnel,
    render_all,
    render_frr,
    render_interfaces,
    render_swanctl,
)

PSKS = ("Aws.Tunnel_Zero.k3y", "Aws.Tunnel_One.k3y", "Gcp.Tunnel_Zero.k3y", "Gcp.Tunnel_One.k3y")


def _tunnel(**changes) -> PeerTunnel:
    base = PeerTunnel(
        name="aws-use1-t0",
        cloud_site="aws-use1",
        if_id=1,
        local_public_ip="198.51.100.10",
        remote_public_ip="203.0.113.1",
        local_inside="169.254.10.2",
        remote_inside="169.254.10.1",
        psk=PSKS[0],
        remote_asn=64512,
        routing="bgp",
        remote_cidrs=("10.0.0.0/16",),
    )
    return dataclasses.replace(base, **changes)


AWS_T0 = _tunnel()
AWS_T1 = _tunnel(
    name="aws-use1-t1",
    if_id=2,
    remote_public_ip="203.0.113.2",
    local_inside="169.254.10.6",
    remote_inside="169.254.10.5",
    psk=PSKS[1],
)
GCP_T0 = _tunnel(
    name="gcp-euw4-t0",
    cloud_site="gcp-euw4",
    if_id=3,
    remote_public_ip="203.0.113.3",
    local_inside="169.254.20.2",
    remote_inside="169.254.20.1",
    psk=PSKS[2],
    remote_asn=65010,
    routing="static",
    remote_cidrs=("10.30.0.0/16", "10.31.0.0/16"),
    phase1_lifetime_seconds=36000,
    phase2_lifetime_seconds=10800,
)
GCP_T1 = dataclasses.replace(
    GCP_T0,
    name="gcp-euw4-t1",
    if_id=4,
    remote_public_ip="203.0.113.4",
    local_inside="169.254.20.6",
    remote_inside="169.254.20.5",
    psk=PSKS[3],
    remote_cidrs=("10.30.0.0/16",),
)


def _config(*tunnels: PeerTunnel, advertised=("10.20.0.0/16", "10.21.0.0/16")) -> PeerConfig:
    return PeerConfig(
        site="grid-hpc", local_asn=65020, advertised=advertised, tunnels=tunnels or (AWS_T0, AWS_T1, GCP_T0, GCP_T1)
    )


def _parse_swanctl(text: str) -> dict:
    """swanctl.conf as nested dicts; fails unless every brace opens and closes in order."""
    root: dict = {}
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("{"):
            section = line[:-1].strip()
            assert section not in stack[-1], f"section {section!r} appears twice"
            stack[-1][section] = {}
            stack.append(stack[-1][section])
        elif line == "}":
            stack.pop()
            assert stack, "a '}' closes nothing"
        else:
            key, value = (part.strip() for part in line.split("=", 1))
            stack[-1][key] = value
    assert len(stack) == 1, "a '{' is never closed"
    return root


def _connection(text: str, name: str) -> dict:
    return _parse_swanctl(text)["connections"][name]


# --- swanctl.conf -----------------------------------------------------------------------------------------


def test_braces_balance_and_every_tunnel_has_one_connection_and_one_secret_in_order():
    text = render_swanctl(_config(), redact=False)
    assert text.count("{") == text.count("}")
    conf = _parse_swanctl(text)
    assert list(conf) == ["connections", "secrets"]
    assert list(conf["connections"]) == ["aws-use1-t0", "aws-use1-t1", "gcp-euw4-t0", "gcp-euw4-t1"]
    assert list(conf["secrets"]) == ["ike-aws-use1-t0", "ike-aws-use1-t1", "ike-gcp-euw4-t0", "ike-gcp-euw4-t1"]


def test_a_connection_is_a_route_based_ikev2_tunnel_with_psk_auth():
    assert _connection(render_swanctl(_config(), redact=False), "aws-use1-t0") == {
        "version": "2",
        "local_addrs": "%any",  # behind the site's 1:1 NAT the host does not own its public address
        "remote_addrs": "203.0.113.1",
        "proposals": "aes256gcm16-prfsha384-ecp384",
        "rekey_time": "25920s",
        "over_time": "2880s",
        "dpd_delay": "10s",
        "keyingtries": "0",
        "local": {"auth": "psk", "id": "198.51.100.10"},
        "remote": {"auth": "psk", "id": "203.0.113.1"},
        "children": {
            "aws-use1-t0": {
                "local_ts": "0.0.0.0/0",
                "remote_ts": "0.0.0.0/0",
                "esp_proposals": "aes256gcm16-ecp384",
                "if_id_in": "1",
                "if_id_out": "1",
                "rekey_time": "3240s",
                "life_time": "3600s",
                "start_action": "start",
                "dpd_action": "restart",
                "close_action": "start",
            }
        },
    }


def test_each_child_is_bound_to_its_own_xfrm_interface():
    conf = _parse_swanctl(render_swanctl(_config(), redact=False))
    pairs = [
        (child["if_id_in"], child["if_id_out"])
        for connection in conf["connections"].values()
        for child in connection["children"].values()
    ]
    assert pairs == [("1", "1"), ("2", "2"), ("3", "3"), ("4", "4")]


def test_rekeying_stays_inside_the_clouds_lifetimes():
    connection = _connection(render_swanctl(_config(), redact=False), "gcp-euw4-t0")
    assert (connection["rekey_time"], connection["over_time"]) == ("32400s", "3600s")
    child = connection["children"]["gcp-euw4-t0"]
    assert (child["rekey_time"], child["life_time"]) == ("9720s", "10800s")


@pytest.mark.parametrize(
    ("algorithms", "ike", "esp"),
    [
        pytest.param({}, "aes256gcm16-prfsha384-ecp384", "aes256gcm16-ecp384", id="defaults"),
        pytest.param(
            {"encryption": ("AES128-GCM-16",), "integrity": ("SHA2-256",), "dh_groups": (19,)},
            "aes128gcm16-prfsha256-ecp256",
            "aes128gcm16-ecp256",
            id="narrowed",
        ),
        pytest.param(
            {"integrity": ("SHA2-384", "SHA2-512"), "dh_groups": (20, 21)},
            "aes256gcm16-prfsha384-prfsha512-ecp384-ecp521",
            "aes256gcm16-ecp384-ecp521",
            id="extended",
        ),
        pytest.param(
            {"encryption": ("AES256", "AES128"), "integrity": ("SHA2-256",), "dh_groups": (14,)},
            "aes256-aes128-sha256-prfsha256-modp2048",
            "aes256-aes128-sha256-modp2048",
            id="classic",
        ),
        pytest.param(
            {"encryption": ("AES256", "AES256-GCM-16", "AES128-GCM-16"), "dh_groups": (20, 20)},
            "aes256-sha384-prfsha384-ecp384,aes256gcm16-aes128gcm16-prfsha384-ecp384",
            "aes256-sha384-ecp384,aes256gcm16-aes128gcm16-ecp384",
            id="gcm-and-classic-split-and-deduplicated",
        ),
    ],
)
def test_proposals_follow_the_tunnels_algorithm_lists(algorithms, ike, esp):
    connection = _connection(render_swanctl(_config(_tunnel(**algorithms)), redact=False), "aws-use1-t0")
    assert connection["proposals"] == ike
    assert connection["children"]["aws-use1-t0"]["esp_proposals"] == esp


def test_secrets_bind_each_psk_to_both_public_addresses():
    secrets = _parse_swanctl(render_swanctl(_config(), redact=False))["secrets"]
    assert secrets["ike-aws-use1-t1"] == {"id-1": "203.0.113.2", "id-2": "198.51.100.10", "secret": f'"{PSKS[1]}"'}


def test_unredacted_output_holds_each_psk_exactly_once():
    files = render_all(_config(), redact=False)
    everything = "".join(files.values())
    assert [everything.count(psk) for psk in PSKS] == [1, 1, 1, 1]
    assert f'    secret = "{PSKS[0]}"' in files["swanctl.conf"].splitlines()
    assert REDACTED not in everything


def test_redacted_output_holds_no_psk():
    files = render_all(_config(), redact=True)
    assert not [psk for psk in PSKS for text in files.values() if psk in text]
    secrets = _parse_swanctl(files["swanctl.conf"])["secrets"]
    assert {secret["secret"] for secret in secrets.values()} == {f'"{REDACTED}"'}


def test_header_says_the_file_holds_secrets_and_how_to_load_it():
    header = render_swanctl(_config(), redact=False).split("connections {")[0]
    assert "site grid-hpc" in header
    assert "Holds pre-shared keys." in header
    assert "install -m 600 swanctl.conf /etc/swanctl/conf.d/lattice.conf && swanctl --load-all" in header


# --- frr.conf ---------------------------------------------------------------------------------------------


def test_frr_peers_with_every_bgp_tunnel_and_announces_the_sites_ranges():
    text = render_frr(_config())
    lines = text.splitlines()
    assert lines[0] == "frr defaults traditional"
    start, end = lines.index("router bgp 65020"), lines.index("exit")
    assert lines[start:end] == [
        "router bgp 65020",
        " bgp router-id 169.254.10.2",
        " no bgp ebgp-requires-policy",
        " no bgp network import-check",
        " bgp bestpath as-path multipath-relax",
        " neighbor 169.254.10.1 remote-as 64512",
        " neighbor 169.254.10.1 description aws-use1-t0 to aws-use1 via xfrm-1",
        " neighbor 169.254.10.1 timers 10 30",
        " ! aws-use1-t0 is expected to announce 10.0.0.0/16",
        " neighbor 169.254.10.5 remote-as 64512",
        " neighbor 169.254.10.5 description aws-use1-t1 to aws-use1 via xfrm-2",
        " neighbor 169.254.10.5 timers 10 30",
        " ! aws-use1-t1 is expected to announce 10.0.0.0/16",
        " !",
        " address-family ipv4 unicast",
        "  network 10.20.0.0/16",
        "  network 10.21.0.0/16",
        "  neighbor 169.254.10.1 activate",
        "  neighbor 169.254.10.1 prefix-list LATTICE-OWN-RANGES out",
        "  neighbor 169.254.10.5 activate",
        "  neighbor 169.254.10.5 prefix-list LATTICE-OWN-RANGES out",
        "  maximum-paths 2",
        " exit-address-family",
    ]
    # only the site's own ranges are announced: never a route learned from one cloud to another
    assert lines[-4:] == [
        "ip prefix-list LATTICE-OWN-RANGES seq 5 permit 10.20.0.0/16",
        "ip prefix-list LATTICE-OWN-RANGES seq 10 permit 10.21.0.0/16",
        "!",
        "end",
    ]
    assert "! gcp-euw4-t0 to gcp-euw4 routes statically: its routes are in xfrm-interfaces.sh." in lines
    assert "169.254.20.1" not in text  # static tunnels get no neighbour


def test_one_bgp_tunnel_still_gets_maximum_paths_one():
    assert "  maximum-paths 1" in render_frr(_config(AWS_T0)).splitlines()


def test_without_bgp_tunnels_frr_says_bgp_is_unused():
    assert render_frr(_config(GCP_T0, GCP_T1)) == (
        "frr defaults traditional\n"
        "!\n"
        "! Lattice: BGP of site grid-hpc (FRR frr.conf).\n"
        "! Install as /etc/frr/frr.conf with bgpd=yes in /etc/frr/daemons, then: systemctl restart frr\n"
        "! gcp-euw4-t0 to gcp-euw4 routes statically: its routes are in xfrm-interfaces.sh.\n"
        "! gcp-euw4-t1 to gcp-euw4 routes statically: its routes are in xfrm-interfaces.sh.\n"
        "! BGP is not used: no tunnel of this site routes with BGP.\n"
        "!\n"
        "end\n"
    )


# --- xfrm-interfaces.sh -----------------------------------------------------------------------------------


def test_script_creates_each_interface_idempotently():
    lines = render_interfaces(_config()).splitlines()
    assert lines[0] == "#!/bin/sh"
    assert "set -eu" in lines
    block = lines.index("# aws-use1-t1 to aws-use1 (bgp)")
    assert lines[block + 1 : block + 7] == [
        'ip link show xfrm-2 >/dev/null 2>&1 || ip link add xfrm-2 type xfrm dev "${UPLINK:-eth0}" if_id 2',
        "ip addr replace 169.254.10.6/30 dev xfrm-2",
        "ip link set xfrm-2 mtu 1446 up",  # AWS tunnels carry 1,446-byte packets
        "sysctl -w net.ipv4.conf.xfrm-2.disable_policy=1",
        "sysctl -w net.ipv4.conf.xfrm-2.rp_filter=2",
        "",
    ]
    assert not [line for line in lines if line.startswith("ip link add")]  # every add is guarded


def test_static_routes_prefer_the_first_tunnel_listed():
    routes = [line for line in render_interfaces(_config()).splitlines() if line.startswith("ip route")]
    assert routes == [
        "ip route replace 10.30.0.0/16 dev xfrm-3 metric 100",
        "ip route replace 10.31.0.0/16 dev xfrm-3 metric 100",
        "ip route replace 10.30.0.0/16 dev xfrm-4 metric 101",
    ]


def test_bgp_only_site_has_no_static_routes():
    assert "ip route" not in render_interfaces(_config(AWS_T0, AWS_T1))


def test_interface_names_fit_the_kernel_limit_at_the_largest_if_id():
    text = render_interfaces(_config(_tunnel(if_id=2**32 - 1)))
    names = set(re.findall(r"\bxfrm-\d+\b", text))
    assert names == {"xfrm-4294967295"}
    assert all(len(name) <= 15 for name in names)


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX shell")
def test_script_is_valid_sh():
    result = subprocess.run(
        ["sh", "-n"], check=False, input=render_interfaces(_config()), text=True, capture_output=True
    )
    assert (result.returncode, result.stderr) == (0, "")


# --- the whole set ----------------------------------------------------------------------------------------


def test_render_all_is_deterministic_and_names_the_three_files():
    first, second = render_all(_config(), redact=True), render_all(_config(), redact=True)
    assert list(first) == ["swanctl.conf", "frr.conf", "xfrm-interfaces.sh"]
    assert first == second
    assert first["swanctl.conf"] == render_swanctl(_config(), redact=True)


def test_tunnels_keep_the_given_order():
    text = render_swanctl(_config(GCP_T1, AWS_T0), redact=False)
    assert list(_parse_swanctl(text)["connections"]) == ["gcp-euw4-t1", "aws-use1-t0"]


# --- validation -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (dataclasses.replace(AWS_T1, if_id=1), "tunnels[1]: if_id 1 is already used by tunnels[0]"),
        (dataclasses.replace(AWS_T1, name="aws-use1-t0"), "tunnels[1]: name aws-use1-t0 is already used by tunnels[0]"),
        (
            dataclasses.replace(AWS_T1, local_inside="169.254.10.1", remote_inside="169.254.10.2"),
            "tunnels[1]: inside /30 169.254.10.0/30 is already used by tunnels[0]",
        ),
        (
            dataclasses.replace(AWS_T1, remote_public_ip="203.0.113.1"),
            "tunnels[1]: public address pair 198.51.100.10 -> 203.0.113.1 is already used by tunnels[0]",
        ),
    ],
)
def test_tunnels_must_differ(second, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        render_swanctl(_config(AWS_T0, second), redact=False)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"psk": "has-a-dash1"}, "tunnels[0].psk: use only the characters A-Z a-z 0-9 . _"),
        ({"psk": 'quote"inside'}, "tunnels[0].psk: use only the characters A-Z a-z 0-9 . _"),
        ({"psk": ""}, "tunnels[0].psk: use only the characters A-Z a-z 0-9 . _ (and at least one)"),
        ({"psk": "0x1234abcd"}, "tunnels[0].psk: must not start with 0x or 0s"),
        ({"encryption": ("AES-GCM-16-256",)}, "tunnels[0].encryption: unknown algorithm 'AES-GCM-16-256'"),
        ({"integrity": ("SHA2-384", "MD5")}, "tunnels[0].integrity: unknown algorithm 'MD5'"),
        ({"dh_groups": (20, 1)}, "tunnels[0].dh_groups: unknown algorithm 1"),
        ({"dh_groups": ()}, "tunnels[0].dh_groups: list at least one"),
        ({"if_id": 0}, "tunnels[0].if_id: 0 must be between 1 and 4294967295"),
        ({"if_id": 2**32}, "tunnels[0].if_id: 4294967296 must be between 1 and 4294967295"),
        ({"name": "AWS_t0"}, "tunnels[0].name: 'AWS_t0' must be lower-case letters, digits and '-'"),
        ({"remote_inside": "169.254.10.5"}, "must be the two host addresses of one /30"),
        ({"local_inside": "169.254.10.3"}, "must be the two host addresses of one /30"),
        ({"remote_public_ip": "aws.example"}, "tunnels[0].remote_public_ip: 'aws.example' is not an IPv4 address"),
        ({"remote_asn": 65020}, "tunnels[0].remote_asn: 65020 equals the site's local_asn"),
        ({"routing": "static", "remote_cidrs": ()}, "tunnels[0].remote_cidrs: a static tunnel needs the ranges"),
        ({"remote_cidrs": ("10.0.0.1/16",)}, "tunnels[0].remote_cidrs[0]: '10.0.0.1/16' is not an IPv4 network"),
        ({"phase2_lifetime_seconds": 0}, "tunnels[0].phase2_lifetime_seconds: 0 is too short"),
    ],
)
def test_invalid_tunnels_are_refused(changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        render_all(_config(_tunnel(**changes)), redact=True)


def test_every_problem_is_reported_at_once():
    config = dataclasses.replace(
        _config(_tunnel(psk="bad psk", encryption=("DES",)), advertised=("10.20.0.0/33",)), site="Grid"
    )
    with pytest.raises(ValueError) as error:
        render_frr(config)
    assert str(error.value).splitlines() == [
        "peer configuration of site 'Grid' is invalid:",
        "- site: 'Grid' must be lower-case letters, digits and '-'",
        "- advertised[0]: '10.20.0.0/33' is not an IPv4 network in CIDR form (host bits zero), e.g. 10.20.0.0/16",
        "- tunnels[0].psk: use only the characters A-Z a-z 0-9 . _ (and at least one)",
        "- tunnels[0].encryption: unknown algorithm 'DES'; known: AES128, AES256, AES128-GCM-16, AES256-GCM-16",
    ]


def test_a_site_needs_a_tunnel():
    with pytest.raises(ValueError, match="tunnels: list at least one tunnel"):
        render_interfaces(PeerConfig(site="grid-hpc", local_asn=65020, advertised=(), tunnels=()))
