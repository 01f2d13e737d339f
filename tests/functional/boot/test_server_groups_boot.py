"""Server groups through the whole embedded control plane: API role, super conductor, scheduler, cells.

Two cells of three hosts, three racks in two rows, made as an operator
makes them (``cellplane_api.failure_domains``, so each is a Placement
aggregate of its hosts' providers):

    row A: rack r1 (cell1-host1, cell1-host2), rack r2 (cell1-host3, cell2-host1)
    row B: rack r3 (cell2-host2, cell2-host3)
"""
from __future__ import annotations

import time

import pytest

from cellplane.context import new_context
from cellplane.objects import failure_domains, flavors, server_group_places, server_groups
from cellplane_api import failure_domains as domains_api
from cellplane_api import servers
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from compute_agent.rpcapi import ComputeAPI
from compute_agent.virt.fake import FakeSettings

DEADLINE_SECONDS = 30
RACKS = {'r1': ['cell1-host1', 'cell1-host2'], 'r2': ['cell1-host3', 'cell2-host1'],
         'r3': ['cell2-host2', 'cell2-host3']}
ROWS = {'A': ['r1', 'r2'], 'B': ['r3']}
RACK_OF = {host: rack for rack, hosts in RACKS.items() for host in hosts}
ROW_OF = {host: row for row, racks in ROWS.items() for r in racks for host in RACKS[r]}


def _cloud(tmp_path, driver_for=None, *, racks=None, rows=None, hosts_per_cell=3):
    cloud = EmbeddedCloud(tmp_path / 'state', CloudPlan.uniform(
        cells=2, hosts_per_cell=hosts_per_cell, driver_for=driver_for)).start()
    cloud.refresher.refresh()   # maps the hosts, so that domains may name them
    failure_domains.record_levels(cloud.api_engine, ['rack', 'row'])
    for rack, hosts in (racks or RACKS).items():
        domains_api.create(cloud.api_engine, cloud.placement, 'rack', rack, hosts=hosts)
    for row, racks in (rows or ROWS).items():
        domains_api.create(cloud.api_engine, cloud.placement, 'row', row,
                           contains=[f'rack:{r}' for r in racks])
    cloud.refresher.refresh()
    flavors.create(cloud.api_engine, name='small', vcpus=1, memory_mb=512, root_gb=1)
    return cloud


@pytest.fixture
def cloud(tmp_path):
    cloud = _cloud(tmp_path)
    yield cloud
    cloud.stop()


def boot(cloud, name, count=1, **kwargs) -> list[servers.Server]:
    uuids = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                           name=name, flavor='small', count=count, project_id='p',
                           user_id='u', **kwargs)
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        found = servers.list_servers(cloud.api_engine, cloud.cells, uuids)
        if all(s.status in servers.FINAL_STATUSES for s in found):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.05)


def group(cloud, name, policy, level, **kwargs) -> server_groups.ServerGroup:
    return server_groups.create(cloud.api_engine, project_id='p', user_id='u', name=name,
                                policy=policy, level=level, **kwargs)


def test_anti_affinity_at_rack_puts_three_in_three_racks_and_refuses_a_fourth(cloud):
    group(cloud, 'web', 'anti-affinity', 'rack')
    placed = boot(cloud, 'web', count=3, group='web')
    assert {s.status for s in placed} == {servers.ACTIVE}
    assert sorted(RACK_OF[s.host] for s in placed) == ['r1', 'r2', 'r3']

    [fourth] = boot(cloud, 'web-4', group='web')
    assert fourth.status == servers.ERROR
    assert 'anti-affinity at rack: group web has members in every rack (r1, r2, r3)' \
        in fourth.fault
    # The refused member holds no place; the three others hold theirs.
    held = {m.instance_uuid: m.domain for m in server_group_places.members(
        cloud.api_engine, server_groups.get(cloud.api_engine, 'web').uuid)}
    assert held[fourth.uuid] is None
    assert len({held[s.uuid] for s in placed}) == 3


def _fourth_member_of_three_racks(cloud) -> str:
    """The fault of a fourth member of a group spread over the three racks."""
    group(cloud, 'web', 'anti-affinity', 'rack')
    boot(cloud, 'web', count=3, group='web')
    [fourth] = boot(cloud, 'web-4', group='web')
    assert fourth.status == servers.ERROR
    return fourth.fault


def test_a_member_refused_by_full_racks_is_told_the_policy_level_racks_and_count(cloud):
    assert ('anti-affinity at rack: group web has members in every rack (r1, r2, r3); '
            '1 member asked for beside 3 placed, 3 racks') in _fourth_member_of_three_racks(cloud)


