"""Every rule: compliant on the baseline, violated by its counterexample with its exact message,
plus the edge cases that matter for each concern."""

from __future__ import annotations

import copy

import pytest

from lattice.check.evaluate import PolicyConfig, evaluate
from tests.policies.helpers import EVERYTHING_MANDATORY, apply_counterexample, edit

# The message each rule's counterexample must produce (a fragment of it).
COUNTEREXAMPLE_MESSAGE = {
    "amp-workspace-kms": "no kms_key_arn: the workspace's series are encrypted with an AWS-owned key",
    "cloudtrail-bucket-object-lock": "object lock retains CloudTrail logs for 30 days; at least 365 required",
    "cloudtrail-kms": "log files are encrypted with S3-managed keys only",
    "critical-alerts-routed": "GpuXidCritical, GpuDoubleBitEcc, GpuRowRemapFailure reach no receiver that sends "
    "anywhere",
    "cloudtrail-logging-enabled": "the trail is stopped",
    "cloudtrail-log-validation": "log file validation is off",
    "cloudtrail-multi-region": "the trail records one region only",
    "ebs-volume-encryption": "encrypted with the AWS-managed aws/ebs key",
    "efa-fully-wired": "1 of 32 EFA interfaces wired on p5.48xlarge: 100 of 3,200 Gbps",
    "efa-placement-group": "EFA instances without a placement group",
    "eks-control-plane-logging": "control-plane log types audit, authenticator are not enabled",
    "eks-private-endpoint": "the API endpoint is public to 0.0.0.0/0",
    "eks-secrets-encryption": "secrets are not envelope-encrypted with a KMS key",
    "fsx-lustre-backup-retention": "automatic backups are kept 3 days; at least 7 required",
    "fsx-lustre-kms": "no kms_key_id",
    "gcp-data-access-audit": "project lattice-baseline does not record DATA_READ, DATA_WRITE audit logs",
    "gcp-audit-log-store": "the audit log bucket is not locked",
    "cloudtrail-management-events": "the advanced event selectors select no management events",
    "gcp-kms-key-enabled": "the key's primary version is DISABLED, not ENABLED: nothing can encrypt or decrypt with it",
    "gcp-kms-key-rotation": "the key never rotates",
    "cloudtrail-cloudwatch-logs": "the trail delivers to no CloudWatch Logs group",
    "eks-supported-version": "Kubernetes 1.28 is not a version EKS supports",
    "kms-key-policy-no-wildcard": "statement 'RolesUseTheKeyThroughS3' allows every principal (*) without a condition",
    "s3-access-logging": "the bucket records no server access logs",
    "gcs-access-logging": "the bucket records no usage logs",
    "gcs-versioning": "versioning is off: an overwritten or deleted object cannot be brought back",
    "gke-control-plane-access": "master authorized networks are off",
    "gke-metadata-server": "workload metadata mode is 'GCE_METADATA'",
    "gke-network-policy": "NetworkPolicy is not enforced",
    "gke-node-service-account": "the node pool runs as the Compute Engine default service account",
    "gke-shielded-nodes": "secure boot is off",
    "gpu-metrics-and-alerts": "the DCGM exporter's ServiceMonitor is off: no Prometheus scrapes the GPUs",
    "gpu-nic-fabric-complete": "0 of 4 additional node networks attached on a3-highgpu-8g (4 GPU NICs carrying 800 "
    "Gbps together): the NICs left out stay dark",
    "no-plaintext-secrets": "input metadata.annotations.lattice.dev/note holds an AWS access key ID in plain text",
    "ec2-no-public-ip": "network interface(s) at device index 0 ask for a public IP address",
    "imdsv2-required": "http_tokens is 'optional': IMDSv1 answers without a session token; require IMDSv2",
    "instance-volume-encryption": "the root volume is not encrypted",
    "user-data-no-secrets": "user data holds an AWS access key ID in plain text",
    "gcp-subnetwork-flow-logs": "the subnetwork records no VPC flow logs",
    "gcs-cmek": "no default KMS key",
    "gcs-locked-retention": "the retention policy of an immutable bucket is not locked",
    "gcs-public-access-prevention": "public access prevention is 'inherited'",
    "gcs-uniform-access": "uniform bucket-level access is off",
    "gke-logging": "logging_config leaves out WORKLOADS",
    "gke-private-nodes": "nodes get public IP addresses",
    "gke-secrets-encryption": "application-layer secrets encryption is off",
    "kms-key-rotation": "automatic key rotation is off",
    "kueue-flavor-topology": "flavor 'train-p5': EKS labels p5.48xlarge nodes with EC2's network topology",
    "multikueue-data-residency": "MultiKueueConfig 'climate' dispatches restricted data to 'aws-use1' (cloud); "
    "restricted data stays on grid sites",
    "monitoring-credentials-from-secrets": "grafana.adminPassword is a value of the Helm release; take it from a "
    "Secret",
    "multikueue-kubeconfig-secret": "the kubeconfig of MultiKueueCluster 'aws-use1' is in plain text in the plan; "
    "pass it as a Pulumi secret",
    "launch-template-volume-encryption": "block device /dev/xvda is not encrypted",
    "log-group-kms": "the log group is not encrypted with a customer-managed key",
    "log-group-retention": "logs are kept 30 days; at least 365 required",
    "lustre-checkpoint-budget": "2,344 MB/s writes a 980 GB checkpoint in 418 s; the budget is 60 s",
    "managed-lustre-cmek": "no kms_key",
    "no-cluster-admin-for-non-admin-groups": "Group 'climate-ml' is bound to cluster-admin",
    "no-world-admin-ingress": "ingress opens port(s) 22 to the internet",
    "protect-stateful-resources": "this stateful resource is not protected",
    "required-tags": "missing tags lattice:stack, lattice:site",
    "s3-bucket-kms-encryption": "encryption uses 'AES256', not a KMS key",
    "s3-bucket-versioning": "versioning is Suspended; enable it",
    "s3-checkpoint-lifecycle": "a checkpoint bucket has no enabled lifecycle rule",
    "s3-public-access-block": "public access block leaves restrictPublicBuckets off",
    "s3-tls-only": "no bucket policy denies requests made without TLS",
    "slurm-pool-single-owner": "NodeSet 'ib-h100-slurm' (every node) and Kueue flavor 'train-p5' can claim the same "
    "nodes: both schedulers would book their GPUs",
    "team-namespace-isolation": "team namespace 'climate' has no valid pod-security.kubernetes.io/enforce label; "
    "set it to one of restricted, baseline, privileged",
    "vpn-ikev2": "tunnel1 allows ikev1",
    "vpn-strong-crypto": "tunnel2 phase1 allows weak DH groups: 2",
    "vpn-tunnel-logging": "tunnel2 does not log to CloudWatch Logs",
    "vpn-preshared-key": "tunnel1's pre-shared key is in plain text in the plan; pass it as a Pulumi secret",
}


LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
NAMESPACE = "kubernetes:core/v1:Namespace"
QUOTA = "kubernetes:core/v1:ResourceQuota"
NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
LOCAL_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"


def _deny(plan):
    return next(r for r in plan["resources"] if r["type"] == NETPOL and r["name"] == "team-deny")["inputs"]["spec"]


def _team_labels(plan, **changes):
    """The team namespace's metadata with labels changed (None removes one)."""
    metadata = copy.deepcopy(next(r for r in plan["resources"] if r["type"] == NAMESPACE)["inputs"]["metadata"])
    for key, value in changes.items():
        if value is None:
            metadata["labels"].pop(key)
        else:
            metadata["labels"][key] = value
    return metadata


def _trail_log_group(plan, days: int):
    """The baseline's log group as the one its trail delivers to (the name in the trail's log group ARN), keeping
    records ``days`` days."""
    out = edit(plan, "aws:cloudwatch/logGroup:LogGroup", "logs", retentionInDays=days)
    group = next(r for r in out["resources"] if r["type"] == "aws:cloudwatch/logGroup:LogGroup" and r["name"] == "logs")
    group["inputs"]["name"] = "/aws/cloudtrail/baseline"
    return out


def findings(plan, config=EVERYTHING_MANDATORY):
    result = evaluate(plan, config)
    assert result.errors == [], "a rule raised instead of judging"
    return [(f.policy, f.message) for f in result.findings]


def test_the_baseline_is_compliant(baseline):
    assert findings(baseline) == []


def test_every_rule_has_a_counterexample_message(rules):
    # monthly-budget's cases need a stack spec with a budget, which the baseline has none of: they are in
    # tests/policies/test_budget.py (compliant and over budget, stack and team, dev and prod, a waiver).
    # network-paths-delivered needs a spec with sites and links: tests/policies/test_network_paths.py.
    assert set(COUNTEREXAMPLE_MESSAGE) == set(rules) - {"monthly-budget", "network-paths-delivered"}


@pytest.mark.parametrize("name", sorted(COUNTEREXAMPLE_MESSAGE))
def test_counterexample_fires_exactly_its_rule(name, rules, baseline):
    result = findings(apply_counterexample(baseline, rules[name]))
    assert [policy for policy, _ in result] == [name]
    assert COUNTEREXAMPLE_MESSAGE[name] in result[0][1]


BUCKET_SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
LOCK = "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration"


GKE = "gcp:container/cluster:Cluster"
GKE_POOL = "gcp:container/nodePool:NodePool"
GCS = "gcp:storage/bucket:Bucket"
GCS_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"


def _input(plan, type_token, name, key):
    return next(r for r in plan["resources"] if r["type"] == type_token and r["name"] == name)["inputs"][key]


def _retype(plan, type_token, name, new_type):
    out = copy.deepcopy(plan)
    resource = next(r for r in out["resources"] if r["type"] == type_token and r["name"] == name)
    resource["type"] = new_type
    return out


def _inline_encryption(plan):
    out = _without(plan, BUCKET_SSE, "data")
    bucket = next(r for r in out["resources"] if r["type"] == "aws:s3/bucket:Bucket" and r["name"] == "data")
    bucket["inputs"]["serverSideEncryptionConfiguration"] = {
        "rule": {"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms", "kmsMasterKeyId": "arn:k"}}
    }
    return out


def _trail_by_bucket_id(plan):
    out = copy.deepcopy(plan)
    trail = next(r for r in out["resources"] if r["type"] == "aws:cloudtrail/trail:Trail")
    bucket = next(r for r in out["resources"] if r["type"] == "aws:s3/bucket:Bucket" and r["name"] == "trail")
    trail["inputs"]["s3BucketName"] = "trail-0f3a"  # an id, not the bucket's name
    trail["dependencies"] = [*trail["dependencies"], bucket["urn"]]
    return out


