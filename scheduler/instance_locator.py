"""Where do existing instances run? Answered from their Placement allocations.

The ``different_host`` and ``same_host`` hints name instances; an instance's
allocations in Placement name the compute node provider it runs on, and the
host cache maps that node to its host. An instance without allocations, or on
a node no cell knows, is simply not located.
"""
from __future__ import annotations

from typing import Iterable

from placement.client import PlacementClient
from scheduler.host_cache import HostStateCache


class PlacementInstanceLocator:
    def __init__(self, client: PlacementClient, cache: HostStateCache) -> None:
        self._client = client
        self._cache = cache

    def hosts_of(self, instance_uuids: Iterable[str]) -> dict[str, str]:
        """Instance UUID -> host, for the instances that could be located."""
        located = {}
        for instance_uuid in instance_uuids:
            allocations = self._client.get_allocations(instance_uuid).allocations
            for provider_uuid in allocations:
                record = self._cache.record(provider_uuid)
                if record is not None:
                    located[instance_uuid] = record.host
                    break
        return located
