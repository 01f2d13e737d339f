"""One complete scheduler run: RequestSpec in, claimed Selections (and a trace) out.

Query Placement for allocation candidates, merge them with the cached
compute node records (re-applying this scheduler's unseen claims), locate the
instances named in scheduler hints, then run the claim walk. Placement, the
claimer and the instance locator are small protocols so that this module
holds no I/O of its own; the service wires in the real clients.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Mapping, Protocol, Sequence

from placement.client import Candidates
from rpc_schemas.request_spec import AFFINITY, RequestSpec
from rpc_schemas.scheduler_hints import DIFFERENT_DOMAIN, SAME_DOMAIN, split_domain_value
from rpc_schemas.selection import Selection
from scheduler import no_valid_host
from scheduler.candidates_query import CandidatesQuery, build_query
from scheduler.claim_walk import select_hosts
from scheduler.claims import BatchClaimRefused, Claimer, MoveClaimer, RequestClaims
from scheduler.errors import NoValidHost
from scheduler.filters.base import HostFilter
from scheduler.hints.domains import hinted_domains, hinted_instances
from scheduler.host_cache import HostStateCache
from scheduler.instance_locator import InstanceLocator
from scheduler.no_valid_host import INSIDE, OUTSIDE
from scheduler.server_group.book import GroupBook
from scheduler.server_group.places import GroupPlaces
from scheduler.trace import BATCH_CLAIMED, BATCH_FELL_BACK, SchedulingTrace
from scheduler.weighers.base import HostWeigher


class CandidateSource(Protocol):
    #: Placement microversion of the allocation requests it returns; the
    #: Selections carry it so the cell conductor claims alternates alike.
    microversion: str

    def allocation_candidates(self, query: CandidatesQuery) -> Candidates:
        """Placement's answer to ``GET /allocation_candidates`` for ``query``."""


@dataclasses.dataclass
class SchedulingResult:
    selections: list[list[Selection]]
    trace: SchedulingTrace


