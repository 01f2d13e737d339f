"""Cold migration, resize and live migration on the embedded control plane: who holds which allocation at each step.

One cell of three hosts of different sizes, so that the scheduler's
choices are known: a server boots on host2 (the most free memory), and a
move from there prefers host1 to host3. Failures are injected in the fake
drivers of the destinations (a move's destination spawns as a build does).
"""
from __future__ import annotations

import pytest

from cellplane.context import new_context
from cellplane.objects import flavors, instance_actions, instances, migrations, server_groups
from cellplane_api import moves, servers
from cellplane_embedded.runtime import CellPlan, CloudPlan, EmbeddedCloud, HostPlan
from compute_agent.virt.fake import FakeSettings
from conductor.super import placement_audit
from conductor.super.resume_moves import MoveResumption
from placement.client import PlacementUnreachable
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from tests.support.polling import eventually

DEADLINE_SECONDS = 30
GB = 1024
HOST1, HOST2, HOST3 = 'cell1-host1', 'cell1-host2', 'cell1-host3'


def _size(n: int) -> FakeSettings:
    """Every resource in proportion, so that every weigher ranks the hosts alike."""
    return FakeSettings(vcpus=n, memory_mb=n * GB, disk_gb=n * 10)


@pytest.fixture(scope='module')
def cloud(tmp_path_factory):
    plan = CloudPlan(cells=(CellPlan('cell1', (
        HostPlan(HOST1, _size(48)), HostPlan(HOST2, _size(64)),
        HostPlan(HOST3, _size(16)))),), max_attempts=3)
    with EmbeddedCloud(tmp_path_factory.mktemp('moves'), plan) as c:
        flavors.create(c.api_engine, name='small', vcpus=1, memory_mb=512, root_gb=1)
        flavors.create(c.api_engine, name='large', vcpus=2, memory_mb=2048, root_gb=2)
        flavors.create(c.api_engine, name='huge', vcpus=2, memory_mb=60 * GB, root_gb=2)
        yield c


def _boot(cloud, name: str) -> str:
    [uuid] = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                            name=name, flavor='small', project_id='p', user_id='u')
    eventually(lambda: servers.show(cloud.api_engine, cloud.cells,
                                    uuid).status == servers.ACTIVE,
               f'{name} ACTIVE')
    return uuid


def _settled(cloud, migration_uuid: str, statuses=moves.SETTLED) -> migrations.Migration:
    return eventually(lambda: (
        lambda m: m if m.status in statuses else None)(
        moves.show_migration(cloud.api_engine, cloud.cells, migration_uuid).migration),
                      f'migration {migration_uuid} settled')


def _held(cloud, consumer: str) -> dict[str, dict[str, int]]:
    """Host name -> resources ``consumer`` holds there."""
    names = {hosted.node_uuid: name for name, hosted in cloud.computes.items()}
    return {names[rp]: r for rp, r in
            cloud.placement.get_allocations(consumer).allocations.items()}


def _running(cloud, host: str) -> list[str]:
    return cloud.computes[host].driver.running()


SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
LARGE = {'VCPU': 2, 'MEMORY_MB': 2048, 'DISK_GB': 2}


def _move(cloud, uuid: str, flavor: str | None = None) -> migrations.Migration:
    asked = moves.migrate(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(),
                          uuid, flavor=flavor)
    assert asked.status == migrations.QUEUED
    return _settled(cloud, asked.uuid)


