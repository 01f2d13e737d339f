"""Builders for the cell conductor's unit tests: selections, and Placement and the compute agents in memory.

``FakePlacement`` keeps each consumer's allocations and each provider's
aggregates; a claim on a provider it is told to refuse raises what it was
given (a ``ClaimConflict``, or ``PlacementUnreachable``), and its reads can
be made to fail the same way. ``FakeCompute`` takes the build casts. Both
write what they were asked, in order, to one ``journal``: that is how a
test sees the order of unclaim, claim and cast.
"""
from __future__ import annotations

from typing import Callable

from placement.client import ConsumerAllocations
from rpc_schemas.flavor import Flavor
from rpc_schemas.selection import Selection

CELL = '00000000-0000-4000-8000-00000000ce11'
FLAVOR = Flavor(name='small', vcpus=1, memory_mb=512, root_gb=0)
RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512}


def node(host: str) -> str:
    """The compute node provider of ``host``."""
    return f'rp-{host}'


def selection(host: str) -> Selection:
    """What the scheduler returns for ``host``: its own allocation request."""
    return Selection(service_host=host, nodename=host, compute_node_uuid=node(host),
                     cell_uuid=CELL,
                     allocation_request={'allocations': {node(host): {
                         'resources': dict(RESOURCES)}}},
                     allocation_request_version='1.36')


class FakePlacement:
    def __init__(self, journal: list | None = None) -> None:
        self.journal = journal if journal is not None else []
        self.allocations: dict[str, dict[str, dict[str, int]]] = {}
        self.aggregates: dict[str, set[str]] = {}
        # Provider -> what a claim on it raises (ClaimConflict: refused).
        self.refuse: dict[str, Exception] = {}
        # Set: reads of allocations and aggregates raise it.
        self.fail_reads: Exception | None = None

    def hold(self, consumer: str, host: str) -> None:
        """``consumer`` has its allocation on ``host``'s node (set up, not journalled)."""
        self.allocations[consumer] = {node(host): dict(RESOURCES)}

    def claim(self, consumer_uuid: str, allocations: dict, *, project_id: str,
              user_id: str, **_) -> None:
        providers = sorted(allocations)
        self.journal.append(('claim', consumer_uuid, *providers, project_id, user_id))
        for provider in providers:
            if provider in self.refuse:
                raise self.refuse[provider]
        self.allocations[consumer_uuid] = {
            rp: dict(a.get('resources', a)) for rp, a in allocations.items()}

    def unclaim(self, consumer_uuid: str) -> bool:
        self.journal.append(('unclaim', consumer_uuid))
        return self.allocations.pop(consumer_uuid, None) is not None

    def get_allocations(self, consumer_uuid: str) -> ConsumerAllocations:
        if self.fail_reads is not None:
            raise self.fail_reads
        held = self.allocations.get(consumer_uuid)
        return ConsumerAllocations(dict(held or {}), 1 if held else None,
                                   'proj' if held else None, 'user' if held else None)

    def get_aggregates(self, uuid: str) -> tuple[frozenset[str], int]:
        if self.fail_reads is not None:
            raise self.fail_reads
        return frozenset(self.aggregates.get(uuid, ())), 0


class FakeCompute:
    def __init__(self, journal: list | None = None) -> None:
        self.journal = journal if journal is not None else []
        self.casts: list[tuple[str, list[str]]] = []
        # Called at each cast, before it returns: what the cell DB says then.
        self.during_cast: Callable[[], None] | None = None

    def build_and_run_instance(self, ctxt, host: str, instance, request_spec,
                               host_list) -> None:
        self.journal.append(('cast', host))
        self.casts.append((host, [s.service_host for s in host_list]))
        if self.during_cast is not None:
            self.during_cast()
