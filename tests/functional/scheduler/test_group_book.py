"""The group book's survey of members, read from a real API database and a real cell database."""
from __future__ import annotations

import uuid as uuidlib

import sqlalchemy as sa

from cellplane.cells.databases import CellDatabases
from cellplane.db import engines, migrate
from cellplane.db.cell.models import instances as instances_table
from cellplane.objects import (
    build_requests,
    cell_mappings,
    failure_domains,
    instance_mappings,
    instances,
)
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from scheduler.server_group.book import NAMES_SECONDS, ApiGroupBook

FLAVOR = Flavor(name='f', vcpus=1, memory_mb=512, root_gb=1)


def _migrated(url, history):
    engine = engines.create_engine(url)
    migrate.sync(history, engine)
    return engine


def _instance(name):
    return Instance(uuid=str(uuidlib.uuid4()), project_id='p', user_id='u', flavor=FLAVOR,
                    display_name=name)


def _api_and_cell(tmp_path):
    """A migrated API database and one cell's, the cell mapped: (api, cell, its mapping)."""
    api = _migrated(f'sqlite:///{tmp_path}/api.sqlite', 'api')
    cell_url = f'sqlite:///{tmp_path}/cell1.sqlite'
    cell = _migrated(cell_url, 'cell')
    mapping = cell_mappings.create(api, name='cell1', transport_url='memory://cell1',
                                   database_connection=cell_url)
    return api, cell, mapping


def _map_into(api, mapping, uuids):
    with api.begin() as conn:
        instance_mappings.point_many_at_cell(conn, list(uuids),
                                             cell_mappings.id_of(conn, mapping.uuid))


def test_the_survey_tells_settled_waiting_and_gone_members_apart(tmp_path):
    api, cell, mapping = _api_and_cell(tmp_path)
    names = ['active', 'moving', 'building', 'error', 'deleted', 'missing-row',
             'waiting', 'failed', 'queued']
    made = {name: _instance(name) for name in names}
    spec = RequestSpec(flavor=FLAVOR, project_id='p', user_id='u')
    build_requests.record(api, list(made.values()), spec)
    in_cell = ['active', 'moving', 'building', 'error', 'deleted', 'missing-row']
    rows = {'active': ('active', None, 'h1'), 'moving': ('active', 'resize_prep', 'h2'),
            'building': ('building', 'spawning', 'h3'), 'error': ('error', None, 'h4'),
            'deleted': ('deleted', None, 'h5')}
    _map_into(api, mapping, [made[n].uuid for n in in_cell])
    with cell.begin() as conn:
        for name, (vm_state, task_state, host) in rows.items():
            instances.create_instance(conn, made[name])
            conn.execute(instances_table.update().where(
                instances_table.c.uuid == made[name].uuid).values(
                    vm_state=vm_state, task_state=task_state, host=host))
    build_requests.fail(api, [made['failed'].uuid], 'NoValidHost')
    instance_mappings.queue_for_delete(api, made['queued'].uuid)
    never = str(uuidlib.uuid4())   # no mapping at all
    cells = CellDatabases(api)
    try:
        survey = ApiGroupBook(cells).survey([made[n].uuid for n in names] + [never])
    finally:
        cells.dispose()
        cell.dispose()
        api.dispose()
    by_uuid = {made[n].uuid: n for n in names}
    by_uuid[never] = 'never'
    assert {by_uuid[u]: host for u, host in survey.settled.items()} == {'active': 'h1'}
    assert {by_uuid[u] for u in survey.waiting} == {'waiting'}
    assert sorted(by_uuid[u] for u in survey.gone) == sorted(
        ['error', 'deleted', 'missing-row', 'failed', 'queued', 'never'])
    # Moving and building: neither, so Placement is asked where they are.


def test_a_cell_that_cannot_be_read_leaves_its_members_to_placement(tmp_path):
    api, cell, mapping = _api_and_cell(tmp_path)
    member = _instance('active')
    build_requests.record(api, [member], RequestSpec(flavor=FLAVOR, project_id='p', user_id='u'))
    _map_into(api, mapping, [member.uuid])
    with cell.begin() as conn:
        conn.execute(sa.text('DROP TABLE instances'))
    cell.dispose()
    cells = CellDatabases(api)
    try:
        survey = ApiGroupBook(cells).survey([member.uuid])
    finally:
        cells.dispose()
        api.dispose()
    assert (dict(survey.settled), survey.waiting, survey.gone) == ({}, frozenset(), frozenset())


def test_domain_names_are_read_again_only_after_they_have_been_kept_their_time(tmp_path):
    api = _migrated(f'sqlite:///{tmp_path}/api.sqlite', 'api')
    failure_domains.record_levels(api, ['rack'])
    failure_domains.create(api, level='rack', name='r1')
    now = [100.0]
    cells = CellDatabases(api)
    try:
        book = ApiGroupBook(cells, clock=lambda: now[0])
        assert list(book.domain_names('rack').values()) == ['r1']
        failure_domains.create(api, level='rack', name='r2')
        now[0] += NAMES_SECONDS - 1
        assert list(book.domain_names('rack').values()) == ['r1']
        now[0] += 1
        assert sorted(book.domain_names('rack').values()) == ['r1', 'r2']
    finally:
        cells.dispose()
        api.dispose()
