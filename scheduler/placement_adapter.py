"""The scheduler's view of Placement, over ``placement/client/``.

``PlacementAdapter`` is both the ``CandidateSource`` (allocation candidates
for a ``CandidatesQuery``, its own parameters sent) and the ``Claimer`` (claim
and unclaim) the claim walk uses; Placement's 409 becomes the scheduler's
``ClaimRefused`` with Placement's reason in it, except a consumer-generation
conflict: the instance already has allocations, which no other host would
change, so it becomes ``ConsumerAlreadyAllocated`` and ends the request.
A refused batch claim (``claim_many``, one ``POST /allocations``) is always
``ClaimRefused``: the claim walk then claims one instance at a time. A
move's claim (``claim_move``) and its undo go through
``scheduler.claims.MoveClaimer``.
"""
from __future__ import annotations

from typing import Any, Mapping

from placement import client as placement_client
from placement.client import Candidates
from rpc_schemas.selection import allocations_of
from scheduler.candidates_query import CandidatesQuery
from scheduler.claims import ClaimRefused
from scheduler.errors import ConsumerAlreadyAllocated, InvalidSchedulingRequest

# Placement's (and the reference implementation's) wording for a write whose
# consumer generation is stale: "consumer generation conflict - expected ...".
CONSUMER_GENERATION_CONFLICT = 'consumer generation conflict'


class PlacementAdapter:
    """CandidateSource and Claimer backed by a ``PlacementClient``."""

    microversion = placement_client.MICROVERSION

    def __init__(self, client: placement_client.PlacementClient) -> None:
        self._client = client

    def allocation_candidates(self, query: CandidatesQuery) -> Candidates:
        return self._client.get_candidates(query.to_params())

    def claim(self, consumer_uuid: str, allocation_request: Mapping[str, Any],
              project_id: str, user_id: str) -> bool:
        try:
            self._client.claim(consumer_uuid, allocations_of(allocation_request),
                               project_id=project_id, user_id=user_id)
        except placement_client.ClaimConflict as exc:
            if CONSUMER_GENERATION_CONFLICT in exc.detail:
                raise ConsumerAlreadyAllocated(
                    f'instance {consumer_uuid} already has allocations in Placement '
                    f'(a retried request whose first attempt claimed?). Remove them '
                    f'(DELETE /allocations/{consumer_uuid}) before scheduling it '
                    f'again: {exc.detail}') from exc
            why = 'lost a race' if exc.lost_race else 'refused'
            raise ClaimRefused(f'Placement {why}: {exc.detail}', code=exc.code) from exc
        return True

    def claim_many(self, allocation_requests: Mapping[str, Mapping[str, Any]],
                   project_id: str, user_id: str) -> None:
        try:
            self._client.claim_many(
                {consumer: allocations_of(request)
                 for consumer, request in allocation_requests.items()},
                project_id=project_id, user_id=user_id)
        except placement_client.ClaimConflict as exc:
            # A consumer that already has allocations is told apart by the
            # claim walk that follows, one instance at a time.
            raise ClaimRefused(f'Placement refused the batch: {exc.detail}',
                               code=exc.code) from exc

    def unclaim(self, consumer_uuid: str) -> None:
        self._client.unclaim(consumer_uuid)

    def claim_move(self, instance_uuid: str, migration_uuid: str,
                   allocation_request: Mapping[str, Any], project_id: str,
                   user_id: str) -> bool:
        """The move's claim (``claim_move``); the instance's source allocation not found ends the request."""
        try:
            self._client.claim_move(instance_uuid, migration_uuid,
                                    allocations_of(allocation_request),
                                    project_id=project_id, user_id=user_id)
        except placement_client.ClaimConflict as exc:
            why = 'lost a race' if exc.lost_race else 'refused'
            raise ClaimRefused(f'Placement {why}: {exc.detail}', code=exc.code) from exc
        except placement_client.PlacementClientError as exc:
            if exc.code != placement_client.CONFLICT_NOTHING_TO_MOVE:
                raise
            raise InvalidSchedulingRequest(f'cannot move instance {instance_uuid}: '
                                           f'{exc.detail}') from exc
        return True

    def unclaim_move(self, instance_uuid: str, migration_uuid: str) -> None:
        self._client.unclaim_move(instance_uuid, migration_uuid)
