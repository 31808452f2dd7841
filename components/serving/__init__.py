"""Model serving where the data is born: the pinned runtime, endpoints sized to their pool, weights over the links."""
