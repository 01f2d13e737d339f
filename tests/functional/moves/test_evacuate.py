"""Evacuation, embedded: refused while the host lives, rebuilt elsewhere when it is dead, cleaned when it returns.

One cell of three hosts of different sizes (as test_cold_moves.py): a
server boots on host2, and an evacuation from there prefers host1 to
host3. A dead host is a stopped hosted host (no heartbeat; its guests
stay in its fake driver, as a powered-off hypervisor's disks do) that an
operator forced down; it returns with ``start_host``.
"""
from __future__ import annotations

import pytest

from cellplane.context import new_context
from cellplane.objects import flavors, instance_actions, migrations, server_groups, services
from cellplane_api import moves, servers
from cellplane_embedded.runtime import CellPlan, CloudPlan, EmbeddedCloud, HostPlan
from compute_agent.virt.fake import FakeSettings
from conductor.super import placement_audit
from tests.support.polling import eventually

DEADLINE_SECONDS = 30
GB = 1024
HOST1, HOST2, HOST3 = 'cell1-host1', 'cell1-host2', 'cell1-host3'
SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
DOWN_TIME = 60.0


def _size(n: int) -> FakeSettings:
    return FakeSettings(vcpus=n, memory_mb=n * GB, disk_gb=n * 10)


@pytest.fixture(scope='module')
def cloud(tmp_path_factory):
    plan = CloudPlan(cells=(CellPlan('cell1', (
        HostPlan(HOST1, _size(48)), HostPlan(HOST2, _size(64)),
        HostPlan(HOST3, _size(16)))),), max_attempts=3, report_interval=1.0,
        service_down_time=DOWN_TIME)
    cloud = EmbeddedCloud(tmp_path_factory.mktemp('evacuate'), plan)
    # No periodic look of the cell conductor: the last test calls it itself.
    cloud.cell_confs['cell1'].set_override('stalled_build_check_interval', 0,
                                           group='conductor')
    with cloud as c:
        flavors.create(c.api_engine, name='small', vcpus=1, memory_mb=512, root_gb=1)
        yield c


def _boot(cloud, name: str) -> str:
    _scheduler_sees_up(cloud, HOST2)
    [uuid] = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                            name=name, flavor='small', project_id='p', user_id='u')
    eventually(lambda: servers.show(cloud.api_engine, cloud.cells,
                                    uuid).status == servers.ACTIVE,
               f'{name} ACTIVE')
    assert servers.show(cloud.api_engine, cloud.cells, uuid).host == HOST2
    return uuid


def _held(cloud, consumer: str) -> dict[str, dict[str, int]]:
    names = {hosted.node_uuid: name for name, hosted in cloud.computes.items()}
    return {names[rp]: r for rp, r in
            cloud.placement.get_allocations(consumer).allocations.items()}


def _guests(cloud, host: str) -> list[str]:
    return cloud.computes[host].driver.list_instances()


def _force_down(cloud, host: str, down: bool) -> None:
    assert services.set_forced_down(cloud.cell_engines['cell1'], host, 'cellplane-compute',
                                    forced_down=down) is not None


def _kill(cloud, host: str) -> None:
    """The host dies (no heartbeat, its guests kept) and the operator forces it down."""
    cloud.agents['cell1'].stop_host(host)
    _force_down(cloud, host, True)


def _revive(cloud, host: str) -> None:
    """The host comes back; the next test may wait for the scheduler to see it up."""
    _force_down(cloud, host, False)
    cloud.agents['cell1'].start_host(host)


def _scheduler_sees_up(cloud, host: str) -> None:
    eventually(lambda: host in {
        r.host for r in cloud.host_cache.records() if r.service_up},
               f'the scheduler sees {host} up')


def _evacuate(cloud, uuid: str, host: str | None = None) -> migrations.Migration:
    asked = moves.evacuate(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(),
                           uuid, host=host, service_down_time=DOWN_TIME)
    assert (asked.status, asked.migration_type) == (migrations.QUEUED, migrations.EVACUATION)
    return eventually(lambda: (
        lambda m: m if m.final else None)(
        moves.show_migration(cloud.api_engine, cloud.cells, asked.uuid).migration),
                      f'evacuation {asked.uuid} over')


def _delete(cloud, uuid: str) -> None:
    servers.delete(cloud.api_engine, cloud.cells,
                   lambda cell: cloud.agents['cell1'].manager.computes, new_context(), uuid)
    eventually(lambda: _held(cloud, uuid) == {} and servers.show(
        cloud.api_engine, cloud.cells, uuid).status == servers.DELETED,
               f'{uuid} deleted')


def _events(cloud, uuid: str) -> list[tuple]:
    return [(e.event, e.host, e.result) for e in
            servers.show(cloud.api_engine, cloud.cells, uuid).events
            if e.event in (instance_actions.EVENT_MOVE_SCHEDULE, instance_actions.EVENT_MOVE,
                           instance_actions.EVENT_EVACUATE_CLEANUP)]


