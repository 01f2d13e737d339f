"""What the super conductor writes into a cell for a multi-create, on SQLite and PostgreSQL.

The instances, plans, actions and events of one boot are written a table at
a time (one statement each, actions with ``insert ... returning``): every
instance must still get its own action, with its own host in its event.
"""
from __future__ import annotations

import datetime
import uuid as uuidlib

import sqlalchemy as sa

from cellplane.db.cell.models import instance_action_events, instance_actions
from cellplane.objects import build_plans, instances
from conductor.super import cell_writes
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection


def _selection(host: str) -> Selection:
    return Selection(service_host=host, nodename=host, compute_node_uuid=str(uuidlib.uuid4()),
                     cell_uuid='cell-1', allocation_request={'allocations': {}},
                     allocation_request_version='1.39')


def test_each_instance_of_a_multi_create_gets_its_own_plan_action_and_schedule_event(
        either_cell_engine):
    flavor = Flavor(name='small', vcpus=1, memory_mb=512, root_gb=10)
    spec = RequestSpec(flavor=flavor, project_id='proj', user_id='alice', num_instances=3)
    hosts = ['h-a', 'h-b', 'h-c']
    placed = [(Instance(uuid=str(uuidlib.uuid4()), project_id='proj', user_id='alice',
                        flavor=flavor, display_name=f'web-{i}', host=host, node=host,
                        cell_uuid='cell-1'),
               [_selection(host), _selection('h-spare')])
              for i, host in enumerate(hosts)]

    cell_writes.create_many(either_cell_engine, placed, spec, request_id='req-1',
                            scheduling_started=datetime.datetime.now(datetime.timezone.utc))

    with either_cell_engine.connect() as conn:
        rows = conn.execute(
            sa.select(instance_actions.c.instance_uuid, instance_actions.c.request_id,
                      instance_action_events.c.host, instance_action_events.c.reason)
            .select_from(instance_actions.join(
                instance_action_events,
                instance_action_events.c.action_id == instance_actions.c.id))).all()
        assert sorted((r.instance_uuid, r.host) for r in rows) == sorted(
            (instance.uuid, instance.host) for instance, _ in placed)
        assert {r.request_id for r in rows} == {'req-1'}
        assert all(r.reason.startswith(f'claimed {r.host}/{r.host}; alternates: h-spare')
                   for r in rows)
        for instance, _ in placed:
            assert instances.get_instance(conn, instance.uuid)['host'] == instance.host
            assert build_plans.owner(conn, instance.uuid).host == instance.host
