"""The scheduler's view of Placement, over ``placement/client.py``.

``PlacementAdapter`` is both the ``CandidateSource`` (allocation candidates
as the scheduler's own ``AllocationCandidates``) and the ``Claimer`` (claim
and unclaim) the claim walk uses; Placement's 409 becomes the scheduler's
``ClaimRefused`` with Placement's reason in it, except a consumer-generation
conflict: the instance already has allocations, which no other host would
change, so it becomes ``ConsumerAlreadyAllocated`` and ends the request.
A refused batch claim (``claim_many``, one ``POST /allocations``) is always
``ClaimRefused``: the claim walk then claims one instance at a time.
"""
from __future__ import annotations

from typing import Any, Mapping

from placement import client as placement_client
from scheduler.candidates import AllocationCandidates
from scheduler.candidates_query import CandidatesQuery
from rpc_schemas.selection import allocations_of
from scheduler.claims import ClaimRefused
from scheduler.errors import ConsumerAlreadyAllocated
from scheduler.host_state import HostProviderSummary, ResourceUsage


# Placement's (and the reference implementation's) wording for a write whose
# consumer generation is stale: "consumer generation conflict - expected ...".
CONSUMER_GENERATION_CONFLICT = 'consumer generation conflict'


class PlacementAdapter:
    """CandidateSource and Claimer backed by a ``PlacementClient``."""

    microversion = placement_client.MICROVERSION

    def __init__(self, client: placement_client.PlacementClient) -> None:
        self._client = client

    def allocation_candidates(self, query: CandidatesQuery) -> AllocationCandidates:
        found = self._client.get_candidates(
            dict(query.resources), required=sorted(query.required_traits),
            forbidden=sorted(query.forbidden_traits), member_of=query.member_of,
            not_member_of=query.forbidden_aggregates, limit=query.limit)
        requests = []
        for candidate in found.candidates:
            request: dict[str, Any] = {'allocations': candidate.allocations}
            if candidate.mappings:
                request['mappings'] = candidate.mappings
            requests.append(request)
        summaries = {
            uuid: HostProviderSummary(
                uuid=uuid,
                resources={rc: ResourceUsage(capacity=cap, used=used)
                           for rc, (cap, used) in s.resources.items()},
                traits=s.traits, root_provider_uuid=s.root_uuid)
            for uuid, s in found.summaries.items()}
        return AllocationCandidates(allocation_requests=tuple(requests),
                                    provider_summaries=summaries)

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
