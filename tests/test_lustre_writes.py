"""Every team can write its checkpoints on every Lustre file system Lattice builds, walked on the planned objects.

Both Lustre tiers squash root. Before the fix every client was squashed and nothing created a team directory: the
file systems were read-only in practice. This walk follows what the clusters would do: the directory Job's own
shell script is executed against a model of the file system's POSIX permissions, as root on a client of the
system nodes' subnets — squashed or not according to the file system's planned squash configuration (FSx NID
ranges, Managed Lustre access rules) — and then a pod running as the team's UID / GID writes into the directory
its claim names. The model is the Linux rules a Lustre client and MDS apply: search (x) on every ancestor, write
and search on the parent to create, only root may chown, only the owner or root may chmod, a directory made
inside a setgid directory takes its group, and root is squashed to the file system's squash IDs unless its
client is spared.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from dataclasses import dataclass

import pytest

from lattice.components.spec import load_stack_file
from tests.conftest import ROOT, cached_plan, read_yaml

FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
MANAGED = "gcp:lustre/instance:Instance"
JOB = "kubernetes:batch/v1:Job"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
UMASK = 0o022
# The storage contract's team directories (README, Team directories on Lustre).
TEAM_DIRECTORIES = ("checkpoints", "datasets")
R, W, X = 4, 2, 1


@dataclass
class Inode:
    uid: int
    gid: int
    mode: int


@dataclass(frozen=True)
class Who:
    uid: int
    gid: int


class LustreModel:
    """A file system's directory tree with POSIX ownership, as its clients see it."""

    def __init__(self, squash: Who, spared: list):
        self.squash, self.spared = squash, spared
        self.tree = {"": Inode(0, 0, 0o755)}  # a new file system's root: owned by root, 0755

    def client(self, address: str, uid: int, gid: int) -> Who:
        """Who the servers see: root from a client no rule spares is the squash user."""
        if uid == 0 and not any(spared(ipaddress.ip_address(address)) for spared in self.spared):
            return self.squash
        return Who(uid, gid)

    def _allowed(self, who: Who, inode: Inode, want: int) -> bool:
        if who.uid == 0:
            return True  # unsquashed root: CAP_DAC_OVERRIDE (the Job keeps it)
        shift = 6 if who.uid == inode.uid else 3 if who.gid == inode.gid else 0
        return (inode.mode >> shift) & want == want

    def _reach(self, who: Who, path: str) -> bool:
        parts = path.split("/") if path else []
        return all(self._allowed(who, self.tree["/".join(parts[:i])], X) for i in range(len(parts)))

    def mkdir(self, who: Who, path: str) -> None:
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            current, parent = "/".join(parts[:i]), "/".join(parts[: i - 1])
            if current in self.tree:
                continue
            inode = self.tree[parent]
            if not (self._reach(who, parent) and self._allowed(who, inode, W | X)):
                raise PermissionError(f"mkdir {current}: uid {who.uid} may not write {parent or '/'}")
            setgid = inode.mode & 0o2000
            self.tree[current] = Inode(who.uid, inode.gid if setgid else who.gid, (0o777 & ~UMASK) | setgid)

    def chown(self, who: Who, uid: int, gid: int, path: str) -> None:
        if who.uid != 0:
            raise PermissionError(f"chown {path}: uid {who.uid} is not root")
        self.tree[path].uid, self.tree[path].gid = uid, gid

    def chmod(self, who: Who, mode: int, path: str) -> None:
        if who.uid not in (0, self.tree[path].uid):
            raise PermissionError(f"chmod {path}: uid {who.uid} owns it not")
        self.tree[path].mode = mode

    def can_create_in(self, who: Who, path: str) -> bool:
        return path in self.tree and self._reach(who, path) and self._allowed(who, self.tree[path], W | X)

    def run(self, script: str, who: Who) -> None:
        """The Job's script, command by command; anything the model does not know fails the test."""
        for line in script.strip().splitlines():
            words = shlex.split(line)
            if words in (["set", "-eu"], ["cd", "/lustre"]):
                continue
            command, args = words[0], words[1:]
            if command == "mkdir" and args[0] == "-p":
                for path in args[1:]:
                    self.mkdir(who, path)
            elif command == "chown":
                uid, gid = (int(v) for v in args[0].split(":"))
                for path in args[1:]:
                    self.chown(who, uid, gid, path)
            elif command == "chmod":
                for path in args[1:]:
                    self.chmod(who, int(args[0], 8), path)
            else:
                raise AssertionError(f"the model does not know {line!r}")


