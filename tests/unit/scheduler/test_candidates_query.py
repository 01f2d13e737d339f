"""Flavor resources, traits, zone and aggregates become the allocation-candidates query."""
from __future__ import annotations

import pytest

from rpc_schemas.request_spec import RequestedDestination
from scheduler.candidates_query import build_query
from scheduler.errors import InvalidFlavorExtraSpec
from tests.unit.scheduler.factories import flavor, spec


def _params(request_spec, **kwargs):
    return dict(build_query(request_spec, **kwargs).to_params())


def test_flavor_size_becomes_vcpu_memory_and_disk():
    query = build_query(spec(flavor=flavor(vcpus=2, memory_mb=2048, root_gb=20)))
    assert query.resources == {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 20}
    assert _params(spec(flavor=flavor(vcpus=2, memory_mb=2048, root_gb=20)))[
        'resources'] == 'DISK_GB:20,MEMORY_MB:2048,VCPU:2'


def test_zero_root_disk_is_not_asked_for():
    assert 'DISK_GB' not in build_query(spec(flavor=flavor(root_gb=0))).resources


def test_resources_extra_spec_overrides_the_flavor_size():
    query = build_query(spec(flavor=flavor(vcpus=2, extra_specs={'resources:VCPU': '8'})))
    assert query.resources['VCPU'] == 8


def test_resources_extra_spec_adds_a_custom_class():
    query = build_query(spec(flavor=flavor(extra_specs={'resources:CUSTOM_FPGA': '1'})))
    assert query.resources['CUSTOM_FPGA'] == 1


def test_resources_extra_spec_zero_removes_the_class():
    query = build_query(spec(flavor=flavor(extra_specs={'resources:DISK_GB': '0'})))
    assert 'DISK_GB' not in query.resources
    assert 'DISK_GB' not in _params(spec(flavor=flavor(extra_specs={'resources:DISK_GB': '0'})))['resources']


def test_required_and_forbidden_traits_become_one_required_parameter():
    request_spec = spec(flavor=flavor(extra_specs={
        'trait:HW_CPU_X86_AVX2': 'required', 'trait:CUSTOM_SLOW_DISK': 'forbidden',
        'trait:COMPUTE_STATUS_DISABLED': 'forbidden'}))
    assert _params(request_spec)['required'] == (
        'HW_CPU_X86_AVX2,!COMPUTE_STATUS_DISABLED,!CUSTOM_SLOW_DISK')


def test_without_traits_only_disabled_hosts_are_forbidden():
    assert _params(spec())['required'] == '!COMPUTE_STATUS_DISABLED'


def test_a_flavor_requiring_the_disabled_trait_is_refused():
    with pytest.raises(InvalidFlavorExtraSpec, match='never offered'):
        build_query(spec(flavor=flavor(extra_specs={'trait:COMPUTE_STATUS_DISABLED': 'required'})))


@pytest.mark.parametrize('key,value,match', [
    ('resources:VCPU', 'many', 'whole number'),
    ('resources:VCPU', '-1', 'whole number'),
    ('resources:vcpu', '1', 'resource class'),
    ('trait:HW_CPU_X86_AVX2', 'preferred', 'required" or "forbidden'),
    ('resources1:VCPU', '1', 'granular'),
])
def test_bad_extra_specs_are_refused_with_the_key_named(key, value, match):
    with pytest.raises(InvalidFlavorExtraSpec, match=match) as info:
        build_query(spec(flavor=flavor(extra_specs={key: value})))
    assert key in str(info.value)


def test_a_flavor_asking_for_nothing_is_refused():
    with pytest.raises(InvalidFlavorExtraSpec, match='no resources'):
        build_query(spec(flavor=flavor(vcpus=0, memory_mb=0, root_gb=0)))


def test_unrelated_extra_specs_are_left_to_the_filters():
    query = build_query(spec(flavor=flavor(
        extra_specs={'aggregate_instance_extra_specs:ssd': 'true'})))
    assert query.resources == {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 10}


def test_requested_aggregates_become_member_of():
    request_spec = spec(requested_destination=RequestedDestination(aggregates=['b', 'a']))
    assert _params(request_spec)['member_of'] == 'in:a,b'


def test_zone_known_as_aggregates_becomes_member_of():
    params = build_query(spec(availability_zone='az2'),
                         zone_aggregates={'az2': ['agg-az2']}).to_params()
    assert ('member_of', 'in:agg-az2') in params


def test_zone_not_known_as_aggregates_is_left_to_the_filter():
    params = build_query(spec(availability_zone='az3'),
                         zone_aggregates={'az2': ['agg-az2']}).to_params()
    assert 'member_of' not in dict(params)


def test_destination_aggregates_and_zone_are_two_member_of_parameters():
    params = build_query(
        spec(availability_zone='az2',
             requested_destination=RequestedDestination(aggregates=['rack1'])),
        zone_aggregates={'az2': ['agg-az2']}).to_params()
    assert [v for k, v in params if k == 'member_of'] == ['in:rack1', 'in:agg-az2']


def test_limit_is_passed_when_given():
    assert _params(spec(), limit=50)['limit'] == '50'
    assert 'limit' not in _params(spec())


def test_affinity_aggregates_become_member_of():
    params = build_query(spec(), affinity_aggregates=['rack-2', 'rack-1']).to_params()
    assert ('member_of', 'in:rack-1,rack-2') in params


def test_forbidden_aggregates_are_one_member_of_not_in_and_diagnosed_alone():
    from scheduler.candidates_query import build_query as build
    from tests.unit.scheduler.factories import spec as make_spec
    query = build(make_spec(), affinity_aggregates=['a'], required_aggregates=[['b']],
                  forbidden_aggregates=['d', 'c', 'd'])
    params = query.to_params()
    assert ('member_of', 'in:a') in params and ('member_of', 'in:b') in params
    assert ('member_of', '!in:c,d') in params
    names = [name for name, _ in query.one_constraint_at_a_time()]
    assert 'member_of !in:c,d' in names
