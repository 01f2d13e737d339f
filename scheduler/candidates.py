"""Placement's allocation-candidates reply, parsed and grouped by compute node.

Placement answers ``GET /allocation_candidates`` with allocation requests
(each a claim body touching one or more providers) and provider summaries.
The scheduler reasons per compute node, so this module groups the requests
by the root provider they land on.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from scheduler.host_state import HostProviderSummary


class MalformedCandidates(ValueError):
    """Placement's reply does not have the shape of an allocation-candidates reply."""


@dataclasses.dataclass(frozen=True)
class AllocationCandidates:
    allocation_requests: tuple[dict[str, Any], ...]
    provider_summaries: Mapping[str, HostProviderSummary]

    @classmethod
    def from_placement(cls, body: Mapping[str, Any]) -> 'AllocationCandidates':
        """From the JSON body::

            {"allocation_requests": [{"allocations": {"<rp>": {"resources": {...}}}}],
             "provider_summaries": {"<rp>": {"resources": {...}, "traits": [...]}}}
        """
        try:
            requests = tuple(body['allocation_requests'])
            summaries = {uuid: HostProviderSummary.from_placement(uuid, summary)
                         for uuid, summary in body['provider_summaries'].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise MalformedCandidates(
                f'allocation candidates reply is malformed ({exc!r}); is the '
                f'Placement endpoint really a Placement service?') from exc
        return cls(allocation_requests=requests, provider_summaries=summaries)

    def root_of(self, provider_uuid: str) -> str:
        summary = self.provider_summaries.get(provider_uuid)
        if summary is not None and summary.root_provider_uuid:
            return summary.root_provider_uuid
        return provider_uuid

    def requests_by_root(self) -> dict[str, list[dict[str, Any]]]:
        """Root provider UUID -> the allocation requests that use it, in Placement's order.

        A request that also takes from a sharing provider is listed under both
        roots; only roots that are compute nodes are used by the scheduler.
        """
        grouped: dict[str, list[dict[str, Any]]] = {}
        for request in self.allocation_requests:
            roots = []
            for provider_uuid in request.get('allocations') or {}:
                root = self.root_of(provider_uuid)
                if root not in roots:
                    roots.append(root)
            for root in roots:
                grouped.setdefault(root, []).append(request)
        return grouped