def _template(plan):
    return next(r for r in plan["resources"] if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate")


def _labels_without_immutable(plan):
    bucket = next(r for r in plan["resources"] if r["type"] == "gcp:storage/bucket:Bucket")
    return {k: v for k, v in bucket["inputs"]["labels"].items() if k != "lattice-immutable"}


def _with_options(plan, type_token, name, **options):
    """A copy of ``plan`` with resource options (protect, retainOnDelete) of one resource replaced."""
    out = copy.deepcopy(plan)
    next(r for r in out["resources"] if r["type"] == type_token and r["name"] == name).update(options)
    return out


def _without(plan, type_token, name):
    out = dict(plan)
    out["resources"] = [r for r in plan["resources"] if not (r["type"] == type_token and r["name"] == name)]
    return out


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        # S3 joins: a missing sub-resource is a violation on the bucket
        (lambda p: _without(p, BUCKET_SSE, "data"), ("s3-bucket-kms-encryption", "no server-side encryption")),
        (
            lambda p: _without(p, "aws:s3/bucketVersioning:BucketVersioning", "data"),
            ("s3-bucket-versioning", "versioning is not configured"),
        ),
        # pulumi-aws 7 still ships BucketV2: a V2 bucket without encryption is still caught
        (
            lambda p: _without(
                _retype(p, "aws:s3/bucket:Bucket", "data", "aws:s3/bucketV2:BucketV2"), BUCKET_SSE, "data"
            ),
            ("s3-bucket-kms-encryption", "no server-side encryption"),
        ),
        # a trail that takes bucket.id still joins its bucket; a GOVERNANCE lock is refused
        (
            lambda p: edit(
                _trail_by_bucket_id(p),
                "aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration",
                "trail",
                rule={"defaultRetention": {"mode": "GOVERNANCE", "days": 365}},
            ),
            ("cloudtrail-bucket-object-lock", "object lock mode is GOVERNANCE; COMPLIANCE is required"),
        ),
        # log groups: unset retention means "forever", which the rule refuses
        (
            lambda p: edit(p, "aws:cloudwatch/logGroup:LogGroup", "logs", retentionInDays=None),
            ("log-group-retention", "no retention is set"),
        ),
        # EKS: an unset endpointPublicAccess defaults to public for the world
        (
            lambda p: edit(p, "aws:eks/cluster:Cluster", "eks", vpcConfig={"subnetIds": ["subnet-0a"]}),
            ("eks-private-endpoint", "public to 0.0.0.0/0"),
        ),
        # VPN: unpinned lists let AWS offer weak defaults
        (
            lambda p: edit(p, "aws:ec2/vpnConnection:VpnConnection", "vpn", tunnel1Phase2IntegrityAlgorithms=None),
            ("vpn-strong-crypto", "tunnel1 phase2 integrity algorithms are not pinned"),
        ),
        (
            lambda p: edit(p, "gcp:compute/vPNTunnel:VPNTunnel", "tunnel", ikeVersion=1),
            ("vpn-ikev2", "the tunnel uses IKEv1"),
        ),
        # Cloud VPN: no cipher suite accepts every supported cipher; CBC needs pinned integrity, GCM does not
        (
            lambda p: edit(p, "gcp:compute/vPNTunnel:VPNTunnel", "tunnel", cipherSuite=None),
            ("vpn-strong-crypto", "the tunnel pins no cipher_suite"),
        ),
        (
            lambda p: edit(
                p,
                "gcp:compute/vPNTunnel:VPNTunnel",
                "tunnel",
                cipherSuite={
                    "phase1": {
                        "encryptions": ["AES-GCM-16-256"],
                        "prves": ["PRF-HMAC-SHA2-384"],
                        "dhs": ["Group-20", "Group-2"],
                    },
                    "phase2": {"encryptions": ["AES-GCM-16-256"], "pfs": ["Group-20"]},
                },
            ),
            ("vpn-strong-crypto", "phase1 allows weak DH groups: Group-2"),
        ),
        (
            lambda p: edit(
                p,
                "gcp:compute/vPNTunnel:VPNTunnel",
                "tunnel",
                cipherSuite={
                    "phase1": {"encryptions": ["AES-CBC-256"], "prves": ["PRF-HMAC-SHA2-384"], "dhs": ["Group-20"]},
                    "phase2": {
                        "encryptions": ["AES-CBC-256"],
                        "pfs": ["Group-20"],
                        "integrities": ["HMAC-SHA2-256-128"],
                    },
                },
            ),
            ("vpn-strong-crypto", "phase1 integrity algorithms are not pinned"),
        ),
        # CloudTrail: management reads only, basic selectors off, no global services
        (
            lambda p: edit(
                p,
                "aws:cloudtrail/trail:Trail",
                "trail",
                advancedEventSelectors=[
                    {
                        "name": "m",
                        "fieldSelectors": [
                            {"field": "eventCategory", "equals": ["Management"]},
                            {"field": "readOnly", "equals": ["true"]},
                        ],
                    }
                ],
            ),
            ("cloudtrail-management-events", "keeps only reads or only writes"),
        ),
        (
            lambda p: edit(
                p,
                "aws:cloudtrail/trail:Trail",
                "trail",
                advancedEventSelectors=None,
                eventSelectors=[{"includeManagementEvents": False}],
            ),
            ("cloudtrail-management-events", "an event selector turns management events off"),
        ),
        (
            lambda p: edit(p, "aws:cloudtrail/trail:Trail", "trail", includeGlobalServiceEvents=False),
            ("cloudtrail-management-events", "leaves out global service events"),
        ),
        # GCP audit log store: short retention, no customer key, no sink at all
        (
            lambda p: edit(p, "gcp:logging/projectBucketConfig:ProjectBucketConfig", "audit-store", retentionDays=30),
            ("gcp-audit-log-store", "keeps logs 30 days; at least 365 required"),
        ),
        (
            lambda p: edit(p, "gcp:logging/projectBucketConfig:ProjectBucketConfig", "audit-store", cmekSettings=None),
            ("gcp-audit-log-store", "is not encrypted with a customer-managed key"),
        ),
        (
            lambda p: edit(p, "gcp:logging/projectSink:ProjectSink", "audit-sink", filter='severity>="ERROR"'),
            ("gcp-audit-log-store", "project lattice-baseline sinks its audit logs into no log bucket"),
        ),
        # data-access audit: per-service configs count as much as allServices
        (
            lambda p: edit(p, "gcp:projects/iAMAuditConfig:IAMAuditConfig", "audit", service="storage.googleapis.com"),
            ("gcp-data-access-audit", "does not record ADMIN_READ, DATA_READ, DATA_WRITE audit logs for container"),
        ),
        # Cloud VPN: weak phase 2 or PRF
        (
            lambda p: edit(
                p,
                "gcp:compute/vPNTunnel:VPNTunnel",
                "tunnel",
                cipherSuite={
                    "phase1": {"encryptions": ["AES-GCM-16-256"], "prves": ["PRF-HMAC-SHA1"], "dhs": ["Group-20"]},
                    "phase2": {"encryptions": ["AES-GCM-16-256"], "pfs": ["Group-20"]},
                },
            ),
            ("vpn-strong-crypto", "phase1 allows weak PRFs: PRF-HMAC-SHA1"),
        ),
        (
            lambda p: edit(
                p,
                "gcp:compute/vPNTunnel:VPNTunnel",
                "tunnel",
                cipherSuite={
                    "phase1": {"encryptions": ["AES-GCM-16-256"], "prves": ["PRF-HMAC-SHA2-384"], "dhs": ["Group-20"]},
                    "phase2": {"encryptions": ["AES-GCM-16-256"], "pfs": ["Group-2"]},
                },
            ),
            ("vpn-strong-crypto", "phase2 allows weak PFS groups: Group-2"),
        ),
        # AWS tunnel logs: logging on without a log group is no logging
        (
            lambda p: edit(
                p,
                "aws:ec2/vpnConnection:VpnConnection",
                "vpn",
                tunnel2LogOptions={
                    "cloudwatchLogOptions": {
                        "logEnabled": True,
                        "bgpLogEnabled": True,
                        "bgpLogGroupArn": "arn:aws:logs:us-east-1:1:log-group:x",
                    }
                },
            ),
            ("vpn-tunnel-logging", "tunnel2 does not log to CloudWatch Logs"),
        ),
        # a GCP tunnel's key in plain text in an offline plan was never a secret
        (
            lambda p: edit(
                p, "gcp:compute/vPNTunnel:VPNTunnel", "tunnel", sharedSecret="Plain.text.key.long.enough.12345"
            ),
            ("vpn-preshared-key", "the tunnel's pre-shared key is in plain text in the plan"),
        ),
        # AWS tunnel logs: a BGP connection logs its sessions too
        (
            lambda p: edit(
                p,
                "aws:ec2/vpnConnection:VpnConnection",
                "vpn",
                tunnel1LogOptions={
                    "cloudwatchLogOptions": {"logEnabled": True, "logGroupArn": "arn:aws:logs:us-east-1:1:log-group:x"}
                },
            ),
            ("vpn-tunnel-logging", "tunnel1 does not log its BGP sessions"),
        ),
        # pre-shared keys: set on every tunnel, in AWS's alphabet
        (
            lambda p: edit(p, "aws:ec2/vpnConnection:VpnConnection", "vpn", tunnel2PresharedKey=None),
            ("vpn-preshared-key", "tunnel2 sets no pre-shared key"),
        ),
        (
            lambda p: edit(p, "gcp:compute/vPNTunnel:VPNTunnel", "tunnel", sharedSecret=None),
            ("vpn-preshared-key", "the tunnel sets no pre-shared key"),
        ),
        # firewall and rule-style ingress
        (
            lambda p: edit(p, "gcp:compute/firewall:Firewall", "ssh-from-vpn", sourceRanges=["0.0.0.0/0"]),
            ("no-world-admin-ingress", "the firewall opens port(s) 22 to the internet"),
        ),
        (
            lambda p: edit(
                p, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "ssh-vpn", cidrIpv4="0.0.0.0/0"
            ),
            ("no-world-admin-ingress", "the rule opens port(s) 22 to the internet"),
        ),
        (
            lambda p: edit(p, "aws:ec2/securityGroupRule:SecurityGroupRule", "https", protocol="-1"),
            ("no-world-admin-ingress", "opens port(s) 22, 3389, 2379, 2380, 6443, 10250"),
        ),
        # EFA: the primary must sit on card 0 / device 0
        (
            lambda p: edit(
                p,
                "aws:ec2/launchTemplate:LaunchTemplate",
                "gpu",
                networkInterfaces=[{**i, "deviceIndex": 1} for i in _template(p)["inputs"]["networkInterfaces"]],
            ),
            ("efa-fully-wired", "no primary interface on network card 0 / device index 0"),
        ),
        # FSx: scratch cannot use a customer key at all
        (
            # (large enough that its 100 MB/s/TiB of writes still meets the checkpoint budget)
            lambda p: edit(
                p,
                "aws:fsx/lustreFileSystem:LustreFileSystem",
                "lustre",
                deploymentType="SCRATCH_2",
                storageCapacity=168000,
            ),
            ("fsx-lustre-kms", "SCRATCH_2 file systems cannot use a customer-managed key"),
        ),
        # the managed metrics store: encrypted, but logging nowhere
        (
            lambda p: edit(p, "aws:amp/workspace:Workspace", "metrics", loggingConfiguration=None),
            ("amp-workspace-kms", "no logging_configuration: rejected writes and throttling are logged nowhere"),
        ),
        # GKE: logging switched off entirely
        (
            lambda p: edit(p, "gcp:container/cluster:Cluster", "gke", loggingService="none"),
            ("gke-logging", "logging_service is 'none'"),
        ),
        # EBS: not encrypted at all
        (
            lambda p: edit(p, "aws:ebs/volume:Volume", "scratch", encrypted=False),
            ("ebs-volume-encryption", "the volume is not encrypted"),
        ),
        # stateful resources are retained on delete too, their versioning and object lock included
        (
            lambda p: _with_options(p, "aws:kms/key:Key", "key", retainOnDelete=False),
            ("protect-stateful-resources", "this stateful resource is not retained on delete"),
        ),
        (
            lambda p: _with_options(p, LOCK, "trail", retainOnDelete=False),
            ("protect-stateful-resources", "this stateful resource is not retained on delete"),
        ),
        (
            lambda p: _with_options(p, "aws:s3/bucketVersioning:BucketVersioning", "data", protect=False),
            ("protect-stateful-resources", "this stateful resource is not protected"),
        ),
        # KMS: rotation on but too slow
        (
            lambda p: edit(p, "aws:kms/key:Key", "key", rotationPeriodInDays=730),
            ("kms-key-rotation", "the key rotates every 730 days; at most 365 allowed"),
        ),
        # team namespaces: every part of the isolation contract, one at a time
        (
            lambda p: edit(p, QUOTA, "team-compute", spec={"hard": {"requests.memory": "2112Gi"}}),
            ("team-namespace-isolation", "team namespace 'climate' has no ResourceQuota on cpu"),
        ),
        (
            lambda p: _without(p, QUOTA, "team-gpu"),
            ("team-namespace-isolation", "team namespace 'climate' has no ResourceQuota on an accelerator"),
        ),
        (
            lambda p: _without(p, "kubernetes:core/v1:LimitRange", "team"),
            ("team-namespace-isolation", "team namespace 'climate' has no LimitRange"),
        ),
        (
            lambda p: edit(p, NETPOL, "team-deny", spec={**_deny(p), "ingress": [{"from": [{"podSelector": {}}]}]}),
            ("team-namespace-isolation", "team namespace 'climate' has no default-deny NetworkPolicy"),
        ),
        (
            lambda p: edit(p, NETPOL, "team-deny", spec={**_deny(p), "policyTypes": ["Ingress"]}),
            ("team-namespace-isolation", "team namespace 'climate' has no default-deny NetworkPolicy"),
        ),
        (
            lambda p: edit(p, NETPOL, "team-deny", spec={**_deny(p), "podSelector": {"matchLabels": {"app": "x"}}}),
            ("team-namespace-isolation", "team namespace 'climate' has no default-deny NetworkPolicy"),
        ),
        (
            lambda p: edit(p, LOCAL_QUEUE, "team-local-queue", metadata={"name": "gpus", "namespace": "materials"}),
            ("team-namespace-isolation", "team namespace 'climate' has no Kueue LocalQueue, though its cluster runs"),
        ),
        (
            lambda p: edit(
                p, NAMESPACE, "team", metadata=_team_labels(p, **{"pod-security.kubernetes.io/enforce": "off"})
            ),
            ("team-namespace-isolation", "has no valid pod-security.kubernetes.io/enforce label ('off')"),
        ),
        # GKE: a world-open authorized network, auto-provisioning on the default account, shielding turned off
        (
            lambda p: edit(
                p,
                GKE,
                "gke",
                masterAuthorizedNetworksConfig={"cidrBlocks": [{"cidrBlock": "0.0.0.0/0", "displayName": "all"}]},
            ),
            ("gke-control-plane-access", "master authorized networks admit 0.0.0.0/0: the control plane is public"),
        ),
        (
            lambda p: edit(p, GKE, "gke", clusterAutoscaling={"enabled": True, "autoProvisioningDefaults": {}}),
            ("gke-node-service-account", "auto-provisioned nodes run as the Compute Engine default service account"),
        ),
        (
            lambda p: edit(p, GKE, "gke", enableShieldedNodes=False),
            ("gke-shielded-nodes", "shielded GKE nodes are off"),
        ),
        (
            lambda p: edit(
                p,
                GKE_POOL,
                "gpu",
                nodeConfig={
                    **_input(p, GKE_POOL, "gpu", "nodeConfig"),
                    "shieldedInstanceConfig": {"enableSecureBoot": True, "enableIntegrityMonitoring": False},
                },
            ),
            ("gke-shielded-nodes", "integrity monitoring is off"),
        ),
        (
            lambda p: edit(
                p,
                GKE_POOL,
                "gpu",
                nodeConfig={
                    **_input(p, GKE_POOL, "gpu", "nodeConfig"),
                    "serviceAccount": "123456789012-compute@developer.gserviceaccount.com",
                },
            ),
            ("gke-node-service-account", "the node pool runs as the Compute Engine default service account"),
        ),
        # GCS: a hierarchical-namespace bucket with soft delete off; a log bucket nobody logs into and nobody may write
        (
            lambda p: edit(
                p,
                GCS,
                "gcs-logs",
                versioning=None,
                hierarchicalNamespace={"enabled": True},
                softDeletePolicy={"retentionDurationSeconds": 0},
            ),
            ("gcs-versioning", "a hierarchical-namespace bucket with soft delete off"),
        ),
        (
            lambda p: _without(
                edit(p, GCS, "gcs", logging={"logBucket": "another-stacks-logs"}), GCS_MEMBER, "gcs-logs-writer"
            ),
            ("gcs-access-logging", "the bucket records no usage logs"),
        ),
        # a namespaced binding of a team group to cluster-admin is as bad as a cluster-wide one
        (
            lambda p: edit(
                p,
                "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
                "team",
                roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            ),
            ("no-cluster-admin-for-non-admin-groups", "Group 'climate-ml' is bound to cluster-admin"),
        ),
        # the trail's log group (joined by the name in its ARN) keeps records longer than the bucket locks them
        (
            lambda p: _trail_log_group(p, 731),
            (
                "cloudtrail-bucket-object-lock",
                "object lock retains CloudTrail logs for 365 days and the trail's CloudWatch log group keeps them 731",
            ),
        ),
        # a labels-like field under another name than tags: an FSx file system's final backup goes untagged
        (
            lambda p: edit(p, "aws:fsx/lustreFileSystem:LustreFileSystem", "lustre", finalBackupTags=None),
            ("required-tags", "missing finalBackupTags lattice:stack, lattice:site"),
        ),
    ],
)
def test_edge_cases(change, expected, baseline):
    result = findings(change(baseline))
    assert len(result) == 1 and result[0][0] == expected[0], result
    assert expected[1] in result[0][1]


