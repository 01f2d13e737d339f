"""Boot flow steps 1-4 in one process: API role, super conductor, scheduler, Placement, cells.

Each test goes through the real RPC casts and calls (in-memory buses that
copy messages like RabbitMQ) and checks what each level then holds: the
API database, the cell databases, Placement, and the casts compute agents
received.
"""
from __future__ import annotations

import collections
import dataclasses
import datetime
import uuid as uuidlib

import pytest
import sqlalchemy as sa

from cellplane.context import new_context
from cellplane.db.api.models import build_requests as build_requests_table
from cellplane.db.api.models import cell_mappings as cell_mappings_table
from cellplane.db.api.models import host_mappings as host_mappings_table
from cellplane.db.api.models import instance_mappings
from cellplane.db.cell.models import instance_action_events, instance_actions, instances
from cellplane.objects import build_requests, cell_mappings
from cellplane_api import servers
from conductor.super import cell_writes
from conductor.super.cell_writes import EVENT_SCHEDULE
from conductor.super.manager import SuperConductorManager
from placement.client import PlacementUnreachable

# isort: split
import oslo_messaging as messaging

from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from tests.functional.boot.harness import TopLevel, node_uuid

CELLS = {
    'cell1': {'c1-a': {}, 'c1-b': {}, 'c1-c': {}},
    'cell2': {'c2-a': {}, 'c2-b': {}},
}


@pytest.fixture
def top(tmp_path):
    harness = TopLevel(tmp_path, CELLS)
    yield harness
    harness.close()


def _create(top, count=1, flavor='small', name='web'):
    return servers.create(top.api_engine, top.conductor_api, new_context(),
                          name=name, flavor=flavor, count=count, project_id='proj',
                          user_id='alice')


def _mapped_cells(top, uuids):
    with top.api_engine.connect() as conn:
        rows = conn.execute(
            sa.select(instance_mappings.c.instance_uuid, cell_mappings_table.c.name)
            .select_from(instance_mappings.outerjoin(
                cell_mappings_table, cell_mappings_table.c.id == instance_mappings.c.cell_id))
            .where(instance_mappings.c.instance_uuid.in_(uuids))).all()
    return dict(rows)


def test_count_n_places_each_instance_in_the_cell_of_its_claimed_host(top):
    top.flavor('small', vcpus=2, memory_mb=1024, root_gb=10)
    uuids = _create(top, count=4)
    top.recorder.wait_for(lambda: len(top.recorder.builds) == 4, '4 builds cast')

    builds = {b.instance.uuid: b for b in top.recorder.builds}
    assert set(builds) == set(uuids)
    mapped = _mapped_cells(top, uuids)
    for uuid, build in builds.items():
        chosen = build.host_list[0]
        # Cast to the claimed host, over the bus of that host's cell.
        assert build.host == chosen.service_host
        cell = top.cell_of_host(chosen.service_host)
        assert chosen.cell_uuid == top.cells[cell].uuid
        assert mapped[uuid] == cell
        # Alternates: max_attempts 3 -> up to 2, unclaimed, same cell, not the chosen host.
        alternates = build.host_list[1:]
        assert 1 <= len(alternates) <= 2
        assert {top.cell_of_host(s.service_host) for s in alternates} == {cell}
        assert chosen.service_host not in {s.service_host for s in alternates}
        with top.cell_engines[cell].connect() as conn:
            row = conn.execute(sa.select(instances).where(
                instances.c.uuid == uuid)).mappings().one()
        assert (row['host'], row['vm_state'], row['display_name']) == \
            (chosen.service_host, 'building', build.instance.display_name)
        assert build.instance.cell_uuid == chosen.cell_uuid
        # Only the claimed host holds the instance's allocation.
        claimed = top.placement.get_allocations(uuid).allocations
        assert claimed == {node_uuid(chosen.service_host):
                           {'VCPU': 2, 'MEMORY_MB': 1024, 'DISK_GB': 10}}
    assert sorted(b.instance.display_name for b in builds.values()) == \
        ['web-1', 'web-2', 'web-3', 'web-4']
    assert top.placement.usages('proj') == {'INSTANCE': {
        'VCPU': 8, 'MEMORY_MB': 4096, 'DISK_GB': 40, 'consumer_count': 4}}
    with top.api_engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(
            build_requests_table)).scalar() == 0