def test_racks_that_empty_the_candidates_are_blamed_instead_of_a_resource(cloud):
    fault = _fourth_member_of_three_racks(cloud)
    assert 'each asked alone' not in fault and 'DISK_GB to give' not in fault
    assert ('Placement has hosts for this flavor, but none where the failure domains '
            'allow: member_of !in:rack r1, rack r2, rack r3 (server group web)') in fault


def test_the_aggregate_uuids_of_a_refusal_are_shown_with_their_domain_names(cloud):
    fault = _fourth_member_of_three_racks(cloud)
    for rack in RACKS:
        uuid = failure_domains.get(cloud.api_engine, f'rack:{rack}').uuid
        assert f'{uuid} (rack {rack})' in fault


def test_a_multi_create_that_cannot_fit_says_how_many_were_asked_for(cloud):
    group(cloud, 'db', 'anti-affinity', 'row')
    asked = boot(cloud, 'db', count=3, group='db')
    assert {s.status for s in asked} == {servers.ERROR}
    for server in asked:
        assert 'anti-affinity at row: group db has members in every row (A, B); ' \
            '3 members asked for, 2 rows' in server.fault


def test_each_member_of_a_refused_multi_create_is_named_in_its_own_fault(cloud):
    group(cloud, 'db', 'anti-affinity', 'row')
    asked = boot(cloud, 'db', count=3, group='db')
    for server in asked:
        assert server.fault.startswith(
            f'NoValidHost: No valid host for instance {server.uuid} ('), server.fault
        others = [s.uuid for s in asked if s.uuid != server.uuid]
        assert not any(uuid in server.fault for uuid in others), server.fault


def test_soft_anti_affinity_at_rack_spreads_and_a_fourth_lands_anyway(cloud):
    group(cloud, 'web', 'soft-anti-affinity', 'rack')
    placed = boot(cloud, 'web', count=3, group='web')
    assert sorted(RACK_OF[s.host] for s in placed) == ['r1', 'r2', 'r3']
    [fourth] = boot(cloud, 'web-4', group='web')
    assert fourth.status == servers.ACTIVE


def test_max_per_domain_lets_two_members_share_a_rack(cloud):
    group(cloud, 'web', 'anti-affinity', 'rack', max_per_domain=2)
    placed = boot(cloud, 'web', count=6, group='web')
    assert {s.status for s in placed} == {servers.ACTIVE}
    racks = [RACK_OF[s.host] for s in placed]
    assert sorted(racks) == ['r1', 'r1', 'r2', 'r2', 'r3', 'r3']
    [seventh] = boot(cloud, 'web-7', group='web')
    assert seventh.status == servers.ERROR


def test_a_deleted_member_gives_its_rack_back(cloud):
    group(cloud, 'web', 'anti-affinity', 'rack')
    placed = boot(cloud, 'web', count=3, group='web')
    gone = placed[0]
    servers.delete(cloud.api_engine, cloud.cells,
                   lambda cell: ComputeAPI(cloud._cell_transport(cell.transport_url),
                                           conf=cloud.conf),
                   new_context(), gone.uuid)
    deadline = time.monotonic() + DEADLINE_SECONDS
    while cloud.placement.get_allocations(gone.uuid).allocations:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    [again] = boot(cloud, 'web-4', group='web')
    assert again.status == servers.ACTIVE
    assert RACK_OF[again.host] == RACK_OF[gone.host]


def test_affinity_at_row_keeps_every_member_in_one_row(cloud):
    group(cloud, 'db', 'affinity', 'row')
    placed = boot(cloud, 'db', count=3, group='db')
    assert {s.status for s in placed} == {servers.ACTIVE}
    assert len({ROW_OF[s.host] for s in placed}) == 1
    [later] = boot(cloud, 'db-4', group='db')
    assert ROW_OF[later.host] == ROW_OF[placed[0].host]


def test_different_domain_row_lands_outside_the_row_of_the_instance_named(cloud):
    [x] = boot(cloud, 'x')
    for _ in range(3):
        [y] = boot(cloud, 'y', hints={'different_domain': [f'row:{x.uuid}']})
        assert y.status == servers.ACTIVE
        assert ROW_OF[y.host] != ROW_OF[x.host]


def test_a_hint_whose_domain_leaves_no_host_is_blamed_instead_of_a_resource(tmp_path):
    # One row holds every rack: different_domain row:X leaves Placement nothing.
    cloud = _cloud(tmp_path, rows={'A': ['r1', 'r2', 'r3']})
    try:
        [x] = boot(cloud, 'x')
        [y] = boot(cloud, 'y', hints={'different_domain': [f'row:{x.uuid}']})
        assert y.status == servers.ERROR
        assert 'each asked alone' not in y.fault and 'to give' not in y.fault
        assert ('Placement has hosts for this flavor, but none where the failure domains '
                'allow: member_of !in:row A (different_domain hint)') in y.fault
        row = failure_domains.get(cloud.api_engine, 'row:A').uuid
        assert f'{row} (row A)' in y.fault
    finally:
        cloud.stop()


