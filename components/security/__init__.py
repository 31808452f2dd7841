"""Keys, audit logging and IAM helpers: customer-managed keys per site, encrypted log groups."""
