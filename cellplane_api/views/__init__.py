"""Nova's response documents of the compute API, one module per resource."""
