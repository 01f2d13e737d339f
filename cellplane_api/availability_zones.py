"""Which availability zone each host and service is in, as the compute API shows them.

A compute host is in the zone of its aggregates (metadata
``availability_zone``; ``cellplane aggregate`` keeps a host out of two),
else the zone its agent reports (``[compute] availability_zone``), else
``[DEFAULT] default_availability_zone`` (``nova``): the scheduler's reading
(``HostState.availability_zone``) with Nova's default for a host in none.
Every other service is in ``[DEFAULT] internal_service_availability_zone``
(``internal``).
"""
from __future__ import annotations

from typing import Iterable

from sqlalchemy.engine import Engine

from cellplane.objects import aggregates, compute_nodes


class Zones:
    """host -> zone for compute hosts; ``of(binary, host)`` for any service."""

    def __init__(self, aggregate_zones: dict[str, str], node_zones: dict[str, str],
                 default: str, internal: str):
        self._aggregate = aggregate_zones
        self._node = node_zones
        self.default = default
        self.internal = internal

    @classmethod
    def read(cls, api_engine: Engine, cell_engines: Iterable[Engine], *,
             default: str, internal: str) -> 'Zones':
        """From the API database's aggregates and the nodes of ``cell_engines`` (those readable)."""
        by_aggregate = {m.host: m.metadata[aggregates.AVAILABILITY_ZONE_KEY]
                        for m in aggregates.memberships(api_engine)
                        if m.metadata.get(aggregates.AVAILABILITY_ZONE_KEY)}
        by_node = {}
        for engine in cell_engines:
            for node in compute_nodes.list_with_service(engine):
                if node.availability_zone:
                    by_node[node.host] = node.availability_zone
        return cls(by_aggregate, by_node, default, internal)

    def of_host(self, host: str) -> str:
        return self._aggregate.get(host) or self._node.get(host) or self.default

    def of(self, binary: str, host: str) -> str:
        if binary == compute_nodes.COMPUTE_BINARY:
            return self.of_host(host)
        return self.internal
