"""Lattice's public component set, served to every Pulumi language as the ``lattice`` package.

``host.py`` lists the components and starts Pulumi's component provider host with them; ``inputs.py`` holds the
input types they share and turns a bad input into a property-precise error. The components themselves live where
they always have (``components/compute``, ``components/storage``, ``components/network``): each takes its public
args (a ``TypedDict`` the SDK's analyzer reads the schema from) or the stack-file path's internal args, and builds
the same resources from either.
"""