def test_the_cell_records_the_scheduling_as_the_first_event_of_the_create_action(top):
    top.flavor()
    (uuid,) = _create(top)
    top.recorder.wait_for(lambda: top.recorder.builds, 'the build cast')
    build = top.recorder.builds[0]
    cell = top.cell_of_host(build.host)
    with top.cell_engines[cell].connect() as conn:
        action = conn.execute(sa.select(instance_actions).where(
            instance_actions.c.instance_uuid == uuid)).mappings().one()
        (event,) = conn.execute(sa.select(instance_action_events).where(
            instance_action_events.c.action_id == action['id'])).mappings().all()
    assert action['action'] == 'create'
    assert action['user_id'] == 'alice'
    assert (event['event'], event['host'], event['result']) == \
        (EVENT_SCHEDULE, build.host, 'ok')
    for alternate in build.host_list[1:]:
        assert alternate.service_host in event['reason']
    shown = servers.show(top.api_engine, top.cell_dbs, uuid)
    assert (shown.status, shown.cell, shown.host) == ('BUILD', cell, build.host)
    assert [e.event for e in shown.events] == [EVENT_SCHEDULE]


def test_no_valid_host_keeps_every_instance_as_a_failed_build_request_with_the_reason(top):
    top.flavor('huge', vcpus=64, memory_mb=1024, root_gb=10)
    top.flavor('small')
    uuids = _create(top, count=2, flavor='huge', name='big')
    top.wait_until(lambda: all(r.failed for r in build_requests.get_many(
        top.api_engine, uuids).values()), 'both build requests marked failed')

    listed = {s.uuid: s for s in servers.list_servers(top.api_engine, top.cell_dbs)}
    assert set(listed) == set(uuids)
    for uuid in uuids:
        assert listed[uuid].status == 'ERROR'
        assert listed[uuid].cell is None
        assert 'NoValidHost' in listed[uuid].fault
        assert 'VCPU' in listed[uuid].fault or 'candidates' in listed[uuid].fault
        assert top.placement.get_allocations(uuid).allocations == {}
    assert _mapped_cells(top, uuids) == {u: None for u in uuids}
    assert top.recorder.builds == []
    for engine in top.cell_engines.values():
        with engine.connect() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(instances)).scalar() == 0
    # A failed request goes away with a delete; nothing was claimed for it.
    assert 'had not reached a cell' in servers.delete(
        top.api_engine, top.cell_dbs, top.compute_api_for, new_context(), uuids[0])
    assert [s.uuid for s in servers.list_servers(top.api_engine, top.cell_dbs)] == [uuids[1]]


def test_multi_create_that_does_not_fit_places_none(top):
    # 5 hosts of 8 VCPU: 6 instances of 8 VCPU cannot all be placed.
    top.flavor('whole-host', vcpus=8, memory_mb=512, root_gb=10)
    uuids = _create(top, count=6, flavor='whole-host')
    top.wait_until(lambda: all(r.failed for r in build_requests.get_many(
        top.api_engine, uuids).values()), 'the six build requests marked failed')
    for uuid in uuids:
        assert top.placement.get_allocations(uuid).allocations == {}
    assert top.placement.usages('proj') == {}
    assert top.recorder.builds == []


def test_delete_of_a_placed_instance_casts_terminate_to_its_host_on_its_cell_bus(top):
    top.flavor()
    (uuid,) = _create(top)
    top.recorder.wait_for(lambda: top.recorder.builds, 'the build cast')
    host = top.recorder.builds[0].host
    done = servers.delete(top.api_engine, top.cell_dbs, top.compute_api_for,
                          new_context(), uuid)
    assert host in done
    top.recorder.wait_for(lambda: top.recorder.terminated, 'terminate cast')
    assert top.recorder.terminated == [(host, uuid)]
    with top.api_engine.connect() as conn:
        assert conn.execute(sa.select(instance_mappings.c.queued_for_delete).where(
            instance_mappings.c.instance_uuid == uuid)).scalar() is True


