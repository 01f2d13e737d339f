"""A whole run: Placement's reply, the cache, filters, weighers and claims together.

``FakePlacement`` (see factories) lets the interleavings of seed 003 be
replayed step by step.
"""
from __future__ import annotations

import pytest

from cellplane.objects.server_group_places import Member
from rpc_schemas.request_spec import InstanceGroup
from scheduler.destinations import DestinationSelector
from scheduler.errors import NoValidHost
from scheduler.host_cache import HostStateCache
from scheduler.plugins import load_filters
from scheduler.trace import CONFLICT
from scheduler.weighers.ram import RAMWeigher
from tests.unit.scheduler.factories import CELL2, FakePlacement, flavor, record, spec
from tests.unit.scheduler.server_group.test_places import FakeBook

MB = 512


class Locator:
    def __init__(self, where):
        self.where = where

    def hosts_of(self, instance_uuids):
        return {u: self.where[u] for u in instance_uuids if u in self.where}


def _selector(placement, cache=None, claimer=None, **kwargs):
    if cache is None:
        cache = HostStateCache()
        cache.set_records([record('a'), record('b'), record('c', cell=CELL2)])
    return DestinationSelector(
        candidate_source=placement, claimer=claimer or placement, cache=cache,
        filters=load_filters(['ComputeFilter', 'ResourceFitFilter', 'ServerGroupAffinityFilter',
                              'ServerGroupAntiAffinityFilter', 'DifferentHostFilter']),
        weighers=[RAMWeigher(1.0)], max_results=100, **kwargs)


def _spec(**kwargs):
    return spec(flavor=flavor(vcpus=0, memory_mb=MB, root_gb=0), **kwargs)


def test_emptiest_host_is_claimed_and_hosts_of_other_cells_are_no_alternates():
    placement = FakePlacement({'a': 4096, 'b': 2048, 'c': 8192})
    result = _selector(placement).select_destinations(_spec(), ['i-1'], 1)
    ((only,),) = result.selections
    assert (only.service_host, only.cell_uuid) == ('c', CELL2)
    assert placement.allocations == {'i-1': ('rp-c', MB)}


def test_alternates_of_the_claimed_cell_only():
    placement = FakePlacement({'a': 4096, 'b': 2048, 'c': 1024})
    result = _selector(placement).select_destinations(_spec(), ['i-1'], 2)
    assert [s.service_host for s in result.selections[0]] == ['a', 'b']
    assert placement.allocations == {'i-1': ('rp-a', MB)}


def test_query_and_counts_are_in_the_trace():
    placement = FakePlacement({'a': 4096, 'b': 2048, 'c': 1024})
    result = _selector(placement).select_destinations(_spec(), ['i-1'], 0)
    assert placement.queries[0] == [('resources', f'MEMORY_MB:{MB}'),
                                    ('required', '!COMPUTE_STATUS_DISABLED'), ('limit', '100')]
    assert result.trace.query == placement.queries[0]
    assert result.trace.placement_microversion == '1.39'
    assert result.selections[0][0].allocation_request_version == '1.39'
    assert (result.trace.allocation_requests, result.trace.candidate_hosts) == (3, 3)


def test_claim_made_during_another_requests_read_is_not_counted_as_free():
    """Seed 003 end to end: B claims 'a' while A's read is in flight. A's reply
    still shows 'a' empty, but A must neither pick it nor waste a claim on it."""
    placement = FakePlacement({'a': 1000, 'b': 800})
    cache = HostStateCache()
    cache.set_records([record('a'), record('b')])
    selector = _selector(placement, cache)
    outcome = {}
    placement.during_read = lambda: outcome.setdefault(
        'b', selector.select_destinations(_spec(), ['i-b'], 0))
    result_a = selector.select_destinations(_spec(), ['i-a'], 0)
    assert outcome['b'].selections[0][0].service_host == 'a'
    assert result_a.selections[0][0].service_host == 'b'
    trace = result_a.trace.instances[0]
    assert trace.lost_claims() == 0
    assert trace.filters[1].reasons == {'insufficient free resources': 1}


