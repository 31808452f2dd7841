"""The Lattice operator CLI: plan (mock engine), schema."""
