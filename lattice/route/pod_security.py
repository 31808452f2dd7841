"""Pod Security admission: what the ``pod-security.kubernetes.io/enforce`` level of a namespace refuses in a pod.

The Pod Security Standards' checks, as kubernetes/pod-security-admission's policy package applies them (policy/
check_*.go at 8f84a87c, July 2026; the "Pod Security Standards" page lists them), for the Kubernetes versions
Lattice's clusters run (1.29 to 1.35, components/catalog/eks.py): where a check changed across those versions the
stricter reading is taken (host probes refused as from 1.34; the sysctls allowed since 1.29; no user-namespace
relaxation, which is 1.35's). Every check visits init, regular and ephemeral containers (visitContainers), and a
pod-level value is judged on its own: a container that overrides it does not excuse it. It reads the pod spec only
(not the deprecated seccomp / AppArmor annotations of the pod's metadata, which the job template never writes).

baseline: no host namespaces (check_hostNamespaces.go), no privileged container (check_privileged.go), capabilities
added only from the default set (check_capabilities_baseline.go), no hostPath volume (check_hostPathVolumes.go), no
hostPort (check_hostPorts.go), no seccomp profile Unconfined on the pod or a container
(check_seccompProfile_baseline.go), no AppArmor profile but RuntimeDefault / Localhost (check_appArmorProfile.go),
SELinux type only container_t / container_init_t / container_kvm_t and no user or role (check_seLinuxOptions.go),
procMount Default (check_procMount_baseline.go), only the safe sysctls (check_sysctls.go), no host in a probe or
lifecycle handler (check_hostProbesAndhostLifecycle.go);
restricted adds: allowPrivilegeEscalation false in every container (check_allowPrivilegeEscalation.go),
runAsNonRoot true on the pod or on every container and false nowhere (check_runAsNonRoot.go), runAsUser 0 nowhere
(check_runAsUser.go), a RuntimeDefault or Localhost seccomp profile on the pod or on every container and no other
anywhere (check_seccompProfile_restricted.go), every capability dropped and only NET_BIND_SERVICE added
(check_capabilities_restricted.go), and only these volume types (check_restrictedVolumes.go).
"""

from __future__ import annotations

ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
LEVELS = ("privileged", "baseline", "restricted")
BASELINE_CAPABILITIES = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP",
    "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}  # fmt: skip
RESTRICTED_VOLUMES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected",
    "secret",
}  # fmt: skip
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
}  # fmt: skip
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t"}
PROFILES = ("RuntimeDefault", "Localhost")  # the seccomp and AppArmor profile types restricted / baseline allow


def _probe_hosts(container: dict) -> list[str]:
    handlers = [container.get(p) for p in ("livenessProbe", "readinessProbe", "startupProbe")]
    # postStart / preStop; a lifecycle's stopSignal (Kubernetes 1.33) is a string, not a handler
    handlers += [h for h in container.get("lifecycle", {}).values() if isinstance(h, dict)]
    return [h[kind]["host"] for h in handlers if h for kind in ("httpGet", "tcpSocket") if h.get(kind, {}).get("host")]


def pod_security_violations(pod_spec: dict, level: str) -> list[str]:
    """What Pod Security admission at ``level`` (privileged, baseline or restricted) refuses in ``pod_spec``."""
    if level == "privileged":
        return []
    containers = [
        *pod_spec.get("initContainers", []), *pod_spec.get("containers", []), *pod_spec.get("ephemeralContainers", [])
    ]  # fmt: skip
    pod_context = pod_spec.get("securityContext", {})
    found: list[str] = []
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod_spec.get(key):
            found.append(f"{key}=true")
    for volume in pod_spec.get("volumes", []):
        kinds = set(volume) - {"name"}
        if "hostPath" in kinds:
            found.append(f"hostPath volume '{volume['name']}'")
        elif level == "restricted" and not kinds <= RESTRICTED_VOLUMES:
            found.append(f"volume '{volume['name']}' of type {sorted(kinds)}")
    # pod-level settings, each judged on its own
    seccomp = pod_context.get("seccompProfile", {}).get("type")
    if seccomp == "Unconfined" or (level == "restricted" and seccomp is not None and seccomp not in PROFILES):
        found.append(f"pod: seccompProfile {seccomp}")
    apparmor = pod_context.get("appArmorProfile", {}).get("type")
    if apparmor is not None and apparmor not in PROFILES:
        found.append(f"pod: appArmorProfile {apparmor}")
    for sysctl in pod_context.get("sysctls", []):
        if sysctl["name"] not in SAFE_SYSCTLS:
            found.append(f"pod: sysctl {sysctl['name']}")
    contexts = [("pod", pod_context)]
    if level == "restricted":
        if pod_context.get("runAsNonRoot") is False:
            found.append("pod: runAsNonRoot=false")
        if pod_context.get("runAsUser") == 0:
            found.append("pod: runAsUser=0")
    for c in containers:
        context = c.get("securityContext", {})
        name = c["name"]
        contexts.append((name, context))
        added = set(context.get("capabilities", {}).get("add", []))
        if context.get("privileged"):
            found.append(f"{name}: privileged")
        if added - BASELINE_CAPABILITIES:
            found.append(f"{name}: adds {sorted(added - BASELINE_CAPABILITIES)}")
        if any(port.get("hostPort") for port in c.get("ports", [])):
            found.append(f"{name}: hostPort")
        if context.get("seccompProfile", {}).get("type") == "Unconfined":
            found.append(f"{name}: seccompProfile Unconfined")
        if context.get("appArmorProfile", {}).get("type") not in (None, *PROFILES):
            found.append(f"{name}: appArmorProfile {context['appArmorProfile']['type']}")
        if context.get("procMount", "Default") != "Default":
            found.append(f"{name}: procMount {context['procMount']}")
        if _probe_hosts(c):
            found.append(f"{name}: probe or lifecycle host {_probe_hosts(c)}")
        if level != "restricted":
            continue
        if context.get("allowPrivilegeEscalation") is not False:
            found.append(f"{name}: allowPrivilegeEscalation != false")
        if context.get("runAsNonRoot", pod_context.get("runAsNonRoot")) is not True:
            found.append(f"{name}: runAsNonRoot != true")
        if context.get("runAsUser") == 0:
            found.append(f"{name}: runAsUser=0")
        profile = context.get("seccompProfile", pod_context.get("seccompProfile", {})).get("type")
        if profile not in PROFILES and profile != "Unconfined":  # Unconfined is reported above, at every level
            found.append(f"{name}: seccompProfile {profile}")
        if "ALL" not in context.get("capabilities", {}).get("drop", []):
            found.append(f"{name}: capabilities not dropping ALL")
        if added - {"NET_BIND_SERVICE"}:
            found.append(f"{name}: adds {sorted(added - {'NET_BIND_SERVICE'})} under restricted")
    for who, context in contexts:
        options = context.get("seLinuxOptions", {})
        if options.get("type", "") not in SELINUX_TYPES or options.get("user") or options.get("role"):
            found.append(f"{who}: seLinuxOptions {options}")
    return found
