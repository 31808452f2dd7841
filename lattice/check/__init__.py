"""The policy pack run offline over a plan (``lattice check``), or over what is live (``lattice audit``).

- ``evaluate``: each rule of ``policies/`` over the plan's resources, with the environment's enforcement config.
- ``analyzer_wire``: what crosses the analyzer protocol, so a rule sees offline what it sees under CrossGuard.
- ``waivers``: named, owned, expiring exceptions to one policy.
- ``report``: the findings as text, JSON, SARIF, JUnit, GitHub annotations and a pull-request summary.
- ``policy_table``: the policy table of the docs and the README, from the registry.
"""