class _DeletesWhileScheduling:
    """The real scheduler client; the user deletes one instance before its answer arrives."""

    def __init__(self, scheduler, api_engine, victim):
        self._scheduler = scheduler
        self._api_engine = api_engine
        self._victim = victim

    def select_destinations(self, ctxt, spec, uuids, num_alternates):
        answer = self._scheduler.select_destinations(ctxt, spec, uuids, num_alternates)
        assert build_requests.discard(self._api_engine, self._victim)
        return answer


def test_instance_deleted_while_being_scheduled_is_withdrawn_and_unclaimed(top):
    top.flavor()
    spec_uuids = _create(top, count=2)
    top.recorder.wait_for(lambda: len(top.recorder.builds) == 2, 'first request built')
    # A second request, handled directly by a super conductor whose scheduler
    # answer arrives after the user deleted one of its instances.
    spec = build_requests.request_spec(top.api_engine, spec_uuids[0])
    keep, victim = (Instance(uuid=u, project_id='proj', user_id='alice',
                             flavor=spec.flavor, display_name=n)
                    for u, n in (('00000000-0000-4000-8000-000000000001', 'keep'),
                                 ('00000000-0000-4000-8000-000000000002', 'victim')))
    build_requests.record(top.api_engine, [keep, victim], spec)
    manager = SuperConductorManager(
        api_engine=top.api_engine, cells=top.cell_dbs,
        scheduler=_DeletesWhileScheduling(top.scheduler_api, top.api_engine, victim.uuid),
        compute_api_for=top.compute_api_for, placement=top.placement, max_attempts=3)
    manager.schedule_and_build_instances(new_context(), spec, [keep.uuid, victim.uuid])

    top.recorder.wait_for(lambda: len(top.recorder.builds) == 3, 'the kept one built')
    assert top.recorder.builds[-1].instance.uuid == keep.uuid
    assert top.placement.get_allocations(victim.uuid).allocations == {}
    assert top.placement.get_allocations(keep.uuid).allocations != {}
    for engine in top.cell_engines.values():
        with engine.connect() as conn:
            assert conn.execute(sa.select(instances).where(
                instances.c.uuid == victim.uuid)).first() is None
            assert conn.execute(sa.select(instance_actions).where(
                instance_actions.c.instance_uuid == victim.uuid)).first() is None
    assert victim.uuid not in _mapped_cells(top, [victim.uuid])
    with top.api_engine.connect() as conn:    # marked deleted, then removed
        assert conn.execute(sa.select(build_requests_table).where(
            build_requests_table.c.instance_uuid == victim.uuid)).first() is None


def test_list_shows_cell_instances_and_pending_requests_in_creation_order(top):
    top.flavor()
    top.flavor('huge', vcpus=64, memory_mb=512, root_gb=1)
    placed = _create(top, count=2, name='ok')
    top.recorder.wait_for(lambda: len(top.recorder.builds) == 2, 'two builds')
    failed = _create(top, flavor='huge', name='no')
    top.wait_until(lambda: build_requests.get(top.api_engine, failed[0]).failed,
                   'the huge one failed')
    listed = servers.list_servers(top.api_engine, top.cell_dbs)
    assert [s.uuid for s in listed] == placed + failed
    assert collections.Counter(s.status for s in listed) == {'BUILD': 2, 'ERROR': 1}
    assert all(s.cell for s in listed[:2]) and listed[2].cell is None


def test_an_unreadable_cell_shows_its_servers_as_unknown_and_the_others_normally(top):
    top.flavor()
    (uuid,) = _create(top)
    top.recorder.wait_for(lambda: top.recorder.builds, 'the build cast')
    # An instance mapped to a cell whose database server is gone.
    lost = cell_mappings.create(top.api_engine, name='lost', transport_url='memory://lost',
                           database_connection='postgresql+psycopg2://x@127.0.0.1:1/none')
    with top.api_engine.begin() as conn:
        cell_id = conn.execute(sa.select(cell_mappings_table.c.id).where(
            cell_mappings_table.c.uuid == lost.uuid)).scalar_one()
        conn.execute(instance_mappings.insert().values(
            instance_uuid='00000000-0000-4000-8000-0000000000aa', cell_id=cell_id,
            project_id='proj'))
    listed = {s.uuid: s for s in servers.list_servers(top.api_engine, top.cell_dbs)}
    assert listed[uuid].status == 'BUILD'
    unknown = listed['00000000-0000-4000-8000-0000000000aa']
    assert (unknown.status, unknown.cell) == ('UNKNOWN', 'lost')
    assert 'the database of cell lost cannot be read' in unknown.fault


