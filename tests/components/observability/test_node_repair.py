"""A GPU node that logs a fatal Xid or loses a device leaves its pool without a human: every EKS accelerator node group
repairs itself one node at a time, replacing on the hardware failures a reboot does not cure, and the node monitoring
agent that reports those conditions runs on the cluster."""

from __future__ import annotations

from lattice.components.compute.aws_gpu_node_pool import REPLACE_REASONS

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ADDON = "aws:eks/addon:Addon"


def test_every_eks_gpu_node_group_in_prod_repairs_itself(prod_plan):
    groups = [g for g in prod_plan.by_type(NODE_GROUP) if g["name"].startswith("aws-use1-train-")]
    assert [g["name"] for g in groups] == ["aws-use1-train-p5-nodes"]
    for group in groups:
        repair = group["inputs"]["nodeRepairConfig"]
        assert repair["enabled"] is True and repair["maxParallelNodesRepairedCount"] == 1
        overrides = {o["nodeUnhealthyReason"]: o for o in repair["nodeRepairConfigOverrides"]}
        assert set(overrides) == set(REPLACE_REASONS["gpu"])
        assert overrides["NvidiaXID79Error"] == {
            "nodeMonitoringCondition": "AcceleratedHardwareReady",
            "nodeUnhealthyReason": "NvidiaXID79Error",
            "repairAction": "Replace",
            "minRepairWaitTimeMins": 10,
        }


def test_the_node_monitoring_agent_runs_where_node_groups_repair(prod_plan, dev_plan):
    for plan in (prod_plan, dev_plan):
        (agent,) = [a for a in plan.by_type(ADDON) if a["inputs"]["addonName"] == "eks-node-monitoring-agent"]
        (cluster,) = plan.by_type("aws:eks/cluster:Cluster")
        assert agent["inputs"]["clusterName"] == plan.state(cluster)["name"]
        system = [g for g in plan.by_type(NODE_GROUP) if "nodeRepairConfig" not in g["inputs"]]
        assert system and all(g["urn"] in agent["dependencies"] for g in system)  # it runs on the nodes there are
        repairing = [g for g in plan.by_type(NODE_GROUP) if "nodeRepairConfig" in g["inputs"]]
        assert len(repairing) == len(plan.by_type(NODE_GROUP)) - len(system) >= 1
