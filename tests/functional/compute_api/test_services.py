"""``/os-services`` through the compute API, in-process over the embedded control plane.

Answers are validated against tempest's schemas at the versions that
change them (2.1, 2.11: ``forced_down``, 2.53: uuids and ``PUT
/os-services/{uuid}``). A change is checked where it acts: the row in the
cell database, ``COMPUTE_STATUS_DISABLED`` on the host's provider in
Placement, the scheduler skipping a forced-down host.
"""
from __future__ import annotations

import datetime
import json
import socket
import uuid as uuidlib

import pytest
from tempest.lib.api_schema.response.compute.v2_1 import services as v21
from tempest.lib.api_schema.response.compute.v2_11 import services as v211
from tempest.lib.api_schema.response.compute.v2_53 import services as v253

from cellplane.objects import (
    aggregates,
    cell_mappings,
    compute_nodes,
    flavors,
    host_mappings,
    services,
)
from cellplane.traits import COMPUTE_STATUS_DISABLED
from rpc_schemas.compute_node import ComputeNodeRecord
from rpc_schemas.service_status import ServiceStatus
from scheduler import cell_nodes
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'
MEMBER = 'demo:demo'
COMPUTE = compute_nodes.COMPUTE_BINARY


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('os-services'), cells=2, hosts_per_cell=2)
    flavors.create(cloud.services.api_engine, name='small', vcpus=1, memory_mb=256, root_gb=1,
                   flavorid='small')
    yield cloud
    cloud.stop()


def _list(api, version, query=''):
    schema = v253 if version >= '2.53' else v211 if version >= '2.11' else v21
    return check(schema.list_services, api.request('GET', f'/v2.1/os-services{query}',
                                                   token=ADMIN, version=version))['services']


def _engine(api, host):
    return api.cloud.cell_engines['cell1' if host.startswith('cell1') else 'cell2']


def _row(api, host, binary=COMPUTE):
    return services.get_service(_engine(api, host), host, binary)


def _node(api, host):
    return [n.uuid for n in compute_nodes.list_with_service(_engine(api, host))
            if n.host == host][0]


def test_the_list_has_every_service_with_nova_fields_at_each_version(api):
    old = _list(api, '2.1')
    assert {(s['binary'], s['host']) for s in old} >= {
        (COMPUTE, 'cell1-host1'), (COMPUTE, 'cell2-host2'),
        ('cellplane-conductor', 'cell1-conductor')}
    assert all(isinstance(s['id'], int) and 'forced_down' not in s for s in old)
    by_host = {(s['binary'], s['host']): s for s in old}
    # A compute host in no zone is in the default zone; other services in 'internal'.
    assert by_host[(COMPUTE, 'cell1-host1')]['zone'] == 'nova'
    assert by_host[('cellplane-conductor', 'cell1-conductor')]['zone'] == 'internal'
    assert by_host[(COMPUTE, 'cell1-host1')]['state'] == 'up'
    assert all(s['forced_down'] is False for s in _list(api, '2.11'))
    new = _list(api, '2.53')
    assert all(uuidlib.UUID(s['id']) for s in new)
    assert len({s['id'] for s in new}) == len(new)


def test_the_list_filters_on_host_and_binary(api):
    listed = _list(api, '2.53', f'?host=cell2-host1&binary={COMPUTE}')
    assert [(s['host'], s['binary']) for s in listed] == [('cell2-host1', COMPUTE)]
    assert _list(api, '2.53', '?host=nowhere') == []


def test_a_host_in_an_aggregate_zone_is_listed_in_that_zone(api):
    engine = api.services.api_engine
    aggregates.create(engine, 'rack-a', zone='az-a')
    aggregates.add_host(engine, 'rack-a', 'cell2-host2')
    try:
        listed = _list(api, '2.1', '?host=cell2-host2')
        assert [s['zone'] for s in listed] == ['az-a']
    finally:
        aggregates.remove_host(engine, 'rack-a', 'cell2-host2')
        aggregates.delete(engine, 'rack-a')


@pytest.mark.parametrize('method, path, body', [
    ('GET', '/v2.1/os-services', None),
    ('PUT', '/v2.1/os-services/disable', {'host': 'cell1-host1', 'binary': COMPUTE}),
    ('DELETE', '/v2.1/os-services/1', None),
])
def test_a_member_is_refused_with_novas_403(api, method, path, body):
    answer = api.request(method, path, body, token=MEMBER)
    assert answer.status == 403, answer.text
    assert answer.json['forbidden']['code'] == 403
    assert 'os_compute_api:os-services:' in answer.json['forbidden']['message']


