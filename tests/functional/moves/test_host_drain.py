"""Host drain on the embedded control plane: every instance off the host, or named with the reason it stays.

One cell of four hosts in three racks (r1: host1; r2: host2, host3; r3:
host4). Each test puts its servers on host1 (the other hosts disabled
while they boot), drains host1 through ``cellplane_api.host_drain`` (the
code behind ``cellplane-manage host drain``; the group test an r2 host as
well), checks where each server
and its allocation went and that nothing is left on a migration consumer,
then undrains host1 and deletes its servers.
"""
from __future__ import annotations

import dataclasses
import time

import pytest

from cellplane.context import new_context
from cellplane.objects import (
    failure_domains,
    flavors,
    migrations,
    server_group_places,
    server_groups,
)
from cellplane.traits import COMPUTE_STATUS_DISABLED
from cellplane_api import compute_services, host_drain, moves, servers
from cellplane_api import failure_domains as domains_api
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from tests.support.polling import eventually

DEADLINE_SECONDS = 30
HOSTS = ('cell1-host1', 'cell1-host2', 'cell1-host3', 'cell1-host4')
DRAINED = HOSTS[0]
RACKS = {'r1': [HOSTS[0]], 'r2': [HOSTS[1], HOSTS[2]], 'r3': [HOSTS[3]]}
RACK_OF = {host: rack for rack, hosts in RACKS.items() for host in hosts}
SMALL = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}


@pytest.fixture(scope='module')
def cloud(tmp_path_factory):
    with EmbeddedCloud(tmp_path_factory.mktemp('drain'),
                       CloudPlan.uniform(cells=1, hosts_per_cell=4)) as c:
        c.refresher.refresh()     # maps the hosts, so that the racks may name them
        failure_domains.record_levels(c.api_engine, ['rack'])
        for rack, hosts in RACKS.items():
            domains_api.create(c.api_engine, c.placement, 'rack', rack, hosts=hosts)
        c.refresher.refresh()
        flavors.create(c.api_engine, name='small', vcpus=1, memory_mb=512, root_gb=1)
        yield c


def _service(cloud, host: str) -> compute_services.Located:
    found = compute_services.locate(cloud.api_engine, cloud.cells, 5, top_level=False)
    [one] = [s for s in found.services
             if s.row['host'] == host and s.row['binary'] == compute_services.COMPUTE_BINARY]
    return one


def _set_disabled(cloud, hosts, disabled: bool) -> None:
    for host in hosts:
        compute_services.set_disabled(cloud.api_engine, _service(cloud, host),
                                      disabled=disabled, reason='test', placement=cloud.placement)
    cloud.refresher.refresh()


def _boot(cloud, name: str, count: int = 1, host: str | None = DRAINED,
          **kwargs) -> list[str]:
    """``count`` ACTIVE servers, on ``host`` (the others disabled while they boot) when given."""
    others = [h for h in HOSTS if h != host] if host else []
    _set_disabled(cloud, others, True)
    try:
        uuids = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                               name=name, flavor='small', count=count, project_id='p',
                               user_id='u', **kwargs)
        eventually(lambda: all(
            s.status == servers.ACTIVE
            for s in servers.list_servers(cloud.api_engine, cloud.cells, uuids)),
                   f'{name} ACTIVE')
    finally:
        _set_disabled(cloud, others, False)
    return uuids


def _drain(cloud, host: str = DRAINED, **kwargs) -> host_drain.DrainReport:
    drain = host_drain.HostDrain(cloud.api_engine, cloud.cells, cloud.conductor_api,
                                 new_context(), _service(cloud, host),
                                 placement=cloud.placement, poll_seconds=0.05, **kwargs)
    return drain.run()


def _held(cloud, consumer: str) -> dict[str, dict[str, int]]:
    names = {hosted.node_uuid: name for name, hosted in cloud.computes.items()}
    return {names[rp]: r for rp, r in
            cloud.placement.get_allocations(consumer).allocations.items()}


