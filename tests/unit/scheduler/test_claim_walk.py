"""The claim walk: conflicts move on, alternates stay in the cell, failure undoes every claim."""
from __future__ import annotations

import pytest

from rpc_schemas.request_spec import InstanceGroup
from scheduler.claim_walk import select_hosts
from scheduler.claims import RequestClaims
from scheduler.errors import NoValidHost
from scheduler.filters.availability_zone import AvailabilityZoneFilter
from scheduler.filters.compute import ComputeFilter
from scheduler.filters.resource_fit import ResourceFitFilter
from scheduler.host_cache import HostStateCache
from scheduler.server_group.anti_affinity_filter import ServerGroupAntiAffinityFilter
from scheduler.trace import CLAIMED, CONFLICT, SchedulingTrace
from scheduler.weighers.ram import RAMWeigher
from tests.unit.scheduler.factories import CELL1, CELL2, DEFAULT_REQUEST, FakeClaimer, host, spec

FILTERS = [ComputeFilter(), ResourceFitFilter(), AvailabilityZoneFilter(),
           ServerGroupAntiAffinityFilter()]


def _hosts_by_free_ram(*names_and_cells):
    """Hosts listed best first: each next one has 100 MB more used."""
    return [host(name, cell=cell, used={'MEMORY_MB': 100 * i})
            for i, (name, cell) in enumerate(names_and_cells)]


def _run(hosts, *, request_spec=None, instances=('i-1',), num_alternates=2,
         claimer=None, cache=None, filters=FILTERS, domain_of_host=None,
         max_claim_attempts=None):
    request_spec = request_spec or spec()
    claimer = claimer or FakeClaimer()
    trace = SchedulingTrace(project_id=request_spec.project_id,
                            num_instances=len(instances), num_alternates=num_alternates,
                            candidate_hosts=len(hosts))
    claims = RequestClaims(claimer, cache, request_spec.project_id, request_spec.user_id)
    result = select_hosts(spec=request_spec, instance_uuids=list(instances),
                          num_alternates=num_alternates, hosts=hosts,
                          resources=DEFAULT_REQUEST, filters=filters,
                          weighers=[RAMWeigher(1.0)], claims=claims, trace=trace,
                          allocation_request_version='1.36',
                          domain_of_host=domain_of_host,
                          max_claim_attempts=max_claim_attempts)
    return result, trace, claimer


def _names(selections):
    return [s.service_host for s in selections]


def test_best_host_is_claimed_and_returned_first_with_its_allocation_request():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1), ('c', CELL1))
    (selections,), trace, claimer = _run(hosts)
    assert _names(selections) == ['a', 'b', 'c']
    assert claimer.allocations == {'i-1': hosts[0].allocation_request}
    assert selections[0].allocation_request == hosts[0].allocation_request
    assert selections[1].allocation_request == hosts[1].allocation_request
    assert selections[0].allocation_request_version == '1.36'
    assert selections[0].limits == hosts[0].limits()


def test_a_conflict_discards_the_host_and_claims_the_next():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1), ('c', CELL1), ('d', CELL1))
    claimer = FakeClaimer(refuse=['rp-a'])
    (selections,), trace, _ = _run(hosts, claimer=claimer)
    assert _names(selections) == ['b', 'c', 'd']
    assert claimer.allocations.keys() == {'i-1'}
    assert [(c.host, c.outcome) for c in trace.instances[0].claims] == [
        ('a', CONFLICT), ('b', CLAIMED)]


def test_a_claimer_answering_false_counts_as_a_conflict():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1))
    claimer = FakeClaimer(refuse=['rp-a'], raise_conflict=False)
    (selections,), _, _ = _run(hosts, claimer=claimer)
    assert _names(selections)[0] == 'b'


def test_alternates_come_only_from_the_claimed_hosts_cell():
    hosts = _hosts_by_free_ram(('a', CELL1), ('x', CELL2), ('b', CELL1), ('y', CELL2),
                               ('c', CELL1))
    (selections,), _, _ = _run(hosts, num_alternates=2)
    assert _names(selections) == ['a', 'b', 'c']
    assert {s.cell_uuid for s in selections} == {CELL1}


def test_alternates_follow_the_claimed_host_into_the_other_cell_after_a_conflict():
    hosts = _hosts_by_free_ram(('a', CELL1), ('x', CELL2), ('b', CELL1), ('y', CELL2))
    (selections,), _, _ = _run(hosts, claimer=FakeClaimer(refuse=['rp-a']))
    assert _names(selections) == ['x', 'y']


def test_alternates_are_not_claimed():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1), ('c', CELL1))
    _, _, claimer = _run(hosts, num_alternates=2)
    assert [provider for _, provider in claimer.attempts] == ['rp-a']