class _DeletesTheCellWhileScheduling:
    """The real scheduler client; the operator deletes the chosen cell's mapping meanwhile."""

    def __init__(self, scheduler, api_engine):
        self._scheduler = scheduler
        self._api_engine = api_engine

    def select_destinations(self, ctxt, spec, uuids, num_alternates):
        answer = self._scheduler.select_destinations(ctxt, spec, uuids, num_alternates)
        with self._api_engine.begin() as conn:
            cell_id = sa.select(cell_mappings_table.c.id).where(
                cell_mappings_table.c.uuid == answer[0][0].cell_uuid).scalar_subquery()
            # Its hosts' mappings first (the scheduler's refresh made them).
            conn.execute(host_mappings_table.delete().where(
                host_mappings_table.c.cell_id == cell_id))
            conn.execute(cell_mappings_table.delete().where(
                cell_mappings_table.c.uuid == answer[0][0].cell_uuid))
        return answer


def test_instance_whose_cell_mapping_vanished_is_withdrawn_unclaimed_and_failed(top):
    spec_flavor = Flavor(name='small', vcpus=1, memory_mb=512, root_gb=10)
    spec = RequestSpec(flavor=spec_flavor, project_id='proj', user_id='alice')
    instance = Instance(uuid='00000000-0000-4000-8000-0000000000bb', project_id='proj',
                        user_id='alice', flavor=spec_flavor, display_name='orphan')
    build_requests.record(top.api_engine, [instance], spec)
    top.cell_dbs.reload()  # the mapping is known (cached) when the cell is deleted
    manager = SuperConductorManager(
        api_engine=top.api_engine, cells=top.cell_dbs,
        scheduler=_DeletesTheCellWhileScheduling(top.scheduler_api, top.api_engine),
        compute_api_for=top.compute_api_for, placement=top.placement, max_attempts=3)
    manager.schedule_and_build_instances(new_context(), spec, [instance.uuid])

    request = build_requests.get(top.api_engine, instance.uuid)
    assert request.failed and 'LookupError' in request.fault_message
    assert top.placement.get_allocations(instance.uuid).allocations == {}
    for engine in top.cell_engines.values():
        with engine.connect() as conn:
            assert conn.execute(sa.select(instances).where(
                instances.c.uuid == instance.uuid)).first() is None
    assert top.recorder.builds == []


class _CannotUnclaim:
    """Placement that claims but cannot remove a claim (it went away meanwhile)."""

    def __init__(self, placement):
        self._placement = placement
        self.asked: list[str] = []

    def unclaim(self, consumer_uuid):
        self.asked.append(consumer_uuid)
        raise ConnectionError('placement unreachable')


def test_a_claim_that_cannot_be_removed_does_not_keep_the_cell_row_or_the_failure_back(
        top, caplog):
    # The undo of an instance not placed gives back its cell row, then its
    # claim; the claim's removal failing is logged with the command that
    # removes it, and the request is failed all the same.
    spec_flavor = Flavor(name='small', vcpus=1, memory_mb=512, root_gb=10)
    spec = RequestSpec(flavor=spec_flavor, project_id='proj', user_id='alice')
    instance = Instance(uuid='00000000-0000-4000-8000-0000000000bc', project_id='proj',
                        user_id='alice', flavor=spec_flavor, display_name='orphan')
    build_requests.record(top.api_engine, [instance], spec)
    top.cell_dbs.reload()
    placement = _CannotUnclaim(top.placement)
    manager = SuperConductorManager(
        api_engine=top.api_engine, cells=top.cell_dbs,
        scheduler=_DeletesTheCellWhileScheduling(top.scheduler_api, top.api_engine),
        compute_api_for=top.compute_api_for, placement=placement, max_attempts=3)
    manager.schedule_and_build_instances(new_context(), spec, [instance.uuid])

    assert placement.asked == [instance.uuid]
    assert build_requests.get(top.api_engine, instance.uuid).failed
    for engine in top.cell_engines.values():
        with engine.connect() as conn:
            assert conn.execute(sa.select(instances).where(
                instances.c.uuid == instance.uuid)).first() is None
    assert f'DELETE /allocations/{instance.uuid}' in caplog.text
    assert 'placement unreachable' in caplog.text


