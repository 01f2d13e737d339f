"""Why the scheduler could not do what it was asked: the exceptions it raises.

Each message is written for an operator: it names the flavor key, the
filter or the counts that explain the failure.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.trace import InstanceTrace, SchedulingTrace


class SchedulerError(Exception):
    """Base class of the scheduler's own errors."""


class InvalidFlavorExtraSpec(SchedulerError):
    """A flavor extra spec the scheduler must understand has a bad key or value."""


class InvalidSchedulingRequest(SchedulerError):
    """select_destinations was called with arguments it cannot use (a caller bug)."""


class ConsumerAlreadyAllocated(SchedulerError):
    """An instance to schedule already holds allocations in Placement.

    Usually a retried select_destinations whose first call did claim: no host
    is to blame, so the claim walk stops instead of trying every host.
    """


class UnknownPlugin(SchedulerError):
    """A filter or weigher named in the configuration is not installed."""


class NoValidHost(SchedulerError):
    """No host could be claimed for an instance; ``str()`` says why, with counts.

    ``trace`` is the whole scheduling trace of the run, so the caller can
    persist or show the per-filter and per-claim detail.
    """

    def __init__(self, message: str, trace: 'SchedulingTrace | None' = None) -> None:
        super().__init__(message)
        self.trace = trace

    @classmethod
    def for_instance(cls, trace: 'SchedulingTrace', instance_trace: 'InstanceTrace',
                     index: int, count: int) -> 'NoValidHost':
        """The error for instance ``index`` of ``count``, its message built from the traces."""
        return cls(explain(trace, instance_trace, index, count), trace=trace)


def explain(trace: 'SchedulingTrace', instance_trace: 'InstanceTrace',
            index: int, count: int) -> str:
    """The NoValidHost message: where the hosts went, with counts per filter and reason.

    ``No valid host for instance U (1 of 2); Placement returned no allocation
    candidates for resources=...; no resource provider has VCPU:96 (each
    asked alone)``: Placement's answer first, then what each filter removed,
    then the claims lost, then the claims rolled back.
    """
    parts = [f'No valid host for instance {instance_trace.instance_uuid} '
             f'({index + 1} of {count})']
    if trace.group_reason:
        parts.append(trace.group_reason)
    query = '&'.join(f'{k}={v}' for k, v in trace.query)
    if trace.candidate_hosts == 0 and not trace.unknown_providers:
        parts.append(f'Placement returned no allocation candidates for {query}')
        if trace.shortage:
            parts.append(f'no resource provider has {" nor ".join(trace.shortage)} '
                         f'(each asked alone)')
            parts.extend(trace.shortage_limits)
        elif trace.allocation_requests == 0:
            parts.append('each resource and trait is available alone, but no '
                         'provider has them all together')
    else:
        placement = f'Placement returned {trace.candidate_hosts} candidate hosts'
        if trace.unknown_providers:
            placement += (f' (and {len(trace.unknown_providers)} providers no cell '
                          f'knows as a compute node)')
        parts.append(placement)
    discarded = trace.candidate_hosts - instance_trace.hosts_in
    if discarded > 0:
        parts.append(f'{discarded} discarded after lost claims for earlier instances')
    for step in instance_trace.filters:
        if step.removed:
            reasons = ', '.join(f'{reason}: {n}' for reason, n in
                                sorted(step.reasons.items(), key=lambda kv: -kv[1]))
            parts.append(f'{step.removed} removed by {step.filter} ({reasons})')
    if instance_trace.weighed_count:
        parts.append(f'{instance_trace.weighed_count} hosts passed the filters')
    elif instance_trace.hosts_in:
        parts.append(f'0/{instance_trace.hosts_in} hosts passed the filters')
    lost = instance_trace.lost_claims()
    if lost:
        parts.append(f'{lost} claims lost races with other claims')
    if instance_trace.gave_up:
        parts.append(f'gave up after {lost} refused claims ([scheduler] '
                     f'max_claim_attempts); is Placement refusing every claim for '
                     f'this consumer (does it already have allocations)?')
    if trace.rolled_back:
        parts.append(f'claims already made for this request were removed '
                     f'({_summary(trace.rolled_back)})')
    return '; '.join(parts)



#: Rolled-back consumers named in a NoValidHost message before "and N more".
ROLLED_BACK_NAMED = 3


def _summary(uuids: list[str]) -> str:
    """A few uuids and a count: a 120-instance request must not make a 5 KB fault."""
    if len(uuids) <= ROLLED_BACK_NAMED + 1:
        return ', '.join(uuids)
    return (f'{len(uuids)} instances: {", ".join(uuids[:ROLLED_BACK_NAMED])} and '
            f'{len(uuids) - ROLLED_BACK_NAMED} more; the scheduling record lists them all')