@pytest.mark.parametrize(
    "change",
    [
        # public endpoint scoped to named networks is allowed
        lambda p: edit(
            p,
            "aws:eks/cluster:Cluster",
            "eks",
            vpcConfig={"subnetIds": ["s"], "endpointPublicAccess": True, "publicAccessCidrs": ["198.51.100.0/24"]},
        ),
        # the trail's log group keeps records no longer than the bucket locks them
        lambda p: _trail_log_group(p, 365),
        # asymmetric keys cannot rotate; the rule does not apply
        lambda p: edit(p, "aws:kms/key:Key", "key", enableKeyRotation=False, customerMasterKeySpec="RSA_4096"),
        # cluster-admin for an admin group, and other roles for anyone, are fine
        lambda p: edit(
            p,
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
            "platform-admins",
            roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            subjects=[{"kind": "Group", "name": "everyone"}],
        ),
        # an unlabelled GCS bucket need not be locked
        lambda p: edit(
            p,
            "gcp:storage/bucket:Bucket",
            "gcs",
            labels=_labels_without_immutable(p),
            retentionPolicy=None,
            versioning={"enabled": True},
        ),
        # EFA templates the catalog cannot judge: type set on the node group, or an HPC type outside it
        lambda p: edit(p, "aws:ec2/launchTemplate:LaunchTemplate", "gpu", instanceType=None),
        lambda p: edit(p, "aws:ec2/launchTemplate:LaunchTemplate", "gpu", instanceType="hpc7a.96xlarge"),
        # ICMP from anywhere opens no port
        lambda p: edit(
            p,
            "gcp:compute/firewall:Firewall",
            "ssh-from-vpn",
            sourceRanges=["0.0.0.0/0"],
            allows=[{"protocol": "icmp"}],
        ),
        # the deprecated inline encryption argument still encrypts
        _inline_encryption,
        # the policy condition may be a list
        lambda p: edit(
            p,
            "aws:s3/bucketPolicy:BucketPolicy",
            "data",
            policy='{"Statement": [{"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": ["false"]}}}]}',
        ),
        # HTTPS to the world is not an admin port
        lambda p: edit(p, "aws:ec2/securityGroupRule:SecurityGroupRule", "https", fromPort=80, toPort=443),
        # a plan that does not record retainOnDelete (as CrossGuard's analyzer never hands it over) is judged on
        # protect alone
        lambda p: {**p, "resources": [{k: v for k, v in r.items() if k != "retainOnDelete"} for r in p["resources"]]},
        # a namespace that is not a team's is not held to the team contract
        lambda p: _without(
            edit(p, NAMESPACE, "team", metadata=_team_labels(p, **{"lattice.dev/team": None})), QUOTA, "team-gpu"
        ),
        # a cluster without Kueue (no accelerator pools) has no queue to give a team
        lambda p: _without(_without(p, LOCAL_QUEUE, "team-local-queue"), CLUSTER_QUEUE, "team-queue"),
        # GKE: NetworkPolicy through the add-on instead of Dataplane V2; authorized networks: the cluster's own only
        lambda p: edit(p, GKE, "gke", datapathProvider=None, networkPolicy={"enabled": True, "provider": "CALICO"}),
        lambda p: edit(p, GKE, "gke", masterAuthorizedNetworksConfig={}),
        # a cluster that removes its default pool and sets no node_config is judged through its node pools
        lambda p: edit(p, GKE, "gke", nodeConfig=None),
        # Autopilot: metadata server, shielding and NetworkPolicy are GKE's, nodes run as the provisioning account
        lambda p: edit(
            p,
            GKE,
            "gke",
            enableAutopilot=True,
            datapathProvider=None,
            nodeConfig=None,
            removeDefaultNodePool=None,
            clusterAutoscaling={"autoProvisioningDefaults": {"serviceAccount": "nodes@p.iam.gserviceaccount.com"}},
        ),
        # a log bucket for another stack's buckets is known by Cloud Storage's write grant on it
        lambda p: edit(p, GCS, "gcs", logging={"logBucket": "another-stacks-logs"}),
        # a quota may name cpu and memory bare
        lambda p: edit(p, QUOTA, "team-compute", spec={"hard": {"cpu": "208", "memory": "2112Gi"}}),
    ],
)
def test_compliant_variations(change, baseline):
    assert findings(change(baseline)) == []