def test_fewer_alternates_when_the_cell_has_fewer_hosts():
    hosts = _hosts_by_free_ram(('a', CELL1), ('x', CELL2))
    (selections,), _, _ = _run(hosts, num_alternates=3)
    assert _names(selections) == ['a']


def test_zero_alternates_returns_only_the_claimed_host():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1))
    (selections,), _, _ = _run(hosts, num_alternates=0)
    assert _names(selections) == ['a']


def test_claim_is_charged_to_the_host_state_and_assumed_by_the_cache():
    hosts = _hosts_by_free_ram(('a', CELL1))
    free_before = hosts[0].free('MEMORY_MB')
    cache = HostStateCache()
    with cache.reading():  # an older read in flight keeps the claim assumed
        _run(hosts, cache=cache)
        assert hosts[0].free('MEMORY_MB') == free_before - DEFAULT_REQUEST['MEMORY_MB']
        assert cache.assumed() == ['i-1']


def test_multi_create_places_each_instance_and_consumes_between_them():
    # 'a' has room for exactly one instance; the second must go to 'b'.
    a = host('a', capacity={'VCPU': 16, 'MEMORY_MB': 1000, 'DISK_GB': 500})
    b = host('b', capacity={'VCPU': 16, 'MEMORY_MB': 800, 'DISK_GB': 500})
    result, trace, claimer = _run([a, b], instances=('i-1', 'i-2'), num_alternates=1)
    assert [_names(s)[0] for s in result] == ['a', 'b']
    assert claimer.allocations.keys() == {'i-1', 'i-2'}
    assert trace.instances[1].filters[1].reasons == {'insufficient free resources': 1}


def test_multi_create_with_anti_affinity_spreads_over_hosts():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1), ('c', CELL1))
    group = InstanceGroup(uuid='g', policy='anti-affinity')
    result, _, _ = _run(hosts, request_spec=spec(instance_group=group),
                        instances=('i-1', 'i-2', 'i-3'), num_alternates=0)
    assert sorted(_names(s)[0] for s in result) == ['a', 'b', 'c']


def test_multi_create_with_rack_anti_affinity_uses_one_host_per_rack():
    racks = {'a': 'r1', 'b': 'r1', 'c': 'r2'}
    hosts = [host(n, failure_domains={'rack': r}) for n, r in racks.items()]
    group = InstanceGroup(uuid='g', policy='anti-affinity', level='rack')
    result, _, _ = _run(hosts, request_spec=spec(instance_group=group),
                        instances=('i-1', 'i-2'), num_alternates=0,
                        domain_of_host=lambda h, level: racks.get(h))
    assert sorted(racks[_names(s)[0]] for s in result) == ['r1', 'r2']
    with pytest.raises(NoValidHost, match='failure domain already runs a group member'):
        _run(hosts, request_spec=spec(instance_group=group),
             instances=('i-1', 'i-2', 'i-3'), num_alternates=0,
             domain_of_host=lambda h, level: racks.get(h))


def test_multi_create_is_all_or_nothing():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1))
    group = InstanceGroup(uuid='g', policy='anti-affinity')
    claimer = FakeClaimer()
    with pytest.raises(NoValidHost) as info:
        _run(hosts, request_spec=spec(instance_group=group),
             instances=('i-1', 'i-2', 'i-3'), claimer=claimer)
    assert claimer.allocations == {}
    assert sorted(claimer.unclaimed) == ['i-1', 'i-2']
    assert info.value.trace.rolled_back == ['i-1', 'i-2']
    assert 'i-3 (3 of 3)' in str(info.value)


def test_rollback_also_forgets_the_assumed_claims_and_gives_back_host_state():
    hosts = _hosts_by_free_ram(('a', CELL1))
    free_before = hosts[0].free('MEMORY_MB')
    cache = HostStateCache()
    with cache.reading():
        with pytest.raises(NoValidHost):
            _run(hosts, instances=('i-1', 'i-2'), cache=cache,
                 request_spec=spec(instance_group=InstanceGroup(
                     uuid='g', policy='anti-affinity')))
        assert cache.assumed() == []
    assert hosts[0].free('MEMORY_MB') == free_before


def test_an_error_other_than_a_conflict_undoes_earlier_claims_and_propagates():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1))
    claimer = FakeClaimer(fail_with=ConnectionError('placement unreachable'))
    with pytest.raises(ConnectionError):
        _run(hosts, instances=('i-1', 'i-2'), claimer=claimer)
    assert claimer.unclaimed == ['i-1'] and claimer.allocations == {}