def test_a_cold_migration_holds_the_source_on_the_migration_until_confirmed(cloud):
    uuid = _boot(cloud, 'cold')
    assert servers.show(cloud.api_engine, cloud.cells, uuid).host == HOST2

    moved = _move(cloud, uuid)
    assert (moved.status, moved.migration_type, moved.source_host, moved.dest_host) == (
        migrations.FINISHED, migrations.MIGRATION, HOST2, HOST1)
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.status, shown.host, shown.flavor) == (servers.VERIFY_RESIZE, HOST1, 'small')
    # Finished, unconfirmed: the instance holds the destination, the migration the source.
    assert _held(cloud, uuid) == {HOST1: SMALL}
    assert _held(cloud, moved.uuid) == {HOST2: SMALL}
    assert uuid in _running(cloud, HOST1) and uuid not in _running(cloud, HOST2)
    assert uuid in cloud.computes[HOST2].driver.list_instances()   # stopped, kept

    moves.confirm(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(), uuid)
    confirmed = _settled(cloud, moved.uuid, migrations.FINAL)
    assert confirmed.status == migrations.CONFIRMED
    assert _held(cloud, moved.uuid) == {}
    assert _held(cloud, uuid) == {HOST1: SMALL}
    eventually(lambda: uuid not in cloud.computes[HOST2].driver.list_instances(),
               'the source copy destroyed')
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.status, shown.host, shown.task_state) == (servers.ACTIVE, HOST1, None)
    assert [e.event for e in shown.events if e.event.startswith(('conductor_schedule_move',
                                                                 'compute_move'))] == \
        ['conductor_schedule_move', 'compute_move_instance']
    _delete(cloud, uuid)


def _delete(cloud, uuid: str) -> None:
    """Delete the server and wait for its allocation to go: the next test starts even."""
    servers.delete(cloud.api_engine, cloud.cells,
                   lambda cell: cloud.agents['cell1'].manager.computes, new_context(), uuid)
    eventually(lambda: _held(cloud, uuid) == {} and servers.show(
        cloud.api_engine, cloud.cells, uuid).status == servers.DELETED,
               f'{uuid} deleted')


def test_a_resize_reverted_runs_on_its_source_at_its_old_flavor_holding_its_own_allocation(
        cloud):
    uuid = _boot(cloud, 'resized')
    moved = _move(cloud, uuid, 'large')
    assert (moved.status, moved.migration_type, moved.dest_host) == (
        migrations.FINISHED, migrations.RESIZE, HOST1)
    assert (moved.old_flavor.name, moved.new_flavor.name) == ('small', 'large')
    assert _held(cloud, uuid) == {HOST1: LARGE}
    assert _held(cloud, moved.uuid) == {HOST2: SMALL}
    assert servers.show(cloud.api_engine, cloud.cells, uuid).flavor == 'large'

    moves.revert(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(), uuid)
    reverted = _settled(cloud, moved.uuid, migrations.FINAL)
    assert reverted.status == migrations.REVERTED
    assert _held(cloud, uuid) == {HOST2: SMALL}
    assert _held(cloud, moved.uuid) == {}
    eventually(lambda: uuid in _running(cloud, HOST2), 'running on its source again')
    eventually(lambda: uuid not in cloud.computes[HOST1].driver.list_instances(),
               'the destination copy destroyed')
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.status, shown.host, shown.flavor) == (servers.ACTIVE, HOST2, 'small')
    # Nothing left to confirm or revert.
    with pytest.raises(moves.MoveConflict):
        moves.confirm(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(), uuid)
    _delete(cloud, uuid)


def test_a_same_host_resize_reverted_runs_again_at_its_old_size(cloud):
    uuid = _boot(cloud, 'same-host')
    super_moves = cloud.super_conductor.manager.moves
    super_moves._same_host = True      # [conductor] allow_resize_to_same_host
    try:
        moved = _move(cloud, uuid, 'huge')     # only its own host holds 60 GB
    finally:
        super_moves._same_host = False
    assert (moved.status, moved.source_host, moved.dest_host) == (
        migrations.FINISHED, HOST2, HOST2)
    guests = cloud.computes[HOST2].driver._instances
    assert guests[uuid].memory_mb == 60 * GB

    moves.revert(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(), uuid)
    assert _settled(cloud, moved.uuid, migrations.FINAL).status == migrations.REVERTED
    eventually(lambda: guests[uuid].memory_mb == 512, 'running at its old size again')
    assert uuid in _running(cloud, HOST2)
    assert _held(cloud, uuid) == {HOST2: SMALL}
    assert _held(cloud, moved.uuid) == {}
    _delete(cloud, uuid)


