"""The 1.x conductor API of older clients, still served by both conductors for one release.

Until this release both conductors served one API, ``ConductorAPI`` 1.0-1.2,
in the default RPC namespace: the cell conductor's casts (service_heartbeat,
build_instances, instance_update, compute_node_update) and the super
conductor's schedule_and_build_instances. Now each conductor has its own API
and namespace (``conductor/cell/rpcapi.py``, ``conductor/super/rpcapi.py``).

Rolling upgrade: upgrade the conductors first. A new conductor serves this
endpoint beside its own API, so agents and API roles of the previous release
(which still send the 1.x messages) keep working while they are upgraded;
once every client runs this release, nothing sends here any more. A method
the other role serves is refused with one logged error, as the shared
conductor refused a heartbeat sent to a super conductor.
"""
from __future__ import annotations

import logging

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first

# isort: split
import oslo_messaging as messaging

LOG = logging.getLogger(__name__)

LEGACY_VERSION = '1.2'
LEGACY_METHODS = {
    'service_heartbeat': 'cell',
    'build_instances': 'cell',
    'instance_update': 'cell',
    'compute_node_update': 'cell',
    'schedule_and_build_instances': 'super',
}


class LegacyConductorEndpoint:
    """Serves the 1.x methods of ``role`` by handing them to that role's manager."""

    target = messaging.Target(version=LEGACY_VERSION)

    def __init__(self, role: str, manager: object) -> None:
        self._role = role
        self._manager = manager

    def __getattr__(self, method: str):
        served_by = LEGACY_METHODS.get(method)
        if served_by is None:
            raise AttributeError(method)
        if served_by == self._role:
            return getattr(self._manager, method)
        role = self._role

        def refuse(ctxt, **kwargs) -> None:
            LOG.error('Rejected %s (conductor API 1.x): this is the %s conductor; '
                      '%s is served by the %s conductor', method, role, method,
                      served_by)
        return refuse
