"""What the scheduler knows about one compute node while it places a request.

A ``HostState`` merges two sources: Placement's provider summary (capacity
and usage per resource class, traits) and the node's record from its cell
database (host, nodename, cell, service up/disabled, availability zone,
stats) with its host's aggregates and their metadata from the API database.
Filters and weighers read it; ``consume`` charges a claim to it so that the
next instance of the same request, and the next request, see the host as
fuller.
"""
from __future__ import annotations

import copy
import dataclasses
from typing import Any, Mapping

from placement.client import ProviderSummary
from rpc_schemas.request_spec import HOST_LEVEL
from rpc_schemas.selection import allocations_of

AVAILABILITY_ZONE_KEY = 'availability_zone'
FAILED_BUILDS_STAT = 'failed_builds'
SUPPORTED_INSTANCES_STAT = 'supported_instances'


@dataclasses.dataclass(frozen=True)
class HostAggregate:
    """A host aggregate the node's host belongs to, with its operator metadata."""

    uuid: str
    name: str
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class CellNodeRecord:
    """A compute node as its cell database describes it (and its service)."""

    uuid: str
    host: str
    nodename: str
    cell_uuid: str
    service_up: bool = True
    service_disabled: bool = False
    disabled_reason: str | None = None
    availability_zone: str | None = None
    aggregates: tuple[HostAggregate, ...] = ()
    # Failure-domain level -> the Placement aggregate of that level the node
    # is in, e.g. {"rack": "<aggregate uuid>", "row": "<aggregate uuid>"}.
    failure_domains: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # Free-form facts the compute agent reports: supported_instances
    # ([arch, hypervisor_type, vm_mode] triples), failed_builds, ...
    stats: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # Why the node's cell database could not be read at the last refresh
    # (None: it was read): the record is then the one read before, and the
    # node is not offered (ComputeFilter) until its cell is read again.
    cell_unreadable: str | None = None


@dataclasses.dataclass
class ResourceUsage:
    """One resource class of one provider: Placement's capacity and usage.

    ``capacity`` is what Placement reports: (total - reserved) * allocation ratio.
    """

    capacity: int
    used: int

    @property
    def free(self) -> int:
        return self.capacity - self.used


@dataclasses.dataclass
class HostState:
    """One compute node as seen by the scheduler during one run."""

    record: CellNodeRecord
    resources: dict[str, ResourceUsage]
    traits: frozenset[str] = frozenset()
    # The Placement allocation request that claims this node for the request
    # being scheduled (the first candidate Placement offered for it).
    allocation_request: dict[str, Any] | None = None

    @classmethod
    def merge(cls, record: CellNodeRecord, summary: ProviderSummary,
              allocation_request: dict[str, Any] | None = None) -> 'HostState':
        if record.uuid != summary.uuid:
            raise ValueError(f'compute node {record.uuid} merged with the '
                             f'summary of provider {summary.uuid}')
        resources = {rc: ResourceUsage(u.capacity, u.used)
                     for rc, u in summary.resources.items()}
        return cls(record=record, resources=resources, traits=summary.traits,
                   allocation_request=allocation_request)

    # -- identity ----------------------------------------------------------
    @property
    def uuid(self) -> str:
        return self.record.uuid

    @property
    def host(self) -> str:
        return self.record.host

    @property
    def nodename(self) -> str:
        return self.record.nodename

    @property
    def cell_uuid(self) -> str:
        return self.record.cell_uuid

    # -- facts filters and weighers read -----------------------------------
    @property
    def availability_zone(self) -> str | None:
        """The zone of the host's aggregates when one says, else the node's own.

        An operator's aggregate wins over the compute agent's configured zone,
        as in Nova; ``cellplane aggregate`` keeps a host out of two zones.
        """
        for aggregate in self.record.aggregates:
            zone = aggregate.metadata.get(AVAILABILITY_ZONE_KEY)
            if zone:
                return zone
        return self.record.availability_zone or None

    def failure_domain(self, level: str | None) -> str | None:
        """The node's domain at ``level``: its host for the host level, else an aggregate."""
        if level is None or level == HOST_LEVEL:
            return self.host
        return self.record.failure_domains.get(level)

    @property
    def failed_builds(self) -> int:
        try:
            return int(self.record.stats.get(FAILED_BUILDS_STAT, 0))
        except (TypeError, ValueError):
            return 0

    def free(self, resource_class: str) -> int:
        """Free amount of ``resource_class``; 0 if the node does not have it."""
        usage = self.resources.get(resource_class)
        return usage.free if usage is not None else 0

    def limits(self) -> dict[str, int]:
        """Resource class -> capacity, what a Selection tells the compute agent."""
        return {rc: u.capacity for rc, u in self.resources.items()}

    # -- changes -----------------------------------------------------------
    def consume(self, resources: Mapping[str, int]) -> None:
        """Charge a claim of ``resources`` (resource class -> amount) to this node."""
        for rc, amount in resources.items():
            usage = self.resources.get(rc)
            if usage is not None:
                usage.used += amount

    def release(self, resources: Mapping[str, int]) -> None:
        """Undo ``consume`` (a claim that was removed)."""
        for rc, amount in resources.items():
            usage = self.resources.get(rc)
            if usage is not None:
                usage.used = max(0, usage.used - amount)

    def copy(self) -> 'HostState':
        """An independent copy: consuming from it leaves this one unchanged."""
        return HostState(record=self.record,
                         resources={rc: ResourceUsage(u.capacity, u.used)
                                    for rc, u in self.resources.items()},
                         traits=self.traits,
                         allocation_request=copy.deepcopy(self.allocation_request))


def provider_resources(allocation_request: Mapping[str, Any],
                       provider_uuid: str) -> dict[str, int]:
    """What ``allocation_request`` takes from one provider, e.g. ``{"VCPU": 2}``.

    ``allocation_request`` is Placement's body:
    ``{"allocations": {"<rp uuid>": {"resources": {"VCPU": 2}}}, ...}``.
    """
    return allocations_of(allocation_request).get(provider_uuid, {})