def test_a_destination_that_fails_moves_the_move_to_the_next_alternate(cloud):
    uuid = _boot(cloud, 'rescheduled')
    driver = cloud.computes[HOST1].driver
    driver.settings.fail_all, driver.settings.failure_reason = True, 'disk image corrupt'
    try:
        moved = _move(cloud, uuid)
    finally:
        driver.settings.fail_all = False
    assert (moved.status, moved.dest_host) == (migrations.FINISHED, HOST3)
    assert _held(cloud, uuid) == {HOST3: SMALL}
    assert _held(cloud, moved.uuid) == {HOST2: SMALL}
    assert uuid not in driver.list_instances()
    events = [(e.event, e.host, e.result, e.reason)
              for e in servers.show(cloud.api_engine, cloud.cells, uuid).events
              if e.event == 'compute_move_instance']
    assert events[0] == ('compute_move_instance', HOST1, 'failed', 'disk image corrupt')
    assert events[1][:3] == ('compute_move_instance', HOST3, 'ok')
    moves.confirm(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(), uuid)
    _settled(cloud, moved.uuid, migrations.FINAL)
    assert _held(cloud, moved.uuid) == {}
    _delete(cloud, uuid)


def test_out_of_alternates_the_instance_stays_active_on_its_source_with_its_own_allocation(
        cloud):
    uuid = _boot(cloud, 'stuck')
    for host, reason in ((HOST1, 'no more IP addresses'), (HOST3, 'disk full')):
        settings = cloud.computes[host].driver.settings
        settings.fail_all, settings.failure_reason = True, reason
    try:
        moved = _move(cloud, uuid)
    finally:
        for host in (HOST1, HOST3):
            cloud.computes[host].driver.settings.fail_all = False
    assert moved.status == migrations.ERROR
    assert f'{HOST1}: move failed: no more IP addresses' in moved.error
    assert f'{HOST3}: move failed: disk full' in moved.error
    assert _held(cloud, uuid) == {HOST2: SMALL}
    assert _held(cloud, moved.uuid) == {}
    eventually(lambda: uuid in _running(cloud, HOST2), 'running on its source again')
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.status, shown.host, shown.task_state) == (servers.ACTIVE, HOST2, None)
    _delete(cloud, uuid)


def test_no_valid_host_ends_the_move_in_error_and_leaves_the_server_as_it_was(cloud):
    uuid = _boot(cloud, 'too-big')
    # Only host2 could hold 60 GB, and it is the source.
    moved = _move(cloud, uuid, 'huge')
    assert moved.status == migrations.ERROR and moved.error.startswith('NoValidHost')
    assert moved.dest_host is None
    assert _held(cloud, uuid) == {HOST2: SMALL}
    assert _held(cloud, moved.uuid) == {}
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.status, shown.host, shown.flavor) == (servers.ACTIVE, HOST2, 'small')
    # A second move is refused while one is asked; an unknown flavor is refused outright.
    with pytest.raises(moves.InvalidMove):
        moves.migrate(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(),
                      uuid, flavor='nope')
    _delete(cloud, uuid)


def test_a_move_left_unconfirmed_past_the_window_is_confirmed(cloud):
    uuid = _boot(cloud, 'forgotten')
    moved = _move(cloud, uuid)
    mover = cloud.super_conductor.manager.moves
    assert mover.confirm_expired(3600) == []          # not waited long enough
    assert mover.confirm_expired(0) == [moved.uuid]
    assert _settled(cloud, moved.uuid, migrations.FINAL).status == migrations.CONFIRMED
    assert _held(cloud, moved.uuid) == {}
    assert servers.show(cloud.api_engine, cloud.cells, uuid).status == servers.ACTIVE
    _delete(cloud, uuid)


