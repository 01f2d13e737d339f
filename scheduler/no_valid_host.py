"""Why no host: the NoValidHost a failed run raises, its explanation, and the diagnosis behind it.

``for_instance`` builds the error for the instance that found no host from
the run's trace, in the order an operator reads it: the server group's
refusal (``group_refusal``: the policy, the level, the domains that are
full, how many members were asked for); Placement's answer, with the query
(failure-domain aggregates named); what emptied it: the group's or a
hint's ``member_of``/``!in:`` when Placement has hosts without them
(``emptied_by``), else the resource or trait no provider has
(``diagnose_shortage``, each asked alone); then what each filter removed,
the claims lost to races, the claims rolled back. ``domain_taken`` is the
detail of a claim whose group place another scheduler took first.

The exception class itself is ``scheduler.errors.NoValidHost``, what the
scheduler's RPC API raises to other services (which may import only that
module); it also gives each member of a failed multi-create its own fault.
"""
from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Mapping, Protocol, Sequence

from cellplane import server_group_policy as policy
from scheduler.candidates_query import CandidatesQuery
from scheduler.errors import NoValidHost

if TYPE_CHECKING:
    from placement.client import Candidates
    from scheduler.server_group.places import GroupPlaces
    from scheduler.trace import InstanceTrace, SchedulingTrace

#: Rolled-back consumers named in a NoValidHost message before "and N more".
ROLLED_BACK_NAMED = 3

# What an aggregate constraint of the query asks (``emptied_by`` entries).
INSIDE, OUTSIDE = 'in', '!in'


class CandidateSource(Protocol):
    def allocation_candidates(self, query: CandidatesQuery) -> 'Candidates': ...


def for_instance(trace: 'SchedulingTrace', instance_trace: 'InstanceTrace',
                 index: int, count: int) -> NoValidHost:
    """The error for instance ``index`` of ``count``, its message built from the traces."""
    return NoValidHost(explain(trace, instance_trace, index, count), trace=trace)


def explain(trace: 'SchedulingTrace', instance_trace: 'InstanceTrace',
            index: int, count: int) -> str:
    """The NoValidHost message: where the hosts went, with counts per filter and reason.

    ``No valid host for instance U (1 of 2); Placement returned no allocation
    candidates for resources=...; no resource provider has VCPU:96 (each
    asked alone)``: the group's refusal and Placement's answer first, then
    what each filter removed, then the claims lost, then the claims rolled back.
    """
    parts = [NoValidHost.head(instance_trace.instance_uuid, index + 1, count)]
    if trace.group_reason:
        parts.append(trace.group_reason)
    if trace.candidate_hosts == 0 and not trace.unknown_providers:
        parts.append(f'Placement returned no allocation candidates for {query_text(trace)}')
        if trace.emptied_by:
            parts.append(_emptied_text(trace))
        elif trace.shortage:
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


def query_text(trace: 'SchedulingTrace') -> str:
    """The query as sent, each failure-domain aggregate followed by its name: ``uuid (rack r1)``."""
    names = trace.aggregate_names

    def named(value: str) -> str:
        prefix, _, listed = value.partition(':')
        if not names or prefix not in (INSIDE, OUTSIDE):
            return value
        return f'{prefix}:' + ','.join(
            f'{u} ({names[u]})' if u in names else u for u in listed.split(','))
    return '&'.join(f'{k}={named(v) if k == "member_of" else v}' for k, v in trace.query)


def _emptied_text(trace: 'SchedulingTrace') -> str:
    names = trace.aggregate_names
    asked = '; '.join(
        f'member_of {op}:{", ".join(sorted(names.get(u, u) for u in uuids))} ({why})'
        for why, op, uuids in trace.emptied_by)
    return f'Placement has hosts for this flavor, but none where the failure domains allow: {asked}'


def _summary(uuids: list[str]) -> str:
    """A few uuids and a count: a 120-instance request must not make a 5 KB fault."""
    if len(uuids) <= ROLLED_BACK_NAMED + 1:
        return ', '.join(uuids)
    return (f'{len(uuids)} instances: {", ".join(uuids[:ROLLED_BACK_NAMED])} and '
            f'{len(uuids) - ROLLED_BACK_NAMED} more; the scheduling record lists them all')


# -- the server group -------------------------------------------------------------