def test_without_the_cache_knowing_a_claim_placement_refuses_and_the_next_host_wins():
    """Another scheduler worker's claim is unknown to this cache: the generation
    check of Placement is the safety net and costs one lost claim."""
    placement = FakePlacement({'a': 1000, 'b': 800})
    placement.during_read = lambda: placement.claim(
        'other-worker', {'allocations': {'rp-a': {'resources': {'MEMORY_MB': MB}}}},
        'p', 'u')
    result = _selector(placement).select_destinations(_spec(), ['i-1'], 0)
    assert result.selections[0][0].service_host == 'b'
    lost = result.trace.instances[0].claims[0]
    assert (lost.host, lost.outcome, lost.detail) == ('a', CONFLICT, 'rp-a changed')


def test_multi_create_failure_leaves_nothing_claimed_in_placement():
    placement = FakePlacement({'a': 4096, 'b': 4096})
    group = InstanceGroup(uuid='g', policy='anti-affinity')
    with pytest.raises(NoValidHost) as info:
        _selector(placement).select_destinations(
            _spec(instance_group=group), ['i-1', 'i-2', 'i-3'], 0)
    assert placement.allocations == {}
    assert placement.used == {'rp-a': 0, 'rp-b': 0}
    assert 'ServerGroupAntiAffinityFilter' in str(info.value)
    assert info.value.trace.outcome == 'no valid host'


def test_candidates_no_cell_knows_are_counted_in_no_valid_host():
    placement = FakePlacement({'ghost': 4096})
    with pytest.raises(NoValidHost, match='1 providers no cell knows'):
        _selector(placement).select_destinations(_spec(), ['i-1'], 0)


def test_different_host_hint_uses_the_locator():
    placement = FakePlacement({'a': 4096, 'b': 2048})
    selector = _selector(placement, instance_locator=Locator({'i-old': 'a'}))
    result = selector.select_destinations(
        _spec(scheduler_hints={'different_host': ['i-old']}), ['i-1'], 0)
    assert result.selections[0][0].service_host == 'b'


def test_instance_uuids_must_be_given_and_distinct():
    selector = _selector(FakePlacement({'a': 4096}))
    with pytest.raises(ValueError, match='at least one'):
        selector.select_destinations(_spec(), [], 0)
    with pytest.raises(ValueError, match='twice'):
        selector.select_destinations(_spec(), ['i-1', 'i-1'], 0)


def test_rack_affinity_with_placed_members_asks_placement_for_their_racks_only():
    placement = FakePlacement({'a': 4096, 'b': 2048})
    cache = HostStateCache()
    cache.set_records([record('a', failure_domains={'rack': 'r1'}),
                       record('b', failure_domains={'rack': 'r2'}),
                       record('old', failure_domains={'rack': 'r2'})])
    group = InstanceGroup(uuid='g', policy='affinity', hosts=['old'], level='rack')
    result = _selector(placement, cache).select_destinations(
        _spec(instance_group=group), ['i-1'], 0)
    assert ('member_of', 'in:r2') in placement.queries[0]
    assert result.selections[0][0].service_host == 'b'
    # The record says which group, at which level, asked for which domains.
    assert result.trace.request['instance_group'] == {
        'uuid': 'g', 'policy': 'affinity', 'level': 'rack', 'member_of': ['r2']}


def test_no_candidates_names_the_resource_no_provider_has():
    placement = FakePlacement({'a': 4096, 'b': 2048})
    with pytest.raises(NoValidHost) as info:
        _selector(placement).select_destinations(
            spec(flavor=flavor(vcpus=0, memory_mb=8192, root_gb=0)), ['i-1'], 0)
    assert ('no resource provider has MEMORY_MB:8192 (each asked alone); MEMORY_MB:8192: '
            'the most free on any one provider is 4096') in str(info.value)
    assert info.value.trace.shortage == ['MEMORY_MB:8192']
    # The diagnosis asked Placement each constraint alone, with limit=1.
    assert [('resources', 'MEMORY_MB:8192'), ('limit', '1')] in placement.queries
    assert placement.queries[-1] == [('resources', 'MEMORY_MB:1'),
                                     ('required', '!COMPUTE_STATUS_DISABLED'), ('limit', '1')]