def test_the_window_leaves_alone_a_move_someone_is_confirming_or_reverting(cloud):
    uuid = _boot(cloud, 'being-ended')
    moved = _move(cloud, uuid)
    cell = cloud.cell_engines['cell1']
    with cell.begin() as conn:     # as a drain's cell conductor or a user's revert leaves it
        instances.set_task_state(conn, uuid, instances.RESIZE_CONFIRMING)
    mover = cloud.super_conductor.manager.moves
    assert mover.confirm_expired(0) == []
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.task_state, _held(cloud, moved.uuid)) == (instances.RESIZE_CONFIRMING,
                                                            {HOST2: SMALL})
    with cell.begin() as conn:
        instances.set_task_state(conn, uuid, None)
    assert mover.confirm_expired(0) == [moved.uuid]
    assert _settled(cloud, moved.uuid, migrations.FINAL).status == migrations.CONFIRMED
    _delete(cloud, uuid)


def _actions(cloud, uuid: str) -> list[tuple[str, bool]]:
    """The instance's actions, oldest first: (action, finished)."""
    with cloud.cell_engines['cell1'].connect() as conn:
        return [(a.action, a.finish_time is not None)
                for a in instance_actions.actions(conn, uuid)]


def test_a_move_asked_to_be_confirmed_at_its_finish_is_confirmed_by_its_cell_conductor(cloud):
    # What a host drain asks: nobody sends a confirm; the cell conductor
    # confirms as the destination finishes (Placement, the source, the cell).
    uuid = _boot(cloud, 'drained')
    asked = moves.migrate(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(),
                          uuid, confirm_at_finish=True)
    assert asked.confirm_at_finish
    confirmed = _settled(cloud, asked.uuid, migrations.FINAL)
    assert (confirmed.status, confirmed.source_host, confirmed.dest_host) == (
        migrations.CONFIRMED, HOST2, HOST1)
    assert _held(cloud, asked.uuid) == {}
    assert _held(cloud, uuid) == {HOST1: SMALL}
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.status, shown.host, shown.task_state) == (servers.ACTIVE, HOST1, None)
    eventually(lambda: uuid not in cloud.computes[HOST2].driver.list_instances(),
               'the source copy destroyed')
    assert _actions(cloud, uuid)[-2:] == [('migrate', True), ('confirmResize', True)]
    _delete(cloud, uuid)


