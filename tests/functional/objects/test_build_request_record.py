"""build_requests.record writes each instance's build request, request spec and cell-less mapping.

On PostgreSQL the three INSERTs are one statement (two of them in a WITH);
elsewhere three. Either way every row is there, as asked, and the mappings'
ids follow the instances' order.
"""
from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from cellplane.db.api.models import instance_mappings
from cellplane.objects import build_requests, request_specs
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec

FLAVOR = Flavor(name='small', vcpus=1, memory_mb=256, root_gb=1, flavorid='small')


@pytest.fixture
def api_engine(either_api_engine):
    return either_api_engine


def _instances(count: int, project: str) -> list[Instance]:
    return [Instance(uuid=str(uuid.uuid4()), project_id=project, user_id='u', flavor=FLAVOR,
                     display_name=f'web-{i}', image_ref='img', launch_index=i)
            for i in range(count)]


@pytest.mark.parametrize('count', [1, 3, 40])
def test_every_row_is_written_as_asked(api_engine, count):
    spec = RequestSpec(flavor=FLAVOR, project_id='p', user_id='u', num_instances=count,
                       availability_zone='az1', requested_networks='none')
    asked = _instances(count, 'p')
    build_requests.record(api_engine, asked, spec)
    # A second create (the same count: the statement built for it is used again).
    again = _instances(count, 'q')
    build_requests.record(api_engine, again, spec)

    found = build_requests.get_many(api_engine, [i.uuid for i in asked + again])
    assert {u: r.instance for u, r in found.items()} == {i.uuid: i for i in asked + again}
    for instance in asked + again:
        assert request_specs.get(api_engine, instance.uuid) == spec
    with api_engine.connect() as conn:
        rows = conn.execute(sa.select(
            instance_mappings.c.instance_uuid, instance_mappings.c.cell_id,
            instance_mappings.c.project_id, instance_mappings.c.user_id,
            instance_mappings.c.queued_for_delete, instance_mappings.c.created_at)
            .order_by(instance_mappings.c.id)).all()
    assert [r.instance_uuid for r in rows] == [i.uuid for i in asked + again]
    assert [(r.cell_id, r.project_id, r.user_id, r.queued_for_delete) for r in rows] == (
        [(None, 'p', 'u', False)] * count + [(None, 'q', 'u', False)] * count)
    assert all(r.created_at is not None for r in rows)


def test_a_failed_write_leaves_nothing(api_engine):
    spec = RequestSpec(flavor=FLAVOR, project_id='p', user_id='u')
    first = _instances(1, 'p')
    build_requests.record(api_engine, first, spec)
    # The same uuid again: the build request's unique key refuses it, and the
    # other two rows of that create are not written either.
    clash = [first[0]]
    with pytest.raises(sa.exc.IntegrityError):
        build_requests.record(api_engine, clash, spec)
    with api_engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(
            instance_mappings)).scalar() == 1
