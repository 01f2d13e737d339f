"""``/os-hypervisors`` through the compute API, in-process over the embedded control plane.

Answers are validated against tempest's schemas at the versions that change
them (2.1, 2.28: ``cpu_info`` an object, 2.33: paging links, 2.53: uuids and
servers). Usage is compared with Placement's own numbers for the host's
provider, after a server was really placed there.
"""
from __future__ import annotations

import urllib.parse
import uuid as uuidlib

import pytest
from tempest.lib.api_schema.response.compute.v2_1 import hypervisors as v21
from tempest.lib.api_schema.response.compute.v2_28 import hypervisors as v228
from tempest.lib.api_schema.response.compute.v2_33 import hypervisors as v233
from tempest.lib.api_schema.response.compute.v2_53 import hypervisors as v253

from cellplane.objects import flavors
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'
HOSTS = ['cell1-host1', 'cell1-host2', 'cell2-host1', 'cell2-host2']


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('os-hypervisors'), cells=2, hosts_per_cell=2)
    flavors.create(cloud.services.api_engine, name='small', vcpus=2, memory_mb=256, root_gb=3,
                   flavorid='small')
    created = cloud.request('POST', '/v2.1/servers', {'server': {
        'name': 'counted', 'flavorRef': 'small', 'imageRef': 'cirros'}}, token='u:p')
    assert created.status == 202, created.text
    cloud.server = cloud.wait_for_status(created.json['server']['id'], 'ACTIVE', token=ADMIN)
    yield cloud
    cloud.stop()


def _get(api, path, version, schema):
    return check(schema, api.request('GET', f'/v2.1/{path}', token=ADMIN, version=version))


def test_the_list_at_2_1_has_every_node_up_and_enabled(api):
    listed = _get(api, 'os-hypervisors', '2.1', v21.list_search_hypervisors)['hypervisors']
    assert sorted(h['hypervisor_hostname'] for h in listed) == HOSTS
    assert all(isinstance(h['id'], int) and (h['state'], h['status']) == ('up', 'enabled')
               for h in listed)


@pytest.mark.parametrize('version, schema', [
    ('2.1', v21.list_hypervisors_detail), ('2.27', v21.list_hypervisors_detail),
    ('2.28', v228.list_hypervisors_detail), ('2.33', v233.list_hypervisors_detail),
    ('2.53', v253.list_hypervisors_detail), ('2.69', v253.list_hypervisors_detail),
])
def test_the_detail_matches_tempest_at_each_version(api, version, schema):
    listed = _get(api, 'os-hypervisors/detail', version, schema)['hypervisors']
    assert len(listed) == len(HOSTS)
    assert isinstance(listed[0]['cpu_info'], dict if version >= '2.28' else str)
    if version >= '2.53':
        assert all(uuidlib.UUID(h['id']) and uuidlib.UUID(h['service']['id']) for h in listed)


def test_usage_is_the_hosts_provider_in_placement(api):
    host = api.server['OS-EXT-SRV-ATTR:host']
    listed = _get(api, 'os-hypervisors/detail', '2.53', v253.list_hypervisors_detail)
    by_host = {h['hypervisor_hostname']: h for h in listed['hypervisors']}
    shown = by_host[host]
    placement = api.cloud.placement
    inventory = placement.get_inventory(shown['id'])
    assert (shown['vcpus'], shown['memory_mb'], shown['local_gb']) == (
        inventory['VCPU'].total, inventory['MEMORY_MB'].total, inventory['DISK_GB'].total)
    assert (shown['vcpus_used'], shown['memory_mb_used'], shown['local_gb_used']) == (2, 256, 3)
    assert shown['free_ram_mb'] == shown['memory_mb'] - 256
    assert shown['running_vms'] == 1 and shown['service']['host'] == host
    idle = next(h for name, h in by_host.items() if name != host)
    assert (idle['vcpus_used'], idle['running_vms']) == (0, 0)


def test_with_servers_lists_a_hosts_servers_from_2_53(api):
    host = api.server['OS-EXT-SRV-ATTR:host']
    listed = _get(api, 'os-hypervisors?with_servers=true', '2.53',
                  v253.list_search_hypervisors)['hypervisors']
    having = {h['hypervisor_hostname']: h.get('servers') for h in listed}
    assert having[host] == [{'uuid': api.server['id'], 'name': 'counted'}]
    assert [n for n, s in having.items() if s] == [host]
    ident = next(h['id'] for h in listed if h['hypervisor_hostname'] == host)
    shown = _get(api, f'os-hypervisors/{ident}?with_servers=1', '2.53',
                 v253.get_hypervisor)['hypervisor']
    assert shown['servers'] == [{'uuid': api.server['id'], 'name': 'counted'}]
    plain = _get(api, 'os-hypervisors', '2.52', v233.list_search_hypervisors)['hypervisors']
    assert not any('servers' in h for h in plain)


def test_paging_with_limit_and_uuid_markers_walks_every_node_once(api):
    seen, path = [], 'os-hypervisors?limit=3'
    for _ in range(5):
        body = _get(api, path, '2.53', v253.list_search_hypervisors)
        seen.extend(h['hypervisor_hostname'] for h in body['hypervisors'])
        links = body.get('hypervisors_links')
        if not links:
            break
        query = urllib.parse.urlsplit(links[0]['href']).query
        path = f'os-hypervisors?{query}'
    assert sorted(seen) == HOSTS and len(seen) == len(HOSTS)
    # The last page is short: no link after it.
    assert 'hypervisors_links' not in body


