"""The scheduler's host-state cache, which counts its own claims before Placement shows them.

Data read from Placement (or a cell database) can be older than the claims
this scheduler has just made: a read that began before a claim was confirmed
does not include it (the race of seeds/003). So the cache *assumes* each
claim it makes, and re-applies it to every host state built from a read that
began before the claim was confirmed. A claim is forgotten once every read
still in flight began after it was confirmed (all later data includes it, as
Placement commits a claim before answering it), when it is unclaimed, or when
it is older than ``assume_seconds`` (a safety net for a read that never ends).

Ordering uses a counter, not clocks: ``reading()`` hands out the counter value
at the start of a read, ``assume()`` stamps a claim with the next value. A read
that begins while a claim is being confirmed may count that claim twice (once
in Placement's usage, once assumed) until the next read: the cache errs on the
full side, which costs a skipped host, never a claim Placement would refuse.

Claims made by other scheduler workers are not known here; Placement's
generation check refuses them and the claim walk moves on (seeds/001).
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from typing import Any, Callable, Iterable, Iterator, Mapping

from oslo_config import cfg

from cellplane.reservations import Reservation
from cellplane.traits import CELL_TRAIT_STAT
from placement.client import Candidates
from rpc_schemas.selection import allocations_of
from scheduler.host_state import CellNodeRecord, HostState


@dataclasses.dataclass(frozen=True)
class ReadToken:
    """Marks the moment a read of Placement or cell data began."""

    sequence: int
    started_at: float


@dataclasses.dataclass(frozen=True)
class AssumedClaim:
    consumer_uuid: str
    # provider uuid -> resource class -> amount
    allocations: Mapping[str, Mapping[str, int]]
    sequence: int
    confirmed_at: float


@dataclasses.dataclass(frozen=True)
class HostStates:
    """Host states of one read, and the candidate roots no cell knows."""

    hosts: list[HostState]
    unknown_providers: list[str]


def claim_allocations(allocation_request: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Provider uuid -> resources of a Placement allocation request body."""
    return allocations_of(allocation_request)


class Assumption(Reservation):
    """A claim the cache counts until reads show it; unreserved, it is forgotten."""

    def __init__(self, cache: 'HostStateCache', consumer_uuid: str) -> None:
        self._cache = cache
        self.consumer = consumer_uuid

    def _release(self) -> None:
        self._cache.forget(self.consumer)

    def __str__(self) -> str:
        return f"the host cache's assumption of the claim of {self.consumer}"


def _cell_traits(records: Iterable[CellNodeRecord]) -> dict[str, str]:
    """Cell uuid -> its hosts' cell trait, for the cells whose every node names the same one."""
    seen: dict[str, set] = {}
    for record in records:
        trait = record.stats.get(CELL_TRAIT_STAT)
        seen.setdefault(record.cell_uuid, set()).add(trait if isinstance(trait, str) else None)
    return {cell: next(iter(traits)) for cell, traits in seen.items()
            if len(traits) == 1 and None not in traits}


