"""A compliant baseline: one well-configured resource of every type a policy rule guards.

Built from the real SDK classes and planned under the recording engine, so the props the
rules see are exactly the wire form pulumi-aws 7, pulumi-gcp 10 and pulumi-kubernetes 4
produce. Each rule test starts from this plan and changes one field.
"""

from __future__ import annotations

import base64
import json

import pulumi
import pulumi_aws as aws
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from lattice.components.catalog import efa_interfaces
from lattice.components.observability.alerts import rule_groups
from lattice.components.observability.dcgm import dcgm_exporter_values
from lattice.components.observability.receivers import Receiver, alertmanager_config
from lattice.components.spec.model import ReceiverSpec
from lattice.components.tagging import TagContext
from lattice.engine.plan import Plan, run_program

TAGS = TagContext(
    stack="baseline",
    environment="prod",
    owner="platform@example.edu",
    cost_centre="RC-1",
    data_classification="internal",
    site="aws-use1",
    component="Baseline",
)
GCP_PROJECT = "lattice-baseline"
# The key policy Lattice's site key has in miniature: the account administers it through IAM; a wildcard principal
# only with a condition that narrows it to this account's calls through S3.
KEY_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Sid": "AccountAdministersThroughIam",
            "Effect": "Allow",
            "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
            "Action": "kms:*",
            "Resource": "*",
        },
        {
            "Sid": "RolesUseTheKeyThroughS3",
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
            "Resource": "*",
            "Condition": {
                "StringEquals": {"kms:CallerAccount": "123456789012", "kms:ViaService": "s3.us-east-1.amazonaws.com"}
            },
        },
    ],
}
LOG_DELIVERY = {
    "Sid": "S3ServerAccessLogs",
    "Effect": "Allow",
    "Principal": {"Service": "logging.s3.amazonaws.com"},
    "Action": "s3:PutObject",
    "Condition": {"StringEquals": {"aws:SourceAccount": "123456789012"}},
}
# Boot scripts fetch what they need at run time: an IMDSv2 token and a credential from SSM, never a literal one.
BOOT_SCRIPT = """#!/bin/bash
TOKEN=$(curl -sX PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 60')
DB_PASSWORD=$(aws ssm get-parameter --name /lattice/db --with-decryption --query Parameter.Value --output text)
"""