class _PlacementAway:
    """The cell conductor's Placement client, unreachable for removals."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def unclaim(self, consumer_uuid: str) -> bool:
        raise PlacementUnreachable('Placement is away (test)')


def test_a_confirm_at_finish_placement_refused_is_finished_by_the_super_conductors_resume(
        cloud):
    uuid = _boot(cloud, 'half-confirmed')
    cell_moves = cloud.cell_conductors['cell1'].manager.moves
    real, cell_moves._placement = cell_moves._placement, _PlacementAway(cell_moves._placement)
    try:
        asked = moves.migrate(cloud.api_engine, cloud.cells, cloud.conductor_api,
                              new_context(), uuid, confirm_at_finish=True)
        _settled(cloud, asked.uuid)
        # Finished and taken for its confirm, which stopped at Placement: the
        # source allocation still the migration's, no confirm or revert of
        # anyone else's can begin.
        assert _held(cloud, asked.uuid) == {HOST2: SMALL}
        assert servers.show(cloud.api_engine, cloud.cells, uuid).task_state == \
            'resize_confirming'
        with pytest.raises(moves.MoveConflict):
            moves.revert(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(),
                         uuid)
    finally:
        cell_moves._placement = real
    resumption = MoveResumption(cloud.super_conductor.manager.moves, cells=cloud.cells,
                                placement=cloud.placement, resume_after=0)
    assert resumption.run() == 1
    assert _settled(cloud, asked.uuid, migrations.FINAL).status == migrations.CONFIRMED
    assert _held(cloud, asked.uuid) == {}
    assert _held(cloud, uuid) == {HOST1: SMALL}
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.status, shown.host, shown.task_state) == (servers.ACTIVE, HOST1, None)
    eventually(lambda: uuid not in cloud.computes[HOST2].driver.list_instances(),
               'the source copy destroyed')
    assert _actions(cloud, uuid)[-1] == ('confirmResize', True)
    _delete(cloud, uuid)


def test_the_audit_keeps_a_moving_servers_source_and_its_delete_confirms_the_move(cloud):
    uuid = _boot(cloud, 'deleted-waiting')
    moved = _move(cloud, uuid)
    assert placement_audit.audit(cloud.api_engine, cloud.cells, cloud.placement,
                                 grace=0) == []
    # In VERIFY_RESIZE: its destination's allocation goes with the terminate,
    # and the cell conductor ends the move at the DELETED report, as Nova's
    # delete confirms the resize first: the source's allocation goes too.
    _delete(cloud, uuid)
    assert _settled(cloud, moved.uuid, migrations.FINAL).status == migrations.CONFIRMED
    assert _held(cloud, moved.uuid) == {}
    assert placement_audit.audit(cloud.api_engine, cloud.cells, cloud.placement,
                                 grace=0) == []


def test_a_member_of_an_anti_affinity_group_moves_only_where_no_other_member_is(cloud):
    server_groups.create(cloud.api_engine, project_id='p', user_id='u', name='apart',
                         policy='anti-affinity', level='host')
    uuids = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                           name='apart', flavor='small', count=2, project_id='p',
                           user_id='u', group='apart')
    eventually(lambda: all(
        s.status == servers.ACTIVE
        for s in servers.list_servers(cloud.api_engine, cloud.cells, uuids)),
               'both ACTIVE')
    hosts = {s.uuid: s.host for s in servers.list_servers(cloud.api_engine, cloud.cells,
                                                          uuids)}
    assert sorted(hosts.values()) == [HOST1, HOST2]
    [on_host2] = [u for u, h in hosts.items() if h == HOST2]
    # Without the group host1 would be chosen (test 1); its other member is there.
    moved = _move(cloud, on_host2)
    assert (moved.status, moved.dest_host) == (migrations.FINISHED, HOST3)
    moves.confirm(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(),
                  on_host2)
    _settled(cloud, moved.uuid, migrations.FINAL)
    for uuid in uuids:
        _delete(cloud, uuid)


def _live(cloud, uuid: str, host: str | None = None) -> migrations.Migration:
    asked = moves.live_migrate(cloud.api_engine, cloud.cells, cloud.conductor_api,
                               new_context(), uuid, host=host)
    assert (asked.status, asked.migration_type) == (migrations.QUEUED,
                                                    migrations.LIVE_MIGRATION)
    return _settled(cloud, asked.uuid, migrations.FINAL)


def test_a_live_migration_switches_over_and_frees_its_source_at_once(cloud):
    uuid = _boot(cloud, 'live')
    moved = _live(cloud, uuid)
    assert (moved.status, moved.source_host, moved.dest_host) == (
        migrations.DONE, HOST2, HOST1)
    assert _held(cloud, uuid) == {HOST1: SMALL}
    assert _held(cloud, moved.uuid) == {}
    eventually(lambda: uuid not in cloud.computes[HOST2].driver.list_instances(),
               'the source copy destroyed')
    assert uuid in _running(cloud, HOST1)
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.status, shown.host, shown.task_state) == (servers.ACTIVE, HOST1, None)
    _delete(cloud, uuid)


def test_a_live_migration_to_a_named_host_goes_there_or_fails_saying_why(cloud):
    uuid = _boot(cloud, 'live-named')
    moved = _live(cloud, uuid, host=HOST3)     # not the scheduler's first choice
    assert (moved.status, moved.dest_host) == (migrations.DONE, HOST3)
    assert _held(cloud, uuid) == {HOST3: SMALL}
    # A host no cell has: failed, with the scheduler's reason; nothing moved.
    refused = _live(cloud, uuid, host='cell1-nowhere')
    assert refused.status == migrations.FAILED and refused.error.startswith('NoValidHost')
    assert _held(cloud, uuid) == {HOST3: SMALL}
    assert _held(cloud, refused.uuid) == {}
    with pytest.raises(moves.InvalidMove):
        moves.live_migrate(cloud.api_engine, cloud.cells, cloud.conductor_api,
                           new_context(), uuid, host=HOST3)
    _delete(cloud, uuid)


@pytest.mark.parametrize('live', [True, False], ids=['live', 'cold'])
def test_a_copy_that_fails_on_its_source_leaves_the_server_running_there_alone(cloud, live):
    uuid = _boot(cloud, 'copy-fails')
    promised = {h: cloud.computes[h].builder.local_claims.usage() for h in (HOST1, HOST3)}
    settings = cloud.computes[HOST2].driver.settings
    settings.fail_copies, settings.copy_failure_reason = True, 'lost the migration network'
    try:
        moved = _live(cloud, uuid) if live else _move(cloud, uuid)
    finally:
        settings.fail_copies = False
    # No other destination would do better: the source could not give it.
    assert moved.status == (migrations.FAILED if live else migrations.ERROR)
    assert f'the copy failed on {HOST2}: lost the migration network' in moved.error
    assert _held(cloud, uuid) == {HOST2: SMALL}
    assert _held(cloud, moved.uuid) == {}
    eventually(lambda: uuid in _running(cloud, HOST2), 'running on its source')
    assert all(uuid not in cloud.computes[h].driver.list_instances() for h in (HOST1, HOST3))
    eventually(lambda: promised == {
        h: cloud.computes[h].builder.local_claims.usage() for h in (HOST1, HOST3)},
               "the destination's promise given back")
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.status, shown.host, shown.task_state) == (servers.ACTIVE, HOST2, None)
    _delete(cloud, uuid)


class _HeldSuperConductor:
    """Keeps the move's cast: the live migration stays queued."""

    def migrate_server(self, ctxt, cell_uuid, migration_uuid):
        pass


