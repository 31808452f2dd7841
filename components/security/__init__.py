"""Keys, audit logging and access: customer-managed keys per site, encrypted log groups."""