def nid_range(nid: str):
    """FSx's NID range syntax (10.20.[0-15].[0-255]@tcp) as a membership test on addresses."""
    octets = nid.removesuffix("@tcp").split(".")
    bounds = [tuple(int(v) for v in (re.fullmatch(r"\[(\d+)-(\d+)\]", o) or re.fullmatch(r"(\d+)()", o)).groups()
                    if v) for o in octets]  # fmt: skip
    return lambda address: all(b[0] <= a <= b[-1] for a, b in zip(address.packed, bounds, strict=True))


def cidr(block: str):
    network = ipaddress.ip_network(block)
    return lambda address: address in network


def squash_model(plan, fs: dict) -> LustreModel:
    inputs = fs["inputs"]
    if fs["type"] == FSX:
        config = inputs["rootSquashConfiguration"]
        uid, gid = (int(v) for v in config["rootSquash"].split(":"))
        return LustreModel(Who(uid, gid), [nid_range(n) for n in config.get("noSquashNids", [])])
    options = inputs["accessRulesOptions"]
    spared = [cidr(block) for rule in options.get("accessRules", []) if rule["squashMode"] == "NO_SQUASH"
              for block in rule["ipAddressRanges"]]  # fmt: skip
    return LustreModel(Who(options["defaultSquashUid"], options["defaultSquashGid"]), spared)


def system_node_addresses(plan, provider: str) -> list[str]:
    """A node address in each subnet the site's system nodes can take (the Job may land on any of them)."""
    if provider == "aws":
        group = next(g for g in plan.by_type("aws:eks/nodeGroup:NodeGroup") if g["name"].endswith("-eks-system"))
        subnets = {plan.state(s)["id"]: s["inputs"]["cidrBlock"] for s in plan.by_type("aws:ec2/subnet:Subnet")}
        blocks = [subnets[subnet] for subnet in group["inputs"]["subnetIds"]]
    else:
        cluster = plan.by_type("gcp:container/cluster:Cluster")[0]["inputs"]["subnetwork"]
        blocks = [s["inputs"]["ipCidrRange"] for s in plan.by_type("gcp:compute/subnetwork:Subnetwork")
                  if cluster.endswith("/" + s["inputs"]["name"])]  # fmt: skip
    assert blocks
    return [str(ipaddress.ip_network(block).network_address + 10) for block in blocks]


def _volume_of(plan, claim: str, namespace: str, cluster: str) -> dict:
    """The PersistentVolume a claim of ``cluster`` (its Kubernetes provider) binds."""
    pvc = next(c for c in plan.by_type(PVC) if c["provider"] == cluster and c["inputs"]["metadata"]["name"] == claim
               and c["inputs"]["metadata"]["namespace"] == namespace)  # fmt: skip
    return next(v for v in plan.by_type(PV) if v["provider"] == cluster
                and v["inputs"]["metadata"]["name"] == pvc["inputs"]["spec"]["volumeName"])  # fmt: skip


def _file_system(plan, volume: dict) -> dict:
    handle = volume["inputs"]["spec"]["csi"]["volumeHandle"]
    for fs in plan.by_type(FSX):
        if plan.state(fs)["id"] == handle:
            return fs
    return next(fs for fs in plan.by_type(MANAGED)
                if handle == "/".join(fs["inputs"][k] for k in ("project", "location", "instanceId")))  # fmt: skip


def team_directory(plan, spec, fs: dict, volume: dict) -> str:
    """The directory a team's claim gives its pods, relative to the file system's root."""
    csi = volume["inputs"]["spec"]["csi"]
    if fs["type"] == FSX:  # the driver mounts <dnsname>@tcp:/<mountname>
        mount_name = plan.state(fs)["mountName"]
        assert csi["volumeAttributes"]["mountname"].startswith(mount_name)
        return csi["volumeAttributes"]["mountname"].removeprefix(mount_name).strip("/")
    # GKE's driver mounts the root: the site's storage output tells pods the subPath
    team = next(t for t in spec.teams if t.namespace_name == volume["inputs"]["spec"]["claimRef"]["namespace"])
    site = next(name for name, out in plan.outputs["sites"].items() if out.get("provider") == "gcp")
    tier = next(out for out in plan.outputs["sites"][site]["storage"].values() if out.get("kind") == "lustre")
    assert tier["team_directory"] == "the claim mounts the root: volumeMounts[].subPath <team>"
    return team.name


