"""The compute agent's backstop: what this host has promised to the instances it runs or builds.

Placement already claimed the instance's resources before the build was
cast; this check catches what Placement cannot see (an agent restarted with
a smaller host, a claim written against stale inventory). Each build
claims its resources here before the driver runs and releases them when the
build fails or the instance is destroyed. Capacity is the ``limits`` the
scheduler put in the Selection, else what the virt driver reports. The
record lives in memory: after a restart it starts empty (the fake driver
forgets its instances too).
"""
from __future__ import annotations

import threading
from typing import Mapping

from compute_agent.virt.driver import DriverInventory
from rpc_schemas.instance import Instance
from rpc_schemas.selection import Selection


class InsufficientLocalResources(Exception):
    """This host cannot hold the instance; the message says which resource and by how much."""


def requested_resources(instance: Instance, selection: Selection) -> dict[str, int]:
    """What the instance takes on this node: its allocation request there, else its flavor."""
    resources = selection.allocations.get(selection.compute_node_uuid)
    if resources:
        return resources
    return instance.flavor.placement_resources()


def driver_capacity(inventory: Mapping[str, DriverInventory]) -> dict[str, int]:
    """Resource class -> what the host may hand out: (total - reserved) x ratio."""
    return {rc: int((inv.total - inv.reserved) * inv.allocation_ratio)
            for rc, inv in inventory.items()}


class LocalClaims:
    """Resources promised per instance on this host; safe to share between handler threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._claims: dict[str, dict[str, int]] = {}

    def usage(self) -> dict[str, int]:
        with self._lock:
            used: dict[str, int] = {}
            for resources in self._claims.values():
                for rc, amount in resources.items():
                    used[rc] = used.get(rc, 0) + amount
            return used

    def claim(self, instance_uuid: str, wanted: Mapping[str, int],
              capacity: Mapping[str, int]) -> None:
        """Promise ``wanted`` to the instance, or raise ``InsufficientLocalResources``."""
        with self._lock:
            used: dict[str, int] = {}
            for uuid, resources in self._claims.items():
                if uuid == instance_uuid:
                    continue
                for rc, amount in resources.items():
                    used[rc] = used.get(rc, 0) + amount
            short = []
            for rc, amount in sorted(wanted.items()):
                if rc not in capacity:
                    short.append(f'{rc}: {amount} wanted, this host has none')
                    continue
                free = capacity[rc] - used.get(rc, 0)
                if amount > free:
                    short.append(f'{rc}: {amount} wanted, {free} free of {capacity[rc]}')
            if short:
                raise InsufficientLocalResources(
                    'local resource check failed (' + '; '.join(short) + ')')
            self._claims[instance_uuid] = dict(wanted)

    def release(self, instance_uuid: str) -> None:
        """Forget the instance's promise (build failed, or destroyed); unknown is fine."""
        with self._lock:
            self._claims.pop(instance_uuid, None)