def test_no_valid_host_counts_removals_per_filter_and_reason():
    hosts = [host(f'z{i}', availability_zone='az1') for i in range(80)]
    hosts += [host(f'd{i}', availability_zone='az2', service_up=False) for i in range(3)]
    hosts += [host('off', availability_zone='az2', service_disabled=True)]
    with pytest.raises(NoValidHost) as info:
        _run(hosts, request_spec=spec(availability_zone='az2'))
    message = str(info.value)
    assert 'Placement returned 84 candidate hosts' in message
    assert '4 removed by ComputeFilter (compute service down: 3, compute service disabled: 1)' in message
    assert '80 removed by AvailabilityZoneFilter (not in requested availability zone: 80)' in message
    step = info.value.trace.instances[0].filters[0]
    assert step.reasons == {'compute service down': 3, 'compute service disabled': 1}


def test_no_valid_host_counts_claims_lost_to_races():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1), ('c', CELL1))
    with pytest.raises(NoValidHost) as info:
        _run(hosts, claimer=FakeClaimer(refuse=['rp-a', 'rp-b', 'rp-c']))
    assert '3 claims lost races' in str(info.value)
    assert info.value.trace.instances[0].lost_claims() == 3


def test_no_valid_host_when_placement_returned_nothing_shows_the_query():
    request_spec = spec()
    trace = SchedulingTrace(project_id='proj', num_instances=1, num_alternates=0,
                            query=[('resources', 'VCPU:1')])
    claims = RequestClaims(FakeClaimer(), None, 'proj', None)
    with pytest.raises(NoValidHost, match='no allocation candidates for resources=VCPU:1'):
        select_hosts(spec=request_spec, instance_uuids=['i-1'], num_alternates=0,
                     hosts=[], resources=DEFAULT_REQUEST, filters=FILTERS, weighers=[],
                     claims=claims, trace=trace, allocation_request_version='1.36')


def test_a_host_lost_to_a_race_is_not_retried_for_the_next_instance():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1), ('c', CELL1))
    claimer = FakeClaimer(refuse=['rp-a'])
    _, trace, _ = _run(hosts, instances=('i-1', 'i-2'), claimer=claimer)
    assert [provider for _, provider in claimer.attempts] == ['rp-a', 'rp-b', 'rp-c']
    assert trace.instances[1].hosts_in == 2


def test_trace_records_filters_weights_claims_and_selections():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1))
    _, trace, _ = _run(hosts, num_alternates=1)
    instance = trace.instances[0]
    assert [w.host for w in instance.weighed] == ['a', 'b']
    assert instance.weighed[0].weight > instance.weighed[1].weight
    assert [(s.host, s.claimed) for s in instance.selections] == [('a', True), ('b', False)]
    assert trace.outcome == 'selected'
    assert trace.to_dict()['instances'][0]['claims'][0]['outcome'] == CLAIMED


def test_negative_alternates_are_refused():
    with pytest.raises(ValueError, match='num_alternates'):
        _run(_hosts_by_free_ram(('a', CELL1)), num_alternates=-1)


def test_trace_keeps_the_best_weighed_hosts_and_counts_them_all():
    from scheduler.trace import TRACE_WEIGHED_LIMIT
    hosts = [host(f'h{i}', used={'MEMORY_MB': i}) for i in range(TRACE_WEIGHED_LIMIT + 20)]
    _, trace, _ = _run(hosts, num_alternates=0)
    instance = trace.instances[0]
    assert instance.weighed_count == TRACE_WEIGHED_LIMIT + 20
    assert len(instance.weighed) == TRACE_WEIGHED_LIMIT
    assert instance.weighed[0].host == 'h0'


def test_claim_walk_gives_up_after_max_claim_attempts():
    hosts = [host(f'h{i}') for i in range(30)]
    claimer = FakeClaimer(refuse=[h.uuid for h in hosts])
    with pytest.raises(NoValidHost, match='gave up after 5 refused claims') as info:
        _run(hosts, claimer=claimer, max_claim_attempts=5)
    assert len(claimer.attempts) == 5
    assert info.value.trace.instances[0].gave_up


def test_claim_walk_within_max_claim_attempts_succeeds():
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1), ('c', CELL1))
    (selections,), _, _ = _run(hosts, claimer=FakeClaimer(refuse=['rp-a', 'rp-b']),
                               max_claim_attempts=3)
    assert selections[0].service_host == 'c'


def test_trace_of_a_failed_run_is_plain_json():
    import json
    hosts = _hosts_by_free_ram(('a', CELL1), ('b', CELL1))
    with pytest.raises(NoValidHost) as info:
        _run(hosts, instances=('i-1', 'i-2', 'i-3'),
             request_spec=spec(instance_group=InstanceGroup(uuid='g', policy='anti-affinity')))
    record = json.loads(json.dumps(info.value.trace.to_dict()))
    assert record['outcome'] == 'no valid host'
    assert record['rolled_back'] == ['i-1', 'i-2']
    assert record['instances'][2]['filters'][-1]['reasons'] == {
        'anti-affinity: host already runs a member of the server group': 2}
    assert record['error'] == str(info.value)
