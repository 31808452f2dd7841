"""lattice/route/pod_security.py's Pod Security evaluator against kubernetes/pod-security-admission's own semantics
(policy/check_*.go at 8f84a87c): each check with a pod it admits and one it refuses, and the cases where a pod-level
value and a container's override meet. tests/lattice/test_job_template.py judges the job template's pods with it."""

from __future__ import annotations

import copy

import pytest

from lattice.route.pod_security import pod_security_violations

RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def _pod(**pod_context) -> dict:
    """A pod restricted admits: non-root and RuntimeDefault on the pod, the container dropping everything."""
    context = {"runAsNonRoot": True, "runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"}}
    return {
        "securityContext": {**context, **pod_context},
        "containers": [{"name": "app", "securityContext": copy.deepcopy(RESTRICTED_CONTAINER)}],
        "volumes": [{"name": "scratch", "emptyDir": {}}],
    }


def _with(pod: dict, **container_context) -> dict:
    pod["containers"][0]["securityContext"].update(container_context)
    return pod


def test_the_reference_pod_is_admitted_at_every_level():
    for level in ("privileged", "baseline", "restricted"):
        assert pod_security_violations(_pod(), level) == []


def test_a_pod_level_value_is_judged_even_where_every_container_overrides_it():
    """check_runAsNonRoot.go / check_runAsUser.go / check_seccompProfile_restricted.go: the pod is a bad setter of its
    own ("pod must not set securityContext.runAsNonRoot=false"), whatever its containers set."""
    non_root = _with(_pod(runAsNonRoot=False), runAsNonRoot=True)
    assert pod_security_violations(non_root, "restricted") == ["pod: runAsNonRoot=false"]
    root = _with(_pod(runAsUser=0), runAsUser=1000)
    assert pod_security_violations(root, "restricted") == ["pod: runAsUser=0"]
    unconfined = _with(_pod(seccompProfile={"type": "Unconfined"}), seccompProfile={"type": "RuntimeDefault"})
    assert pod_security_violations(unconfined, "restricted") == ["pod: seccompProfile Unconfined"]


def test_a_container_override_is_judged_where_the_pod_is_right():
    assert pod_security_violations(_with(_pod(), runAsNonRoot=False), "restricted") == ["app: runAsNonRoot != true"]
    assert pod_security_violations(_with(_pod(), runAsUser=0), "restricted") == ["app: runAsUser=0"]
    unconfined = _with(_pod(), seccompProfile={"type": "Unconfined"})
    assert pod_security_violations(unconfined, "restricted") == ["app: seccompProfile Unconfined"]


def test_pod_level_non_root_and_seccomp_cover_containers_that_set_nothing():
    pod = _pod()
    assert pod_security_violations(pod, "restricted") == []
    del pod["securityContext"]["runAsNonRoot"], pod["securityContext"]["seccompProfile"]
    assert pod_security_violations(pod, "restricted") == [
        "app: runAsNonRoot != true",
        "app: seccompProfile None",
    ]
    opted_in = _with(pod, runAsNonRoot=True, seccompProfile={"type": "Localhost"})
    assert pod_security_violations(opted_in, "restricted") == []


def test_baseline_refuses_an_unconfined_seccomp_profile_on_the_pod_or_a_container():
    """check_seccompProfile_baseline.go: Unconfined is refused at baseline too; unset is allowed there."""
    assert pod_security_violations(_pod(seccompProfile={"type": "Unconfined"}), "baseline") == [
        "pod: seccompProfile Unconfined"
    ]
    assert pod_security_violations(_with(_pod(), seccompProfile={"type": "Unconfined"}), "baseline") == [
        "app: seccompProfile Unconfined"
    ]
    bare = {"containers": [{"name": "app"}]}
    assert pod_security_violations(bare, "baseline") == []
    assert pod_security_violations(bare, "restricted") != []


def test_init_sidecar_and_ephemeral_containers_are_judged():
    for kind in ("initContainers", "ephemeralContainers"):
        pod = _pod()
        pod[kind] = [{"name": "helper", "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}}]
        assert "helper: adds ['IPC_LOCK']" in pod_security_violations(pod, "baseline")
        pod[kind][0]["securityContext"] = copy.deepcopy(RESTRICTED_CONTAINER)
        pod[kind][0]["restartPolicy"] = "Always"  # a native sidecar is an init container like any other here
        assert pod_security_violations(pod, "restricted") == []


def test_restricted_volume_types_include_image_volumes():
    """check_restrictedVolumes.go allows configMap, csi, downwardAPI, emptyDir, ephemeral, image,
    persistentVolumeClaim, projected and secret."""
    pod = _pod()
    pod["volumes"] = [{"name": "weights", "image": {"reference": "registry.example/weights:1"}}]
    assert pod_security_violations(pod, "restricted") == []
    pod["volumes"] = [{"name": "share", "nfs": {"server": "nfs.example", "path": "/"}}]
    assert pod_security_violations(pod, "restricted") == ["volume 'share' of type ['nfs']"]
    assert pod_security_violations(pod, "baseline") == []
    pod["volumes"] = [{"name": "scratch", "hostPath": {"path": "/mnt/nvme"}}]
    assert pod_security_violations(pod, "baseline") == ["hostPath volume 'scratch'"]


@pytest.mark.parametrize(
    ("where", "field", "value", "refused"),
    [
        ("pod", "appArmorProfile", {"type": "Unconfined"}, "pod: appArmorProfile Unconfined"),
        ("app", "appArmorProfile", {"type": "Unconfined"}, "app: appArmorProfile Unconfined"),
        ("app", "procMount", "Unmasked", "app: procMount Unmasked"),
        ("pod", "seLinuxOptions", {"type": "spc_t"}, "pod: seLinuxOptions {'type': 'spc_t'}"),
        ("app", "seLinuxOptions", {"user": "system_u"}, "app: seLinuxOptions {'user': 'system_u'}"),
        ("pod", "sysctls", [{"name": "net.core.rmem_max", "value": "1"}], "pod: sysctl net.core.rmem_max"),
    ],
)
def test_baseline_security_context_checks(where, field, value, refused):
    pod = _pod()
    context = pod["securityContext"] if where == "pod" else pod["containers"][0]["securityContext"]
    context[field] = value
    assert pod_security_violations(pod, "baseline") == [refused]
    allowed = {
        "appArmorProfile": {"type": "RuntimeDefault"},
        "procMount": "Default",
        "seLinuxOptions": {"type": "container_t", "level": "s0:c1,c2"},
        "sysctls": [{"name": "net.ipv4.tcp_keepalive_time", "value": "60"}],
    }[field]
    context[field] = allowed
    assert pod_security_violations(pod, "baseline") == []


def test_probes_and_lifecycle_handlers_may_not_name_a_host():
    """check_hostProbesAndhostLifecycle.go (baseline, from Kubernetes 1.34)."""
    pod = _pod()
    pod["containers"][0]["readinessProbe"] = {"httpGet": {"path": "/", "port": 8080}}
    pod["containers"][0]["lifecycle"] = {"preStop": {"tcpSocket": {"port": 8080}}, "stopSignal": "SIGTERM"}
    assert pod_security_violations(pod, "baseline") == []
    pod["containers"][0]["lifecycle"]["preStop"]["tcpSocket"]["host"] = "10.0.0.1"
    assert pod_security_violations(pod, "baseline") == ["app: probe or lifecycle host ['10.0.0.1']"]