@pytest.mark.parametrize(
    ("required", "locked", "violation"),
    [
        ("GOVERNANCE", "COMPLIANCE", None),  # the stronger mode meets the weaker requirement
        ("GOVERNANCE", "GOVERNANCE", None),
        (
            "COMPLIANCE",
            "GOVERNANCE",
            "object lock mode is GOVERNANCE; COMPLIANCE is required (GOVERNANCE can be bypassed by privileged users)",
        ),
    ],
)
def test_cloudtrail_lock_mode_is_at_least_the_configured_one(baseline, required, locked, violation):
    plan = edit(baseline, LOCK, "trail", rule={"defaultRetention": {"mode": locked, "days": 365}})
    config = PolicyConfig(levels={"all": "mandatory"}, settings={"cloudtrail-bucket-object-lock": {"mode": required}})
    result = findings(plan, config)
    assert result == ([("cloudtrail-bucket-object-lock", violation)] if violation else [])


def test_config_overrides_thresholds(baseline, rules):
    strict = PolicyConfig(levels={"all": "mandatory"}, settings={"log-group-retention": {"minimumDays": 731}})
    assert findings(baseline, strict) == [("log-group-retention", "logs are kept 365 days; at least 731 required")]


def test_disabled_rules_and_severity_threshold(baseline, rules):
    mutated = apply_counterexample(baseline, rules["log-group-retention"])
    off = PolicyConfig(levels={"all": "mandatory", "log-group-retention": "disabled"}, settings={})
    assert findings(mutated, off) == []
    result = evaluate(mutated, EVERYTHING_MANDATORY, severity_threshold="high")
    assert "log-group-retention" not in result.rules and result.findings == []


