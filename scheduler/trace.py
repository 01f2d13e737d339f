"""The structured trace of one scheduler run: what was asked, what each stage did.

Plain data, so it can be logged, attached to NoValidHost and persisted as
the scheduling record (``scheduler/records/``), with the time of each stage. ``SchedulingTrace.to_dict()`` gives JSON.
"""
from __future__ import annotations

import contextlib
import dataclasses
import time
from typing import Any, Iterator

CLAIMED = 'claimed'
CONFLICT = 'conflict'
# Claimed, but another scheduler's member took the domain's last place first.
DOMAIN_TAKEN = 'domain taken'
BATCH_CLAIMED = 'claimed'
BATCH_FELL_BACK = 'fell_back'
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
    # Placement's error code of a refused claim, e.g. placement.concurrent_update.
    code: str = ''


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
        return sum(1 for c in self.claims if c.outcome in (CONFLICT, DOMAIN_TAKEN))


@dataclasses.dataclass
class SchedulingTrace:
    project_id: str
    num_instances: int
    num_alternates: int
    # Set by the RPC endpoint from the caller's context.
    request_id: str = ''
    instance_uuids: list[str] = dataclasses.field(default_factory=list)
    # What was asked, in short: flavor, zone, hints, group (see destinations.py).
    request: dict[str, Any] = dataclasses.field(default_factory=dict)
    started_at: float = 0.0
    query: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    placement_microversion: str = ''
    allocation_requests: int = 0
    candidate_hosts: int = 0
    # When Placement offered no candidate: the constraints that alone find
    # none ("VCPU:64", "trait HW_GPU"); empty if only their combination fails.
    shortage: list[str] = dataclasses.field(default_factory=list)
    # For each short resource: the most one provider gives, and what bounds it
    # ("VCPU:64: at most 16 in one allocation on any provider (its max_unit...)").
    shortage_limits: list[str] = dataclasses.field(default_factory=list)
    # When Placement offered no candidate but has hosts without the failure
    # domains the group or a hint asked for: (whose, 'in' or '!in', uuids).
    emptied_by: list[tuple[str, str, tuple[str, ...]]] = dataclasses.field(
        default_factory=list)
    # Failure-domain aggregate uuid -> 'rack r1', read for a failed run's message.
    aggregate_names: dict[str, str] = dataclasses.field(default_factory=dict)
    # Candidate root providers no cell database knows as a compute node.
    unknown_providers: list[str] = dataclasses.field(default_factory=list)
    instances: list[InstanceTrace] = dataclasses.field(default_factory=list)
    outcome: str = ''
    error: str | None = None
    # Why the server group left no room, for NoValidHost ("anti-affinity at
    # rack: group web has members in every rack (r1, r2, r3); 1 member asked
    # for beside 3 placed, 3 racks").
    group_reason: str = ''
    # Instances whose claims were removed because the request failed.
    rolled_back: list[str] = dataclasses.field(default_factory=list)
    # A multi-create's claims in one POST /allocations: BATCH_CLAIMED, or
    # BATCH_FELL_BACK (refused, so claimed one instance at a time, with
    # Placement's reason in batch_claim_refusal); '' when not batched.
    batch_claim: str = ''
    batch_claim_refusal: str = ''
    # Stage name -> milliseconds spent in it over the whole run (the filters,
    # weighers and claims of every instance added up).
    stage_ms: dict[str, float] = dataclasses.field(default_factory=dict)

    @contextlib.contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """Add the time spent in the ``with`` block to ``stage_ms[stage]``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = (time.perf_counter() - start) * 1000.0
            self.stage_ms[stage] = self.stage_ms.get(stage, 0.0) + elapsed

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