def test_paging_below_2_53_pages_by_integer_id_in_the_first_cell_that_has_it(api):
    # Ids below 2.53 are per cell (Nova's reason for 2.53): the marker is found
    # in the first cell that has that id, as Nova looks for it.
    first = _get(api, 'os-hypervisors?limit=2', '2.33', v233.list_search_hypervisors)
    assert [h['hypervisor_hostname'] for h in first['hypervisors']] == HOSTS[:2]
    href = first['hypervisors_links'][0]['href']
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(href).query) == {
        'limit': ['2'], 'marker': [str(first['hypervisors'][-1]['id'])]}
    below = _get(api, 'os-hypervisors?limit=2', '2.32', v21.list_search_hypervisors)
    assert len(below['hypervisors']) == len(HOSTS)   # no paging before 2.33


def test_hostname_pattern_from_2_53(api):
    listed = _get(api, 'os-hypervisors?hypervisor_hostname_pattern=cell2', '2.53',
                  v253.list_search_hypervisors)['hypervisors']
    assert sorted(h['hypervisor_hostname'] for h in listed) == ['cell2-host1', 'cell2-host2']
    missing = api.request('GET', '/v2.1/os-hypervisors?hypervisor_hostname_pattern=zz',
                          token=ADMIN, version='2.53')
    assert missing.status == 404
    assert missing.json['itemNotFound']['message'] == "No hypervisor matching 'zz' could be found."
    paged = api.request('GET', '/v2.1/os-hypervisors?hypervisor_hostname_pattern=c&limit=1',
                        token=ADMIN, version='2.53')
    assert paged.status == 400 and 'Paging over hypervisors' in paged.text


def test_show_by_id_below_2_53_and_by_uuid_from_it(api):
    listed = _get(api, 'os-hypervisors', '2.1', v21.list_search_hypervisors)['hypervisors']
    shown = _get(api, f'os-hypervisors/{listed[0]["id"]}', '2.1', v21.get_hypervisor)
    assert shown['hypervisor']['hypervisor_hostname'] == listed[0]['hypervisor_hostname']
    uuids = _get(api, 'os-hypervisors', '2.53', v253.list_search_hypervisors)['hypervisors']
    shown = _get(api, f'os-hypervisors/{uuids[-1]["id"]}', '2.53', v253.get_hypervisor)
    assert shown['hypervisor']['id'] == uuids[-1]['id']


@pytest.mark.parametrize('path, version, status', [
    ('os-hypervisors/not-a-uuid', '2.53', 400),
    ('os-hypervisors/00000000-0000-4000-8000-0000000000aa', '2.53', 404),
    ('os-hypervisors/abc', '2.1', 404),
    ('os-hypervisors/99999', '2.1', 404),
    ('os-hypervisors?limit=-1', '2.33', 400),
    ('os-hypervisors?marker=99999', '2.33', 400),
    ('os-hypervisors?with_servers=maybe', '2.53', 400),
    ('os-hypervisors/cell1/search', '2.53', 404),
    ('os-hypervisors/nothing-like-it/search', '2.1', 404),
])
def test_bad_requests_are_novas_4xx(api, path, version, status):
    answer = api.request('GET', f'/v2.1/{path}', token=ADMIN, version=version)
    assert answer.status == status, answer.text


def test_search_and_servers_below_2_53(api):
    found = _get(api, 'os-hypervisors/cell1/search', '2.1',
                 v21.list_search_hypervisors)['hypervisors']
    assert sorted(h['hypervisor_hostname'] for h in found) == ['cell1-host1', 'cell1-host2']
    host = api.server['OS-EXT-SRV-ATTR:host']
    with_servers = _get(api, f'os-hypervisors/{host}/servers', '2.52',
                        v21.get_hypervisors_servers)['hypervisors']
    assert with_servers[0]['servers'] == [{'uuid': api.server['id'], 'name': 'counted'}]


def test_statistics_sum_the_enabled_nodes(api):
    stats = _get(api, 'os-hypervisors/statistics', '2.1',
                 v21.get_hypervisor_statistics)['hypervisor_statistics']
    detail = _get(api, 'os-hypervisors/detail', '2.1',
                  v21.list_hypervisors_detail)['hypervisors']
    assert stats['count'] == len(HOSTS)
    assert stats['vcpus'] == sum(h['vcpus'] for h in detail)
    assert (stats['vcpus_used'], stats['running_vms']) == (2, 1)


@pytest.mark.parametrize('path', ['os-hypervisors', 'os-hypervisors/detail',
                                  'os-hypervisors/statistics'])
def test_a_member_is_refused_with_novas_403(api, path):
    answer = api.request('GET', f'/v2.1/{path}', token='u:p')
    assert answer.status == 403
    assert 'os_compute_api:os-hypervisors:' in answer.json['forbidden']['message']


def test_uptime_is_novas_501_for_a_driver_without_it(api):
    ident = _get(api, 'os-hypervisors', '2.53', v253.list_search_hypervisors)['hypervisors'][0]['id']
    answer = api.request('GET', f'/v2.1/os-hypervisors/{ident}/uptime', token=ADMIN,
                         version='2.53')
    assert answer.status == 501
    assert answer.json == {'notImplemented': {
        'code': 501, 'message': 'Virt driver does not implement uptime function.'}}
    missing = api.request('GET', f'/v2.1/os-hypervisors/{uuidlib.uuid4()}/uptime',
                          token=ADMIN, version='2.53')
    assert missing.status == 404
    assert api.request('GET', f'/v2.1/os-hypervisors/{ident}/uptime',
                       token='u:p', version='2.53').status == 403