def _hand_over_of(cloud, uuid: str, name: str, dest: str):
    """What a super conductor hands the cell for a move of ``uuid`` to ``dest``: instance, spec, selection."""
    node = cloud.computes[dest].node_uuid
    cell_uuid = servers.cell_of(cloud.api_engine, uuid)
    row = servers.show(cloud.api_engine, cloud.cells, uuid)
    instance = Instance(uuid=uuid, project_id='p', user_id='u',
                        flavor=Flavor(name='small', vcpus=1, memory_mb=512, root_gb=1),
                        display_name=name, vm_state='active', task_state=None,
                        host=row.host, node=row.node, cell_uuid=cell_uuid)
    selection = Selection(service_host=dest, nodename=dest, compute_node_uuid=node,
                          cell_uuid=cell_uuid, allocation_request_version='1.36',
                          allocation_request={'allocations': {node: {'resources': SMALL}}})
    return instance, RequestSpec(flavor=instance.flavor, project_id='p', user_id='u'), selection


def test_a_live_migration_aborted_while_queued_has_a_claim_that_comes_after_undone(cloud):
    uuid = _boot(cloud, 'aborted-queued')
    source = servers.show(cloud.api_engine, cloud.cells, uuid).host
    dest = HOST1 if source != HOST1 else HOST3
    queued = moves.live_migrate(cloud.api_engine, cloud.cells, _HeldSuperConductor(),
                                new_context(), uuid)
    cancelled = moves.abort_live_migration(cloud.api_engine, cloud.cells, None,
                                           new_context(), uuid, queued.id)
    assert cancelled.status == migrations.CANCELLED
    # The scheduler's answer to a super conductor that read the move queued
    # arrives after the abort: its claim, then the move handed to the cell.
    node = cloud.computes[dest].node_uuid
    cloud.placement.claim_move(uuid, queued.uuid, {node: SMALL}, project_id='p', user_id='u')
    assert (_held(cloud, uuid), _held(cloud, queued.uuid)) == ({dest: SMALL}, {source: SMALL})
    instance, spec, selection = _hand_over_of(cloud, uuid, 'aborted-queued', dest)
    cloud.agents['cell1'].manager.conductor.move_instance(
        new_context(), instance, spec, queued.payload(), [selection])
    eventually(lambda: (_held(cloud, uuid), _held(cloud, queued.uuid)) == ({source: SMALL}, {}),
               'the late claim undone')
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.status, shown.host, shown.task_state) == (servers.ACTIVE, source, None)
    assert moves.show_migration(cloud.api_engine, cloud.cells,
                                queued.uuid).migration.status == migrations.CANCELLED
    assert uuid in _running(cloud, source) and uuid not in _running(cloud, dest)
    _delete(cloud, uuid)


