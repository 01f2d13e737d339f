"""Builders for the scheduler's unit tests: specs, host states, Placement replies, a fake claimer.

``FakeClaimer`` stands in for Placement in tests of the claim walk only; it
keeps allocations per consumer and refuses claims for providers it is told
to refuse, which is how the conflict path is forced. ``FakePlacement`` keeps
memory capacity and usage per provider and answers both the candidates query
and claims (refusing a claim that no longer fits, as Placement's generation
check would); ``during_read`` runs once between reading and answering, which
replays the interleavings of seed 003.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from placement.client import Candidates, ProviderSummary, Usage
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import RequestSpec
from scheduler.claims import ClaimRefused
from scheduler.host_state import CellNodeRecord, HostAggregate, HostState
from scheduler.request import SchedulingRequest

CELL1 = 'cell-1'
CELL2 = 'cell-2'


def flavor(vcpus: int = 1, memory_mb: int = 512, root_gb: int = 10,
           extra_specs: Mapping[str, str] | None = None) -> Flavor:
    return Flavor(name='m1.test', vcpus=vcpus, memory_mb=memory_mb, root_gb=root_gb,
                  extra_specs=dict(extra_specs or {}))


def spec(**overrides: Any) -> RequestSpec:
    values: dict[str, Any] = {'flavor': flavor(), 'project_id': 'proj', 'user_id': 'user'}
    values.update(overrides)
    return RequestSpec(**values)


def record(name: str, *, cell: str = CELL1, **overrides: Any) -> CellNodeRecord:
    values: dict[str, Any] = {'uuid': f'rp-{name}', 'host': name, 'nodename': name,
                              'cell_uuid': cell}
    values.update(overrides)
    return CellNodeRecord(**values)


def allocation_request(node_uuid: str, resources: Mapping[str, int]) -> dict:
    return {'allocations': {node_uuid: {'resources': dict(resources)}}}


DEFAULT_CAPACITY = {'VCPU': 16, 'MEMORY_MB': 16384, 'DISK_GB': 500}
DEFAULT_REQUEST = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 10}


def host(name: str, *, cell: str = CELL1, used: Mapping[str, int] | None = None,
         capacity: Mapping[str, int] | None = None,
         request: Mapping[str, int] | None = None,
         aggregates: Iterable[HostAggregate] = (), **record_overrides: Any) -> HostState:
    """A host state whose allocation request asks for ``request`` (default: 1/512/10)."""
    capacity = dict(capacity or DEFAULT_CAPACITY)
    used = dict(used or {})
    rec = record(name, cell=cell, aggregates=tuple(aggregates), **record_overrides)
    summary = ProviderSummary(
        uuid=rec.uuid,
        resources={rc: Usage(capacity=cap, used=used.get(rc, 0))
                   for rc, cap in capacity.items()})
    return HostState.merge(rec, summary, allocation_request=allocation_request(
        rec.uuid, request or DEFAULT_REQUEST))


def scheduling_request(request_spec: RequestSpec | None = None,
                       **overrides: Any) -> SchedulingRequest:
    values: dict[str, Any] = {'spec': request_spec or spec(),
                              'resources': dict(DEFAULT_REQUEST)}
    values.update(overrides)
    return SchedulingRequest(**values)


def candidates_body(nodes: Mapping[str, Mapping[str, Mapping[str, int]]],
                    request: Mapping[str, int] | None = None) -> dict:
    """A Placement allocation-candidates reply.

    ``nodes``: provider uuid -> resource class -> {"capacity": c, "used": u}.
    """
    request = dict(request or DEFAULT_REQUEST)
    return {
        'allocation_requests': [allocation_request(uuid, request) for uuid in nodes],
        'provider_summaries': {
            uuid: {'resources': {rc: dict(v) for rc, v in resources.items()},
                   'traits': []}
            for uuid, resources in nodes.items()},
    }


class FakeClaimer:
    """Placement's claim and unclaim, in memory, with forced conflicts."""

    def __init__(self, refuse: Iterable[str] = (), raise_conflict: bool = True,
                 fail_with: Exception | None = None) -> None:
        self.refuse = set(refuse)
        self.raise_conflict = raise_conflict
        self.fail_with = fail_with
        self.allocations: dict[str, dict] = {}
        self.attempts: list[tuple[str, str]] = []
        self.unclaimed: list[str] = []

    def claim(self, consumer_uuid: str, allocation_request: Mapping[str, Any],
              project_id: str, user_id: str | None) -> bool:
        providers = sorted(allocation_request['allocations'])
        self.attempts.append((consumer_uuid, providers[0]))
        if self.fail_with is not None and len(self.allocations) >= 1:
            raise self.fail_with
        if self.refuse & set(providers):
            if self.raise_conflict:
                raise ClaimRefused(f'generation conflict on {providers}')
            return False
        self.allocations[consumer_uuid] = dict(allocation_request)
        return True

    def unclaim(self, consumer_uuid: str) -> None:
        self.unclaimed.append(consumer_uuid)
        self.allocations.pop(consumer_uuid, None)


