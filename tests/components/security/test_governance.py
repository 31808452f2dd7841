"""Audit trails and team identities as the prod plan builds them."""

from __future__ import annotations

import fnmatch
import json

import yaml

from lattice.cli import main
from lattice.components.platform.audit_policy import audit_policy
from lattice.components.security.team_identity import WORKLOAD_SERVICE_ACCOUNT, s3_team_policy

AUDIT_CONFIG = "gcp:projects/iAMAuditConfig:IAMAuditConfig"
LOG_BUCKET = "gcp:logging/projectBucketConfig:ProjectBucketConfig"
SINK = "gcp:logging/projectSink:ProjectSink"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
ACCESS_ENTRY = "aws:eks/accessEntry:AccessEntry"
BUCKET_IAM = "gcp:storage/bucketIAMMember:BucketIAMMember"
S3 = "aws:s3/bucket:Bucket"


# --- GCP audit -------------------------------------------------------------------------------------------


def test_gcp_data_access_logs_for_storage_gke_and_kms_with_team_reads_exempt(prod_plan):
    configs = {r["inputs"]["service"]: r["inputs"]["auditLogConfigs"] for r in prod_plan.by_type(AUDIT_CONFIG)}
    assert set(configs) == {"storage.googleapis.com", "container.googleapis.com", "cloudkms.googleapis.com"}
    fusion = "serviceAccount:team-fusion@lattice-prod-ml.iam.gserviceaccount.com"
    assert configs["storage.googleapis.com"] == [
        {"logType": "ADMIN_READ"},
        {"logType": "DATA_READ", "exemptedMembers": [fusion]},  # training reads; writes still logged
        {"logType": "DATA_WRITE"},
    ]
    assert all("exemptedMembers" not in c for c in configs["container.googleapis.com"])


def test_every_gcp_audit_log_lands_in_a_locked_key_encrypted_bucket(prod_plan):
    key = prod_plan.state(prod_plan.one("gcp:kms/cryptoKey:CryptoKey", "gcp-usc1-key-key"))["id"]
    (bucket,) = prod_plan.by_type(LOG_BUCKET)
    assert bucket["inputs"] | {"description": None} == {
        "project": "lattice-prod-ml",
        "location": "us-central1",
        "bucketId": "lattice-audit",
        "retentionDays": 365,
        "locked": True,
        "cmekSettings": {"kmsKeyName": key},
        "description": None,
    }
    assert bucket["protect"] and bucket["retainOnDelete"]
    grant = prod_plan.one("gcp:kms/cryptoKeyIAMMember:CryptoKeyIAMMember", "gcp-usc1-audit-logging-agent")
    assert grant["inputs"]["member"].endswith("@gcp-sa-logging.iam.gserviceaccount.com")
    assert grant["urn"] in bucket["dependencies"]  # the key is usable before the bucket asks for it
    (sink,) = prod_plan.by_type(SINK)
    assert sink["inputs"]["destination"] == (
        "logging.googleapis.com/projects/lattice-prod-ml/locations/us-central1/buckets/lattice-audit"
    )
    assert sink["inputs"]["filter"] == 'logName:"cloudaudit.googleapis.com"'
    assert sink["inputs"]["uniqueWriterIdentity"] is True and bucket["urn"] in sink["dependencies"]


def test_audit_exemptions_wait_for_the_service_accounts_they_name(prod_plan):
    # IAM refuses a binding that names a service account that does not exist yet; the Data Access exemptions name
    # the teams' accounts, so the audit config is ordered after them (it was registered with no dependencies).
    (storage,) = [r for r in prod_plan.by_type(AUDIT_CONFIG) if r["inputs"]["service"] == "storage.googleapis.com"]
    accounts = {
        r["urn"]: f"serviceAccount:{r['inputs']['accountId']}@lattice-prod-ml.iam.gserviceaccount.com"
        for r in prod_plan.by_type("gcp:serviceaccount/account:Account")
    }
    (data_read,) = [c for c in storage["inputs"]["auditLogConfigs"] if c["logType"] == "DATA_READ"]
    named = {urn for urn, member in accounts.items() if member in data_read["exemptedMembers"]}
    assert named and named <= set(storage["dependencies"])
    others = [r for r in prod_plan.by_type(AUDIT_CONFIG) if r["inputs"]["service"] != "storage.googleapis.com"]
    assert others and all(not set(r["dependencies"]) & set(accounts) for r in others)  # no exemptions, no wait


