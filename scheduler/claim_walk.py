"""The claim walk: for each instance, filter, weigh, claim the best host, add alternates.

For each instance of a request the hosts are filtered and weighed again
(earlier instances consumed from them, and affinity follows earlier choices),
then walked best first: a claim that Placement refuses discards the host for
the rest of the request and the walk tries the next. After a success the
claim is charged to the host state and ``num_alternates`` more hosts from the
claimed host's cell are added, unclaimed, each with its own allocation
request. If one instance cannot be placed, every claim already made for the
request is removed and NoValidHost says why. With batched claims
(``RequestClaims(batched=True)``) the walk charges each choice to the host
state and the claims are written together at the end; a refused batch
raises ``BatchClaimRefused`` with nothing claimed.

With a server group (``scheduler.server_group.places.GroupPlaces``) each claimed
instance then takes its place in the group's domain; a place another
scheduler took first undoes that claim and the walk goes on outside that
domain. Under a hard policy above the host level the alternates stay in
the claimed host's domain.

Everything the walk takes for an instance (its claim, the host cache's
assumption of it, its place in the group) is a reservation held on one
``ReservationStack`` (``cellplane.reservations``), pushed in the order it
was taken: a place refused unwinds that instance's claim alone, and a
request that fails in any way (no host for an instance, an error, a
refused batch) unwinds all of it, last first.
"""
from __future__ import annotations

import logging
from typing import Callable, Mapping, Sequence

from cellplane.reservations import ReservationStack
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from scheduler import no_valid_host
from scheduler.claims import ClaimRefused, RequestClaims, removed_claims
from scheduler.errors import NoValidHost
from scheduler.filter_chain import run_filters
from scheduler.filters.base import HostFilter
from scheduler.host_state import HostState
from scheduler.request import SchedulingRequest
from scheduler.server_group.places import GroupPlace, GroupPlaces
from scheduler.trace import (
    CLAIMED,
    CONFLICT,
    DOMAIN_TAKEN,
    TRACE_WEIGHED_LIMIT,
    ClaimAttempt,
    InstanceTrace,
    SchedulingTrace,
    SelectedHost,
    WeighedEntry,
)
from scheduler.weighers.base import HostWeigher, WeighedHost, weigh_hosts

LOG = logging.getLogger(__name__)

# Reads the failure domains' names: aggregate uuid -> (level, name).
DomainNames = Callable[[], Mapping[str, tuple[str, str]]]


def select_hosts(*, spec: RequestSpec, instance_uuids: Sequence[str],
                 num_alternates: int, hosts: Sequence[HostState],
                 resources: Mapping[str, int], filters: Sequence[HostFilter],
                 weighers: Sequence[HostWeigher], claims: RequestClaims,
                 trace: SchedulingTrace, allocation_request_version: str,
                 instance_hosts: Mapping[str, str] | None = None,
                 domain_of_host: Callable[[str, str], str | None] | None = None,
                 max_claim_attempts: int | None = None,
                 places: GroupPlaces | None = None,
                 domain_names: DomainNames | None = None
                 ) -> list[list[Selection]]:
    """One list of Selection per instance: the claimed host first, then alternates.

    ``max_claim_attempts`` bounds the claims tried for one instance, so that a
    Placement refusing everything (say, a consumer that already has
    allocations) is not asked once per candidate host. ``domain_names``
    reads the failure domains' names (uuid -> (level, name)) for the
    message of a failed run.
    """
    if num_alternates < 0:
        raise ValueError(f'num_alternates must be 0 or more, not {num_alternates}')
    stack = ReservationStack()
    try:
        return _select(spec, instance_uuids, num_alternates, hosts, resources,
                       filters, weighers, claims, trace, allocation_request_version,
                       instance_hosts or {}, domain_of_host or _no_domain,
                       max_claim_attempts, places, stack, domain_names)
    except NoValidHost:
        raise   # what the request held was given back before saying why
    except Exception as exc:
        # Placement unreachable, a bug in a filter, a refused batch...: the
        # request fails as a whole, so nothing it reserved may stay.
        trace.outcome = 'error'
        trace.error = f'{type(exc).__name__}: {exc}'
        trace.rolled_back = removed_claims(stack.unwind())
        raise


def _no_domain(host: str, level: str) -> None:
    return None