def test_disable_with_a_reason_and_enable_by_host_and_binary_below_2_53(api):
    body = {'host': 'cell1-host2', 'binary': COMPUTE, 'disabled_reason': 'maintenance'}
    done = check(v21.disable_log_reason, api.request(
        'PUT', '/v2.1/os-services/disable-log-reason', body, token=ADMIN))['service']
    assert done == {**body, 'status': 'disabled'}
    row = _row(api, 'cell1-host2')
    assert (row['disabled'], row['disabled_reason']) == (True, 'maintenance')
    # As cellplane-manage service disable: Placement stops offering the host.
    assert COMPUTE_STATUS_DISABLED in api.cloud.placement.get_traits(_node(api, 'cell1-host2'))
    listed = _list(api, '2.1', '?host=cell1-host2')[0]
    assert (listed['status'], listed['disabled_reason']) == ('disabled', 'maintenance')

    done = check(v21.enable_disable_service, api.request(
        'PUT', '/v2.1/os-services/enable', {'host': 'cell1-host2', 'binary': COMPUTE},
        token=ADMIN))['service']
    assert done == {'host': 'cell1-host2', 'binary': COMPUTE, 'status': 'enabled'}
    assert _row(api, 'cell1-host2')['disabled'] is False
    assert COMPUTE_STATUS_DISABLED not in api.cloud.placement.get_traits(
        _node(api, 'cell1-host2'))


def test_force_down_is_2_11_and_makes_the_service_down(api):
    body = {'host': 'cell2-host1', 'binary': COMPUTE, 'forced_down': True}
    old = api.request('PUT', '/v2.1/os-services/force-down', body, token=ADMIN, version='2.10')
    assert old.status == 400, old.text    # forced_down is not a field before 2.11
    done = check(v211.update_forced_down, api.request(
        'PUT', '/v2.1/os-services/force-down', body, token=ADMIN, version='2.11'))['service']
    assert done == body
    try:
        listed = _list(api, '2.11', '?host=cell2-host1')[0]
        assert (listed['forced_down'], listed['state']) == (True, 'down')
        # The scheduler reads the host down, however fresh its heartbeat.
        read = {r.host: r.service_up for r in cell_nodes.read_cell(
            _engine(api, 'cell2-host1'), 'cell2', service_down_time=60)}
        assert (read['cell2-host1'], read['cell2-host2']) == (False, True)
    finally:
        check(v211.update_forced_down, api.request(
            'PUT', '/v2.1/os-services/force-down', {**body, 'forced_down': 'false'},
            token=ADMIN, version='2.11'))
    assert _list(api, '2.11', '?host=cell2-host1')[0]['state'] == 'up'


@pytest.mark.parametrize('path, body, version, status, message', [
    ('force-down', {'host': 'cell1-host1', 'binary': COMPUTE}, '2.10', 404, 'Unknown action'),
    ('reboot', {'host': 'cell1-host1', 'binary': COMPUTE}, '2.1', 404, 'Unknown action'),
    ('disable', {'host': 'nowhere', 'binary': COMPUTE}, '2.1', 404,
     f'Could not find binary {COMPUTE} on host nowhere.'),
    ('disable', {'host': 'cell1-conductor', 'binary': 'cellplane-conductor'}, '2.1', 400,
     'Updating a cellplane-conductor service is not supported. Only cellplane-compute '
     'services can be updated.'),
    ('disable-log-reason', {'host': 'cell1-host1', 'binary': COMPUTE}, '2.1', 400,
     'Missing disabled reason field'),
    ('force-down', {'host': 'cell1-host1', 'binary': COMPUTE}, '2.11', 400,
     'Missing forced_down field'),
    ('disable', {'host': 'cell1-host1'}, '2.1', 400, 'binary'),
])
def test_bad_legacy_updates_are_novas_4xx_and_change_nothing(api, path, body, version, status,
                                                             message):
    before = _row(api, 'cell1-host1')
    answer = api.request('PUT', f'/v2.1/os-services/{path}', body, token=ADMIN, version=version)
    assert answer.status == status, answer.text
    key = 'itemNotFound' if status == 404 else 'badRequest'
    assert message in answer.json[key]['message']
    after = _row(api, 'cell1-host1')
    assert (after['disabled'], after['forced_down']) == (before['disabled'],
                                                         before['forced_down'])


def _uuid_of(api, host, binary=COMPUTE):
    return _row(api, host, binary)['uuid']