def test_dev_audit_stores_are_not_locked(plan_spec):
    from tests.conftest import GCP_SITE, spec_with

    plan = plan_spec(spec_with({**GCP_SITE, "audit": {"immutable_days": 30}}))
    (bucket,) = plan.by_type(LOG_BUCKET)
    assert (bucket["inputs"]["locked"], bucket["inputs"]["retentionDays"], bucket["protect"]) == (False, 30, False)


# --- grid / edge API-server audit --------------------------------------------------------------------------


def _rule_for(policy: dict, *, verb: str, group: str, resource: str, user: str = "alice") -> str:
    """The level the first matching rule gives a request (the API server's first-match semantics)."""
    for rule in policy["rules"]:
        if "nonResourceURLs" in rule or ("users" in rule and user not in rule["users"]) or "userGroups" in rule:
            continue
        if "verbs" in rule and verb not in rule["verbs"]:
            continue
        if "namespaces" in rule:
            continue
        if "resources" in rule and not any(
            r["group"] == group and any(fnmatch.fnmatch(resource, p) for p in r.get("resources", ["*"]))
            for r in rule["resources"]
        ):
            continue
        return rule["level"]
    return "None"


def test_the_audit_policy_records_who_changed_access_and_never_secret_bodies():
    policy = audit_policy()
    assert (policy["apiVersion"], policy["kind"], policy["omitStages"]) == (
        "audit.k8s.io/v1",
        "Policy",
        ["RequestReceived"],
    )
    level = lambda **request: _rule_for(policy, **request)  # noqa: E731
    assert level(verb="create", group="rbac.authorization.k8s.io", resource="rolebindings") == "RequestResponse"
    assert level(verb="delete", group="networking.k8s.io", resource="networkpolicies") == "RequestResponse"
    assert level(verb="update", group="", resource="secrets") == "Metadata"  # never the secret's value
    assert level(verb="create", group="batch", resource="jobs") == "Request"
    assert level(verb="get", group="", resource="pods") == "Metadata"
    assert level(verb="list", group="coordination.k8s.io", resource="leases") == "None"


def test_grid_sites_export_the_policy_and_flags_with_their_retention(prod_plan, capsys, tmp_path):
    exported = prod_plan.outputs["sites"]["grid-hpc"]["audit_policy"]
    assert yaml.safe_load(exported["policy"]) == audit_policy()
    assert "--audit-log-maxage=365" in exported["api_server_flags"]
    assert main(["audit-policy", "edge-beamline", "--stack", "prod"]) == 0
    assert "kind: Policy" in capsys.readouterr().out
    assert main(["audit-policy", "grid-hpc", "--stack", "prod", "--output-dir", str(tmp_path)]) == 0
    assert yaml.safe_load((tmp_path / "lattice-audit-policy.yaml").read_text()) == audit_policy()
    assert main(["audit-policy", "aws-use1", "--stack", "prod"]) == 2
    assert "EKS and GKE audit their own control planes" in capsys.readouterr().err


# --- team identities ------------------------------------------------------------------------------------


def _statements(plan, team: str) -> list[dict]:
    policy = plan.one(ROLE_POLICY, f"aws-use1-team-{team}-workload")
    return json.loads(policy["inputs"]["policy"])["Statement"]


