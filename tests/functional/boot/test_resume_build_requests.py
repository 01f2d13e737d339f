"""Build requests left by a super conductor that died, or never picked up, are resumed.

The super conductor is the harness's, built by ``build_super_conductor``
(host ``super-1``, its heartbeat in the API database). The lost runs are
written the way a killed process leaves them: a lease held by another
process, a Placement claim, a half-written instance in a cell.
"""
from __future__ import annotations

import datetime
import uuid as uuidlib

import pytest
import sqlalchemy as sa

from cellplane.context import new_context
from cellplane.db.api.models import build_requests as build_requests_table
from cellplane.db.api.models import services as services_table
from cellplane.db.cell.models import instances
from cellplane.db.columns import utcnow
from cellplane.objects import build_request_leases, build_requests, cell_mappings, instance_mappings, services
from conductor.super import cell_writes
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.service_status import ServiceStatus
from tests.functional.boot.harness import TopLevel

CELLS = {'cell1': {'c1-a': {}, 'c1-b': {}}, 'cell2': {'c2-a': {}}}
BINARY = 'cellplane-conductor'


@pytest.fixture
def top(tmp_path):
    harness = TopLevel(tmp_path, CELLS)
    harness.flavor()
    yield harness
    harness.close()


def _asked(top, count=1, name='web'):
    """Build requests of one boot, as the API role writes them (no message sent)."""
    spec = RequestSpec(flavor=Flavor(name='small', vcpus=1, memory_mb=512, root_gb=10),
                       project_id='proj', user_id='alice', num_instances=count)
    asked = [Instance(uuid=str(uuidlib.uuid4()), project_id='proj', user_id='alice',
                      flavor=spec.flavor, display_name=f'{name}-{i}')
             for i in range(count)]
    build_requests.record(top.api_engine, asked, spec)
    return spec, asked


def _heartbeat(top, host, seconds_ago):
    """A super conductor on ``host`` last heard of ``seconds_ago``."""
    services.record_heartbeat(top.api_engine, ServiceStatus(
        host=host, binary=BINARY, topic='super_conductor', version='test',
        report_time=datetime.datetime.now(datetime.timezone.utc)))
    with top.api_engine.begin() as conn:
        conn.execute(services_table.update().where(
            services_table.c.host == host, services_table.c.binary == BINARY).values(
                last_seen_at=utcnow() - datetime.timedelta(seconds=seconds_ago)))


def _age(top, uuids, seconds):
    """Asked for (and leased, if leased) ``seconds`` ago."""
    then = utcnow() - datetime.timedelta(seconds=seconds)
    with top.api_engine.begin() as conn:
        conn.execute(build_requests_table.update().where(
            build_requests_table.c.instance_uuid.in_(uuids)).values(
                created_at=then, leased_at=sa.case(
                    (build_requests_table.c.leased_at.is_(None), None), else_=then)))


def _lost_run(top, spec, asked, holder):
    """What a super conductor killed between writing the cell and pointing the mapping leaves."""
    uuids = [i.uuid for i in asked]
    assert list(build_request_leases.lease_and_read(top.api_engine, uuids, holder)) == uuids
    host_lists = top.scheduler_api.select_destinations(new_context(), spec, uuids, 2)
    for instance, host_list in zip(asked, host_lists, strict=True):
        cell = top.cell_of_host(host_list[0].service_host)
        cell_writes.create_many(top.cell_engines[cell], [(instance, host_list)], spec,
                                request_id=None, scheduling_started=datetime.datetime.now())
    return host_lists


def _left_by_a_dead_super_conductor(top) -> str:
    """One instance a super conductor silent for 10 minutes claimed and wrote into a cell; its uuid."""
    spec, asked = _asked(top)
    _heartbeat(top, 'super-dead', seconds_ago=600)
    _lost_run(top, spec, asked, build_requests.Lease(host='super-dead', token='t-dead'))
    (uuid,) = [i.uuid for i in asked]
    return uuid


def _cell_rows(top, uuid):
    found = []
    for name, engine in top.cell_engines.items():
        with engine.connect() as conn:
            if conn.execute(sa.select(instances.c.uuid).where(
                    instances.c.uuid == uuid)).first():
                found.append(name)
    return found