def group_refusal(places: 'GroupPlaces', asked: int, names: Mapping[str, str]) -> str:
    """Under a hard policy: the policy, the level, the domains full (or held) and the count asked.

    ``anti-affinity at rack: group web has members in every rack (r1, r2,
    r3); 1 member asked for beside 3 placed, 3 racks``. Counted with the
    places this request took before it failed. ``names``: domain uuid ->
    name at the group's level (uuids are shown for those it lacks). ''
    when the group held nothing against the request.
    """
    if not places.hard:
        return ''
    level = places.level
    label = places.group.name or places.group.uuid
    counts = collections.Counter(places.counts)
    counts.update(places.taken.values())
    placed = sum(places.counts.values())
    wanted = (f'{asked} member{"s" if asked > 1 else ""} asked for'
              + (f' beside {placed} placed' if placed else ''))
    if level is None:
        names = {}
    if not places.anti:
        held = sorted(names.get(d, d) for d in policy.member_domains(places.group, counts))
        if not held:
            return ''
        where = (f'on {", ".join(held)}' if level is None
                 else f'in {level} {", ".join(held)}')
        return (f'affinity at {places.group.level_name}: group {label} keeps its members '
                f'{where}; {wanted}')
    most = places.group.max_per_domain
    full = policy.full_domains(places.group, counts) | places.lost
    if not full:
        return ''
    named = sorted(names.get(d, d) for d in full)
    if level is None:
        return (f'anti-affinity at host: group {label} has members on '
                f'{", ".join(named)}; {wanted}')
    each = f' of {most} members each' if most > 1 else ''
    if names and set(names) <= full:
        return (f'anti-affinity at {level}: group {label} has members in every '
                f'{level} ({", ".join(named)}); {wanted}, {len(names)} {level}s{each}')
    return (f'anti-affinity at {level}: group {label} has members in '
            f'{level} {", ".join(named)}, and no host of another {level} could take '
            f'it; {wanted}')


def domain_taken(places: 'GroupPlaces', host: str) -> str:
    """A claim's detail when its place in the group was refused (another scheduler was first)."""
    level = places.group.level_name
    where = f'{level} {places.domain_of(host)}'
    if places.anti:
        return f'{where} is full: another member of the group took its place first'
    return f'{where} refused: another member of the group holds another {level} first'


# -- Placement offered nothing --------------------------------------------------------

def emptied_by(source: CandidateSource, without_domains: CandidatesQuery,
               domains: Sequence[tuple[str, str, Sequence[str]]]
               ) -> list[tuple[str, str, tuple[str, ...]]]:
    """The failure-domain constraints that emptied the candidates, or [] if something else did.

    ``domains``: (whose, INSIDE or OUTSIDE, aggregate uuids) of the group's
    and the hints' ``member_of``; ``without_domains``: the query without
    them. When Placement answers that query, the domains emptied the
    candidates: no resource or trait is short, and asking each alone would
    only blame the one unit the domain constraint is probed with.
    """
    asked = [(why, op, tuple(sorted(set(uuids)))) for why, op, uuids in domains if uuids]
    if not asked:
        return []
    try:
        found = source.allocation_candidates(without_domains)
    except Exception:  # noqa: BLE001 - a diagnosis must not hide the real outcome
        return []
    return asked if found.allocation_requests else []


def diagnose_shortage(source: CandidateSource,
                      query: CandidatesQuery) -> tuple[list[str], list[str]]:
    """Which resource or trait no provider can give, when Placement offered none.

    Asked only on the failure path: the query again with one constraint
    at a time, ``limit=1``. A constraint that alone returns nothing is
    short; when each alone is satisfiable only their combination is.
    Returns (the short constraints, for each short resource the most one
    provider gives and what bounds it: ``_limit_of``).
    """
    short, limits = [], []
    for name, single in query.one_constraint_at_a_time():
        try:
            found = source.allocation_candidates(single)
            if found.allocation_requests:
                continue
            short.append(name)
            limit = _limit_of(source, single)
        except Exception:  # noqa: BLE001 - a diagnosis must not hide the real outcome
            return [], []
        if limit:
            limits.append(f'{name}: {limit}')
    return short, limits


def _limit_of(source: CandidateSource, single: CandidatesQuery) -> str:
    """For a single resource no provider gives: the most one does, and what bounds it.

    The amount is searched by halves (``limit=1`` queries, a handful on
    this failure path only). A provider that has more free than it gives
    in one allocation is held back by its inventory's ``max_unit`` (or
    ``step_size``), not by its usage; saying which is what an operator
    needs, since raising one and adding hosts are different fixes. Not
    asked for a trait or an aggregate probed with one unit of a resource:
    the unit is not what is short.
    """
    if len(single.resources) != 1 or single.required_traits or single.forbidden_traits \
            or single.member_of or single.forbidden_aggregates:
        return ''
    [(rc, wanted)] = single.resources.items()

    def offer(amount: int):
        found = source.allocation_candidates(
            CandidatesQuery(resources={rc: amount}, limit=1))
        return found if found.allocation_requests else None
    best = offer(1) if wanted > 1 else None
    if best is None:
        return f'no provider has any {rc} to give'
    low, high = 1, wanted - 1
    while low < high:
        middle = (low + high + 1) // 2
        found = offer(middle)
        if found is not None:
            low, best = middle, found
        else:
            high = middle - 1
    provider = next(iter(best.allocation_requests[0]['allocations']))
    usage = best.provider_summaries.get(provider)
    usage = usage.resources.get(rc) if usage is not None else None
    free = usage.capacity - usage.used if usage is not None else None
    if free is not None and free > low:
        return (f'at most {low} in one allocation on any provider (its max_unit or '
                f'step_size; that provider has {free} free)')
    return f'the most free on any one provider is {low}'