def _s3_reach(statements: list[dict]) -> set[str]:
    """Every S3 object ARN pattern and listing prefix a role policy allows."""
    reach = set()
    for statement in statements:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        if "s3:ListBucket" in actions:
            prefixes = statement["Condition"]["StringLike"]["s3:prefix"]
            reach |= {f"{statement['Resource']}?prefix={p}" for p in prefixes}
        elif any(a.startswith("s3:") for a in actions):
            reach.add(statement["Resource"])
    return reach


def test_a_teams_jobs_reach_only_its_prefix_of_the_data_buckets(prod_plan):
    data = {
        prod_plan.state(b)["bucket"]
        for b in prod_plan.by_type(S3)
        if b["name"].split("-storage-")[1].removesuffix("-bucket") in ("datasets", "checkpoints", "releases")
    }
    for team, other in (("fusion", "climate"), ("climate", "fusion")):
        reach = _s3_reach(_statements(prod_plan, team))
        assert reach == {f"arn:aws:s3:::{b}/{team}/*" for b in data} | {
            f"arn:aws:s3:::{b}?prefix={p}" for b in data for p in (f"{team}/", f"{team}/*")
        }
        # another team's prefix, the audit and access-log buckets: out of reach
        assert not any(f"/{other}/" in r or f"={other}/" in r for r in reach)
        assert not any("-audit-" in r or "-access-logs-" in r for r in reach)
    # the site key only through S3 (and S3 Express, whose directory buckets the site has)
    (kms,) = [s for s in _statements(prod_plan, "fusion") if s["Sid"] == "SiteKeyThroughS3Only"]
    assert kms["Condition"] == {
        "StringEquals": {"kms:ViaService": ["s3.us-east-1.amazonaws.com", "s3express.us-east-1.amazonaws.com"]}
    }


def test_team_jobs_can_use_the_site_key_for_the_express_checkpoint_buckets(prod_plan):
    # The hot-checkpoint directory buckets are SSE-KMS with the site key, and S3 Express is a service of its own
    # (s3express:CreateSession, encryption context aws:s3express:bucket-arn): a key grant limited to
    # s3.<region> would deny every express write. Admitted only where the site has directory buckets.
    statements = _statements(prod_plan, "fusion")
    (session,) = [s for s in statements if s["Sid"] == "SharedHotCheckpointBuckets"]
    assert session["Action"] == "s3express:CreateSession" and session["Resource"]
    (kms,) = [s for s in statements if s["Sid"] == "SiteKeyThroughS3Only"]
    assert set(kms["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey"}
    assert "s3express.us-east-1.amazonaws.com" in kms["Condition"]["StringEquals"]["kms:ViaService"]
    # a site without directory buckets keeps the grant to S3 alone
    plain = json.loads(s3_team_policy("fusion", ["b"], [], "arn:aws:kms:us-east-1:1:key/k", "us-east-1"))
    (kms,) = [s for s in plain["Statement"] if s["Sid"] == "SiteKeyThroughS3Only"]
    assert kms["Condition"] == {"StringEquals": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}}


def test_team_roles_map_to_the_teams_kubernetes_group_only(prod_plan):
    entries = {r["inputs"]["principalArn"]: r["inputs"] for r in prod_plan.by_type(ACCESS_ENTRY)}
    fusion = entries["arn:aws:iam::123456789012:role/fusion-ml"]
    assert (fusion["kubernetesGroups"], fusion["type"]) == (["lattice:team:fusion"], "STANDARD")
    assert entries["arn:aws:iam::123456789012:role/climate-ml"]["kubernetesGroups"] == ["lattice:team:climate"]
    association = prod_plan.one(
        "aws:eks/podIdentityAssociation:PodIdentityAssociation", "aws-use1-team-fusion-workload"
    )
    assert association["inputs"]["serviceAccount"] == WORKLOAD_SERVICE_ACCOUNT
    assert (
        association["inputs"]["roleArn"]
        == prod_plan.state(prod_plan.one("aws:iam/role:Role", "aws-use1-team-fusion-workload"))["arn"]
    )


