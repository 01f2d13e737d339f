"""What the Placement client returns: providers, inventories, allocation candidates, a consumer's allocations.

``Candidates.from_body`` is the one reading of an allocation-candidates
reply: the scheduler places with it, and its tests build their replies
through it too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from placement.client.errors import MalformedCandidates


@dataclass(frozen=True)
class Provider:
    uuid: str
    name: str
    generation: int
    parent_uuid: str | None = None
    root_uuid: str | None = None

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> 'Provider':
        return cls(body['uuid'], body['name'], body['generation'],
                   body.get('parent_provider_uuid'), body.get('root_provider_uuid'))


@dataclass(frozen=True)
class Inventory:
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int | None = None     # None: total
    step_size: int = 1
    allocation_ratio: float = 1.0

    def as_body(self) -> dict:
        return {'total': self.total, 'reserved': self.reserved,
                'min_unit': self.min_unit,
                'max_unit': self.max_unit if self.max_unit is not None else self.total,
                'step_size': self.step_size, 'allocation_ratio': self.allocation_ratio}


@dataclass(frozen=True)
class Usage:
    """One resource class of a provider summary: ``capacity`` ((total - reserved) x ratio) and ``used``."""

    capacity: int
    used: int

    @property
    def free(self) -> int:
        return self.capacity - self.used


@dataclass(frozen=True)
class ProviderSummary:
    """One entry of ``provider_summaries``: usage per resource class, traits, place in its tree."""

    uuid: str
    resources: Mapping[str, Usage]
    traits: frozenset[str] = frozenset()
    parent_uuid: str | None = None
    root_uuid: str | None = None

    def free(self, resource_class: str) -> int:
        usage = self.resources.get(resource_class)
        return usage.free if usage is not None else 0


@dataclass(frozen=True)
class Candidates:
    """An allocation-candidates reply.

    ``allocation_requests`` are Placement's, as it gave them (each the body
    of a claim: ``{"allocations": {"<rp>": {"resources": {...}}},
    "mappings": {...}}``); ``provider_summaries`` are typed.
    """

    allocation_requests: tuple[dict[str, Any], ...]
    provider_summaries: Mapping[str, ProviderSummary] = field(default_factory=dict)

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> 'Candidates':
        """From the JSON body::

            {"allocation_requests": [{"allocations": {"<rp>": {"resources": {...}}}}],
             "provider_summaries": {"<rp>": {"resources": {"VCPU": {"capacity": 16,
                                                                     "used": 2}},
                                             "traits": [...], "root_provider_uuid": "..."}}}
        """
        try:
            requests = tuple(body['allocation_requests'])
            summaries = {uuid: ProviderSummary(
                uuid,
                {rc: Usage(int(r['capacity']), int(r['used']))
                 for rc, r in (s.get('resources') or {}).items()},
                frozenset(s.get('traits') or ()), s.get('parent_provider_uuid'),
                s.get('root_provider_uuid'))
                for uuid, s in body['provider_summaries'].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise MalformedCandidates(
                f'allocation candidates reply is malformed ({exc!r}); is the '
                f'Placement endpoint really a Placement service?') from exc
        return cls(requests, summaries)

    def root_of(self, provider_uuid: str) -> str:
        """The root of the provider's tree (the provider itself when Placement does not say)."""
        summary = self.provider_summaries.get(provider_uuid)
        if summary is not None and summary.root_uuid:
            return summary.root_uuid
        return provider_uuid

    def requests_by_root(self) -> dict[str, list[dict[str, Any]]]:
        """Root provider UUID -> the allocation requests that use its tree, in Placement's order.

        A request that also takes from a sharing provider is listed under both
        roots.
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


@dataclass(frozen=True)
class ConsumerAllocations:
    allocations: dict[str, dict[str, int]]     # provider -> class -> amount
    generation: int | None
    project_id: str | None
    user_id: str | None

    def node(self, is_node: Callable[[str], bool] | None = None) -> str | None:
        """Where the consumer is: the first of its providers (by uuid) ``is_node`` accepts; None if none.

        The one answer to "where does this instance run" for the scheduler
        (which accepts the compute nodes it knows) and the cell conductor
        (which compares providers with its alternates').
        """
        for provider in sorted(self.allocations):
            if is_node is None or is_node(provider):
                return provider
        return None