def program() -> None:
    stateful = pulumi.ResourceOptions(protect=True, retain_on_delete=True)
    tags = TAGS.aws_tags()
    labels = TAGS.for_site("gcp-usc1", {}).gcp_labels()
    key = aws.kms.Key(
        "key",
        enable_key_rotation=True,
        rotation_period_in_days=365,
        policy=json.dumps(KEY_POLICY),
        tags=tags,
        opts=stateful,
    )

    logs = aws.cloudwatch.LogGroup("logs", retention_in_days=365, kms_key_id=key.arn, tags=tags, opts=stateful)
    # The managed metrics store: the site key, and its log group.
    aws.amp.Workspace(
        "metrics",
        alias="baseline-metrics",
        kms_key_arn=key.arn,
        logging_configuration=aws.amp.WorkspaceLoggingConfigurationArgs(
            log_group_arn=pulumi.Output.concat(logs.arn, ":*")
        ),
        tags=tags,
        opts=stateful,
    )

    # The server access log destination: SSE-S3 (the only encryption S3 log delivery accepts), not logged itself.
    access_logs = aws.s3.Bucket("access-logs", bucket="baseline-access-logs", tags=tags, opts=stateful)
    _bucket_controls("access-logs", access_logs, key, receives_logs=True)
    data = aws.s3.Bucket("data", tags=tags, opts=stateful)
    _bucket_controls("data", data, key, logs=access_logs)
    checkpoints = aws.s3.Bucket("checkpoints", tags={**tags, "lattice:purpose": "checkpoints"}, opts=stateful)
    _bucket_controls("checkpoints", checkpoints, key, logs=access_logs)
    aws.s3.BucketLifecycleConfiguration(
        "checkpoints",
        bucket=checkpoints.id,
        rules=[
            aws.s3.BucketLifecycleConfigurationRuleArgs(
                id="expire-old-checkpoints",
                status="Enabled",
                filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix="checkpoints/"),
                expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(days=30),
            )
        ],
    )
    trail_bucket = aws.s3.Bucket("trail", bucket="baseline-trail", object_lock_enabled=True, tags=tags, opts=stateful)
    _bucket_controls("trail", trail_bucket, key, logs=access_logs)
    aws.s3.BucketObjectLockConfiguration(
        "trail",
        bucket=trail_bucket.id,
        rule=aws.s3.BucketObjectLockConfigurationRuleArgs(
            default_retention=aws.s3.BucketObjectLockConfigurationRuleDefaultRetentionArgs(mode="COMPLIANCE", days=365)
        ),
        opts=stateful,
    )
    aws.cloudtrail.Trail(
        "trail",
        s3_bucket_name="baseline-trail",
        is_multi_region_trail=True,
        include_global_service_events=True,
        enable_log_file_validation=True,
        kms_key_id=key.arn,
        cloud_watch_logs_group_arn="arn:aws:logs:us-east-1:123456789012:log-group:/aws/cloudtrail/baseline:*",
        cloud_watch_logs_role_arn="arn:aws:iam::123456789012:role/baseline-trail-to-logs",
        advanced_event_selectors=[
            aws.cloudtrail.TrailAdvancedEventSelectorArgs(
                name="management",
                field_selectors=[
                    aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(
                        field="eventCategory", equals=["Management"]
                    )
                ],
            ),
            aws.cloudtrail.TrailAdvancedEventSelectorArgs(
                name="data",
                field_selectors=[
                    aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(field="eventCategory", equals=["Data"]),
                    aws.cloudtrail.TrailAdvancedEventSelectorFieldSelectorArgs(
                        field="resources.type", equals=["AWS::S3::Object"]
                    ),
                ],
            ),
        ],
        tags=tags,
    )

    aws.ebs.Volume(
        "scratch",
        availability_zone="us-east-1a",
        size=100,
        encrypted=True,
        kms_key_id=key.arn,
        tags=tags,
        opts=stateful,
    )
    placement = aws.ec2.PlacementGroup("gpu", strategy="cluster", tags=tags)
    aws.ec2.LaunchTemplate(
        "gpu",
        instance_type="p5.48xlarge",
        block_device_mappings=[
            aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name="/dev/xvda",
                ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                    encrypted="true", kms_key_id=key.arn, volume_size=200, volume_type="gp3"
                ),
            )
        ],
        network_interfaces=[
            aws.ec2.LaunchTemplateNetworkInterfaceArgs(
                network_card_index=interface.network_card_index,
                device_index=interface.device_index,
                interface_type=interface.interface_type,
                security_groups=["sg-0efa"],
            )
            for interface in efa_interfaces("p5.48xlarge")
        ],
        placement=aws.ec2.LaunchTemplatePlacementArgs(group_name=placement.name),
        metadata_options=aws.ec2.LaunchTemplateMetadataOptionsArgs(
            http_endpoint="enabled", http_tokens="required", http_put_response_hop_limit=2
        ),
        user_data=base64.b64encode(BOOT_SCRIPT.encode()).decode(),
        tags=tags,
    )
    # Instances and launch configurations: not Lattice's own, but types the pack judges.
    aws.ec2.Instance(
        "bastion",
        ami="ami-0baseline",
        instance_type="t3.micro",
        subnet_id="subnet-0a",
        associate_public_ip_address=False,
        metadata_options=aws.ec2.InstanceMetadataOptionsArgs(http_endpoint="enabled", http_tokens="required"),
        volume_tags=tags,
        root_block_device=aws.ec2.InstanceRootBlockDeviceArgs(encrypted=True, kms_key_id=key.arn, volume_size=20),
        ebs_block_devices=[
            aws.ec2.InstanceEbsBlockDeviceArgs(
                device_name="/dev/sdf", encrypted=True, kms_key_id=key.arn, volume_size=50
            )
        ],
        user_data=BOOT_SCRIPT,
        tags=tags,
    )
    aws.ec2.LaunchConfiguration(
        "legacy",
        image_id="ami-0baseline",
        instance_type="t3.micro",
        associate_public_ip_address=False,
        metadata_options=aws.ec2.LaunchConfigurationMetadataOptionsArgs(
            http_endpoint="enabled", http_tokens="required"
        ),
        root_block_device=aws.ec2.LaunchConfigurationRootBlockDeviceArgs(encrypted=True, volume_size=20),
    )
    aws.fsx.LustreFileSystem(
        "lustre",
        storage_capacity=19200,
        deployment_type="PERSISTENT_2",
        # 18,750 MB/s: the policy's default 980 GB checkpoint in 52 s
        per_unit_storage_throughput=1000,
        subnet_ids="subnet-0a",
        kms_key_id=key.arn,
        automatic_backup_retention_days=7,
        tags=tags,
        final_backup_tags=tags,
        opts=stateful,
    )
    aws.eks.Cluster(
        "eks",
        version="1.34",
        role_arn="arn:aws:iam::123456789012:role/eks",
        vpc_config=aws.eks.ClusterVpcConfigArgs(
            subnet_ids=["subnet-0a", "subnet-0b"], endpoint_private_access=True, endpoint_public_access=False
        ),
        encryption_config=aws.eks.ClusterEncryptionConfigArgs(
            provider=aws.eks.ClusterEncryptionConfigProviderArgs(key_arn=key.arn), resources=["secrets"]
        ),
        enabled_cluster_log_types=["api", "audit", "authenticator", "controllerManager", "scheduler"],
        tags=tags,
    )
    aws.ec2.VpnConnection(
        "vpn",
        customer_gateway_id="cgw-0a",
        transit_gateway_id="tgw-0a",
        type="ipsec.1",
        **{
            f"tunnel{n}_{field}": value
            for n in (1, 2)
            for field, value in {
                "ike_versions": ["ikev2"],
                "phase1_encryption_algorithms": ["AES256-GCM-16"],
                "phase2_encryption_algorithms": ["AES256-GCM-16"],
                "phase1_integrity_algorithms": ["SHA2-384"],
                "phase2_integrity_algorithms": ["SHA2-384"],
                "phase1_dh_group_numbers": [20],
                "phase2_dh_group_numbers": [20],
                "preshared_key": pulumi.Output.secret(f"Baseline.key.of.tunnel.{n}.with.40.chars.x"),
                "log_options": {
                    "cloudwatch_log_options": {
                        "log_enabled": True,
                        "log_group_arn": "arn:aws:logs:us-east-1:123456789012:log-group:/aws/vpn/baseline",
                        "bgp_log_enabled": True,
                        "bgp_log_group_arn": "arn:aws:logs:us-east-1:123456789012:log-group:/aws/vpn/baseline",
                    }
                },
            }.items()
        },
        tags=tags,
    )
    group = aws.ec2.SecurityGroup(
        "bastion",
        vpc_id="vpc-0a",
        ingress=[
            aws.ec2.SecurityGroupIngressArgs(protocol="tcp", from_port=22, to_port=22, cidr_blocks=["10.0.0.0/8"])
        ],
        tags=tags,
    )
    aws.ec2.SecurityGroupRule(
        "https",
        type="ingress",
        protocol="tcp",
        from_port=443,
        to_port=443,
        cidr_blocks=["0.0.0.0/0"],
        security_group_id=group.id,
    )
    aws.vpc.SecurityGroupIngressRule(
        "ssh-vpn",
        security_group_id=group.id,
        ip_protocol="tcp",
        from_port=22,
        to_port=22,
        cidr_ipv4="10.60.0.0/20",
        tags=tags,
    )

    gcp_key = gcp.kms.CryptoKey(
        "gcp-key",
        key_ring="projects/p/locations/l/keyRings/r",
        rotation_period="7776000s",
        labels=labels,
        opts=stateful,
    )
    # A GKE node subnetwork (secondary ranges for Pods and Services) with flow logs, as GcpSiteNetwork makes it.
    gcp.compute.Subnetwork(
        "gcp-nodes",
        name="baseline-nodes",
        project=GCP_PROJECT,
        region="us-central1",
        network="projects/lattice-baseline/global/networks/baseline",
        ip_cidr_range="10.30.0.0/18",
        secondary_ip_ranges=[
            gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name="pods", ip_cidr_range="10.30.128.0/17"),
            gcp.compute.SubnetworkSecondaryIpRangeArgs(range_name="services", ip_cidr_range="10.30.64.0/20"),
        ],
        log_config=gcp.compute.SubnetworkLogConfigArgs(
            aggregation_interval="INTERVAL_5_SEC", flow_sampling=0.5, metadata="INCLUDE_ALL_METADATA"
        ),
    )
    nodes = "baseline-nodes@lattice-baseline.iam.gserviceaccount.com"
    gke = gcp.container.Cluster(
        "gke",
        project=GCP_PROJECT,
        location="us-central1",
        database_encryption=gcp.container.ClusterDatabaseEncryptionArgs(state="ENCRYPTED", key_name=gcp_key.id),
        private_cluster_config=gcp.container.ClusterPrivateClusterConfigArgs(enable_private_nodes=True),
        master_authorized_networks_config=gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
            cidr_blocks=[
                gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                    cidr_block="10.50.0.0/16", display_name="grid"
                )
            ]
        ),
        datapath_provider="ADVANCED_DATAPATH",
        logging_config=gcp.container.ClusterLoggingConfigArgs(
            enable_components=["SYSTEM_COMPONENTS", "WORKLOADS", "APISERVER"]
        ),
        remove_default_node_pool=True,
        initial_node_count=1,
        node_config=gcp.container.ClusterNodeConfigArgs(
            service_account=nodes,
            workload_metadata_config=gcp.container.ClusterNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
            shielded_instance_config=gcp.container.ClusterNodeConfigShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_integrity_monitoring=True
            ),
        ),
        resource_labels=labels,
    )
    # a3-highgpu-8g: four GPU NICs (GPUDirect-TCPX), each on its own VPC and subnet, each reachable by pods.
    gpu_nics = [f"baseline-a3high-nic{i}" for i in range(4)]
    gcp.container.NodePool(
        "gpu",
        project=GCP_PROJECT,
        cluster=gke.id,
        location="us-central1",
        node_count=1,
        network_config=gcp.container.NodePoolNetworkConfigArgs(
            additional_node_network_configs=[
                gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs(network=nic, subnetwork=nic)
                for nic in gpu_nics
            ]
        ),
        node_config=gcp.container.NodePoolNodeConfigArgs(
            machine_type="a3-highgpu-8g",
            service_account=nodes,
            workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA"),
            shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                enable_secure_boot=True, enable_integrity_monitoring=True
            ),
            resource_labels=labels,
        ),
    )
    # The usage-log destination: versioned, not logged itself; the immutable bucket logs into it.
    gcs_logs = gcp.storage.Bucket(
        "gcs-logs",
        name="lattice-baseline-access-logs",
        project=GCP_PROJECT,
        location="US",
        uniform_bucket_level_access=True,
        public_access_prevention="enforced",
        encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=gcp_key.id),
        versioning=gcp.storage.BucketVersioningArgs(enabled=True),
        labels=labels,
        opts=stateful,
    )
    gcp.storage.BucketIAMMember(
        "gcs-logs-writer",
        bucket=gcs_logs.name,
        role="roles/storage.objectCreator",
        member="group:cloud-storage-analytics@google.com",
    )
    gcp.storage.Bucket(
        "gcs",
        project=GCP_PROJECT,
        location="US",
        uniform_bucket_level_access=True,
        public_access_prevention="enforced",
        encryption=gcp.storage.BucketEncryptionArgs(default_kms_key_name=gcp_key.id),
        retention_policy=gcp.storage.BucketRetentionPolicyArgs(retention_period="31536000", is_locked=True),
        logging=gcp.storage.BucketLoggingArgs(log_bucket=gcs_logs.name),
        labels={**labels, "lattice-immutable": "true"},
        opts=stateful,
    )
    gcp.lustre.Instance(
        "managed-lustre",
        project=GCP_PROJECT,
        location="us-central1-a",
        instance_id="baseline",
        filesystem="lustrefs",
        network="projects/lattice-baseline/global/networks/net",
        capacity_gib="18000",
        per_unit_storage_throughput="1000",
        kms_key=gcp_key.id,
        labels=labels,
        opts=stateful,
    )
    gcp.compute.VPNTunnel(
        "tunnel",
        project=GCP_PROJECT,
        region="us-central1",
        shared_secret=pulumi.Output.secret("psk"),
        ike_version=2,
        cipher_suite=gcp.compute.VPNTunnelCipherSuiteArgs(
            phase1=gcp.compute.VPNTunnelCipherSuitePhase1Args(
                encryptions=["AES-GCM-16-256"], prves=["PRF-HMAC-SHA2-384"], dhs=["Group-20"]
            ),
            phase2=gcp.compute.VPNTunnelCipherSuitePhase2Args(encryptions=["AES-GCM-16-256"], pfs=["Group-20"]),
        ),
        peer_ip="198.51.100.7",
        target_vpn_gateway="gw",
        labels=labels,
    )
    gcp.compute.Firewall(
        "ssh-from-vpn",
        project=GCP_PROJECT,
        network="net",
        source_ranges=["10.50.0.0/16"],
        allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=["22"])],
    )
    gcp.projects.IAMAuditConfig(
        "audit",
        project=GCP_PROJECT,
        service="allServices",
        audit_log_configs=[
            gcp.projects.IAMAuditConfigAuditLogConfigArgs(log_type=kind)
            for kind in ("ADMIN_READ", "DATA_READ", "DATA_WRITE")
        ],
    )
    gcp.logging.ProjectBucketConfig(
        "audit-store",
        project=GCP_PROJECT,
        location="us-central1",
        bucket_id="lattice-audit",
        retention_days=365,
        locked=True,
        cmek_settings=gcp.logging.ProjectBucketConfigCmekSettingsArgs(kms_key_name=gcp_key.id),
        opts=stateful,
    )
    gcp.logging.ProjectSink(
        "audit-sink",
        project=GCP_PROJECT,
        name="lattice-audit",
        destination="logging.googleapis.com/projects/lattice-baseline/locations/us-central1/buckets/lattice-audit",
        filter='logName:"cloudaudit.googleapis.com"',
        unique_writer_identity=True,
    )

    k8s_labels = TAGS.for_site("grid-hpc", {}).k8s_labels()
    for index, nic in enumerate(gpu_nics):
        k8s.apiextensions.CustomResource(
            f"gpu-nic{index}-params",
            api_version="networking.gke.io/v1",
            kind="GKENetworkParamSet",
            metadata={"name": f"nic{index}", "labels": k8s_labels},
            spec={"vpc": nic, "vpcSubnet": nic, "deviceMode": "NetDevice"},
        )
        k8s.apiextensions.CustomResource(
            f"gpu-nic{index}",
            api_version="networking.gke.io/v1",
            kind="Network",
            metadata={"name": f"nic{index}", "labels": k8s_labels},
            spec={
                "type": "Device",
                "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": f"nic{index}"},
            },
        )
    # A volume for an existing file system: deleting the PV object leaves the data (reclaim policy Retain).
    k8s.core.v1.PersistentVolume(
        "shared",
        metadata=k8s.meta.v1.ObjectMetaArgs(name="shared-climate", labels=k8s_labels),
        spec=k8s.core.v1.PersistentVolumeSpecArgs(
            capacity={"storage": "1200Gi"},
            access_modes=["ReadWriteMany"],
            persistent_volume_reclaim_policy="Retain",
            storage_class_name="",
            nfs=k8s.core.v1.NFSVolumeSourceArgs(server="10.0.0.2", path="/shared"),
        ),
    )
    _team_namespace(k8s_labels)
    k8s.rbac.v1.ClusterRoleBinding(
        "platform-admins",
        metadata=k8s.meta.v1.ObjectMetaArgs(name="platform-admins", labels=k8s_labels),
        role_ref=k8s.rbac.v1.RoleRefArgs(
            api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="cluster-admin"
        ),
        subjects=[k8s.rbac.v1.SubjectArgs(kind="Group", name="system:masters", api_group="rbac.authorization.k8s.io")],
    )