def _migration(cloud, uuid: str) -> migrations.Migration:
    with cloud.cell_engines['cell1'].connect() as conn:
        return migrations.get(conn, uuid)


def _undrain_and_delete(cloud, uuids) -> None:
    host_drain.undrain(cloud.api_engine, _service(cloud, DRAINED), cloud.placement)
    cloud.refresher.refresh()
    for uuid in uuids:
        servers.delete(cloud.api_engine, cloud.cells,
                       lambda cell: cloud.agents['cell1'].manager.computes, new_context(), uuid)
    eventually(lambda: all(_held(cloud, u) == {} for u in uuids), 'servers deleted')


def _moved_off(cloud, report: host_drain.DrainReport, uuids) -> None:
    """Every server ACTIVE on the host it was reported moved to, holding its allocation there."""
    assert [o.result for o in report.outcomes] == [host_drain.MOVED] * len(uuids)
    assert sorted(o.instance_uuid for o in report.outcomes) == sorted(uuids)
    assert report.empty and report.left == []
    for outcome in report.outcomes:
        shown = servers.show(cloud.api_engine, cloud.cells, outcome.instance_uuid)
        assert (shown.status, shown.host, shown.task_state) == (
            servers.ACTIVE, outcome.dest_host, None)
        assert outcome.dest_host != DRAINED
        assert _held(cloud, outcome.instance_uuid) == {outcome.dest_host: SMALL}
        assert _held(cloud, outcome.migration_uuid) == {}
        assert outcome.seconds is not None and outcome.seconds >= 0


def test_a_live_drain_moves_every_server_off_and_leaves_the_host_disabled(cloud):
    uuids = _boot(cloud, 'live', count=3)
    report = _drain(cloud, mode=host_drain.LIVE, parallel=2)
    _moved_off(cloud, report, uuids)
    assert {_migration(cloud, o.migration_uuid).status for o in report.outcomes} == {
        migrations.DONE}
    one = _service(cloud, DRAINED)
    assert (one.row['disabled'], one.row['disabled_reason']) == (True, 'draining')
    node = cloud.computes[DRAINED].node_uuid
    assert COMPUTE_STATUS_DISABLED in cloud.placement.get_traits(node)
    assert not any(cloud.placement.get_usages(node).values())

    host_drain.undrain(cloud.api_engine, one, cloud.placement)
    back = _service(cloud, DRAINED)
    assert (back.row['disabled'], COMPUTE_STATUS_DISABLED in cloud.placement.get_traits(node)) \
        == (False, False)
    _undrain_and_delete(cloud, uuids)


def test_a_cold_drain_confirms_each_move_so_the_source_is_freed(cloud):
    uuids = _boot(cloud, 'cold', count=2)
    report = _drain(cloud, mode=host_drain.COLD, parallel=2)
    _moved_off(cloud, report, uuids)
    for outcome in report.outcomes:
        migration = _migration(cloud, outcome.migration_uuid)
        assert (migration.migration_type, migration.status, migration.source_host) == (
            migrations.MIGRATION, migrations.CONFIRMED, DRAINED)
        # Asked to be confirmed by its cell conductor as it finishes.
        assert migration.confirm_at_finish
    eventually(lambda: not any(
        u in cloud.computes[DRAINED].driver.list_instances() for u in uuids),
               'the stopped copies destroyed on the source')
    _undrain_and_delete(cloud, uuids)