def test_preview_unknowns_cannot_be_checked(baseline_preview):
    result = evaluate(baseline_preview, EVERYTHING_MANDATORY)
    assert result.findings == []
    notes = {n.policy: n.message for n in result.not_checked}
    assert notes["eks-secrets-encryption"] == (
        "cannot be checked in preview: string value at .encryptionConfig.provider.keyArn can't be known during preview"
    )
    assert "log-group-retention" not in notes  # a literal retention is known in preview


def test_advisory_findings_do_not_block(baseline, rules):
    mutated = apply_counterexample(baseline, rules["gcs-uniform-access"])
    result = evaluate(mutated, PolicyConfig(levels={"all": "advisory"}, settings={}))
    assert [(f.policy, f.enforcement, f.blocking) for f in result.findings] == [
        ("gcs-uniform-access", "advisory", False)
    ]


VPN = "aws:ec2/vpnConnection:VpnConnection"


@pytest.mark.parametrize(
    ("key", "messages"),
    [
        ("Strong.enough.key.of.forty.characters.x", []),  # under CrossGuard a decrypted key is judged for strength
        ("Sh0rt.key", ["tunnel1's pre-shared key has 9 characters; at least 32 required"]),
        ("0" + "k" * 39, ["tunnel1's pre-shared key uses characters AWS refuses"]),
        ("k" * 39 + "-", ["tunnel1's pre-shared key uses characters AWS refuses"]),
    ],
)
def test_visible_preshared_keys_are_judged_for_strength_not_secrecy(baseline, key, messages):
    # A live or CrossGuard view shows secrets decrypted (pulumi-policy#241): secrecy cannot be judged there.
    result = evaluate(edit(baseline, VPN, "vpn", tunnel1PresharedKey=key), EVERYTHING_MANDATORY, secrets_redacted=False)
    found = [f.message for f in result.findings if f.policy == "vpn-preshared-key"]
    assert len(found) == len(messages) and all(m in f for m, f in zip(messages, found, strict=True)), found


def test_a_redacted_key_is_a_secret_and_passes(baseline):
    vpn = next(r for r in baseline["resources"] if r["type"] == VPN)
    assert vpn["inputs"]["tunnel1PresharedKey"]["value"] == "[secret]"  # the engine's redaction, not the key
    assert [f for f in evaluate(baseline, EVERYTHING_MANDATORY).findings if f.policy == "vpn-preshared-key"] == []