def _team_namespace(labels: dict[str, str]) -> None:
    """A team namespace as Lattice builds it: Pod Security label, quotas, container defaults, default-deny
    networking, a LocalQueue on a cluster that runs Kueue, and the team's groups bound to a namespaced Role."""
    namespace = k8s.core.v1.Namespace(
        "team",
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name="climate",
            labels={**labels, "lattice.dev/team": "climate", "pod-security.kubernetes.io/enforce": "baseline"},
            annotations={"lattice.dev/pod-security-reason": "images run as root"},
        ),
    )
    name = namespace.metadata.name

    def meta(object_name: str) -> k8s.meta.v1.ObjectMetaArgs:
        return k8s.meta.v1.ObjectMetaArgs(name=object_name, namespace=name, labels=labels)

    k8s.core.v1.ResourceQuota(
        "team-gpu", metadata=meta("gpu"), spec=k8s.core.v1.ResourceQuotaSpecArgs(hard={"requests.nvidia.com/gpu": "8"})
    )
    k8s.core.v1.ResourceQuota(
        "team-compute",
        metadata=meta("compute"),
        spec=k8s.core.v1.ResourceQuotaSpecArgs(hard={"requests.cpu": "208", "requests.memory": "2112Gi"}),
    )
    k8s.core.v1.LimitRange(
        "team",
        metadata=meta("container-defaults"),
        spec=k8s.core.v1.LimitRangeSpecArgs(
            limits=[k8s.core.v1.LimitRangeItemArgs(type="Container", default_request={"cpu": "500m"})]
        ),
    )
    k8s.networking.v1.NetworkPolicy(
        "team-deny",
        metadata=meta("default-deny"),
        spec=k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=k8s.meta.v1.LabelSelectorArgs(), policy_types=["Ingress", "Egress"]
        ),
    )
    k8s.networking.v1.NetworkPolicy(
        "team-same-namespace",
        metadata=meta("same-namespace"),
        spec=k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=k8s.meta.v1.LabelSelectorArgs(),
            policy_types=["Ingress"],
            ingress=[k8s.networking.v1.NetworkPolicyIngressRuleArgs(from_=[{"podSelector": {}}])],
        ),
    )
    k8s.apiextensions.CustomResource(
        "team-queue",
        api_version="kueue.x-k8s.io/v1beta2",
        kind="ClusterQueue",
        metadata={"name": "grid-hpc-climate", "labels": labels},
        spec={"cohortName": "grid-hpc", "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": name}}},
    )
    k8s.apiextensions.CustomResource(
        "team-local-queue",
        api_version="kueue.x-k8s.io/v1beta2",
        kind="LocalQueue",
        metadata={"name": "gpus", "namespace": name, "labels": labels},
        spec={"clusterQueue": "grid-hpc-climate"},
    )
    _scheduling(labels)
    _gpu_metrics(labels)
    k8s.rbac.v1.Role(
        "team",
        metadata=meta("lattice-team"),
        rules=[k8s.rbac.v1.PolicyRuleArgs(api_groups=["batch"], resources=["jobs"], verbs=["create", "get"])],
    )
    k8s.rbac.v1.RoleBinding(
        "team",
        metadata=meta("lattice-team"),
        role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="Role", name="lattice-team"),
        subjects=[k8s.rbac.v1.SubjectArgs(kind="Group", name="climate-ml", api_group="rbac.authorization.k8s.io")],
    )