class DestinationSelector:
    """Answers ``select_destinations`` from Placement, the cache, filters and weighers."""

    def __init__(self, *, candidate_source: CandidateSource, claimer: Claimer,
                 cache: HostStateCache, filters: Sequence[HostFilter],
                 weighers: Sequence[HostWeigher], max_results: int | None = None,
                 min_results: int | None = None,
                 max_claim_attempts: int | None = None,
                 batch_claims: bool = False,
                 instance_locator: InstanceLocator | None = None,
                 zone_aggregates: Mapping[str, Sequence[str]] | None = None,
                 group_book: GroupBook | None = None) -> None:
        self._candidate_source = candidate_source
        self._claimer = claimer
        self._cache = cache
        self._filters = list(filters)
        self._weighers = list(weighers)
        self._max_results = max_results
        self._min_results = min_results
        self._max_claim_attempts = max_claim_attempts
        self._batch_claims = batch_claims
        self._instance_locator = instance_locator
        self._zone_aggregates = zone_aggregates
        self._group_book = group_book

    def select_destinations(self, spec: RequestSpec, instance_uuids: Sequence[str],
                            num_alternates: int, *,
                            migration_uuid: str | None = None) -> SchedulingResult:
        """Claim a host for every instance, or none (NoValidHost, with the trace).

        With ``migration_uuid`` the one instance is moving: its claim is the
        migration-consumer claim (``scheduler.claims.MoveClaimer``).
        """
        if migration_uuid is not None and len(instance_uuids) != 1:
            raise ValueError('a move (migration_uuid) places exactly one instance')
        if not instance_uuids:
            raise ValueError('select_destinations needs at least one instance UUID')
        if len(set(instance_uuids)) != len(instance_uuids):
            raise ValueError('select_destinations got the same instance UUID twice')
        window = self._window(len(instance_uuids), num_alternates)
        claimer = (self._claimer if migration_uuid is None
                   else MoveClaimer(self._claimer, migration_uuid))
        try:
            return self._select(spec, instance_uuids, num_alternates, window, claimer)
        except NoValidHost as exc:
            if not exc.trace.allocation_requests:
                raise   # Placement has no room: asking again would not change it
            # Placement offered hosts but none passed the filters: the window
            # may have left out the ones they accept, or this scheduler's
            # claims confirmed during the read were counted twice (see
            # host_cache). Ask once more, for every candidate, on a fresh read.
        return self._select(spec, instance_uuids, num_alternates, self._max_results, claimer)

    def _window(self, num_instances: int, num_alternates: int) -> int | None:
        """How many candidates to ask of Placement for this request."""
        if self._min_results is None or self._max_results is None:
            return self._max_results
        wanted = max(self._min_results, num_instances * (num_alternates + 1))
        return min(wanted, self._max_results)

    def _select(self, spec: RequestSpec, instance_uuids: Sequence[str],
                num_alternates: int, limit: int | None, claimer: Claimer) -> SchedulingResult:
        """One run; a multi-create's batch claim refused runs again claiming one at a time."""
        if not (self._batch_claims and len(instance_uuids) > 1):
            return self._select_once(spec, instance_uuids, num_alternates, limit, claimer)
        try:
            return self._select_once(spec, instance_uuids, num_alternates, limit, claimer,
                                     batch_claim=BATCH_CLAIMED)
        except BatchClaimRefused as exc:
            # Nothing was claimed; what changed in Placement is read afresh.
            return self._select_once(spec, instance_uuids, num_alternates, limit, claimer,
                                     batch_claim=BATCH_FELL_BACK, refusal=str(exc))

    def _select_once(self, spec: RequestSpec, instance_uuids: Sequence[str],
                     num_alternates: int, limit: int | None, claimer: Claimer, *,
                     batch_claim: str = '',
                     refusal: str = '') -> SchedulingResult:
        places = self._group_places(spec, instance_uuids)
        if places is not None:
            # At the host level the filters keep the group: hosts are no aggregates.
            affinity_domains = places.query_member_of()
            full_domains = places.query_not_member_of()
        else:
            affinity_domains, full_domains = self._affinity_domains(spec), []
        instance_hosts = self._locate_hinted(spec)
        same_domains, other_domains, hint_problem = hinted_domains(
            spec, instance_hosts, self._cache.failure_domain_of_host)
        query = build_query(spec, limit=limit,
                            zone_aggregates=self._zone_aggregates,
                            affinity_aggregates=affinity_domains,
                            required_aggregates=same_domains,
                            forbidden_aggregates=[*full_domains, *other_domains],
                            cell_trait=self._requested_cell_trait(spec))
        params = query.to_params()
        trace = SchedulingTrace(project_id=spec.project_id,
                                num_instances=len(instance_uuids),
                                num_alternates=num_alternates, query=params,
                                placement_microversion=self._candidate_source.microversion,
                                instance_uuids=list(instance_uuids),
                                request=summarize_request(
                                    spec, group_member_of=affinity_domains,
                                    group_not_member_of=full_domains,
                                    group_members=(None if places is None
                                                   else len(places.others))),
                                started_at=time.time(),
                                batch_claim=batch_claim, batch_claim_refusal=refusal)
        if hint_problem:
            trace.outcome = 'no valid host'
            trace.error = (f'{NoValidHost.head(instance_uuids[0], 1, len(instance_uuids))}: '
                           f'{hint_problem}')
            raise NoValidHost(trace.error, trace=trace)
        with self._cache.reading() as token:
            with trace.timed('placement_candidates'):
                candidates = self._candidate_source.allocation_candidates(query)
            with trace.timed('host_states'):
                states = self._cache.host_states(candidates, token)
        trace.allocation_requests = len(candidates.allocation_requests)
        trace.candidate_hosts = len(states.hosts)
        trace.unknown_providers = states.unknown_providers
        if isinstance(claimer, MoveClaimer):
            trace.request['migration_uuid'] = claimer.migration_uuid
        claims = RequestClaims(claimer, self._cache, spec.project_id, spec.user_id,
                               batched=batch_claim == BATCH_CLAIMED)
        if not candidates.allocation_requests:
            with trace.timed('diagnose_shortage'):
                label = (f'server group {spec.instance_group.name or spec.instance_group.uuid}'
                         if spec.instance_group is not None else '')
                trace.emptied_by = no_valid_host.emptied_by(
                    self._candidate_source,
                    build_query(spec, limit=1, zone_aggregates=self._zone_aggregates),
                    [(label, INSIDE, affinity_domains), (label, OUTSIDE, full_domains),
                     *((f'{SAME_DOMAIN} hint', INSIDE, d) for d in same_domains),
                     (f'{DIFFERENT_DOMAIN} hint', OUTSIDE, other_domains)])
                if not trace.emptied_by:
                    trace.shortage, trace.shortage_limits = no_valid_host.diagnose_shortage(
                        self._candidate_source, query)
        selections = select_hosts(
            spec=spec, instance_uuids=instance_uuids, num_alternates=num_alternates,
            hosts=states.hosts, resources=query.resources, filters=self._filters,
            weighers=self._weighers, claims=claims, trace=trace,
            allocation_request_version=self._candidate_source.microversion,
            instance_hosts=instance_hosts,
            domain_of_host=self._cache.failure_domain_of_host,
            max_claim_attempts=self._max_claim_attempts, places=places,
            domain_names=self._domain_names(spec))
        return SchedulingResult(selections=selections, trace=trace)

    def _requested_cell_trait(self, spec: RequestSpec) -> str | None:
        """The trait of the cell the request is bound to (a move's), when all its hosts carry it."""
        destination = spec.requested_destination
        if destination is None or not destination.cell_uuid:
            return None
        return self._cache.cell_trait(destination.cell_uuid)

    def _domain_names(self, spec: RequestSpec):
        """What reads, for a failed run's message, the names of the domains its group and hints are at."""
        levels = {split_domain_value(v)[0] for hint in (SAME_DOMAIN, DIFFERENT_DOMAIN)
                  for v in spec.scheduler_hints.get(hint) or ()}
        group = spec.instance_group
        if group is not None and group.domain_level is not None:
            levels.add(group.level)
        book = self._group_book
        if book is None or not levels:
            return None
        return lambda: {uuid: (level, name) for level in sorted(levels)
                        for uuid, name in book.domain_names(level).items()}

    def _affinity_domains(self, spec: RequestSpec) -> list[str]:
        """Failure domains of an affinity group's members, at the group's level."""
        group = spec.instance_group
        if (group is None or group.policy != AFFINITY or group.soft
                or group.domain_level is None):
            return []
        domains = {self._cache.failure_domain_of_host(h, group.level) for h in group.hosts}
        return sorted(d for d in domains if d is not None)

    def _group_places(self, spec: RequestSpec,
                      instance_uuids: Sequence[str]) -> GroupPlaces | None:
        """Where the group's other members are and which places they hold, read now.

        What the read found stale or moved is written (``tidy``) before the
        query is built, as the places are the same for every later reader.
        """
        if spec.instance_group is None or self._group_book is None:
            return None
        places = GroupPlaces.read(spec.instance_group, instance_uuids, self._group_book,
                                  self._instance_locator, self._cache.failure_domain_of_host,
                                  self._cache.knows_host, self._cache.every_host_at)
        places.tidy()
        return places

    def _locate_hinted(self, spec: RequestSpec) -> Mapping[str, str]:
        wanted = hinted_instances(spec)
        if not wanted or self._instance_locator is None:
            return {}
        return dict(self._instance_locator.hosts_of(wanted))