def test_a_boot_left_by_a_dead_super_conductor_is_built_once_with_one_claim(top):
    resumption = top.super_conductor.resumption
    uuid = _left_by_a_dead_super_conductor(top)
    # Leased a moment ago: its holder was alive then, whatever its heartbeat.
    assert resumption.run() == 0
    _age(top, [uuid], 600)

    assert resumption.run() == 1

    top.recorder.wait_for(lambda: top.recorder.builds, 'the resumed build cast')
    (build,) = top.recorder.builds
    assert build.instance.uuid == uuid
    # One instance, in the cell of the host it was cast to; one claim, on that host.
    assert _cell_rows(top, uuid) == [top.cell_of_host(build.host)]
    claimed = top.placement.get_allocations(uuid).allocations
    assert list(claimed) == [build.host_list[0].compute_node_uuid]
    with pytest.raises(build_requests.BuildRequestNotFound):
        build_requests.get(top.api_engine, uuid)
    assert resumption.run() == 0


def test_a_boot_deleted_while_its_dead_holder_held_it_is_undone_then_removed(top):
    resumption = top.super_conductor.resumption
    uuid = _left_by_a_dead_super_conductor(top)

    assert build_requests.discard(top.api_engine, uuid) is True
    # Gone for the user at once; its claim and cell row wait for the resumer.
    assert build_requests.list_all(top.api_engine) == []
    assert top.placement.get_allocations(uuid).allocations != {}
    assert len(_cell_rows(top, uuid)) == 1
    _age(top, [uuid], 600)

    assert resumption.run() == 0     # nothing to schedule again

    assert top.placement.get_allocations(uuid).allocations == {}
    assert _cell_rows(top, uuid) == []
    assert top.recorder.builds == []
    with top.api_engine.connect() as conn:
        assert conn.execute(sa.select(build_requests_table).where(
            build_requests_table.c.instance_uuid == uuid)).first() is None
    assert resumption.run() == 0


def test_the_lease_of_a_live_super_conductor_is_left_alone(top):
    resumption = top.super_conductor.resumption
    spec, asked = _asked(top)
    alive = build_requests.Lease(host='super-2', token='t-2')
    _heartbeat(top, 'super-2', seconds_ago=1)
    _lost_run(top, spec, asked, alive)
    _age(top, [asked[0].uuid], 3600)

    assert resumption.run() == 0
    assert top.recorder.builds == []
    assert top.placement.get_allocations(asked[0].uuid).allocations != {}


def test_a_restarted_super_conductor_resumes_what_its_earlier_process_held(top):
    manager = top.super_conductor.manager
    resumption = top.super_conductor.resumption
    spec, asked = _asked(top)
    # Same host as the running one (whose heartbeat is fresh), earlier process.
    earlier = build_requests.Lease(host=manager.lease.host, token='t-before-restart')
    _lost_run(top, spec, asked, earlier)

    assert resumption.run() == 1
    top.recorder.wait_for(lambda: top.recorder.builds, 'the resumed build cast')
    assert [b.instance.uuid for b in top.recorder.builds] == [asked[0].uuid]
    assert len(_cell_rows(top, asked[0].uuid)) == 1


def test_a_request_never_picked_up_is_resumed_after_the_bound_and_its_late_message_skipped(top):
    manager = top.super_conductor.manager
    resumption = top.super_conductor.resumption
    spec, old = _asked(top, name='old')
    _, young = _asked(top, name='young')
    _age(top, [old[0].uuid], 3600)

    assert resumption.run() == 1
    top.recorder.wait_for(lambda: top.recorder.builds, 'the resumed build cast')
    assert [b.instance.uuid for b in top.recorder.builds] == [old[0].uuid]
    # Its message arrives at last: nothing is built twice.
    manager.schedule_and_build_instances(new_context(), spec, [old[0].uuid])
    assert [b.instance.uuid for b in top.recorder.builds] == [old[0].uuid]
    assert build_requests.get(top.api_engine, young[0].uuid).failed is False


