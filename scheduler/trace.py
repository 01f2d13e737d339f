"""The structured trace of one scheduler run: what was asked, what each stage did.

Plain data, so it can be logged, attached to NoValidHost and (next issue)
persisted as the scheduling record. ``SchedulingTrace.to_dict()`` gives JSON.
"""
from __future__ import annotations

import dataclasses
from typing import Any

CLAIMED = 'claimed'
CONFLICT = 'conflict'
#: Weighed hosts kept per instance, best first: enough to see why the winner
#: won, without thousands of entries per run.
TRACE_WEIGHED_LIMIT = 100


@dataclasses.dataclass
class FilterStep:
    filter: str
    hosts_in: int
    hosts_out: int
    # Reason constant -> number of hosts removed for it.
    reasons: dict[str, int] = dataclasses.field(default_factory=dict)
    # "host/nodename" -> the detail of its rejection.
    rejected: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def removed(self) -> int:
        return self.hosts_in - self.hosts_out


@dataclasses.dataclass
class WeighedEntry:
    host: str
    nodename: str
    compute_node_uuid: str
    weight: float
    parts: dict[str, float]


@dataclasses.dataclass
class ClaimAttempt:
    host: str
    nodename: str
    compute_node_uuid: str
    outcome: str
    detail: str = ''


@dataclasses.dataclass
class SelectedHost:
    host: str
    nodename: str
    compute_node_uuid: str
    cell_uuid: str
    claimed: bool


@dataclasses.dataclass
class InstanceTrace:
    instance_uuid: str
    hosts_in: int = 0
    filters: list[FilterStep] = dataclasses.field(default_factory=list)
    # How many hosts passed the filters and were weighed; ``weighed`` keeps
    # the best TRACE_WEIGHED_LIMIT of them.
    weighed_count: int = 0
    weighed: list[WeighedEntry] = dataclasses.field(default_factory=list)
    claims: list[ClaimAttempt] = dataclasses.field(default_factory=list)
    # True when the claim walk stopped at max_claim_attempts.
    gave_up: bool = False
    selections: list[SelectedHost] = dataclasses.field(default_factory=list)

    def lost_claims(self) -> int:
        return sum(1 for c in self.claims if c.outcome == CONFLICT)


@dataclasses.dataclass
class SchedulingTrace:
    project_id: str
    num_instances: int
    num_alternates: int
    query: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    placement_microversion: str = ''
    allocation_requests: int = 0
    candidate_hosts: int = 0
    # Candidate root providers no cell database knows as a compute node.
    unknown_providers: list[str] = dataclasses.field(default_factory=list)
    instances: list[InstanceTrace] = dataclasses.field(default_factory=list)
    outcome: str = ''
    error: str | None = None
    # Instances whose claims were removed because the request failed.
    rolled_back: list[str] = dataclasses.field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
