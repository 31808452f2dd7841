"""IAM policy documents shared by the AWS components."""

from __future__ import annotations

import json


def service_trust_policy(service: str, *actions: str) -> str:
    """A role trust policy that lets one AWS service principal assume the role (sts:AssumeRole by default)."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": service},
                    "Action": list(actions or ("sts:AssumeRole",)),
                }
            ],
        }
    )