class _UnclaimsOnSecondTry:
    """Placement whose first removal of a claim finds it away (the client gave up), then answers."""

    def __init__(self, placement):
        self._placement = placement
        self.asked: list[str] = []

    def unclaim(self, consumer_uuid):
        self.asked.append(consumer_uuid)
        if len(self.asked) == 1:
            raise PlacementUnreachable('placement at http://placement unreachable after '
                                       '12 attempt(s) in 30.0 s: Connection refused')
        return self._placement.unclaim(consumer_uuid)


def test_the_claim_of_a_failed_boot_placement_could_not_remove_is_removed_later(top):
    spec_flavor = Flavor(name='small', vcpus=1, memory_mb=512, root_gb=10)
    top.flavor()
    spec = RequestSpec(flavor=spec_flavor, project_id='proj', user_id='alice')
    instance = Instance(uuid='00000000-0000-4000-8000-0000000000bd', project_id='proj',
                        user_id='alice', flavor=spec_flavor, display_name='orphan')
    build_requests.record(top.api_engine, [instance], spec)
    top.cell_dbs.reload()
    placement = _UnclaimsOnSecondTry(top.placement)
    manager = SuperConductorManager(
        api_engine=top.api_engine, cells=top.cell_dbs,
        scheduler=_DeletesTheCellWhileScheduling(top.scheduler_api, top.api_engine),
        compute_api_for=top.compute_api_for, placement=placement, max_attempts=3)
    manager.schedule_and_build_instances(new_context(), spec, [instance.uuid])

    assert build_requests.get(top.api_engine, instance.uuid).failed
    assert manager.pending.pending() == [instance.uuid]
    assert top.placement.get_allocations(instance.uuid).allocations != {}
    assert manager.pending.retry() == 1
    assert placement.asked == [instance.uuid, instance.uuid]
    assert top.placement.get_allocations(instance.uuid).allocations == {}
    assert manager.pending.pending() == []


class _AnswerLost:
    """A scheduler whose answer is lost ``lost`` times: it claims, the reply never comes."""

    def __init__(self, scheduler, lost: int):
        self._scheduler = scheduler
        self.lost = lost
        self.calls = 0

    def select_destinations(self, ctxt, spec, uuids, num_alternates):
        self.calls += 1
        answer = self._scheduler.select_destinations(ctxt, spec, uuids, num_alternates)
        if self.calls <= self.lost:
            raise messaging.MessagingTimeout('no reply on topic scheduler')
        return answer


def _request(top, name: str):
    top.flavor()
    spec = RequestSpec(flavor=Flavor(name='small', vcpus=1, memory_mb=512, root_gb=10),
                       project_id='proj', user_id='alice')
    instance = Instance(uuid=str(uuidlib.uuid4()), project_id='proj', user_id='alice',
                        flavor=spec.flavor, display_name=name)
    build_requests.record(top.api_engine, [instance], spec)
    return spec, instance


def test_a_scheduler_answer_lost_once_is_asked_again_and_the_instance_built_once(top):
    spec, instance = _request(top, 'retried')
    scheduler = _AnswerLost(top.scheduler_api, lost=1)
    sleeps = []
    manager = SuperConductorManager(
        api_engine=top.api_engine, cells=top.cell_dbs, scheduler=scheduler,
        compute_api_for=top.compute_api_for, placement=top.placement, max_attempts=3,
        scheduler_retry_timeout=60, sleep=sleeps.append)
    manager.schedule_and_build_instances(new_context(), spec, [instance.uuid])

    top.recorder.wait_for(lambda: len(top.recorder.builds) == 1, 'the build cast')
    assert scheduler.calls == 2
    assert sleeps == [1.0]
    build = top.recorder.builds[0]
    assert build.instance.uuid == instance.uuid
    # Only the second answer's claim is left: on the host the build went to.
    claimed = top.placement.get_allocations(instance.uuid).allocations
    assert list(claimed) == [build.host_list[0].compute_node_uuid]
    with pytest.raises(build_requests.BuildRequestNotFound):
        build_requests.get(top.api_engine, instance.uuid)   # placed in its cell