def test_same_domain_rack_lands_in_the_rack_of_the_instance_named(cloud):
    [x] = boot(cloud, 'x')
    [y] = boot(cloud, 'y', hints={'same_domain': [f'rack:{x.uuid}']})
    assert RACK_OF[y.host] == RACK_OF[x.host]


def test_affinity_at_row_holds_after_a_forced_reschedule(tmp_path):
    # Every instance's first build fails (at random, once per instance, with
    # certainty): each member is rescheduled once, to an alternate. An
    # alternate is of the claimed host's cell and row: here each row is one
    # cell of four hosts, so there is always one.
    racks = {'r1': ['cell1-host1', 'cell1-host2'], 'r2': ['cell1-host3', 'cell1-host4'],
             'r3': ['cell2-host1', 'cell2-host2'], 'r4': ['cell2-host3', 'cell2-host4']}
    rows = {'A': ['r1', 'r2'], 'B': ['r3', 'r4']}
    row_of = {h: row for row, rs in rows.items() for r in rs for h in racks[r]}
    cloud = _cloud(tmp_path, driver_for=lambda cell, host: FakeSettings(fail_fraction=1.0),
                   racks=racks, rows=rows, hosts_per_cell=4)
    try:
        group(cloud, 'db', 'affinity', 'row')
        placed = boot(cloud, 'db', count=2, group='db')
        assert {s.status for s in placed} == {servers.ACTIVE}, [s.fault for s in placed]
        assert len({row_of[s.host] for s in placed}) == 1
        shown = [servers.show(cloud.api_engine, cloud.cells, s.uuid) for s in placed]
        failed_builds = [e for s in shown for e in s.events if e.failed_build]
        assert len(failed_builds) == 2
        assert all(row_of[e.host] == row_of[placed[0].host] for e in failed_builds)
    finally:
        cloud.stop()




def test_a_member_that_ended_in_error_in_its_cell_holds_its_rack_no_more(tmp_path):
    # Both hosts of r1 fail every build: the member placed there is
    # rescheduled within r1 and ends in ERROR. Its cell cannot write the API
    # database; the next scheduler run finds it in ERROR there and frees r1.
    r1 = set(RACKS['r1'])
    cloud = _cloud(tmp_path, driver_for=lambda cell, host: FakeSettings(
        fail_all=host in r1, failure_reason='rack r1 has no power'))
    try:
        group(cloud, 'web', 'anti-affinity', 'rack')
        placed = boot(cloud, 'web', count=3, group='web')
        [failed] = [s for s in placed if s.status == servers.ERROR]
        assert 'rack r1 has no power' in failed.fault
        [fourth] = boot(cloud, 'web-4', group='web')
        shown = servers.show(cloud.api_engine, cloud.cells, fourth.uuid)
        assert RACK_OF[shown.events[0].host] == 'r1'
        assert 'No valid host' not in (fourth.fault or '')
    finally:
        cloud.stop()


def test_host_affinity_follows_a_first_member_that_a_reschedule_moved(tmp_path):
    # cell1-host1 is the roomiest (the weighers prefer it) and fails every
    # build: the first member is claimed there, held there, and runs on an
    # alternate. The second member joins it where it runs.
    def driver_for(cell, host):
        if host == 'cell1-host1':
            return FakeSettings(memory_mb=262144, fail_all=True)
        return FakeSettings()
    cloud = _cloud(tmp_path, driver_for=driver_for)
    try:
        group(cloud, 'pair', 'affinity', 'host')
        [first] = boot(cloud, 'pair-1', group='pair')
        assert first.status == servers.ACTIVE and first.host != 'cell1-host1'
        events = servers.show(cloud.api_engine, cloud.cells, first.uuid).events
        [failed] = [e for e in events if e.failed_build]
        assert failed.host == 'cell1-host1'
        [second] = boot(cloud, 'pair-2', group='pair')
        assert (second.status, second.host) == (servers.ACTIVE, first.host)
    finally:
        cloud.stop()


def test_anti_affinity_at_the_host_level_puts_members_on_separate_hosts(cloud):
    group(cloud, 'spread', 'anti-affinity', 'host')
    placed = boot(cloud, 'spread', count=2, group='spread')
    placed += boot(cloud, 'spread-3', group='spread')
    assert {s.status for s in placed} == {servers.ACTIVE}
    assert len({s.host for s in placed}) == 3
