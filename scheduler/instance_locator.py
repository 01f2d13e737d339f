"""Where do existing instances run? Answered from their Placement allocations.

The scheduler asks it for two kinds of instances: those the
``same_host``/``different_host``/``same_domain``/``different_domain`` hints
name (``scheduler.hints``), and the other members of a request's server
group (``scheduler.server_group.places``). An instance's allocations name
the providers it consumes from; the first that the host cache knows as a
compute node (``ConsumerAllocations.node``, the rule the cell conductor's
group check follows too) gives its host. An instance without allocations,
or on a node no cell knows, is simply not located.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Protocol

from placement.client import PlacementClient
from scheduler.host_cache import HostStateCache


class InstanceLocator(Protocol):
    def hosts_of(self, instance_uuids: Iterable[str]) -> Mapping[str, str]:
        """Instance UUID -> host it runs on, for those that can be found."""


class PlacementInstanceLocator:
    def __init__(self, client: PlacementClient, cache: HostStateCache) -> None:
        self._client = client
        self._cache = cache

    def hosts_of(self, instance_uuids: Iterable[str]) -> dict[str, str]:
        """Instance UUID -> host, for the instances that could be located."""
        located = {}
        for instance_uuid in instance_uuids:
            node = self._client.get_allocations(instance_uuid).node(
                lambda provider: self._cache.record(provider) is not None)
            if node is not None:
                located[instance_uuid] = self._cache.record(node).host
        return located