@pytest.mark.parametrize("preview", [False, True], ids=["plan", "preview"])
def test_fsx_backups_excuse_only_the_file_system_its_repositories_link(plan_spec, rules, preview):
    """A repository excuses its own file system, never another one, even when every id is unknown in preview."""
    from tests.conftest import AWS_SITE, spec_with

    lustre = {"capacity_gib": 2_400, "throughput_mbps_per_tib": 125}
    site = {**AWS_SITE, "storage": {
        "buckets": [{"name": "datasets", "purpose": "datasets"}],
        "lustre": [{"name": "linked", **lustre, "durability": {"repositories": [{"bucket": "datasets",
                                                                                "path": "/datasets"}]}},
                   {"name": "other", **lustre}],
    }}  # fmt: skip
    plan = plan_spec(spec_with(site), preview=preview).to_dict()
    systems = {r["name"]: r["inputs"] for r in plan["resources"] if r["type"] == LUSTRE}
    assert {name: fs["automaticBackupRetentionDays"] for name, fs in systems.items()} == {
        "aws-use1-storage-linked-fs": 0,
        "aws-use1-storage-other-fs": 0,
    }
    assert _backup_findings(plan, rules) == [
        ("aws-use1-storage-other-fs", "automatic backups are kept 0 days; at least 7 required")
    ]
    if not preview:
        # Without the recorded dependency, equal known ids still join an association to its file system.
        repository = next(r for r in plan["resources"] if r["type"] == REPOSITORY)
        repository["dependencies"] = []
        assert len(_backup_findings(plan, rules)) == 2
        linked = next(r for r in plan["resources"] if r["name"] == "aws-use1-storage-linked-fs")
        linked["inputs"]["id"] = repository["inputs"]["fileSystemId"]
        assert [urn for urn, _ in _backup_findings(plan, rules)] == ["aws-use1-storage-other-fs"]


REPOSITORY = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"


def _backup_findings(plan, rules) -> list[tuple[str, str]]:
    result = evaluate(plan, EVERYTHING_MANDATORY, {"fsx-lustre-backup-retention": rules["fsx-lustre-backup-retention"]})
    assert result.errors == [] and result.not_checked == []
    return [(f.urn.rsplit("::", 1)[-1], f.message) for f in result.findings]


def test_a_static_connection_needs_no_bgp_logs(baseline):
    static = edit(
        baseline,
        VPN,
        "vpn",
        staticRoutesOnly=True,
        **{
            f"tunnel{n}LogOptions": {"cloudwatchLogOptions": {"logEnabled": True, "logGroupArn": "arn:x"}}
            for n in (1, 2)
        },
    )
    assert [f for f in evaluate(static, EVERYTHING_MANDATORY).findings if f.policy == "vpn-tunnel-logging"] == []


MANAGED_LUSTRE = "gcp:lustre/instance:Instance"


def _served_to_gke(plan, key: bool):
    """The baseline with its Managed Lustre instance mounted by a GKE PersistentVolume, with or without its key."""
    out = copy.deepcopy(plan)
    instance = next(r for r in out["resources"] if r["type"] == MANAGED_LUSTRE)
    if not key:
        instance["inputs"].pop("kmsKey")
    handle = "/".join(instance["inputs"][k] for k in ("project", "location", "instanceId"))
    volume = {
        "urn": "urn:pulumi:baseline::lattice::kubernetes:core/v1:PersistentVolume::shared-team",
        "type": "kubernetes:core/v1:PersistentVolume",
        "name": "shared-team",
        "parent": None,
        "custom": True,
        "provider": "",
        "protect": False,
        "retainOnDelete": False,
        "dependencies": [instance["urn"]],
        "inputs": {
            "metadata": {"name": "shared-team"},
            "spec": {"csi": {"driver": "lustre.csi.storage.gke.io", "volumeHandle": handle}},
        },
    }
    out["resources"].append(volume)
    return out


def test_managed_lustre_gke_mounts_needs_google_default_encryption(baseline):
    """Google: CMEK instances "can only be accessed from Compute Engine clients". An instance a GKE volume mounts
    passes without a key, fails with one (no pod could mount it); one no GKE volume mounts still needs the key."""
    assert [f for f in findings(_served_to_gke(baseline, key=False)) if f[0] == "managed-lustre-cmek"] == []
    ((_, message),) = [f for f in findings(_served_to_gke(baseline, key=True)) if f[0] == "managed-lustre-cmek"]
    assert message.startswith("GKE mounts this instance (PersistentVolume shared-team) but it has a customer-managed")
    unserved = edit(baseline, MANAGED_LUSTRE, "managed-lustre", kmsKey=None)
    assert [m for p, m in findings(unserved) if p == "managed-lustre-cmek"] == [
        "no kms_key: data is encrypted with a Google-managed key, and no GKE volume mounts it"
    ]
    # a volume of another driver, or naming another instance, is no exception
    other = _served_to_gke(baseline, key=False)
    other["resources"][-1]["inputs"]["spec"]["csi"]["volumeHandle"] = "lattice-baseline/us-central1-a/elsewhere"
    assert [p for p, _ in findings(other) if p == "managed-lustre-cmek"] == ["managed-lustre-cmek"]


GPU_OPERATOR = "kubernetes:helm.sh/v3:Release"
PROMETHEUS_RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"


def _gpu_metrics_findings(plan):
    return [message for policy, message in findings(plan) if policy == "gpu-metrics-and-alerts"]


def test_gpu_metrics_need_lattices_counters_a_prometheus_and_the_critical_alerts(baseline):
    operator = next(r for r in baseline["resources"] if r["name"] == "gpu-operator")["inputs"]["values"]
    default_counters = {"dcgmExporter": {**operator["dcgmExporter"], "config": None}}
    default_counters["dcgmExporter"].pop("config")
    assert _gpu_metrics_findings(edit(baseline, GPU_OPERATOR, "gpu-operator", values=default_counters)) == [
        "the DCGM exporter runs the operator's default counters, which leave ECC, throttling, retired pages and "
        "NVLink errors out"
    ]
    no_ecc = copy.deepcopy(operator)
    no_ecc["dcgmExporter"]["config"]["data"] = "\n".join(
        line for line in no_ecc["dcgmExporter"]["config"]["data"].splitlines() if "ECC_DBE_VOL" not in line
    )
    assert _gpu_metrics_findings(edit(baseline, GPU_OPERATOR, "gpu-operator", values=no_ecc)) == [
        "the DCGM counters file does not enable DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"
    ]
    agent = edit(baseline, GPU_OPERATOR, "kube-prometheus-stack", values={"prometheus": {"agentMode": True}})
    assert _gpu_metrics_findings(agent) == [
        "no Prometheus (kube-prometheus-stack, not in agent mode) runs on its cluster"
    ]
    rules = next(r for r in baseline["resources"] if r["name"] == "lattice-alerts")["inputs"]["spec"]
    trimmed = copy.deepcopy(rules)
    trimmed["groups"][0]["rules"] = [r for r in trimmed["groups"][0]["rules"] if r["alert"] != "GpuXidCritical"]
    assert _gpu_metrics_findings(edit(baseline, PROMETHEUS_RULE, "lattice-alerts", spec=trimmed)) == [
        "no PrometheusRule on its cluster evaluates GpuXidCritical"
    ]


