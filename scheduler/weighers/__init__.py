"""Host weighers: each scores hosts on one property; see ``scheduler.weighers.base``.

Each weigher is a module of its own, registered as a
``cellplane.scheduler.weighers`` entry point under its ``name``.
"""