def test_from_2_53_a_service_is_updated_by_uuid_and_answered_whole(api):
    ident = _uuid_of(api, 'cell2-host2')
    path = f'/v2.1/os-services/{ident}'
    done = check(v253.update_service, api.request(
        'PUT', path, {'status': 'disabled', 'disabled_reason': 'disk swap'}, token=ADMIN,
        version='2.53'))['service']
    assert (done['id'], done['host'], done['status'], done['disabled_reason'],
            done['forced_down'], done['zone']) == (
        ident, 'cell2-host2', 'disabled', 'disk swap', False, 'nova')
    assert COMPUTE_STATUS_DISABLED in api.cloud.placement.get_traits(_node(api, 'cell2-host2'))
    done = check(v253.update_service, api.request(
        'PUT', path, {'status': 'enabled', 'forced_down': True}, token=ADMIN,
        version='2.69'))['service']
    assert (done['status'], done['disabled_reason'], done['forced_down'], done['state']) == (
        'enabled', None, True, 'down')
    assert COMPUTE_STATUS_DISABLED not in api.cloud.placement.get_traits(
        _node(api, 'cell2-host2'))
    check(v253.update_service, api.request('PUT', path, {'forced_down': False}, token=ADMIN,
                                           version='2.53'))
    assert _row(api, 'cell2-host2')['forced_down'] is False
    # The actions' names are uuids now: not one.
    answer = api.request('PUT', '/v2.1/os-services/disable',
                         {'host': 'cell2-host2', 'binary': COMPUTE}, token=ADMIN, version='2.53')
    assert answer.status == 400 and 'Invalid uuid disable' in answer.json['badRequest']['message']


@pytest.mark.parametrize('target, body, status, message', [
    ('unknown', {'status': 'disabled'}, 404, 'could not be found'),
    ('compute', {'status': 'enabled', 'disabled_reason': 'x'}, 400,
     "Specifying 'disabled_reason' with status 'enabled' is invalid."),
    ('compute', {}, 400, "No updates were requested. Fields 'status' or 'forced_down' "
                         "should be specified."),
    ('compute', {'disabled_reason': 'only a reason'}, 400, 'No updates were requested'),
    ('compute', {'status': 'off'}, 400, 'status'),
    ('compute', {'status': 'disabled', 'host': 'x'}, 400, 'host'),
    ('conductor', {'status': 'disabled'}, 400, 'Updating a cellplane-conductor service is '
                                               'not supported'),
])
def test_bad_2_53_updates_are_4xx_and_change_nothing(api, target, body, status, message):
    ident = {'unknown': str(uuidlib.uuid4()), 'compute': _uuid_of(api, 'cell1-host1'),
             'conductor': _uuid_of(api, 'cell1-conductor', 'cellplane-conductor')}[target]
    before = _row(api, 'cell1-host1')
    answer = api.request('PUT', f'/v2.1/os-services/{ident}', body, token=ADMIN,
                         version='2.53')
    assert answer.status == status, answer.text
    assert message in answer.json['itemNotFound' if status == 404 else 'badRequest']['message']
    assert _row(api, 'cell1-host1') == before


def _retired_host(api, host: str) -> str:
    """A compute host whose agent is gone: its service, node, provider, mapping and
    aggregate are left behind (the hollow agents would register a host of theirs again)."""
    engine = _engine(api, host)
    node = str(uuidlib.uuid4())
    services.record_heartbeat(engine, ServiceStatus(
        host=host, binary=COMPUTE, topic='compute', report_time=datetime.datetime.now(),
        version='1.0'))
    compute_nodes.upsert(engine, ComputeNodeRecord(uuid=node, host=host, nodename=host,
                                                   vcpus=4, memory_mb=4096, local_gb=40))
    api.cloud.placement.ensure_provider(node, host)
    api_engine = api.services.api_engine
    cell = cell_mappings.get(api_engine, 'cell2')
    with api_engine.begin() as conn:
        host_mappings.map_hosts(conn, cell_mappings.id_of(conn, cell.uuid), [host])
    aggregates.create(api_engine, f'agg-{host}')
    aggregates.add_host(api_engine, f'agg-{host}', host)
    return node


def test_delete_removes_a_compute_service_with_its_node_provider_and_mapping(api):
    node = _retired_host(api, 'cell2-retired')
    answer = api.request('DELETE', f'/v2.1/os-services/{_uuid_of(api, "cell2-retired")}',
                         token=ADMIN, version='2.53')
    assert answer.status == 204, answer.text
    assert _row(api, 'cell2-retired') is None
    assert compute_nodes.get_node(_engine(api, 'cell2-retired'), node) is None
    assert api.cloud.placement.get_provider(node) is None
    api_engine = api.services.api_engine
    assert 'cell2-retired' not in {h for h, _ in host_mappings.list_all(api_engine)}
    assert aggregates.get(api_engine, 'agg-cell2-retired').hosts == ()


