"""instance_mappings.cell_uuids_of: each instance's cell by its uuid, in one read, on SQLite and PostgreSQL."""
from __future__ import annotations

import uuid

import pytest

from cellplane.objects import build_requests, cell_mappings, instance_mappings
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec

FLAVOR = Flavor(name='small', vcpus=1, memory_mb=256, root_gb=1, flavorid='small')


@pytest.fixture
def api_engine(either_api_engine):
    return either_api_engine


def _record(engine, count: int) -> list[str]:
    instances = [Instance(uuid=str(uuid.uuid4()), project_id='p', user_id='u', flavor=FLAVOR,
                          display_name=f'web-{i}', image_ref='img', launch_index=i)
                 for i in range(count)]
    build_requests.record(engine, instances, RequestSpec(
        flavor=FLAVOR, project_id='p', user_id='u', num_instances=count))
    return [i.uuid for i in instances]


def test_each_instance_is_named_with_its_cells_uuid_none_while_it_has_no_cell(api_engine):
    cell1 = cell_mappings.create(api_engine, name='cell1', transport_url='rabbit://a',
                                 database_connection='sqlite://')
    cell2 = cell_mappings.create(api_engine, name='cell2', transport_url='rabbit://b',
                                 database_connection='sqlite://')
    first, second, third = _record(api_engine, 3)
    with api_engine.begin() as conn:
        instance_mappings.point_many_at_cell(conn, [first], cell_mappings.id_of(conn, cell2.uuid))
        instance_mappings.point_many_at_cell(conn, [third], cell_mappings.id_of(conn, cell1.uuid))
    instance_mappings.queue_for_delete(api_engine, third)

    assert instance_mappings.cell_uuids_of(api_engine) == [
        (first, cell2.uuid, False), (second, None, False), (third, cell1.uuid, True)]
    assert instance_mappings.cell_uuids_of(api_engine, [third, second]) == [
        (second, None, False), (third, cell1.uuid, True)]
    assert instance_mappings.cell_uuids_of(api_engine, [str(uuid.uuid4())]) == []
    # The same answer as the two reads it replaces.
    by_id = cell_mappings.uuids_by_id(api_engine)
    assert instance_mappings.cell_uuids_of(api_engine) == [
        (u, None if cell_id is None else by_id[cell_id], queued)
        for u, cell_id, queued in instance_mappings.cells_of(api_engine)]
