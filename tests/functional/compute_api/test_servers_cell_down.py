"""A cell whose database cannot be read, seen through the compute API below and from 2.69.

A cell is mapped whose database is a closed port (refused at once), with a
server mapped into it, beside the embedded cloud's real cell. Below 2.69
Nova leaves such servers out of lists and cannot show them: so does this
API, while the servers of the cell that answers are listed as usual. From
2.69 they are partial records with status UNKNOWN (Nova's api-guide,
"Handling Down Cells"; tempest has no 2.69 module, so the schemas below are
written from it), listed only when no filter or paging but ``all_tenants``
is asked.
"""
from __future__ import annotations

import socket
import uuid as uuidlib

import pytest
import sqlalchemy as sa
from tempest.lib.api_schema.response.compute.v2_1 import servers as schemas

from cellplane.db.api.models import cell_mappings as cell_mappings_table
from cellplane.db.api.models import instance_mappings
from cellplane.objects import cell_mappings, flavors, request_specs
from cellplane_api import servers
from rpc_schemas.request_spec import RequestSpec
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'


def _closed_port() -> int:
    probe = socket.socket()
    probe.bind(('127.0.0.1', 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('compute-api'), cells=1, hosts_per_cell=1)
    flavors.create(cloud.services.api_engine, name='small', vcpus=1, memory_mb=128,
                   flavorid='small')
    yield cloud
    cloud.stop()


def _server_in_a_dead_cell(api, project: str, cell_name: str = 'dead') -> str:
    engine = api.services.api_engine
    cell = cell_mappings.create(
        engine, name=cell_name, transport_url=f'fake:///{cell_name}',
        database_connection=f'postgresql+psycopg2://x@127.0.0.1:{_closed_port()}/none')
    server_id = str(uuidlib.uuid4())
    with engine.begin() as conn:
        cell_id = conn.execute(sa.select(cell_mappings_table.c.id).where(
            cell_mappings_table.c.uuid == cell.uuid)).scalar_one()
        conn.execute(instance_mappings.insert().values(
            instance_uuid=server_id, cell_id=cell_id, project_id=project,
            user_id=f'{project}-user'))
    api.services.cells.reload()
    return server_id


def test_a_server_of_a_dead_cell_is_left_out_of_lists_and_cannot_be_shown(api):
    alive = api.request('POST', '/v2.1/servers', {'server': {'name': 'alive',
                                                             'flavorRef': 'small'}})
    alive_id = alive.json['server']['id']
    api.wait_for_status(alive_id, 'ACTIVE')
    dead_id = _server_in_a_dead_cell(api, 'demo')

    for token, query in (('demo:demo', ''), (ADMIN, '?all_tenants=1')):
        listed = check(schemas.list_servers_detail, api.request(
            'GET', f'/v2.1/servers/detail{query}', token=token))
        assert [s['id'] for s in listed['servers']] == [alive_id]
    shown = api.request('GET', f'/v2.1/servers/{dead_id}')
    assert shown.status == 500
    assert shown.json == {'computeFault': {
        'code': 500,
        'message': 'Cell dead is not responding and hence instance info is not available.'}}


_LINKS = {'type': 'array', 'items': {'type': 'object'}, 'minItems': 2}


def _partial(*required: str) -> dict:
    """A partial server with exactly ``required`` (Nova's _show_from_down_cell)."""
    types = {'id': {'type': 'string'}, 'status': {'enum': ['UNKNOWN']},
             'tenant_id': {'type': 'string'}, 'created': {'type': 'string'},
             'links': _LINKS, 'image': {'type': ['string', 'object']},
             'flavor': {'type': 'object'}, 'OS-EXT-AZ:availability_zone': {'type': 'string'},
             'OS-EXT-STS:power_state': {'enum': [0]}, 'user_id': {'type': 'string'}}
    return {'type': 'object', 'properties': {k: types[k] for k in required},
            'required': list(required), 'additionalProperties': False}


def _body(item: dict, key: str = 'servers') -> dict:
    return {'status_code': [200], 'response_body': {
        'type': 'object', 'properties': {key: {'type': 'array', 'items': {'anyOf': [
            item, {'type': 'object', 'required': ['name']}]}} if key == 'servers' else item,
            'servers_links': _LINKS}, 'required': [key], 'additionalProperties': False}}


LIST_V269 = _body(_partial('id', 'status', 'links'))
DETAIL_V269 = _body(_partial('id', 'status', 'tenant_id', 'created', 'links'))
SHOW_V269 = _body(_partial('id', 'status', 'tenant_id', 'created', 'links', 'image', 'flavor',
                           'OS-EXT-AZ:availability_zone', 'OS-EXT-STS:power_state',
                           'user_id'), key='server')


def test_from_2_69_a_server_of_a_dead_cell_is_a_partial_unknown_record(api):
    project, token = 'down-269', 'down-269-user:down-269'
    alive = api.request('POST', '/v2.1/servers', {'server': {'name': 'alive',
                                                             'flavorRef': 'small'}},
                        token=token).json['server']['id']
    api.wait_for_status(alive, 'ACTIVE', token=token)
    dead_id = _server_in_a_dead_cell(api, project, cell_name='dead-269')
    engine = api.services.api_engine
    spec = RequestSpec(flavor=servers.flavor_payload(flavors.get(engine, 'small')),
                       project_id=project, user_id=f'{project}-user', availability_zone='zone-a',
                       image_ref='cirros')
    with engine.begin() as conn:
        request_specs.insert(conn, dead_id, spec)

    listed = check(LIST_V269, api.request('GET', '/v2.1/servers', token=token,
                                          version='2.69'))['servers']
    # The partial records of cells that cannot be read come first, as in Nova.
    assert [s['id'] for s in listed] == [dead_id, alive]
    assert listed[0]['status'] == 'UNKNOWN' and 'name' not in listed[0]
    detail = check(DETAIL_V269, api.request('GET', '/v2.1/servers/detail', token=token,
                                            version='2.69'))['servers']
    assert (detail[0]['id'], detail[0]['tenant_id']) == (dead_id, project)
    as_admin = check(DETAIL_V269, api.request(
        'GET', '/v2.1/servers/detail?all_tenants=1', token=ADMIN, version='2.69'))['servers']
    assert dead_id in [s['id'] for s in as_admin]
    # deleted=False (what openstackclient sends) is Nova's default, not a filter.
    as_osc = check(DETAIL_V269, api.request(
        'GET', '/v2.1/servers/detail?all_tenants=True&deleted=False', token=ADMIN,
        version='2.69'))['servers']
    assert dead_id in [s['id'] for s in as_osc if s['status'] == 'UNKNOWN']
    # A filter or paging: Nova cannot answer it for a cell it cannot read, and skips it.
    for query in ('name=alive', 'limit=5', 'status=ACTIVE'):
        answer = api.request('GET', f'/v2.1/servers/detail?{query}', token=token,
                             version='2.69')
        assert [s['id'] for s in answer.json['servers']] == [alive], query
    shown = check(SHOW_V269, api.request('GET', f'/v2.1/servers/{dead_id}', token=token,
                                         version='2.69'))['server']
    assert shown['flavor'] == {'vcpus': 1, 'ram': 128, 'disk': 0, 'ephemeral': 0, 'swap': 0,
                               'original_name': 'small', 'extra_specs': {}}
    assert (shown['OS-EXT-AZ:availability_zone'], shown['user_id']) == ('zone-a',
                                                                         f'{project}-user')
    assert shown['image'] == {'id': 'cirros', 'links': [
        {'rel': 'bookmark', 'href': 'http://localhost/images/cirros'}]}
    # Below 2.69 the same server is still left out and cannot be shown.
    assert api.request('GET', f'/v2.1/servers/{dead_id}', token=token,
                       version='2.68').status == 500
    assert dead_id not in [s['id'] for s in api.request(
        'GET', '/v2.1/servers', token=token, version='2.68').json['servers']]
    # Another project's server stays hidden, down cell or not.
    assert api.request('GET', f'/v2.1/servers/{dead_id}', version='2.69').status == 404
