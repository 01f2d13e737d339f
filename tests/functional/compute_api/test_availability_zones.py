"""``/os-availability-zone`` (and ``/detail``) through the compute API, in-process.

Validated against tempest's schemas (unchanged since 2.1, checked at 2.1
and 2.69). Zones come from the services: a host in no aggregate zone is in
``nova``; a zone whose every service is disabled is listed not available.
"""
from __future__ import annotations

import pytest
from tempest.lib.api_schema.response.compute.v2_1 import availability_zone as schemas

from cellplane.objects import aggregates, compute_nodes
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'
MEMBER = 'u:p'
COMPUTE = compute_nodes.COMPUTE_BINARY


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('os-az'), cells=1, hosts_per_cell=2)
    yield cloud
    cloud.stop()


def _zones(api, version='2.1', token=MEMBER):
    return check(schemas.list_availability_zone_list, api.request(
        'GET', '/v2.1/os-availability-zone', token=token, version=version))['availabilityZoneInfo']


def _detail(api, version='2.1'):
    return check(schemas.list_availability_zone_list_detail, api.request(
        'GET', '/v2.1/os-availability-zone/detail', token=ADMIN,
        version=version))['availabilityZoneInfo']


@pytest.mark.parametrize('version', ['2.1', '2.69'])
def test_any_user_lists_the_default_zone_without_the_internal_one(api, version):
    assert _zones(api, version) == [
        {'zoneName': 'nova', 'zoneState': {'available': True}, 'hosts': None}]


def test_the_detail_is_for_admins_with_hosts_and_services(api):
    refused = api.request('GET', '/v2.1/os-availability-zone/detail', token=MEMBER)
    assert refused.status == 403
    assert refused.json['forbidden']['message'] == (
        "Policy doesn't allow os_compute_api:os-availability-zone:detail to be performed.")
    by_zone = {z['zoneName']: z for z in _detail(api, '2.69')}
    assert set(by_zone) == {'nova', 'internal'}
    hosts = by_zone['nova']['hosts']
    assert set(hosts) == {'cell1-host1', 'cell1-host2'}
    assert hosts['cell1-host1'][COMPUTE]['available'] is True
    assert hosts['cell1-host1'][COMPUTE]['active'] is True
    assert 'cell1-conductor' in by_zone['internal']['hosts']


def test_an_aggregate_zone_is_listed_and_unavailable_when_its_hosts_are_disabled(api):
    engine = api.services.api_engine
    aggregates.create(engine, 'rack-b', zone='az-b')
    aggregates.add_host(engine, 'rack-b', 'cell1-host2')
    try:
        assert [(z['zoneName'], z['zoneState']['available']) for z in _zones(api)] == [
            ('az-b', True), ('nova', True)]
        disabled = api.request('PUT', '/v2.1/os-services/disable',
                               {'host': 'cell1-host2', 'binary': COMPUTE}, token=ADMIN)
        assert disabled.status == 200, disabled.text
        assert [(z['zoneName'], z['zoneState']['available']) for z in _zones(api)] == [
            ('nova', True), ('az-b', False)]
        detail = {z['zoneName']: z for z in _detail(api)}
        assert detail['az-b']['hosts'] is None
        assert set(detail['nova']['hosts']) == {'cell1-host1'}
    finally:
        api.request('PUT', '/v2.1/os-services/enable',
                    {'host': 'cell1-host2', 'binary': COMPUTE}, token=ADMIN)
        aggregates.remove_host(engine, 'rack-b', 'cell1-host2')
        aggregates.delete(engine, 'rack-b')
