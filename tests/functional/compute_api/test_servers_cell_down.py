"""A cell whose database cannot be read, seen through the compute API at 2.1.

A cell is mapped whose database is a closed port (refused at once), with a
server mapped into it, beside the embedded cloud's real cell. Below 2.69
Nova leaves such servers out of lists and cannot show them: so does this
API, while the servers of the cell that answers are listed as usual.
"""
from __future__ import annotations

import socket
import uuid as uuidlib

import pytest
import sqlalchemy as sa
from tempest.lib.api_schema.response.compute.v2_1 import servers as schemas

from cellplane.db.api.models import cell_mappings as cell_mappings_table
from cellplane.db.api.models import instance_mappings
from cellplane.objects import cell_mappings, flavors
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


def _server_in_a_dead_cell(api, project: str) -> str:
    engine = api.services.api_engine
    cell = cell_mappings.create(
        engine, name='dead', transport_url='fake:///dead',
        database_connection=f'postgresql+psycopg2://x@127.0.0.1:{_closed_port()}/none')
    server_id = str(uuidlib.uuid4())
    with engine.begin() as conn:
        cell_id = conn.execute(sa.select(cell_mappings_table.c.id).where(
            cell_mappings_table.c.uuid == cell.uuid)).scalar_one()
        conn.execute(instance_mappings.insert().values(
            instance_uuid=server_id, cell_id=cell_id, project_id=project))
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
