"""What a search answers: allocation requests and the summaries of the providers they use."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CandidateSummary:
    uuid: str
    parent_uuid: str | None
    root_uuid: str
    # resource class -> {"capacity": n, "used": n} (the API's shape: a
    # thousand summaries per answer are rendered without copying)
    resources: dict[str, dict[str, int]]
    traits: list[str]


@dataclass
class AllocationRequest:
    # provider uuid -> {resource class: amount}
    allocations: dict[str, dict[str, int]]
    # group suffix -> provider uuids satisfying it
    mappings: dict[str, list[str]]


@dataclass
class CandidateResult:
    allocation_requests: list[AllocationRequest]
    summaries: list[CandidateSummary]


EMPTY = CandidateResult([], [])
