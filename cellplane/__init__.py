"""cellplane's ground: what every service runs on.

Configuration, RPC plumbing, the API and cell databases with their tables'
one home (``objects/``), the cells' engines, the daemon runner, metrics.
Behaviour lives in the service packages (placement, scheduler, conductor,
compute_agent, cellplane_api); the commands are ``cellplane_cli``. This
package imports none of them (``.importlinter``'s layers).
"""