class FakePlacement:
    def __init__(self, capacity_mb: dict[str, int]) -> None:
        self.capacity = {f'rp-{n}': mb for n, mb in capacity_mb.items()}
        self.used = {rp: 0 for rp in self.capacity}
        self.allocations: dict[str, tuple[str, int]] = {}
        self.queries: list[list[tuple[str, str]]] = []
        self.during_read = None  # called once, between reading and answering
        self.single_claims: list[str] = []
        self.batches: list[list[str]] = []

    microversion = '1.39'

    def allocation_candidates(self, query):
        self.queries.append(query.to_params())
        wanted = query.resources['MEMORY_MB']
        body = {'allocation_requests': [], 'provider_summaries': {}}
        for rp, cap in self.capacity.items():
            if cap - self.used[rp] >= wanted:
                body['allocation_requests'].append(
                    {'allocations': {rp: {'resources': {'MEMORY_MB': wanted}}}})
                body['provider_summaries'][rp] = {
                    'resources': {'MEMORY_MB': {'capacity': cap, 'used': self.used[rp]}},
                    'traits': []}
        if self.during_read is not None:
            hook, self.during_read = self.during_read, None
            hook()
        return Candidates.from_body(body)

    def claim(self, consumer_uuid, allocation_request, project_id, user_id):
        self.single_claims.append(consumer_uuid)
        ((rp, amount),) = self._wanted(allocation_request).items()
        if self.capacity[rp] - self.used[rp] < amount:
            raise ClaimRefused(f'{rp} changed')
        self._write(consumer_uuid, rp, amount)
        return True

    def claim_many(self, allocation_requests, project_id, user_id):
        """All or nothing, like POST /allocations."""
        self.batches.append(list(allocation_requests))
        wanted: dict[str, int] = {}
        for request in allocation_requests.values():
            for rp, amount in self._wanted(request).items():
                wanted[rp] = wanted.get(rp, 0) + amount
        full = sorted(rp for rp, amount in wanted.items()
                      if self.capacity[rp] - self.used[rp] < amount)
        if full:
            raise ClaimRefused(f'{", ".join(full)} changed')
        for consumer, request in allocation_requests.items():
            ((rp, amount),) = self._wanted(request).items()
            self._write(consumer, rp, amount)

    @staticmethod
    def _wanted(allocation_request) -> dict[str, int]:
        return {rp: entry['resources']['MEMORY_MB']
                for rp, entry in allocation_request['allocations'].items()}

    def _write(self, consumer_uuid: str, rp: str, amount: int) -> None:
        self.used[rp] += amount
        self.allocations[consumer_uuid] = (rp, amount)

    def unclaim(self, consumer_uuid):
        rp, amount = self.allocations.pop(consumer_uuid)
        self.used[rp] -= amount