def test_filters_removing_every_host_are_counted_against_the_candidates():
    placement = FakePlacement({'a': 4096, 'b': 2048})
    group = InstanceGroup(uuid='g', policy='anti-affinity', hosts=['a', 'b'])
    with pytest.raises(NoValidHost) as info:
        _selector(placement).select_destinations(_spec(instance_group=group), ['i-1'], 0)
    assert '0/2 hosts passed the filters' in str(info.value)
    assert '2 removed by ServerGroupAntiAffinityFilter' in str(info.value)


def test_trace_times_each_stage_and_summarizes_the_request():
    placement = FakePlacement({'a': 4096, 'b': 2048, 'c': 1024})
    result = _selector(placement).select_destinations(
        _spec(availability_zone='az1'), ['i-1'], 0)
    assert set(result.trace.stage_ms) == {'placement_candidates', 'host_states',
                                          'filters', 'weighers', 'claims'}
    assert all(ms >= 0 for ms in result.trace.stage_ms.values())
    assert result.trace.request['flavor']['memory_mb'] == MB
    assert result.trace.request['availability_zone'] == 'az1'
    assert result.trace.instance_uuids == ['i-1']


def test_a_multi_create_is_claimed_in_one_batch_when_batch_claims_are_on():
    placement = FakePlacement({'a': 4096, 'b': 2048, 'c': 8192})
    result = _selector(placement, batch_claims=True).select_destinations(
        _spec(), ['i-1', 'i-2', 'i-3'], 1)

    assert placement.batches == [['i-1', 'i-2', 'i-3']]
    assert placement.single_claims == []
    assert {u: rp for u, (rp, _) in placement.allocations.items()} == {
        u: f'rp-{s[0].service_host}' for u, s in zip(['i-1', 'i-2', 'i-3'],
                                                     result.selections, strict=True)}
    assert result.trace.batch_claim == 'claimed'


def test_a_refused_batch_claims_nothing_and_the_request_is_claimed_one_at_a_time():
    # Two slots per host; another scheduler fills c between our read and our batch.
    placement = FakePlacement({'a': 2 * MB, 'b': 2 * MB, 'c': 2 * MB})
    placement.during_read = lambda: placement._write('other', 'rp-c', 2 * MB)
    result = _selector(placement, batch_claims=True).select_destinations(
        _spec(), ['i-1', 'i-2', 'i-3', 'i-4'], 0)

    assert len(placement.batches) == 1
    assert placement.single_claims == ['i-1', 'i-2', 'i-3', 'i-4']
    assert result.trace.batch_claim == 'fell_back'
    assert 'rp-c changed' in result.trace.batch_claim_refusal
    # The refused batch left no charge behind: the four fit exactly on a and b.
    assert sorted(rp for rp, _ in placement.allocations.values()) == [
        'rp-a', 'rp-a', 'rp-b', 'rp-b', 'rp-c']
    assert all(placement.used[rp] <= placement.capacity[rp] for rp in placement.used)


def test_a_batched_request_that_does_not_fit_sends_no_batch_and_claims_nothing():
    placement = FakePlacement({'a': MB, 'b': MB, 'c': 0})
    with pytest.raises(NoValidHost) as caught:
        _selector(placement, batch_claims=True).select_destinations(
            _spec(), ['i-1', 'i-2', 'i-3'], 0)
    assert placement.batches == []
    assert placement.allocations == {}
    assert caught.value.trace.rolled_back == []


def test_with_a_group_book_the_record_counts_the_other_members_and_stale_places_go_first():
    placement = FakePlacement({'a': 4096, 'b': 2048})
    cache = HostStateCache()
    cache.set_records([record('a', failure_domains={'rack': 'r1'}),
                       record('b', failure_domains={'rack': 'r2'})])
    book = FakeBook([Member('old', 'r1', 0), Member('gone', 'r2', 0),
                     Member('i-1', None, None)], gone=['gone'])
    group = InstanceGroup(uuid='g', policy='anti-affinity', level='rack')
    result = _selector(placement, cache, group_book=book).select_destinations(
        _spec(instance_group=group), ['i-1'], 0)
    # 'gone' gave its place back before Placement was asked; 'old' fills r1.
    assert book.released == [['gone']]
    assert ('member_of', '!in:r1') in placement.queries[0]
    assert result.selections[0][0].service_host == 'b'
    assert book.held == {'i-1': 'r2'}
    assert result.trace.request['instance_group']['members'] == 2
    assert result.trace.request['instance_group']['not_member_of'] == ['r1']
