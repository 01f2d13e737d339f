"""Claiming resources in Placement for a request, with the unclaim beside each claim.

``Claimer`` is the small protocol the scheduler claims through (the real one
wraps ``placement/client.py``; unit tests use a fake). ``RequestClaims``
keeps the claims made for one request so that a multi-create that cannot
place every instance removes all of them (all-or-nothing), and tells the
host cache about each claim and each unclaim.

Batched, a ``RequestClaims`` charges each claim to its host state only and
writes them all in one ``commit`` (``Claimer.claim_many``, one ``POST
/allocations``, all or nothing): one Placement round trip for a
multi-create instead of one per instance. A refused batch raises
``BatchClaimRefused`` with nothing written and every charge undone; the
caller then claims one instance at a time.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping, Protocol

from scheduler.host_cache import HostStateCache
from scheduler.host_state import HostState, provider_resources

LOG = logging.getLogger(__name__)


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
    def claim(self, consumer_uuid: str, allocation_request: Mapping[str, Any],
              project_id: str, user_id: str | None) -> bool:
        """Write the allocation; ``False`` or ``ClaimRefused`` if Placement refused it."""

    def claim_many(self, allocation_requests: Mapping[str, Mapping[str, Any]],
                   project_id: str, user_id: str | None) -> None:
        """Write every consumer's allocation or none; ``ClaimRefused`` if Placement refused."""

    def unclaim(self, consumer_uuid: str) -> None:
        """Remove every allocation of ``consumer_uuid``."""


class RequestClaims:
    """The claims made for one scheduling request, undone together on failure."""

    def __init__(self, claimer: Claimer, cache: HostStateCache | None,
                 project_id: str, user_id: str | None, *, batched: bool = False) -> None:
        self._claimer = claimer
        self._cache = cache
        self._project_id = project_id
        self._user_id = user_id
        self.batched = batched
        # consumer uuid -> (host state charged, resources charged)
        self._made: dict[str, tuple[HostState, dict[str, int]]] = {}
        # Batched and not committed yet: charged to the host state only.
        self._pending: dict[str, tuple[HostState, dict[str, int], Mapping[str, Any]]] = {}

    def claim(self, consumer_uuid: str, host: HostState) -> None:
        """Claim ``host``'s allocation request for ``consumer_uuid``.

        On success the claim is charged to ``host`` and assumed by the cache.
        A refusal raises ``ClaimRefused`` (with Placement's reason); other
        errors (Placement unreachable...) propagate as they are. Batched, the
        claim is only charged to ``host`` until ``commit`` writes it.
        """
        request = host.allocation_request
        if request is None:
            raise ClaimRefused(f'Placement offered no allocation request for {host.uuid}')
        resources = provider_resources(request, host.uuid)
        if self.batched:
            host.consume(resources)
            self._pending[consumer_uuid] = (host, resources, request)
            return
        if not self._claimer.claim(consumer_uuid, request, self._project_id,
                                   self._user_id):
            raise ClaimRefused('Placement refused the claim')
        host.consume(resources)
        if self._cache is not None:
            self._cache.assume(consumer_uuid, request)
        self._made[consumer_uuid] = (host, resources)

    def commit(self) -> None:
        """Write the batched claims in one request; ``BatchClaimRefused`` if Placement refused them.

        On any error nothing stays charged of them. Nothing to do unbatched.
        """
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        try:
            self._claimer.claim_many(
                {consumer: request for consumer, (_, _, request) in pending.items()},
                self._project_id, self._user_id)
        except BaseException as exc:
            for host, resources, _ in pending.values():
                host.release(resources)
            if isinstance(exc, ClaimRefused):
                raise BatchClaimRefused(str(exc), code=exc.code) from exc
            raise
        for consumer, (host, resources, request) in pending.items():
            if self._cache is not None:
                self._cache.assume(consumer, request)
            self._made[consumer] = (host, resources)

    def unclaim(self, consumer_uuid: str) -> None:
        """Remove one claim made here: in Placement, in the host state, in the cache.

        A batched claim not written yet is only taken off its host state.
        """
        if consumer_uuid in self._pending:
            host, resources, _ = self._pending.pop(consumer_uuid)
            host.release(resources)
            return
        host, resources = self._made.pop(consumer_uuid)
        self._claimer.unclaim(consumer_uuid)
        host.release(resources)
        if self._cache is not None:
            self._cache.forget(consumer_uuid)

    def rollback(self) -> list[str]:
        """Remove every claim made for this request; the consumers unclaimed, in order.

        Every claim is attempted even if one unclaim fails; the first failure is
        re-raised after the others were tried.
        """
        # Batched claims never written: only their charges to undo.
        for host, resources, _ in self._pending.values():
            host.release(resources)
        self._pending.clear()
        undone, failure = [], None
        for consumer_uuid in list(self._made):
            try:
                self.unclaim(consumer_uuid)
                undone.append(consumer_uuid)
            except Exception as exc:  # noqa: BLE001 - keep unclaiming the rest
                LOG.error('could not remove the claim of %s while rolling back a '
                          'failed request; its allocations stay in Placement until '
                          'removed by hand: %s', consumer_uuid, exc)
                self._made.pop(consumer_uuid, None)
                failure = failure or exc
        if failure is not None:
            raise failure
        return undone

    @property
    def consumers(self) -> list[str]:
        return list(self._made)