def test_a_server_whose_host_is_up_is_not_evacuated_and_nothing_is_written(cloud):
    uuid = _boot(cloud, 'alive')
    with pytest.raises(moves.HostStillUp, match=f'Compute service of {HOST2} is still in use'):
        moves.evacuate(cloud.api_engine, cloud.cells, cloud.conductor_api, new_context(),
                       uuid, service_down_time=DOWN_TIME)
    with cloud.cell_engines['cell1'].connect() as conn:
        assert migrations.find(conn, instance_uuid=uuid) == []
    shown = servers.show(cloud.api_engine, cloud.cells, uuid)
    assert (shown.status, shown.task_state) == (servers.ACTIVE, None)
    _delete(cloud, uuid)


def test_an_evacuated_server_runs_elsewhere_and_its_returning_host_destroys_its_copy(cloud):
    uuid = _boot(cloud, 'evacuated')
    _kill(cloud, HOST2)
    try:
        moved = _evacuate(cloud, uuid)
        assert (moved.status, moved.source_host, moved.dest_host) == (
            migrations.DONE, HOST2, HOST1)
        shown = servers.show(cloud.api_engine, cloud.cells, uuid)
        assert (shown.status, shown.host, shown.task_state) == (servers.ACTIVE, HOST1, None)
        # The instance holds its new host; the migration the dead host's, until it returns.
        assert _held(cloud, uuid) == {HOST1: SMALL}
        assert _held(cloud, moved.uuid) == {HOST2: SMALL}
        assert uuid in cloud.computes[HOST1].driver.running()
        assert uuid in _guests(cloud, HOST2)          # the dead host's disk still has it
        # The audit knows the migration holds the dead host by design.
        assert placement_audit.audit(cloud.api_engine, cloud.cells, cloud.placement,
                                     grace=0) == []
    finally:
        _revive(cloud, HOST2)
    eventually(lambda: uuid not in _guests(cloud, HOST2), 'the returning host destroyed its copy')
    completed = eventually(lambda: (
        lambda m: m if m.status == migrations.COMPLETED else None)(
        moves.show_migration(cloud.api_engine, cloud.cells, moved.uuid).migration),
                           'the evacuation completed')
    assert completed.uuid == moved.uuid
    assert _held(cloud, moved.uuid) == {}
    assert _held(cloud, uuid) == {HOST1: SMALL}
    assert uuid in cloud.computes[HOST1].driver.running()
    assert _events(cloud, uuid)[-3:] == [
        (instance_actions.EVENT_MOVE_SCHEDULE, HOST1, 'ok'),
        (instance_actions.EVENT_MOVE, HOST1, 'ok'),
        (instance_actions.EVENT_EVACUATE_CLEANUP, HOST2, 'ok')]
    _delete(cloud, uuid)


def test_a_destination_that_fails_passes_the_evacuation_to_the_next_alternate(cloud):
    uuid = _boot(cloud, 'rescheduled')
    driver = cloud.computes[HOST1].driver
    driver.settings.fail_all, driver.settings.failure_reason = True, 'disk image corrupt'
    _kill(cloud, HOST2)
    try:
        moved = _evacuate(cloud, uuid)
    finally:
        driver.settings.fail_all = False
        _revive(cloud, HOST2)
    assert (moved.status, moved.dest_host) == (migrations.DONE, HOST3)
    assert _held(cloud, uuid) == {HOST3: SMALL}
    assert uuid not in driver.list_instances()
    reasons = [(e.host, e.result, e.reason) for e in
               servers.show(cloud.api_engine, cloud.cells, uuid).events
               if e.event == instance_actions.EVENT_MOVE]
    assert reasons[0] == (HOST1, 'failed', 'disk image corrupt')
    assert reasons[1][:2] == (HOST3, 'ok')
    eventually(lambda: uuid not in _guests(cloud, HOST2), 'the returning host destroyed its copy')
    eventually(lambda: _held(cloud, moved.uuid) == {}, 'the source allocation freed')
    _delete(cloud, uuid)


def test_out_of_alternates_the_server_is_error_on_its_dead_host_which_keeps_it_on_return(
        cloud):
    uuid = _boot(cloud, 'stranded')
    for host, reason in ((HOST1, 'no more IP addresses'), (HOST3, 'disk full')):
        settings = cloud.computes[host].driver.settings
        settings.fail_all, settings.failure_reason = True, reason
    _kill(cloud, HOST2)
    try:
        moved = _evacuate(cloud, uuid)
    finally:
        for host in (HOST1, HOST3):
            cloud.computes[host].driver.settings.fail_all = False
    try:
        assert moved.status == migrations.FAILED
        assert f'{HOST1}: move failed: no more IP addresses' in moved.error
        assert f'{HOST3}: move failed: disk full' in moved.error
        shown = servers.show(cloud.api_engine, cloud.cells, uuid)
        assert (shown.status, shown.host, shown.task_state) == (servers.ERROR, HOST2, None)
        assert HOST1 in shown.fault and HOST3 in shown.fault
        # Nothing on the migration: the instance holds its dead host's allocation.
        assert _held(cloud, uuid) == {HOST2: SMALL}
        assert _held(cloud, moved.uuid) == {}
        assert uuid not in _guests(cloud, HOST1) + _guests(cloud, HOST3)
    finally:
        _revive(cloud, HOST2)
    # Back, the host keeps what is still its own: no evacuation of it happened.
    eventually(lambda: not cloud.agents['cell1'].reports.evacuated.unchecked(),
               'the returning host reports again')
    assert uuid in _guests(cloud, HOST2)
    with cloud.cell_engines['cell1'].connect() as conn:
        assert [m.status for m in migrations.find(conn, instance_uuid=uuid)] == [
            migrations.FAILED]
    _delete(cloud, uuid)


