"""What makes the clusters one machine: Kueue Topology objects per site, MultiKueue manager and workers."""