def test_gke_team_identity_reaches_its_prefix_by_iam_condition(prod_plan):
    bindings = [r for r in prod_plan.by_type(BUCKET_IAM) if r["name"].startswith("gcp-usc1-team-fusion-")]
    assert {b["inputs"]["bucket"] for b in bindings} == {
        "lattice-prod-ml-prod-datasets",
        "lattice-prod-ml-prod-checkpoints",
    }
    for binding in bindings:
        bucket = binding["inputs"]["bucket"]
        assert binding["inputs"]["role"] == "roles/storage.objectUser"
        assert binding["inputs"]["member"] == "serviceAccount:team-fusion@lattice-prod-ml.iam.gserviceaccount.com"
        assert binding["inputs"]["condition"]["expression"] == (
            'resource.type == "storage.googleapis.com/Bucket" || '
            f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/fusion/")'
        )
    wi = prod_plan.one("gcp:serviceaccount/iAMMember:IAMMember", "gcp-usc1-team-fusion-workload-identity")
    assert wi["inputs"]["member"] == "serviceAccount:lattice-prod-ml.svc.id.goog[fusion/team-workload]"
    viewer = prod_plan.one("gcp:projects/iAMMember:IAMMember", "gcp-usc1-team-fusion-group-fusion-ml-at-example.edu")
    assert (viewer["inputs"]["role"], viewer["inputs"]["member"]) == (
        "roles/container.clusterViewer",
        "group:fusion-ml@example.edu",
    )
    cluster = prod_plan.one("gcp:container/cluster:Cluster", "gcp-usc1-gke-cluster")
    assert cluster["inputs"]["authenticatorGroupsConfig"] == {"securityGroup": "gke-security-groups@example.edu"}
    assert cluster["inputs"]["costManagementConfig"] == {"enabled": True}


# --- AWS CloudTrail --------------------------------------------------------------------------------------

TRAIL = "aws:cloudtrail/trail:Trail"


def test_the_aws_trail_records_everything_encrypted_validated_and_in_both_stores(prod_plan):
    (trail,) = prod_plan.by_type(TRAIL)
    inputs = trail["inputs"]
    key = prod_plan.state(prod_plan.one("aws:kms/key:Key", "aws-use1-key-key"))["arn"]
    audit = prod_plan.one(S3, "aws-use1-storage-audit-bucket")
    log_group = prod_plan.one("aws:cloudwatch/logGroup:LogGroup", "aws-use1-trail-logs")
    assert (inputs["name"], inputs["isMultiRegionTrail"], inputs["includeGlobalServiceEvents"]) == (
        "lattice-prod-aws-use1",
        True,
        True,
    )
    assert (inputs["enableLogFileValidation"], inputs["enableLogging"], inputs["kmsKeyId"]) == (True, True, key)
    assert inputs["s3BucketName"] == prod_plan.state(audit)["bucket"]
    assert inputs["cloudWatchLogsGroupArn"] == prod_plan.state(log_group)["arn"] + ":*"  # CloudTrail wants :*
    assert (log_group["inputs"]["retentionInDays"], log_group["inputs"]["kmsKeyId"]) == (731, key)
    management, data = inputs["advancedEventSelectors"]
    assert management["fieldSelectors"] == [{"field": "eventCategory", "equals": ["Management"]}]
    buckets = {
        n: prod_plan.state(prod_plan.one(S3, f"aws-use1-storage-{n}-bucket"))["arn"]
        for n in ("datasets", "checkpoints")
    }
    assert data["fieldSelectors"] == [
        {"field": "eventCategory", "equals": ["Data"]},
        {"field": "resources.type", "equals": ["AWS::S3::Object"]},
        {"field": "resources.ARN", "startsWiths": [f"{buckets['datasets']}/", f"{buckets['checkpoints']}/"]},
    ]
    # it waits for the bucket policy and the key that admit it
    policy = prod_plan.one("aws:s3/bucketPolicy:BucketPolicy", "aws-use1-storage-audit-policy")
    assert policy["urn"] in trail["dependencies"] and trail["protect"]