def _gpu_metrics(labels: dict[str, str]) -> None:
    """A grid cluster's GPU operator with Lattice's DCGM counters and ServiceMonitor, its Prometheus and alerts."""
    k8s.helm.v3.Release(
        "gpu-operator",
        name="gpu-operator",
        chart="gpu-operator",
        version="v25.3.4",
        namespace="gpu-operator",
        values={"dcgmExporter": dcgm_exporter_values(service_monitor=True)},
    )
    k8s.helm.v3.Release(
        "kube-prometheus-stack",
        name="kube-prometheus-stack",
        chart="kube-prometheus-stack",
        version="88.5.3",
        namespace="monitoring",
        values={
            "prometheus": {"prometheusSpec": {"externalLabels": {"site": "grid-hpc"}}},
            # Critical alerts page the on-call (observability.receivers), the key read from a mounted Secret.
            "alertmanager": {
                "config": alertmanager_config(
                    [Receiver(ReceiverSpec(name="oncall", pagerduty={"routing_key_secret": "pagerdutyKey"}))]
                ),
                "alertmanagerSpec": {"secrets": ["lattice-alert-receivers"]},
            },
        },
    )
    k8s.apiextensions.CustomResource(
        "lattice-alerts",
        api_version="monitoring.coreos.com/v1",
        kind="PrometheusRule",
        metadata={"name": "lattice-alerts", "namespace": "monitoring", "labels": labels},
        spec={"groups": rule_groups()},
    )


