"""cellplane's shared runtime: configuration, RPC plumbing, databases, service runner, CLI.

Behaviour lives in the service packages (placement, scheduler, conductor,
compute_agent); this package only gives them the ground to stand on.
"""