class _FirstAnswerLate:
    """The first request outlives its caller's timeout and claims just before the second is served.

    As when Placement is away: the scheduler retries it, the super conductor
    stops waiting, removes the claims it does not see yet and asks again.
    """

    def __init__(self, scheduler):
        self._scheduler = scheduler
        self.calls = 0

    def select_destinations(self, ctxt, spec, uuids, num_alternates):
        self.calls += 1
        if self.calls == 1:
            raise messaging.MessagingTimeout('no reply on topic scheduler')
        if self.calls == 2:
            # The first request, served at last: it claims; its answer goes nowhere.
            self._scheduler.select_destinations(ctxt, spec, uuids, num_alternates)
        return self._scheduler.select_destinations(ctxt, spec, uuids, num_alternates)


def test_a_late_claim_of_an_unanswered_request_is_removed_and_the_instance_built_once(
        top, caplog):
    spec, instance = _request(top, 'late')
    scheduler = _FirstAnswerLate(top.scheduler_api)
    manager = SuperConductorManager(
        api_engine=top.api_engine, cells=top.cell_dbs, scheduler=scheduler,
        compute_api_for=top.compute_api_for, placement=top.placement, max_attempts=3,
        scheduler_retry_timeout=60, sleep=lambda seconds: None)
    manager.schedule_and_build_instances(new_context(), spec, [instance.uuid])

    top.recorder.wait_for(lambda: len(top.recorder.builds) == 1, 'the build cast')
    assert scheduler.calls == 3
    assert 'claimed after all' in caplog.text
    build = top.recorder.builds[0]
    assert build.instance.uuid == instance.uuid
    claimed = top.placement.get_allocations(instance.uuid).allocations
    assert list(claimed) == [build.host_list[0].compute_node_uuid]
    with pytest.raises(build_requests.BuildRequestNotFound):
        build_requests.get(top.api_engine, instance.uuid)   # placed, not failed


def test_a_scheduler_that_never_answers_fails_the_request_saying_so_and_leaves_no_claim(top):
    spec, instance = _request(top, 'unanswered')
    scheduler = _AnswerLost(top.scheduler_api, lost=1000)
    manager = SuperConductorManager(
        api_engine=top.api_engine, cells=top.cell_dbs, scheduler=scheduler,
        compute_api_for=top.compute_api_for, placement=top.placement, max_attempts=3,
        scheduler_retry_timeout=0.5, sleep=lambda seconds: None)
    manager.schedule_and_build_instances(new_context(), spec, [instance.uuid])

    assert scheduler.calls >= 2
    request = build_requests.get(top.api_engine, instance.uuid)
    assert request.failed
    assert request.fault_message.startswith('the scheduler did not answer in ')
    assert f'({scheduler.calls} attempt(s);' in request.fault_message
    assert top.placement.get_allocations(instance.uuid).allocations == {}
    assert top.recorder.builds == []


def test_a_server_placed_between_the_two_reads_of_a_listing_is_listed_from_its_cell(
        top, monkeypatch):
    # The listing reads the mappings (no cell yet), then the build requests:
    # the super conductor places the instance in between.
    spec, instance = _request(top, 'racing')
    cell = top.cells['cell1']
    chosen = Selection(service_host='c1-a', nodename='c1-a',
                       compute_node_uuid=node_uuid('c1-a'), cell_uuid=cell.uuid,
                       allocation_request={'allocations': {}},
                       allocation_request_version='1.36')
    real_get_many = build_requests.get_many
    placed = []

    def get_many_after_placing(engine, uuids):
        if not placed:
            placed.append(instance.uuid)
            cell_writes.create_many(top.cell_engines['cell1'], [(dataclasses.replace(
                instance, host='c1-a', node='c1-a', cell_uuid=cell.uuid), [chosen])], spec,
                request_id=None, scheduling_started=datetime.datetime.now())
            assert build_requests.place_many(top.api_engine, {instance.uuid: cell.uuid}) == {
                instance.uuid: build_requests.PLACED}
        return real_get_many(engine, uuids)
    monkeypatch.setattr(build_requests, 'get_many', get_many_after_placing)

    shown = servers.show(top.api_engine, top.cell_dbs, instance.uuid)

    assert placed == [instance.uuid]
    assert (shown.status, shown.cell, shown.host) == ('BUILD', 'cell1', 'c1-a')


