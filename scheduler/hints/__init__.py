"""The scheduler hints about other instances: ``same_host``, ``different_host``, ``same_domain``, ``different_domain``.

``domains.py`` turns the domain hints into the Placement query's
``member_of`` and ``!in:`` (and lists the instances to locate); the
filters ``same_host_filter.py`` (``SameHostFilter``) and
``different_host_filter.py`` (``DifferentHostFilter``) answer the host
hints. Their names and value form are the wire contract's
(``rpc_schemas.scheduler_hints``); the instances are located by
``scheduler.instance_locator``.
"""