def test_the_instances_of_one_boot_are_resumed_together(top):
    manager = top.super_conductor.manager
    resumption = top.super_conductor.resumption
    spec, asked = _asked(top, count=3)
    _heartbeat(top, 'super-dead', seconds_ago=600)
    dead = build_requests.Lease(host='super-dead', token='t-dead')
    assert list(build_request_leases.lease_and_read(top.api_engine, [i.uuid for i in asked],
                                              dead)) == [i.uuid for i in asked]
    _age(top, [i.uuid for i in asked], 600)
    calls = []
    real = top.scheduler_api.select_destinations
    manager._scheduler = type('Counting', (), {'select_destinations': staticmethod(
        lambda *a: calls.append(a[2]) or real(*a))})()

    assert resumption.run() == 3
    top.recorder.wait_for(lambda: len(top.recorder.builds) == 3, 'three builds')
    assert [sorted(c) for c in calls] == [sorted(i.uuid for i in asked)]


def test_a_super_conductor_taken_for_dead_does_not_place_what_was_taken_over(top):
    spec, asked = _asked(top)
    slow = build_requests.Lease(host='super-slow', token='t-slow')
    (uuid,) = [i.uuid for i in asked]
    assert list(build_request_leases.lease_and_read(top.api_engine, [uuid], slow)) == [uuid]
    orphan = build_request_leases.Orphan(instance_uuid=uuid, request_spec=spec, lease=slow,
                                   why='test')
    assert build_request_leases.take_over(top.api_engine, orphan,
                                    top.super_conductor.manager.lease)
    # The slow one's second take-over of the same state loses the compare-and-set.
    assert not build_request_leases.take_over(top.api_engine, orphan, slow)
    outcome = build_requests.place_many(
        top.api_engine, {uuid: top.cells['cell1'].uuid}, slow)[uuid]
    assert isinstance(outcome, build_requests.LeaseLost)
    assert 'super-1' in str(outcome)
    assert build_requests.get(top.api_engine, uuid).instance.uuid == uuid


def test_placing_a_boot_gives_each_instance_its_own_outcome_in_one_transaction(top):
    spec, asked = _asked(top, count=3)
    placed, deleted, taken = [i.uuid for i in asked]
    mine = build_requests.Lease(host='super-mine', token='t-mine')
    assert list(build_request_leases.lease_and_read(
        top.api_engine, [placed, deleted, taken], mine)) == [placed, deleted, taken]
    assert build_requests.discard(top.api_engine, deleted)
    assert build_request_leases.take_over(top.api_engine, build_request_leases.Orphan(
        instance_uuid=taken, request_spec=spec, lease=mine, why='test'),
        top.super_conductor.manager.lease)
    cell1, cell2 = top.cells['cell1'].uuid, top.cells['cell2'].uuid

    outcomes = build_requests.place_many(
        top.api_engine, {placed: cell1, deleted: cell2, taken: cell2}, mine)

    assert outcomes[placed] == build_requests.PLACED
    assert outcomes[deleted] == build_requests.DELETED
    assert isinstance(outcomes[taken], build_requests.LeaseLost)
    assert 'super-1' in str(outcomes[taken])
    with top.api_engine.connect() as conn:
        cell1_id = cell_mappings.id_of(conn, cell1)
    # The deleted one's mapping went with the user's delete.
    assert {uuid: cell for uuid, cell, _ in instance_mappings.cells_of(
        top.api_engine, [placed, deleted, taken])} == {placed: cell1_id, taken: None}
    # Only the placed one stopped being a build request.
    assert set(build_requests.get_many(top.api_engine, [placed, deleted, taken])) == {
        taken}


def test_a_boot_is_not_resumed_while_a_cell_cannot_be_cleaned(top):
    manager = top.super_conductor.manager
    resumption = top.super_conductor.resumption
    spec, asked = _asked(top)
    _age(top, [asked[0].uuid], 3600)
    cell_mappings.create(top.api_engine, name='lost', transport_url='memory://lost',
                         database_connection='postgresql+psycopg2://x@127.0.0.1:1/none')

    assert resumption.run() == 0
    assert top.recorder.builds == []
    # Given back: a later look finds it again.
    assert [o.instance_uuid for o in build_request_leases.orphans(
        top.api_engine, holder=manager.lease, binary=BINARY, service_down_time=60,
        unleased_for=60)] == [asked[0].uuid]