class _BreaksCell2WhileScheduling:
    """The real scheduler client; cell2's database loses a table once the answer is in."""

    def __init__(self, scheduler, cell2_engine):
        self._scheduler = scheduler
        self._cell2_engine = cell2_engine

    def select_destinations(self, ctxt, spec, uuids, num_alternates):
        answer = self._scheduler.select_destinations(ctxt, spec, uuids, num_alternates)
        with self._cell2_engine.begin() as conn:
            conn.execute(sa.text('DROP TABLE build_plans'))
        return answer


def test_a_multi_create_whose_cell_cannot_be_written_fails_there_and_builds_elsewhere(top):
    # One instance per host (each host has 8 VCPU): five instances fill both cells.
    top.flavor('whole-host', vcpus=8, memory_mb=1024, root_gb=10)
    spec = RequestSpec(flavor=Flavor(name='whole-host', vcpus=8, memory_mb=1024,
                                     root_gb=10), project_id='proj', user_id='alice',
                       num_instances=5)
    asked = [Instance(uuid=str(uuidlib.uuid4()), project_id='proj', user_id='alice',
                      flavor=spec.flavor, display_name=f'web-{i}') for i in range(5)]
    build_requests.record(top.api_engine, asked, spec)
    manager = SuperConductorManager(
        api_engine=top.api_engine, cells=top.cell_dbs,
        scheduler=_BreaksCell2WhileScheduling(top.scheduler_api, top.cell_engines['cell2']),
        compute_api_for=top.compute_api_for, placement=top.placement, max_attempts=3)

    manager.schedule_and_build_instances(new_context(), spec, [i.uuid for i in asked])

    top.recorder.wait_for(lambda: len(top.recorder.builds) == 3, 'the builds in cell1')
    built = {b.instance.uuid for b in top.recorder.builds}
    assert {top.cell_of_host(b.host) for b in top.recorder.builds} == {'cell1'}
    assert set(_mapped_cells(top, [i.uuid for i in asked]).values()) == {'cell1', None}
    for instance in asked:
        if instance.uuid in built:
            continue
        request = build_requests.get(top.api_engine, instance.uuid)
        assert request.failed
        assert request.fault_message.startswith(
            f"could not create the instance in cell {top.cells['cell2'].uuid}")
        assert top.placement.get_allocations(instance.uuid).allocations == {}
    # Nothing of the failed share stayed in cell2: its transaction was all or nothing.
    with top.cell_engines['cell2'].connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(instances)).scalar() == 0


class _RaisesValueError:
    """A scheduler whose answer is a builtin exception (oslo.messaging rebuilds those as themselves)."""

    def select_destinations(self, ctxt, spec, uuids, num_alternates):
        raise ValueError('select_destinations needs at least one instance UUID')


def test_a_scheduler_answering_with_a_builtin_exception_fails_the_request_saying_why(top):
    spec, instance = _request(top, 'unlucky')
    manager = SuperConductorManager(
        api_engine=top.api_engine, cells=top.cell_dbs, scheduler=_RaisesValueError(),
        compute_api_for=top.compute_api_for, placement=top.placement, max_attempts=3)

    manager.schedule_and_build_instances(new_context(), spec, [instance.uuid])

    request = build_requests.get(top.api_engine, instance.uuid)
    assert request.failed
    assert request.fault_message == ('the scheduler failed: ValueError: select_destinations '
                                     'needs at least one instance UUID')
    assert top.recorder.builds == []