def _routing_findings(plan):
    return [message for policy, message in findings(plan) if policy == "critical-alerts-routed"]


def test_critical_gpu_alerts_must_reach_a_receiver_that_sends_somewhere(baseline):
    assert _routing_findings(baseline) == []
    values = next(r for r in baseline["resources"] if r["name"] == "kube-prometheus-stack")["inputs"]["values"]
    # The chart's default: everything to 'null'.
    default = {k: v for k, v in values.items() if k != "alertmanager"}
    assert _routing_findings(edit(baseline, GPU_OPERATOR, "kube-prometheus-stack", values=default)) == [
        "Alertmanager runs the chart's default configuration: every alert goes to 'null'"
    ]
    # Routes that page only warnings leave the critical GPU alerts on 'null'.
    warnings_only = copy.deepcopy(values)
    warnings_only["alertmanager"]["config"]["route"]["routes"][1]["matchers"] = ['severity="warning"']
    assert _routing_findings(edit(baseline, GPU_OPERATOR, "kube-prometheus-stack", values=warnings_only)) == [
        "GpuXidCritical, GpuDoubleBitEcc, GpuRowRemapFailure reach no receiver that sends anywhere"
    ]
    # A receiver with no integration is no destination.
    hollow = copy.deepcopy(values)
    hollow["alertmanager"]["config"]["receivers"][1] = {"name": "oncall"}
    assert len(_routing_findings(edit(baseline, GPU_OPERATOR, "kube-prometheus-stack", values=hollow))) == 1
    # A forwarder (agent mode, no Alertmanager) is not judged.
    agent = {"prometheus": {"agentMode": True}, "alertmanager": {"enabled": False}}
    assert _routing_findings(edit(baseline, GPU_OPERATOR, "kube-prometheus-stack", values=agent)) == []


# --- monitoring-credentials-from-secrets ---------------------------------------------------------------------------


def _monitoring(prod_plan, edit) -> list[str]:
    """The rule's messages on prod's grid release (Alertmanager, Grafana with cloud datasources) after ``edit``."""
    plan = prod_plan.to_dict()
    (release,) = [
        r
        for r in plan["resources"]
        if r["type"] == "kubernetes:helm.sh/v3:Release" and r["name"] == "grid-hpc-metrics-kube-prometheus-stack"
    ]
    values = copy.deepcopy(release["inputs"]["values"])
    edit(values)
    edited = {
        **plan,
        "resources": [
            {**r, "inputs": {**r["inputs"], "values": values}} if r is release else r for r in plan["resources"]
        ],
    }
    return [message for policy, message in findings(edited) if policy == "monitoring-credentials-from-secrets"]


def test_monitoring_credentials_by_reference_pass(prod_plan):
    # prod as planned: receivers read *_file paths, Grafana's admin password and cloud keys come from Secrets
    assert _monitoring(prod_plan, lambda values: None) == []


def test_an_inline_pagerduty_key_slack_url_or_smtp_password_fails(prod_plan):
    def inline(values):
        receivers = {r["name"]: r for r in values["alertmanager"]["config"]["receivers"]}
        (pagerduty,) = receivers["gpu-oncall"]["pagerduty_configs"]
        pagerduty["routing_key"] = pagerduty.pop("routing_key_file")
        values["alertmanager"]["config"].setdefault("global", {})["smtp_auth_password"] = "[secret]"

    assert sorted(_monitoring(prod_plan, inline)) == [
        "alertmanager receiver 'gpu-oncall' pagerduty_configs.routing_key is a value of the Helm release; take it "
        "from a Secret",
        "alertmanager.config.global.smtp_auth_password is a value of the Helm release; take it from a Secret",
    ]


def test_a_grafana_datasource_key_written_out_fails_where_an_environment_reference_passes(prod_plan):
    def written_out(values):
        (cloudwatch,) = [s for s in values["grafana"]["additionalDataSources"] if s["type"] == "cloudwatch"]
        cloudwatch["secureJsonData"]["secretKey"] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        cloudwatch["secureJsonData"]["accessKey"] = "$__file{/etc/secrets/access-key}"

    (message,) = _monitoring(prod_plan, written_out)
    assert message == (
        "grafana datasource 'CloudWatch aws-use1' secureJsonData.secretKey is a value of the Helm release; take it "
        "from a Secret"
    )


def test_a_remote_write_password_as_a_string_fails(prod_plan):
    def plain(values):
        values["prometheus"].setdefault("prometheusSpec", {})["remoteWrite"] = [
            {
                "name": "central",
                "url": "http://10.50.0.40:8080/api/v1/write",
                "basicAuth": {"username": {"name": "w", "key": "username"}, "password": "hunter2"},
            }
        ]

    assert _monitoring(prod_plan, plain) == [
        "remote write 'central' basicAuth.password is a value of the Helm release; take it from a Secret"
    ]


def test_a_trail_bucket_locked_for_less_than_its_log_group_keeps_records_fails(prod_plan):
    """On Lattice's own plan, where the trail takes its log group's ARN (a dependency, not a literal): prod's
    aws-use1 keeps logs 731 days, and its audit store locks them as long (audit.immutable_days: 731)."""
    plan = copy.deepcopy(prod_plan.to_dict())  # the session's plan: edited here, so a copy
    assert [f for f in findings(plan) if f[0] == "cloudtrail-bucket-object-lock"] == []
    trail = next(r for r in plan["resources"] if r["type"] == "aws:cloudtrail/trail:Trail")
    group = next(
        r
        for r in plan["resources"]
        if r["type"] == "aws:cloudwatch/logGroup:LogGroup" and r["urn"] in trail["dependencies"]
    )
    assert group["inputs"]["retentionInDays"] == 731
    group["inputs"]["retentionInDays"] = 1096
    assert [f for f in findings(plan) if f[0] == "cloudtrail-bucket-object-lock"] == [
        (
            "cloudtrail-bucket-object-lock",
            "object lock retains CloudTrail logs for 731 days and the trail's CloudWatch log group keeps them 1096: "
            "for the rest the only copy is one that can be rewritten; at least 1096 required",
        )
    ]
