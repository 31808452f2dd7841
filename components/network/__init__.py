"""Site networks (AWS VPC, GCP VPC) and the address plans carved from a site's CIDR."""