def test_delete_refuses_a_host_that_has_servers(api):
    created = api.request('POST', '/v2.1/servers', {'server': {
        'name': 'busy', 'flavorRef': 'small', 'imageRef': 'cirros'}}, token='p-del-u:p-del')
    assert created.status == 202, created.text
    busy = api.wait_for_status(created.json['server']['id'], 'ACTIVE',
                               token=ADMIN)['OS-EXT-SRV-ATTR:host']
    answer = api.request('DELETE', f'/v2.1/os-services/{_uuid_of(api, busy)}', token=ADMIN,
                         version='2.53')
    assert answer.status == 409, answer.text
    assert answer.json['conflictingRequest']['message'] == (
        'Unable to delete compute service that is hosting instances. Migrate or delete the '
        'instances first.')
    assert _row(api, busy) is not None
    assert api.cloud.placement.get_provider(_node(api, busy)) is not None


@pytest.mark.parametrize('ident, version, status', [
    ('not-a-uuid', '2.53', 400), ('00000000-0000-4000-8000-0000000000aa', '2.53', 404),
    ('abc', '2.52', 400), ('999999', '2.1', 404),
    # Ids below 2.53 are per database: the first row of each is id 1.
    ('1', '2.1', 400),
])
def test_bad_deletes_are_4xx(api, ident, version, status):
    answer = api.request('DELETE', f'/v2.1/os-services/{ident}', token=ADMIN, version=version)
    assert answer.status == status, answer.text


ANY_BODY = [b'', b'not json', b'{"a": ', b'null', b'[]', b'"text"', b'1', b'{}', b'{"\x00": 1}',
            b'{"host": null, "binary": 5}', b'{"host": "x" , "binary": "y", "forced_down": []}',
            b'{"status": null}', b'{"forced_down": "perhaps"}',
            b'{"status": "disabled", "disabled_reason": ""}']


@pytest.mark.parametrize('path, version', [
    ('disable', '2.1'), ('disable-log-reason', '2.1'), ('force-down', '2.11'),
    ('enable', '2.52'), ('{uuid}', '2.53'), ('{uuid}', '2.69')])
@pytest.mark.parametrize('raw', ANY_BODY)
def test_a_body_of_the_wrong_shape_is_a_4xx_that_changes_nothing(api, path, version, raw):
    before = _row(api, 'cell1-host2')
    path = path.replace('{uuid}', before['uuid'])
    answer = api.request('PUT', f'/v2.1/os-services/{path}', raw=raw, token=ADMIN,
                         version=version)
    assert 400 <= answer.status < 500, (answer.status, answer.text)
    (detail,) = answer.json.values()
    assert detail['code'] == answer.status and '\n' not in detail['message']
    assert _row(api, 'cell1-host2') == before


def test_a_cell_that_cannot_be_read_is_left_out_below_2_69_and_unknown_from_it(api):
    probe = socket.socket()
    probe.bind(('127.0.0.1', 0))
    closed = probe.getsockname()[1]
    probe.close()
    engine = api.services.api_engine
    dead = cell_mappings.create(
        engine, name='dead', transport_url='fake:///dead',
        database_connection=f'postgresql+psycopg2://x@127.0.0.1:{closed}/none')
    with engine.begin() as conn:
        host_mappings.map_hosts(conn, cell_mappings.id_of(conn, dead.uuid), ['dead-host1'])
    try:
        below = _list(api, '2.68')
        assert 'dead-host1' not in {s['host'] for s in below}
        assert (COMPUTE, 'cell1-host2') in {(s['binary'], s['host']) for s in below}
        answer = api.request('GET', '/v2.1/os-services', token=ADMIN, version='2.69')
        listed = answer.json['services']
        assert [s for s in listed if s['host'] == 'dead-host1'] == [
            {'binary': COMPUTE, 'host': 'dead-host1', 'status': 'UNKNOWN'}]
        # The cells that answer are listed whole, as at 2.53.
        alive = [s for s in listed if s['host'] != 'dead-host1']
        check(v253.list_services, type(answer)(200, answer.headers,
                                               json.dumps({'services': alive})))
        assert api.request('GET', '/v2.1/os-services?host=dead-host1', token=ADMIN,
                           version='2.69').json['services'][0]['status'] == 'UNKNOWN'
    finally:
        with engine.begin() as conn:
            host_mappings.unmap(conn, 'dead-host1')
        cell_mappings.delete(engine, 'dead', force=True)
        api.services.cells.reload()


@pytest.mark.parametrize('path', ['os-services', 'os-hypervisors', 'os-availability-zone',
                                  'os-aggregates'])
def test_the_project_id_prefix_form_serves_the_same_routes(api, path):
    plain = api.request('GET', f'/v2.1/{path}', token=ADMIN, version='2.53')
    prefixed = api.request('GET', f'/v2.1/admin/{path}', token=ADMIN, version='2.53')
    assert plain.status == prefixed.status == 200
    key = {'os-availability-zone': 'availabilityZoneInfo'}.get(path, path[3:])
    assert len(prefixed.json[key]) == len(plain.json[key])