def _scheduling(labels: dict[str, str]) -> None:
    """An EKS p5 flavor on EC2's network topology, and a MultiKueue worker of the cloud tier for internal data."""
    levels = [*(f"topology.k8s.aws/network-node-layer-{n}" for n in (1, 2, 3)), "kubernetes.io/hostname"]
    k8s.apiextensions.CustomResource(
        "ec2-topology",
        api_version="kueue.x-k8s.io/v1beta2",
        kind="Topology",
        metadata={"name": "aws-use1-ec2-3-layer", "labels": labels},
        spec={"levels": [{"nodeLabel": level} for level in levels]},
    )
    k8s.apiextensions.CustomResource(
        "p5-flavor",
        api_version="kueue.x-k8s.io/v1beta2",
        kind="ResourceFlavor",
        metadata={
            "name": "train-p5",
            "labels": {**labels, "lattice.dev/platform": "eks", "lattice.dev/machine-type": "p5.48xlarge"},
        },
        spec={
            "nodeLabels": {"lattice.dev/pool": "train-p5"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "topologyName": "aws-use1-ec2-3-layer",
        },
    )
    # A pool Slurm owns beside it (Slinky), selecting other nodes.
    k8s.apiextensions.CustomResource(
        "slurm-nodeset",
        api_version="slinky.slurm.net/v1beta1",
        kind="NodeSet",
        metadata={"name": "ib-h100-slurm", "namespace": "slurm", "labels": labels},
        spec={
            "controllerRef": {"name": "slurm"},
            "scalingMode": "DaemonSet",
            "template": {"spec": {"nodeSelector": {"lattice.dev/pool": "ib-h100-slurm"}}},
        },
    )
    kubeconfig = json.dumps(
        {
            "clusters": [
                {"name": "aws-use1", "cluster": {"server": "https://10.20.0.10", "certificate-authority-data": "Q0E="}}
            ],
            "users": [{"name": "aws-use1", "user": {"token": "token-from-the-worker"}}],
        }
    )
    k8s.core.v1.Secret(
        "multikueue-aws-use1",
        metadata=k8s.meta.v1.ObjectMetaArgs(name="multikueue-aws-use1", namespace="kueue-system", labels=labels),
        type="Opaque",
        string_data={"kubeconfig": pulumi.Output.secret(kubeconfig)},
    )
    k8s.apiextensions.CustomResource(
        "multikueue-cluster",
        api_version="kueue.x-k8s.io/v1beta2",
        kind="MultiKueueCluster",
        metadata={"name": "aws-use1", "labels": {**labels, "lattice.dev/tier": "cloud"}},
        spec={"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": "multikueue-aws-use1"}}},
    )
    k8s.apiextensions.CustomResource(
        "multikueue-config",
        api_version="kueue.x-k8s.io/v1beta2",
        kind="MultiKueueConfig",
        metadata={"name": "climate", "labels": {**labels, "lattice.dev/team-data-classification": "internal"}},
        spec={"clusters": ["aws-use1"]},
    )