class HostStateCache:
    """Compute node records from the cells, plus the claims not yet visible in reads."""

    def __init__(self, *, assume_seconds: float = 300.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._assume_seconds = assume_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._sequence = 0
        self._in_flight: dict[int, ReadToken] = {}
        self._next_read_id = 0
        self._records: dict[str, CellNodeRecord] = {}
        self._domains_by_host: dict[str, Mapping[str, str]] = {}
        # The levels at which every known host is in a domain.
        self._levels_everywhere: frozenset[str] = frozenset()
        self._cell_traits: dict[str, str] = {}
        self._assumed: dict[str, AssumedClaim] = {}

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts, *,
                  clock: Callable[[], float] = time.monotonic) -> 'HostStateCache':
        """A cache honouring ``[scheduler] assumed_claim_seconds``."""
        return cls(assume_seconds=conf.scheduler.assumed_claim_seconds, clock=clock)

    # -- compute node records ------------------------------------------------
    def set_records(self, records: Iterable[CellNodeRecord]) -> None:
        """Replace the known compute nodes (a full refresh from the cell databases)."""
        fresh = {r.uuid: r for r in records}
        domains: dict[str, dict[str, str]] = {}
        for record in fresh.values():
            domains.setdefault(record.host, {}).update(record.failure_domains)
        cell_traits = _cell_traits(fresh.values())
        levels = set.intersection(*(set(d) for d in domains.values())) if domains else set()
        with self._lock:
            self._records = fresh
            self._domains_by_host = domains
            self._levels_everywhere = frozenset(levels)
            self._cell_traits = cell_traits

    def record(self, node_uuid: str) -> CellNodeRecord | None:
        with self._lock:
            return self._records.get(node_uuid)

    def knows_host(self, host: str) -> bool:
        """Whether a known compute node is on ``host``."""
        with self._lock:
            return host in self._domains_by_host

    def every_host_at(self, level: str) -> bool:
        """Whether every known host is in a domain at ``level`` (False while none is known)."""
        with self._lock:
            return level in self._levels_everywhere

    def failure_domain_of_host(self, host: str, level: str) -> str | None:
        """The aggregate at ``level`` the nodes of ``host`` are in, if known."""
        with self._lock:
            return self._domains_by_host.get(host, {}).get(level)

    def cell_trait(self, cell_uuid: str) -> str | None:
        """The trait every known host of the cell says its providers carry; None if any does not."""
        with self._lock:
            return self._cell_traits.get(cell_uuid)

    def records(self) -> list[CellNodeRecord]:
        with self._lock:
            return list(self._records.values())

    # -- reads -----------------------------------------------------------------
    @contextlib.contextmanager
    def reading(self) -> Iterator[ReadToken]:
        """Wrap a read of Placement: ``with cache.reading() as token: ...``."""
        with self._lock:
            token = ReadToken(sequence=self._sequence, started_at=self._clock())
            read_id = self._next_read_id
            self._next_read_id += 1
            self._in_flight[read_id] = token
        try:
            yield token
        finally:
            with self._lock:
                del self._in_flight[read_id]
                self._forget_shown_locked()

    def host_states(self, candidates: Candidates,
                    token: ReadToken) -> HostStates:
        """One HostState per candidate compute node, with unseen claims re-applied.

        Each host carries the first allocation request Placement offered for it.
        """
        with self._lock:
            records = self._records
            pending = [c for c in self._assumed.values()
                       if c.sequence > token.sequence and not self._expired(c)]
        hosts, unknown = [], []
        for root, requests in candidates.requests_by_root().items():
            record = records.get(root)
            summary = candidates.provider_summaries.get(root)
            if record is None or summary is None:
                unknown.append(root)
                continue
            host = HostState.merge(record, summary, allocation_request=requests[0])
            for claim in pending:
                resources = claim.allocations.get(host.uuid)
                if resources:
                    host.consume(resources)
            hosts.append(host)
        return HostStates(hosts=hosts, unknown_providers=unknown)

    # -- claims ----------------------------------------------------------------
    def assume(self, consumer_uuid: str,
               allocation_request: Mapping[str, Any]) -> 'Assumption':
        """Remember a claim Placement has just confirmed; unreserving it forgets it."""
        with self._lock:
            self._sequence += 1
            self._assumed[consumer_uuid] = AssumedClaim(
                consumer_uuid=consumer_uuid,
                allocations=claim_allocations(allocation_request),
                sequence=self._sequence, confirmed_at=self._clock())
        return Assumption(self, consumer_uuid)

    def forget(self, consumer_uuid: str) -> None:
        """Drop a claim that was removed (unclaimed) before any read showed it."""
        with self._lock:
            self._assumed.pop(consumer_uuid, None)

    def assumed(self) -> list[str]:
        """Consumer UUIDs of the claims still being re-applied."""
        with self._lock:
            self._forget_shown_locked()
            return sorted(self._assumed)

    def _expired(self, claim: AssumedClaim) -> bool:
        return self._clock() - claim.confirmed_at > self._assume_seconds

    def _forget_shown_locked(self) -> None:
        now = self._clock()
        # A read stuck longer than assume_seconds no longer pins claims.
        live = [t.sequence for t in self._in_flight.values()
                if now - t.started_at <= self._assume_seconds]
        oldest_read = min(live) if live else self._sequence
        for consumer, claim in list(self._assumed.items()):
            if claim.sequence <= oldest_read or self._expired(claim):
                del self._assumed[consumer]