def test_a_cold_move_its_cell_conductor_leaves_finished_is_confirmed_by_the_drain(
        cloud, monkeypatch):
    # A cell conductor older than migrations.confirm_at_finish finishes the
    # move and waits for a confirm, as before: the drain sends it after
    # CONFIRM_GRACE instead of waiting for its move_timeout.
    uuids = _boot(cloud, 'old-cell', count=1)
    real_get = migrations.get

    def unaware(conn, uuid):
        return dataclasses.replace(real_get(conn, uuid), confirm_at_finish=False)

    asked = []
    real_confirm = moves.confirm

    def confirm(*args, **kwargs):
        asked.append(args[-1])
        return real_confirm(*args, **kwargs)

    monkeypatch.setattr(migrations, 'get', unaware)
    monkeypatch.setattr(moves, 'confirm', confirm)
    monkeypatch.setattr(host_drain, 'CONFIRM_GRACE', 0.0)
    report = _drain(cloud, mode=host_drain.COLD, move_timeout=20)
    monkeypatch.undo()
    _moved_off(cloud, report, uuids)
    [outcome] = report.outcomes
    assert asked == uuids           # the drain's confirm, through the API role
    assert _migration(cloud, outcome.migration_uuid).status == migrations.CONFIRMED
    _undrain_and_delete(cloud, uuids)