def _select(spec, instance_uuids, num_alternates, hosts, resources, filters,
            weighers, claims, trace, allocation_request_version, instance_hosts,
            domain_of_host, max_claim_attempts, places, stack, domain_names):
    chosen_hosts: list[str] = []
    discarded: set[str] = set()
    result = []
    for index, instance_uuid in enumerate(instance_uuids):
        instance_trace = InstanceTrace(instance_uuid=instance_uuid)
        trace.instances.append(instance_trace)
        request = SchedulingRequest(spec=spec, resources=resources,
                                    instance_uuid=instance_uuid,
                                    chosen_hosts=list(chosen_hosts),
                                    instance_hosts=instance_hosts,
                                    domain_of_host=domain_of_host)
        if places is not None:
            request.member_counts = places.counts
            request.member_unknown = frozenset(places.unknown_hosts)
            request.full_domains = frozenset(places.lost)
        usable = [h for h in hosts if h.uuid not in discarded] if discarded else list(hosts)
        instance_trace.hosts_in = len(usable)
        with trace.timed('filters'):
            passed, steps = run_filters(filters, usable, request)
        instance_trace.filters = steps
        with trace.timed('weighers'):
            weighed = weigh_hosts(weighers, passed, request)
        instance_trace.weighed_count = len(weighed)
        instance_trace.weighed = [
            WeighedEntry(host=w.host.host, nodename=w.host.nodename,
                         compute_node_uuid=w.host.uuid, weight=w.weight,
                         parts=dict(w.parts)) for w in weighed[:TRACE_WEIGHED_LIMIT]]
        with trace.timed('claims'):
            claimed = _claim_first(instance_uuid, weighed, claims, discarded,
                                   instance_trace, max_claim_attempts, places, stack)
        if claimed is None:
            trace.outcome = 'no valid host'
            _why_not(trace, places, len(instance_uuids), domain_names)
            trace.rolled_back = removed_claims(stack.unwind())
            error = no_valid_host.for_instance(trace, instance_trace, index,
                                               len(instance_uuids))
            trace.error = str(error)
            raise error
        chosen_hosts.append(claimed.host)
        alternates = _alternates(weighed, claimed, discarded, num_alternates, places)
        selections = [_selection(claimed, allocation_request_version)]
        selections += [_selection(h, allocation_request_version) for h in alternates]
        instance_trace.selections = [
            SelectedHost(host=h.host, nodename=h.nodename, compute_node_uuid=h.uuid,
                         cell_uuid=h.cell_uuid, claimed=h is claimed)
            for h in [claimed, *alternates]]
        result.append(selections)
    with trace.timed('claims'):
        for assumed in claims.commit():   # batched: every instance's claim in one request
            stack.push(assumed)
    trace.outcome = 'selected'
    return result


def _why_not(trace: SchedulingTrace, places: GroupPlaces | None, asked: int,
             domain_names: DomainNames | None) -> None:
    """Before the request's places are given back: the names and the group's refusal, for the message."""
    names: Mapping[str, tuple[str, str]] = {}
    if domain_names is not None:
        try:
            names = domain_names()
        except Exception:  # a message must not hide the outcome
            LOG.warning('Could not read the failure domains\' names for a NoValidHost '
                        'message; it shows their uuids', exc_info=True)
    trace.aggregate_names = {u: f'{level} {name}' for u, (level, name) in names.items()}
    if places is not None:
        level = places.level
        trace.group_reason = no_valid_host.group_refusal(
            places, asked, {u: n for u, (lv, n) in names.items() if lv == level})


def _alternates(weighed: Sequence[WeighedHost], claimed: HostState,
                discarded: set[str], count: int,
                places: GroupPlaces | None = None) -> list[HostState]:
    """The best ``count`` other hosts of the claimed host's cell, not lost to a race.

    With a server group, only hosts that keep the claimed host's place
    (``GroupPlaces.keeps_alternate``).
    """
    found: list[HostState] = []
    for entry in weighed:
        if len(found) >= count:
            break
        host = entry.host
        if (host is not claimed and host.cell_uuid == claimed.cell_uuid
                and host.uuid not in discarded and host.allocation_request is not None
                and (places is None or places.keeps_alternate(claimed.host, host.host))):
            found.append(host)
    return found


def _claim_first(instance_uuid: str, weighed: Sequence[WeighedHost],
                 claims: RequestClaims, discarded: set[str],
                 instance_trace: InstanceTrace,
                 max_attempts: int | None,
                 places: GroupPlaces | None,
                 stack: ReservationStack) -> HostState | None:
    """Reserve the best host the instance can have: its claim, the cache's assumption, its place."""
    for entry in weighed:
        host = entry.host
        if host.uuid in discarded or host.allocation_request is None:
            continue
        if places is not None and places.domain_of(host.host) in places.lost:
            continue
        if max_attempts is not None and len(instance_trace.claims) >= max_attempts:
            instance_trace.gave_up = True
            return None
        mark = stack.mark()
        try:
            for reserved in claims.claim(instance_uuid, host):
                stack.push(reserved)
        except ClaimRefused as exc:
            # Placement's view of this host changed under us: another
            # scheduler (or a stale read) got there first. Do not try it
            # again in this request.
            discarded.add(host.uuid)
            instance_trace.claims.append(ClaimAttempt(
                host=host.host, nodename=host.nodename, compute_node_uuid=host.uuid,
                outcome=CONFLICT, detail=str(exc), code=exc.code or ''))
            continue
        if places is not None and not places.reserve(instance_uuid, host.host):
            # Another scheduler's member got there after our read: this
            # claim must not stand, and the domain is closed to the request.
            stack.unwind(to=mark)
            instance_trace.claims.append(ClaimAttempt(
                host=host.host, nodename=host.nodename, compute_node_uuid=host.uuid,
                outcome=DOMAIN_TAKEN, detail=no_valid_host.domain_taken(places, host.host)))
            continue
        if places is not None:
            stack.push(GroupPlace(places, instance_uuid))
        instance_trace.claims.append(ClaimAttempt(
            host=host.host, nodename=host.nodename, compute_node_uuid=host.uuid,
            outcome=CLAIMED))
        return host
    return None


def _selection(host: HostState, version: str) -> Selection:
    return Selection(service_host=host.host, nodename=host.nodename,
                     compute_node_uuid=host.uuid, cell_uuid=host.cell_uuid,
                     allocation_request=dict(host.allocation_request or {}),
                     allocation_request_version=version,
                     limits=host.limits(),
                     availability_zone=host.availability_zone)
