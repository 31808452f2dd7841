"""Flow models over a plan: where packets go (``reachability``) and what the clusters' NetworkPolicies let through
(``network_policy``). Pure logic over the plan's resource records and the stack spec, so policy rules can use them
(``policies/`` may import ``components/``, never ``lattice/``)."""