def _dev_with_a_cloud_team() -> dict:
    """Dev's teams train on the grid only; the walk puts climate on its AWS site too, next to its FSx."""
    spec = read_yaml(ROOT / "stacks" / "Pulumi.dev.yaml")["config"]["lattice:spec"]
    spec["teams"][0]["sites"] = ["grid-hpc", "aws-use1"]
    return spec


WALKS = {"prod": {("climate", FSX), ("fusion", FSX), ("fusion", MANAGED)}, "dev": {("climate", FSX)}}


@pytest.mark.parametrize("stack", sorted(WALKS))
def test_every_team_can_write_its_checkpoints_on_every_lattice_lustre(stack, plan_spec):
    if stack == "prod":
        plan, spec = (
            cached_plan(ROOT / "stacks" / "Pulumi.prod.yaml"),
            load_stack_file(ROOT / "stacks" / "Pulumi.prod.yaml").spec,
        )
    else:
        raw = _dev_with_a_cloud_team()
        plan = plan_spec(raw, **{"aws:region": "us-east-1"})
        from lattice.components.spec.model import StackSpec

        spec = StackSpec.model_validate(raw)
    teams = {t.namespace_name: t for t in spec.teams}
    walked, file_systems = set(), set()
    # the directory Jobs (an inference endpoint's weights copy is a Job too, on a volume of its own)
    directories = [j for j in plan.by_type(JOB) if j["inputs"]["metadata"]["labels"]["lattice.dev/component"]
                   == "TeamDirectories"]  # fmt: skip
    for job in directories:
        template = job["inputs"]["spec"]["template"]["spec"]
        (container,) = template["containers"]
        assert template["nodeSelector"] == {"lattice.dev/pool": "system"}
        assert template["securityContext"]["runAsUser"] == 0
        (volume_ref,) = template["volumes"]
        claim, namespace = volume_ref["persistentVolumeClaim"]["claimName"], job["inputs"]["metadata"]["namespace"]
        root = _volume_of(plan, claim, namespace, job["provider"])
        fs = _file_system(plan, root)
        file_systems.add(fs["urn"])
        provider = "aws" if fs["type"] == FSX else "gcp"
        assert container["volumeMounts"] == [{"name": volume_ref["name"], "mountPath": "/lustre"}]
        # the Job's PV is the file system's root
        if fs["type"] == FSX:
            assert root["inputs"]["spec"]["csi"]["volumeAttributes"]["mountname"] == plan.state(fs)["mountName"]
        for address in system_node_addresses(plan, provider):
            model = squash_model(plan, fs)
            model.run(container["command"][2], model.client(address, 0, 0))
            # each team with a claim on this file system: its directories, its owner, its pod's write
            handle = root["inputs"]["spec"]["csi"]["volumeHandle"]
            claims = [v for v in plan.by_type(PV) if v is not root and v["provider"] == job["provider"]
                      and v["inputs"]["spec"].get("csi", {}).get("volumeHandle") == handle]  # fmt: skip
            assert claims
            for volume in claims:
                team = teams[volume["inputs"]["spec"]["claimRef"]["namespace"]]
                directory = team_directory(plan, spec, fs, volume)
                assert directory == team.name
                for sub in TEAM_DIRECTORIES:
                    inode = model.tree[f"{directory}/{sub}"]
                    assert (inode.uid, inode.gid) == (team.uid, team.gid)
                pod = model.client("10.0.0.1", team.uid, team.gid)  # any node: a non-root pod is never squashed
                assert model.can_create_in(pod, f"{directory}/checkpoints"), (stack, team.name, fs["name"])
                others = [t for t in spec.teams if t.uid != team.uid]
                for other in others:  # another team's pods cannot write (or read) here
                    assert not model.can_create_in(model.client("10.0.0.1", other.uid, other.gid), directory)
                walked.add((team.name, fs["type"]))
    assert walked == WALKS[stack]
    # every Lattice Lustre file system of the plan has its directory Job (each has teams in these plans)
    assert file_systems == {fs["urn"] for fs in (*plan.by_type(FSX), *plan.by_type(MANAGED))}


def test_root_squash_with_no_spared_client_leaves_the_directories_unmade():
    """What main planned: root squashed on every client. The same Job script then fails at its first mkdir."""
    model = LustreModel(Who(65534, 65534), spared=[])
    with pytest.raises(PermissionError, match="mkdir climate: uid 65534 may not write /"):
        model.run("set -eu\ncd /lustre\nmkdir -p climate climate/checkpoints\n", model.client("10.20.0.10", 0, 0))
