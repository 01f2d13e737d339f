"""Claiming resources in Placement for a request, with the unclaim beside each claim.

``Claimer`` is the small protocol the scheduler claims through (the real one
wraps ``placement/client.py``; unit tests use a fake). ``RequestClaims``
makes one request's claims and hands each back as reservations
(``cellplane.reservations``): the ``PlacementClaim`` (written, and charged
to its host state) and the host cache's assumption of it. The claim walk
holds them on its stack, so that a multi-create that cannot place every
instance gives all of them back (all-or-nothing).

Batched, a ``RequestClaims`` charges each claim to its host state only and
writes them all in one ``commit`` (``Claimer.claim_many``, one ``POST
/allocations``, all or nothing): one Placement round trip for a
multi-create instead of one per instance. A refused batch raises
``BatchClaimRefused`` with nothing written and every charge undone; the
caller then claims one instance at a time.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol

from cellplane.reservations import Reservation
from scheduler.host_cache import HostStateCache
from scheduler.host_state import HostState, provider_resources


class ClaimRefused(Exception):
    """Placement refused the claim: the host's resources changed since they were read.

    ``code`` is Placement's error code when it gave one (for instance
    ``placement.concurrent_update``), for the scheduling record.
    """

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class BatchClaimRefused(Exception):
    """Placement refused a batch claim; nothing of it was written.

    ``code`` is Placement's error code (``placement.concurrent_update``...).
    """

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class Claimer(Protocol):
    """What the claim walk claims through (``MoveClaimer`` also needs ``claim_move``/``unclaim_move``)."""

    def claim(self, consumer_uuid: str, allocation_request: Mapping[str, Any],
              project_id: str, user_id: str | None) -> bool:
        """Write the allocation; ``False`` or ``ClaimRefused`` if Placement refused it."""

    def claim_many(self, allocation_requests: Mapping[str, Mapping[str, Any]],
                   project_id: str, user_id: str | None) -> None:
        """Write every consumer's allocation or none; ``ClaimRefused`` if Placement refused."""

    def unclaim(self, consumer_uuid: str) -> None:
        """Remove every allocation of ``consumer_uuid``."""


class MoveClaimer:
    """The Claimer of one move: each claim is a migration-consumer claim, each unclaim its undo.

    A claim of a host for the moving instance gives the instance's source
    allocation to the migration's consumer and the host's to the instance
    (``claim_move``, one ``POST /allocations``); its unclaim moves the
    source allocation back to the instance (``unclaim_move``). The claim
    walk, its reservations and its conflicts are those of a boot.
    """

    def __init__(self, claimer, migration_uuid: str) -> None:
        self._claimer = claimer
        self.migration_uuid = migration_uuid

    def claim(self, consumer_uuid: str, allocation_request: Mapping[str, Any],
              project_id: str, user_id: str | None) -> bool:
        return self._claimer.claim_move(consumer_uuid, self.migration_uuid,
                                        allocation_request, project_id, user_id)

    def claim_many(self, allocation_requests: Mapping[str, Mapping[str, Any]],
                   project_id: str, user_id: str | None) -> None:
        raise ClaimRefused('a move claims one instance: no batch')

    def unclaim(self, consumer_uuid: str) -> None:
        self._claimer.unclaim_move(consumer_uuid, self.migration_uuid)


class PlacementClaim(Reservation):
    """One instance's allocation on one host: charged to the host state, and written to Placement.

    Batched, it is only charged until ``RequestClaims.commit`` writes it.
    Unreserved, it is removed from Placement (if it was written) and from
    the host state.
    """

    def __init__(self, claimer: Claimer, consumer_uuid: str, host: HostState,
                 resources: dict[str, int], request: Mapping[str, Any]) -> None:
        self._claimer = claimer
        self.consumer = consumer_uuid
        self.host = host
        self.resources = resources
        self.request = request
        self.written = False

    def _release(self) -> None:
        if self.written:
            self._claimer.unclaim(self.consumer)
        self.host.release(self.resources)

    def __str__(self) -> str:
        if not self.written:
            return f'the charge of {self.consumer} to the host state of {self.host.host}'
        return (f'the Placement claim of {self.consumer} on {self.host.host} (its '
                f'allocations stay until removed: DELETE /allocations/{self.consumer})')


class RequestClaims:
    """Claims for one scheduling request: each returned as reservations to hold on the walk's stack."""

    def __init__(self, claimer: Claimer, cache: HostStateCache | None,
                 project_id: str, user_id: str | None, *, batched: bool = False) -> None:
        self._claimer = claimer
        self._cache = cache
        self._project_id = project_id
        self._user_id = user_id
        self.batched = batched
        # Batched and not committed yet: charged to the host state only.
        self._pending: list[PlacementClaim] = []

    def claim(self, consumer_uuid: str, host: HostState) -> list[Reservation]:
        """Claim ``host``'s allocation request for ``consumer_uuid``; what it reserved, in order.

        On success the claim is charged to ``host`` and assumed by the cache
        (two reservations: the claim, then the assumption). A refusal raises
        ``ClaimRefused`` (with Placement's reason) and reserves nothing; other
        errors (Placement unreachable...) propagate as they are. Batched, the
        claim is only charged to ``host`` until ``commit`` writes it.
        """
        request = host.allocation_request
        if request is None:
            raise ClaimRefused(f'Placement offered no allocation request for {host.uuid}')
        claim = PlacementClaim(self._claimer, consumer_uuid, host,
                               provider_resources(request, host.uuid), request)
        if self.batched:
            host.consume(claim.resources)
            self._pending.append(claim)
            return [claim]
        if not self._claimer.claim(consumer_uuid, request, self._project_id,
                                   self._user_id):
            raise ClaimRefused('Placement refused the claim')
        claim.written = True
        host.consume(claim.resources)
        return [claim, *self._assume(claim)]

    def commit(self) -> list[Reservation]:
        """Write the batched claims in one request; the cache's assumptions of them.

        ``BatchClaimRefused`` if Placement refused them; on any error every
        batched claim is given back (its charge undone). Nothing to do unbatched.
        """
        if not self._pending:
            return []
        pending, self._pending = self._pending, []
        try:
            self._claimer.claim_many({c.consumer: c.request for c in pending},
                                     self._project_id, self._user_id)
        except BaseException as exc:
            for claim in pending:
                claim.unreserve()
            if isinstance(exc, ClaimRefused):
                raise BatchClaimRefused(str(exc), code=exc.code) from exc
            raise
        assumed: list[Reservation] = []
        for claim in pending:
            claim.written = True
            assumed += self._assume(claim)
        return assumed

    def _assume(self, claim: PlacementClaim) -> list[Reservation]:
        if self._cache is None:
            return []
        return [self._cache.assume(claim.consumer, claim.request)]


def removed_claims(undone: Iterable[Reservation]) -> list[str]:
    """The consumers whose Placement claim is among ``undone``, in the order they were claimed."""
    return [r.consumer for r in reversed(list(undone))
            if isinstance(r, PlacementClaim) and r.written]