def summarize_request(spec: RequestSpec, *, group_member_of: Sequence[str] = (),
                      group_not_member_of: Sequence[str] = (),
                      group_members: int | None = None) -> dict:
    """The part of a RequestSpec an operator needs to read a scheduling record.

    ``group_member_of``: the failure domains (Placement aggregates) the
    server group's policy made the query ``member_of``;
    ``group_not_member_of``: those it forbade (``member_of=!in:``);
    ``group_members``: how many other members the scheduler read (else the
    spec's group's own list).
    """
    flavor = spec.flavor
    summary: dict = {
        'flavor': {'name': flavor.name, 'vcpus': flavor.vcpus,
                   'memory_mb': flavor.memory_mb, 'root_gb': flavor.root_gb,
                   'extra_specs': dict(flavor.extra_specs)},
        'project_id': spec.project_id, 'user_id': spec.user_id,
        'num_instances': spec.num_instances,
    }
    if spec.availability_zone:
        summary['availability_zone'] = spec.availability_zone
    if spec.image_properties:
        summary['image_properties'] = dict(spec.image_properties)
    if spec.scheduler_hints:
        summary['scheduler_hints'] = {k: list(v) for k, v in spec.scheduler_hints.items()}
    if spec.instance_group is not None:
        group = spec.instance_group
        summary['instance_group'] = {'uuid': group.uuid,
                                     'policy': group.policy,
                                     'level': group.level,
                                     'member_of': sorted(group_member_of)}
        if group.name:
            summary['instance_group']['name'] = group.name
        if group.soft:
            summary['instance_group']['soft'] = True
        if group_not_member_of:
            summary['instance_group']['not_member_of'] = sorted(group_not_member_of)
        members = len(group.members) if group_members is None else group_members
        if members:
            summary['instance_group']['members'] = members
    if spec.ignore_hosts:
        summary['ignore_hosts'] = list(spec.ignore_hosts)
    if spec.retry is not None:
        summary['retry'] = True
    return summary