class _CountedPlacement:
    """The cell conductor's Placement client, counting its reads of allocations."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.reads = 0

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def get_allocations(self, consumer_uuid: str):
        self.reads += 1
        return self._inner.get_allocations(consumer_uuid)


def test_a_hand_over_from_a_take_taken_again_since_is_not_started_nor_placement_asked(cloud):
    # The super conductor that took the move died after its scheduler
    # claimed; another one took it over (a second take) and scheduled it
    # again. The first hand-over, arriving late, carries the first take's
    # stamp: the migration changed since, so it is not started, and the cell
    # conductor need not ask Placement whose claim the instance holds.
    uuid = _boot(cloud, 'taken-twice')
    source = servers.show(cloud.api_engine, cloud.cells, uuid).host
    dest = HOST1 if source != HOST1 else HOST3
    queued = moves.live_migrate(cloud.api_engine, cloud.cells, _HeldSuperConductor(),
                                new_context(), uuid)
    with cloud.cell_engines['cell1'].begin() as conn:
        first = migrations.take(conn, queued.uuid, updated_at=queued.created_at)
    with cloud.cell_engines['cell1'].begin() as conn:
        second = migrations.take(conn, queued.uuid, updated_at=first)
    assert first is not None and second is not None and second != first
    node = cloud.computes[dest].node_uuid
    cloud.placement.claim_move(uuid, queued.uuid, {node: SMALL}, project_id='p', user_id='u')
    instance, spec, selection = _hand_over_of(cloud, uuid, 'taken-twice', dest)
    conductor = cloud.agents['cell1'].manager.conductor
    cell_moves = cloud.cell_conductors['cell1'].manager.moves
    counted = _CountedPlacement(cell_moves._placement)
    real, cell_moves._placement = cell_moves._placement, counted
    try:
        conductor.move_instance(new_context(), instance, spec, queued.payload(), [selection],
                                taken_at=first)
        conductor.move_instance(new_context(), instance, spec, queued.payload(), [selection],
                                taken_at=second)
        moved = _settled(cloud, queued.uuid, migrations.FINAL)
    finally:
        cell_moves._placement = real
    assert (moved.status, moved.dest_host) == (migrations.DONE, dest)
    assert counted.reads == 0
    # Started once: one scheduling event, by the second hand-over.
    with cloud.cell_engines['cell1'].connect() as conn:
        [live] = [a for a in instance_actions.actions(conn, uuid)
                  if a.action == 'live-migration']
    assert [e.event for e in live.events].count('conductor_schedule_move') == 1
    assert _held(cloud, uuid) == {dest: SMALL} and _held(cloud, queued.uuid) == {}
    _delete(cloud, uuid)