def test_the_audit_bucket_locks_for_the_specs_retention_and_admits_this_trail_only(prod_plan):
    audit = prod_plan.one(S3, "aws-use1-storage-audit-bucket")
    assert audit["inputs"]["objectLockEnabled"] is True
    lock = next(
        r
        for r in prod_plan.by_type("aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration")
        if audit["urn"] in r["dependencies"]
    )
    # prod's audit bucket locks records as long as the trail's log group keeps them (log_retention_days: 731)
    assert lock["inputs"]["rule"] == {"defaultRetention": {"mode": "COMPLIANCE", "days": 731}}
    statements = json.loads(
        prod_plan.one("aws:s3/bucketPolicy:BucketPolicy", "aws-use1-storage-audit-policy")["inputs"]["policy"]
    )["Statement"]
    trail_arn = "arn:aws:cloudtrail:us-east-1:123456789012:trail/lattice-prod-aws-use1"
    write = next(s for s in statements if s["Sid"] == "CloudTrailDeliversThisSitesTrail")
    assert write["Principal"] == {"Service": "cloudtrail.amazonaws.com"}
    assert write["Resource"].endswith("/AWSLogs/123456789012/*")
    assert write["Condition"]["StringEquals"]["aws:SourceArn"] == trail_arn
    key_policy = json.loads(prod_plan.one("aws:kms/key:Key", "aws-use1-key-key")["inputs"]["policy"])["Statement"]
    encrypt = next(s for s in key_policy if s["Sid"] == "CloudTrailEncryptsThisSitesTrail")
    assert encrypt["Condition"]["StringEquals"] == {"aws:SourceArn": trail_arn}


def test_without_an_audit_bucket_the_trail_gets_its_own_locked_for_the_specs_days(dev_plan):
    bucket = dev_plan.one(S3, "aws-use1-storage-audit-trail-bucket")
    assert bucket["inputs"]["objectLockEnabled"] is True
    lock = next(
        r
        for r in dev_plan.by_type("aws:s3/bucketObjectLockConfiguration:BucketObjectLockConfiguration")
        if bucket["urn"] in r["dependencies"]
    )
    # dev: GOVERNANCE (emptiable), for the dev stack's immutable_days
    assert lock["inputs"]["rule"]["defaultRetention"]["mode"] == "GOVERNANCE"
    (trail,) = dev_plan.by_type(TRAIL)
    assert trail["inputs"]["s3BucketName"] == dev_plan.state(bucket)["bucket"]
    assert trail["protect"] is False


def test_a_teams_cloud_identities_are_bound_in_its_namespace_only(prod_plan):
    bindings = {
        r["name"]: {(s["kind"], s["name"]) for s in r["inputs"]["subjects"]}
        for r in prod_plan.by_type("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding")
        if r["name"].endswith("-fusion-role-binding")
    }
    assert bindings == {
        # EKS: the group the team's access entry maps its IAM role to
        "aws-use1-fusion-role-binding": {("Group", "fusion-ml"), ("Group", "lattice:team:fusion")},
        # the MultiKueue manager (grid-hpc), where fusion submits: its identity-provider group only
        "grid-hpc-fusion-role-binding": {("Group", "fusion-ml")},
        # GKE: the team's Google group, through Google Groups for RBAC
        "gcp-usc1-fusion-role-binding": {
            ("Group", "fusion-ml"),
            ("Group", "lattice:team:fusion"),
            ("Group", "fusion-ml@example.edu"),
        },
    }
    for name in bindings:
        binding = prod_plan.one("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", name)
        assert binding["inputs"]["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": "lattice-team",
        }
        assert binding["inputs"]["metadata"]["namespace"] == "fusion"