def _bucket_controls(
    name: str,
    bucket: aws.s3.Bucket,
    key: aws.kms.Key,
    logs: aws.s3.Bucket | None = None,
    receives_logs: bool = False,
) -> None:
    sse = aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs
    aws.s3.BucketServerSideEncryptionConfiguration(
        name,
        bucket=bucket.id,
        rules=[
            aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                apply_server_side_encryption_by_default=sse(sse_algorithm="AES256")
                if receives_logs
                else sse(sse_algorithm="aws:kms", kms_master_key_id=key.arn),
                bucket_key_enabled=not receives_logs,
            )
        ],
    )
    if logs is not None:
        aws.s3.BucketLogging(name, bucket=bucket.id, target_bucket=logs.id, target_prefix=f"{name}/")
    aws.s3.BucketVersioning(
        name,
        bucket=bucket.id,
        versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(status="Enabled"),
        opts=pulumi.ResourceOptions(protect=True, retain_on_delete=True),
    )
    aws.s3.BucketPublicAccessBlock(
        name,
        bucket=bucket.id,
        block_public_acls=True,
        block_public_policy=True,
        ignore_public_acls=True,
        restrict_public_buckets=True,
    )
    aws.s3.BucketPolicy(
        name,
        bucket=bucket.id,
        policy=bucket.arn.apply(
            lambda arn: json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "DenyInsecureTransport",
                            "Effect": "Deny",
                            "Principal": "*",
                            "Action": "s3:*",
                            "Resource": [arn, f"{arn}/*"],
                            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                        },
                        *([LOG_DELIVERY | {"Resource": f"{arn}/*"}] if receives_logs else []),
                    ],
                }
            )
        ),
    )


def baseline_plan(preview: bool = False) -> Plan:
    return run_program(program, stack="baseline", preview=preview)