class _LateToFree:
    """The cell conductor's Placement client, removing a consumer's allocation a second late."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def unclaim(self, consumer_uuid: str) -> bool:
        time.sleep(1.0)
        return self._inner.unclaim(consumer_uuid)


def test_a_live_move_is_reported_once_its_source_allocation_is_freed(cloud):
    # The cell conductor marks a live migration done, then frees its source
    # allocation: a drain that reported the move at "done" left the
    # migration's consumer holding the drained host (the demo's Placement
    # check, read right after the drain, then failed on a loaded machine).
    uuids = _boot(cloud, 'late', count=1)
    moves = cloud.cell_conductors['cell1'].manager.moves
    real, moves._placement = moves._placement, _LateToFree(moves._placement)
    try:
        report = _drain(cloud, mode=host_drain.LIVE)
    finally:
        moves._placement = real
    _moved_off(cloud, report, uuids)
    _undrain_and_delete(cloud, uuids)


@pytest.mark.parametrize('parallel', [1, 3])
def test_parallel_bounds_the_moves_in_flight(cloud, parallel):
    uuids = _boot(cloud, f'par{parallel}', count=3)
    # A copy that takes a while, so that moves asked together are in flight together.
    cloud.computes[DRAINED].driver.settings.move_seconds = 0.5
    try:
        report = _drain(cloud, mode=host_drain.LIVE, parallel=parallel)
    finally:
        cloud.computes[DRAINED].driver.settings.move_seconds = 0.0
    _moved_off(cloud, report, uuids)
    moved = sorted((_migration(cloud, o.migration_uuid) for o in report.outcomes),
                   key=lambda m: m.created_at)
    # Each move asked before the ones before it ended: how many ran at once.
    overlapping = max(sum(1 for earlier in moved[:n] if earlier.updated_at > m.created_at) + 1
                      for n, m in enumerate(moved))
    assert overlapping == parallel
    _undrain_and_delete(cloud, uuids)


def test_past_the_deadline_no_move_starts_and_what_is_left_stays_active_in_place(cloud):
    uuids = _boot(cloud, 'late', count=3)
    cloud.computes[DRAINED].driver.settings.move_seconds = 1.0
    try:
        # The first move starts at once and outlasts the deadline.
        report = _drain(cloud, mode=host_drain.LIVE, parallel=1, deadline=0.2)
    finally:
        cloud.computes[DRAINED].driver.settings.move_seconds = 0.0
    assert report.deadline_passed
    assert [o.result for o in report.outcomes] == [
        host_drain.MOVED, host_drain.NOT_STARTED, host_drain.NOT_STARTED]
    assert 'the deadline (0.2 s) passed' in report.outcomes[1].reason
    left = [o.instance_uuid for o in report.outcomes[1:]]
    assert not report.empty and sorted(r['uuid'] for r in report.left) == sorted(left)
    for uuid in left:
        shown = servers.show(cloud.api_engine, cloud.cells, uuid)
        assert (shown.status, shown.host) == (servers.ACTIVE, DRAINED)
        assert _held(cloud, uuid) == {DRAINED: SMALL}
    _undrain_and_delete(cloud, uuids)


def test_a_server_still_building_on_the_host_is_moved_once_built(cloud):
    driver = cloud.computes[DRAINED].driver
    driver.settings.build_seconds = 3.0
    others = HOSTS[1:]
    _set_disabled(cloud, others, True)
    try:
        [uuid] = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                                name='slow', flavor='small', project_id='p', user_id='u')
        eventually(lambda: (
            lambda s: s.status == servers.BUILD and s.host == DRAINED)(
            servers.show(cloud.api_engine, cloud.cells, uuid)),
                   'its build on the host begun')
    finally:
        _set_disabled(cloud, others, False)
        driver.settings.build_seconds = 0.0
    # Still building as the drain begins (a move of it is refused until then).
    assert servers.show(cloud.api_engine, cloud.cells, uuid).status == servers.BUILD
    report = _drain(cloud, mode=host_drain.LIVE)
    _moved_off(cloud, report, [uuid])
    _undrain_and_delete(cloud, [uuid])


def test_a_member_no_other_rack_can_take_is_named_with_the_reason_and_stays(cloud):
    server_groups.create(cloud.api_engine, project_id='p', user_id='u', name='web',
                         policy='anti-affinity', level='rack')
    members = _boot(cloud, 'web', count=3, host=None, group='web')
    hosts = {s.uuid: s.host for s in servers.list_servers(cloud.api_engine, cloud.cells,
                                                          members)}
    assert sorted(RACK_OF[h] for h in hosts.values()) == ['r1', 'r2', 'r3']
    [stuck] = [u for u, h in hosts.items() if h == DRAINED]
    [plain] = _boot(cloud, 'plain')
    cold = _drain(cloud, mode=host_drain.COLD, parallel=2)
    by_uuid = {o.instance_uuid: o for o in cold.outcomes}
    assert set(by_uuid) == {stuck, plain}
    assert by_uuid[plain].result == host_drain.MOVED
    refused = by_uuid[stuck]
    assert refused.result == host_drain.NOT_MOVED
    assert refused.reason.startswith('NoValidHost')
    assert 'anti-affinity at rack' in refused.reason
    assert [r['uuid'] for r in cold.left] == [stuck]
    shown = servers.show(cloud.api_engine, cloud.cells, stuck)
    assert (shown.status, shown.host, shown.task_state) == (servers.ACTIVE, DRAINED, None)
    assert _held(cloud, stuck) == {DRAINED: SMALL}
    assert _held(cloud, refused.migration_uuid) == {}
    # Live, the same answer: the policy is never broken.
    live = _drain(cloud, mode=host_drain.LIVE)
    [again] = live.outcomes
    assert (again.instance_uuid, again.result) == (stuck, host_drain.NOT_MOVED)
    assert 'anti-affinity at rack' in again.reason
    assert servers.show(cloud.api_engine, cloud.cells, stuck).host == DRAINED

    # The member in r2 has one place to go: the other host of its own rack,
    # and its place in the group (rack r2) goes with it.
    group = server_groups.get(cloud.api_engine, 'web')
    [in_r2] = [u for u, h in hosts.items() if RACK_OF[h] == 'r2']
    place = {m.instance_uuid: m.domain
             for m in server_group_places.members(cloud.api_engine, group.uuid)}[in_r2]
    assert place is not None
    report = _drain(cloud, host=hosts[in_r2], mode=host_drain.LIVE)
    [moved] = [o for o in report.outcomes if o.instance_uuid == in_r2]
    assert moved.result == host_drain.MOVED
    assert RACK_OF[moved.dest_host] == 'r2' and moved.dest_host != hosts[in_r2]
    assert {m.instance_uuid: m.domain for m in server_group_places.members(
        cloud.api_engine, group.uuid)}[in_r2] == place
    host_drain.undrain(cloud.api_engine, _service(cloud, hosts[in_r2]), cloud.placement)
    _undrain_and_delete(cloud, [*members, plain])
