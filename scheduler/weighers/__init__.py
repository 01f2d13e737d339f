"""Host weighers: each scores hosts on one property; see ``scheduler.weighers.base``.

Each weigher is a module of its own, registered as a
``cellplane.scheduler.weighers`` entry point under its ``name``. The soft
server-group weighers live with the server group, in ``scheduler.server_group``.
"""