def test_an_evacuation_to_a_named_host_goes_there_and_a_named_host_must_exist(cloud):
    uuid = _boot(cloud, 'named')
    _kill(cloud, HOST2)
    try:
        with pytest.raises(moves.TargetHostNotFound):
            moves.evacuate(cloud.api_engine, cloud.cells, cloud.conductor_api,
                           new_context(), uuid, host='cell1-nowhere',
                           service_down_time=DOWN_TIME)
        with pytest.raises(moves.InvalidMove):
            moves.evacuate(cloud.api_engine, cloud.cells, cloud.conductor_api,
                           new_context(), uuid, host=HOST2, service_down_time=DOWN_TIME)
        moved = _evacuate(cloud, uuid, host=HOST3)      # not the scheduler's first choice
        assert (moved.status, moved.dest_host) == (migrations.DONE, HOST3)
        assert _held(cloud, uuid) == {HOST3: SMALL}
        assert _held(cloud, moved.uuid) == {HOST2: SMALL}
    finally:
        _revive(cloud, HOST2)
    eventually(lambda: _held(cloud, moved.uuid) == {}, 'the source allocation freed')
    assert uuid not in _guests(cloud, HOST2)
    _delete(cloud, uuid)


def test_no_host_keeping_the_groups_policy_fails_the_evacuation_and_leaves_the_server_as_it_was(
        cloud):
    _scheduler_sees_up(cloud, HOST2)
    server_groups.create(cloud.api_engine, project_id='p', user_id='u', name='apart',
                         policy='anti-affinity', level='host')
    uuids = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                           name='apart', flavor='small', count=3, project_id='p',
                           user_id='u', group='apart')
    eventually(lambda: all(
        s.status == servers.ACTIVE
        for s in servers.list_servers(cloud.api_engine, cloud.cells, uuids)),
               'all ACTIVE')
    hosts = {s.host: s.uuid for s in servers.list_servers(cloud.api_engine, cloud.cells,
                                                          uuids)}
    assert sorted(hosts) == [HOST1, HOST2, HOST3]
    uuid = hosts[HOST2]
    _kill(cloud, HOST2)
    try:
        moved = _evacuate(cloud, uuid)
        assert moved.status == migrations.FAILED and moved.error.startswith('NoValidHost')
        shown = servers.show(cloud.api_engine, cloud.cells, uuid)
        assert (shown.status, shown.host, shown.task_state) == (servers.ACTIVE, HOST2, None)
        assert _held(cloud, uuid) == {HOST2: SMALL}
        assert _held(cloud, moved.uuid) == {}
    finally:
        _revive(cloud, HOST2)
    for member in uuids:
        _delete(cloud, member)


def test_a_host_back_without_its_guests_is_cleaned_by_the_cell_conductors_periodic_look(cloud):
    uuid = _boot(cloud, 'disk-lost')
    _kill(cloud, HOST2)
    try:
        moved = _evacuate(cloud, uuid)
        assert moved.status == migrations.DONE
        cloud.computes[HOST2].driver.destroy(uuid)       # its disk lost with the host
        moves_of_cell = cloud.cell_conductors['cell1'].manager.moves
        # Still down: nothing to clean yet.
        assert moves_of_cell.clean_returned_sources(new_context()) == []
    finally:
        _revive(cloud, HOST2)
    # Back with no guest: it asks nothing; its first heartbeat lets the look clean up.
    eventually(lambda: (
        lambda row: row['last_seen_at'] > moved.finished_at)(services.get_service(
            cloud.cell_engines['cell1'], HOST2, 'cellplane-compute')),
               'a heartbeat of the returning host')
    assert moves_of_cell.clean_returned_sources(new_context()) == [moved.uuid]
    assert _held(cloud, moved.uuid) == {}
    assert moves.show_migration(cloud.api_engine, cloud.cells,
                                moved.uuid).migration.status == migrations.COMPLETED
    assert moves_of_cell.clean_returned_sources(new_context()) == []
    assert _held(cloud, uuid) == {HOST1: SMALL}
    _delete(cloud, uuid)
