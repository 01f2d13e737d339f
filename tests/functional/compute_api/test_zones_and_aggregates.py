"""``/os-availability-zone`` (and ``/detail``) and ``/os-aggregates`` (read) through the compute API.

Validated against tempest's schemas (zones: unchanged since 2.1, checked at
2.1 and 2.69; aggregates: 2.1 and 2.41). Zones come from the services: a
host in no aggregate zone is in ``nova``; a zone whose every service is
disabled is listed not available. Aggregates are listed and shown as
``openstack hypervisor show`` reads them.
"""
from __future__ import annotations

import pytest
from tempest.lib.api_schema.response.compute.v2_1 import aggregates as aggregate_v21
from tempest.lib.api_schema.response.compute.v2_1 import availability_zone as schemas
from tempest.lib.api_schema.response.compute.v2_41 import aggregates as aggregate_v241

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


def test_aggregates_are_listed_and_shown_as_nova_does_with_uuid_from_2_41(api):
    engine = api.services.api_engine
    aggregates.create(engine, 'rack-a', zone='az-a')
    aggregates.add_host(engine, 'rack-a', 'cell1-host1')
    aggregates.create(engine, 'plain', properties={'ssd': 'true'})
    try:
        old = check(aggregate_v21.list_aggregates,
                    api.request('GET', '/v2.1/os-aggregates', token=ADMIN))['aggregates']
        assert [(a['name'], a['availability_zone'], a['hosts'], a['metadata'])
                for a in old] == [('rack-a', 'az-a', ['cell1-host1'], {'availability_zone': 'az-a'}),
                                  ('plain', None, [], {'ssd': 'true'})]
        new = check(aggregate_v241.list_aggregates, api.request(
            'GET', '/v2.1/os-aggregates', token=ADMIN, version='2.41'))['aggregates']
        assert new[0]['uuid'] == aggregates.get(engine, 'rack-a').uuid
        shown = check(aggregate_v241.get_aggregate, api.request(
            'GET', f'/v2.1/os-aggregates/{new[1]["id"]}', token=ADMIN, version='2.69'))
        assert shown['aggregate']['name'] == 'plain'
    finally:
        aggregates.remove_host(engine, 'rack-a', 'cell1-host1')
        aggregates.delete(engine, 'rack-a')
        aggregates.delete(engine, 'plain')


@pytest.mark.parametrize('path, token, status', [
    ('/v2.1/os-aggregates', MEMBER, 403), ('/v2.1/os-aggregates/1', MEMBER, 403),
    ('/v2.1/os-aggregates/999', ADMIN, 404), ('/v2.1/os-aggregates/rack-a', ADMIN, 400)])
def test_aggregate_refusals_are_novas(api, path, token, status):
    assert api.request('GET', path, token=token).status == status
