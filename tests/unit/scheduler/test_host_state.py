"""HostState merges Placement's summary with the cell record; consume charges claims."""
from __future__ import annotations

import pytest

from placement.client import Candidates, MalformedCandidates
from scheduler.host_state import HostAggregate, HostState, provider_resources
from tests.unit.scheduler.factories import host, record


def test_merge_takes_capacity_usage_and_traits_from_placement_and_identity_from_the_cell():
    summary = Candidates.from_body({'allocation_requests': [], 'provider_summaries': {
        'rp-h1': {'resources': {'VCPU': {'capacity': 64, 'used': 4},
                                'MEMORY_MB': {'capacity': 4096, 'used': 1024}},
                  'traits': ['HW_CPU_X86_AVX2']}}}).provider_summaries['rp-h1']
    state = HostState.merge(record('h1', cell='c9', availability_zone='az1'), summary)
    assert (state.host, state.nodename, state.uuid, state.cell_uuid) == ('h1', 'h1', 'rp-h1', 'c9')
    assert state.free('VCPU') == 60
    assert state.free('MEMORY_MB') == 3072
    assert state.free('DISK_GB') == 0
    assert state.traits == {'HW_CPU_X86_AVX2'}
    assert state.limits() == {'VCPU': 64, 'MEMORY_MB': 4096}


def test_merge_refuses_a_summary_of_another_provider():
    summary = Candidates.from_body({'allocation_requests': [], 'provider_summaries': {
        'rp-other': {'resources': {}}}}).provider_summaries['rp-other']
    with pytest.raises(ValueError, match='rp-other'):
        HostState.merge(record('h1'), summary)


def test_consume_charges_and_release_gives_back():
    state = host('h1', capacity={'VCPU': 8, 'MEMORY_MB': 1000})
    state.consume({'VCPU': 2, 'MEMORY_MB': 400, 'CUSTOM_UNKNOWN': 1})
    assert (state.free('VCPU'), state.free('MEMORY_MB')) == (6, 600)
    state.release({'VCPU': 2, 'MEMORY_MB': 400})
    assert (state.free('VCPU'), state.free('MEMORY_MB')) == (8, 1000)


def test_copy_is_independent():
    state = host('h1')
    other = state.copy()
    other.consume({'VCPU': 3})
    assert state.free('VCPU') == 16 and other.free('VCPU') == 13


def test_zone_comes_from_an_aggregate_else_from_the_node():
    agg = HostAggregate(uuid='a', name='a', metadata={'availability_zone': 'az-agg'})
    zoneless = HostAggregate(uuid='b', name='b', metadata={'ssd': 'true'})
    assert host('h1', aggregates=[agg]).availability_zone == 'az-agg'
    # The operator's aggregate wins over the compute agent's configured zone.
    assert host('h1', aggregates=[agg], availability_zone='az-node').availability_zone == 'az-agg'
    assert host('h1', aggregates=[zoneless],
                availability_zone='az-node').availability_zone == 'az-node'
    assert host('h1').availability_zone is None


def test_failed_builds_is_read_from_stats():
    assert host('h1', stats={'failed_builds': 3}).failed_builds == 3
    assert host('h1').failed_builds == 0
    assert host('h1', stats={'failed_builds': 'garbage'}).failed_builds == 0


def test_provider_resources_reads_one_provider_of_an_allocation_request():
    request = {'allocations': {'rp-1': {'resources': {'VCPU': 2}},
                               'rp-shared': {'resources': {'DISK_GB': 10}}}}
    assert provider_resources(request, 'rp-1') == {'VCPU': 2}
    assert provider_resources(request, 'rp-none') == {}


def test_candidates_are_grouped_by_root_provider_keeping_placement_order():
    first = {'allocations': {'rp-a': {'resources': {'VCPU': 1}}}}
    second = {'allocations': {'rp-a': {'resources': {'VCPU': 1}},
                              'rp-shared': {'resources': {'DISK_GB': 1}}}}
    nested = {'allocations': {'rp-b-numa0': {'resources': {'VCPU': 1}}}}
    candidates = Candidates.from_body({
        'allocation_requests': [first, second, nested],
        'provider_summaries': {
            'rp-a': {'resources': {}}, 'rp-shared': {'resources': {}},
            'rp-b': {'resources': {}},
            'rp-b-numa0': {'resources': {}, 'root_provider_uuid': 'rp-b'}}})
    grouped = candidates.requests_by_root()
    assert grouped['rp-a'] == [first, second]
    assert grouped['rp-shared'] == [second]
    assert grouped['rp-b'] == [nested]


def test_a_reply_that_is_not_allocation_candidates_is_reported():
    with pytest.raises(MalformedCandidates, match='Placement'):
        Candidates.from_body({'resource_providers': []})
