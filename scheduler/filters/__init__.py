"""Host filters: each answers one yes/no question about one host.

The base class and the rejection value live in ``scheduler.filters.base``;
each filter is a module of its own, registered as a ``cellplane.scheduler.filters``
entry point under its ``name``. A feature's filters live with the feature:
``scheduler.server_group`` (affinity, anti-affinity), ``scheduler.hints``
(same host, different host).
"""
