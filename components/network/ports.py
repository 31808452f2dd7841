"""Well-known ports the network components open, named once."""

HTTPS = 443
