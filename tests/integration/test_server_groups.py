"""Server groups end to end through the real daemons on RabbitMQ and PostgreSQL.

Two cells, three racks in two rows, two scheduler workers, and every
instance's first build fails (``[fake_driver] fail_fraction = 1.0``: once
per instance), so every member lands through a reschedule to an alternate:

    row A: rack r1 (c1-1, c1-2), rack r2 (c1-3, c1-4)      cell1
    row B: rack r3 (c2-1, c2-2)                            cell2

The levels are in top.conf, so both scheduler workers and the CLI read them.
"""
from __future__ import annotations

import concurrent.futures
import time

import pytest

from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment

RACKS = {'r1': ['c1-1', 'c1-2'], 'r2': ['c1-3', 'c1-4'], 'r3': ['c2-1', 'c2-2']}
ROWS = {'A': ['r1', 'r2'], 'B': ['r3']}
RACK_OF = {h: r for r, hosts in RACKS.items() for h in hosts}
ROW_OF = {h: row for row, racks in ROWS.items() for r in racks for h in RACKS[r]}
FLAKY = {'fail_fraction': 1.0}


class _LevelsInTop(Deployment):
    def _scheduler_section(self):
        return {**super()._scheduler_section(), 'failure_domain_levels': 'rack,row'}


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    deployment = _LevelsInTop(
        tmp_path_factory.mktemp('server-groups'), rabbit_server, postgres_server,
        [ComputePlan('c1', 'cell1', hosted_hosts=4, fake_driver=FLAKY),
         ComputePlan('c2', 'cell2', hosted_hosts=2, fake_driver=FLAKY)],
        scheduler_workers=2).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        for rack, hosts in RACKS.items():
            deployment.cli('failure-domain', 'create', 'rack', rack,
                           *[a for h in hosts for a in ('--host', h)])
        for row, racks in ROWS.items():
            deployment.cli('failure-domain', 'create', 'row', row,
                           *[a for r in racks for a in ('--contains', f'rack:{r}')])
        yield deployment
    finally:
        deployment.destroy()


def _create(deployment, name, *args, exit_code=0):
    return deployment.cli('server', 'create', name, '--flavor', 'small', *args, '--wait',
                          '--timeout', str(EVENTUALLY_SECONDS), exit_code=exit_code)


def _show(deployment, server_id):
    return deployment.cli('server', 'show', server_id)


def _rescheduled(deployment, server_id) -> bool:
    return any(e['result'] == 'failed' for e in _show(deployment, server_id)['events'])


def test_hard_anti_affinity_at_rack_three_in_three_racks_then_no_valid_host(deployment):
    deployment.cli('server', 'group', 'create', 'web', '--policy', 'anti-affinity',
                   '--level', 'rack')
    placed = _create(deployment, 'web', '--count', '3', '--group', 'web')
    assert {s['status'] for s in placed} == {'ACTIVE'}
    assert sorted(RACK_OF[s['host']] for s in placed) == ['r1', 'r2', 'r3']
    assert all(_rescheduled(deployment, s['id']) for s in placed)

    [fourth] = _create(deployment, 'web-4', '--group', 'web', exit_code=1)
    assert fourth['status'] == 'ERROR'
    fault = _show(deployment, fourth['id'])['fault']
    assert 'anti-affinity at rack: group web has members in every rack (r1, r2, r3)' in fault

    shown = deployment.cli('server', 'group', 'show', 'web')
    assert sorted(m['rack'] or '-' for m in shown['members']) == ['-', 'r1', 'r2', 'r3']


def test_soft_anti_affinity_at_rack_spreads_and_the_fourth_lands_anyway(deployment):
    deployment.cli('server', 'group', 'create', 'soft', '--policy', 'soft-anti-affinity',
                   '--level', 'rack')
    placed = _create(deployment, 'soft', '--count', '3', '--group', 'soft')
    assert sorted(RACK_OF[s['host']] for s in placed) == ['r1', 'r2', 'r3']
    [fourth] = _create(deployment, 'soft-4', '--group', 'soft')
    assert fourth['status'] == 'ACTIVE'


def test_affinity_at_row_keeps_every_member_in_one_row_through_reschedules(deployment):
    deployment.cli('server', 'group', 'create', 'db', '--policy', 'affinity',
                   '--level', 'row')
    placed = _create(deployment, 'db', '--count', '2', '--group', 'db')
    placed += _create(deployment, 'db-3', '--group', 'db')
    assert {s['status'] for s in placed} == {'ACTIVE'}
    assert len({ROW_OF[s['host']] for s in placed}) == 1
    for server in placed:
        events = _show(deployment, server['id'])['events']
        failed = [e for e in events if e['result'] == 'failed']
        assert failed, f'{server["name"]} was not rescheduled'
        assert {ROW_OF[e['host']] for e in events} == {ROW_OF[server['host']]}
    record = deployment.cli('scheduler', 'records', '--instance', placed[-1]['id'])[0]
    group = record['record']['request']['instance_group']
    assert (group['name'], group['level'], len(group['member_of'])) == ('db', 'row', 1)


def test_different_domain_row_lands_outside_the_row_of_the_instance_named(deployment):
    [x] = _create(deployment, 'x')
    for n in range(2):
        [y] = _create(deployment, f'y{n}', '--hint', f'different_domain=row:{x["id"]}')
        assert ROW_OF[y['host']] != ROW_OF[x['host']]


def test_two_scheduler_workers_racing_one_anti_affinity_group_leave_one_member_per_rack(
        deployment):
    deployment.cli('server', 'group', 'create', 'race', '--policy', 'anti-affinity',
                   '--level', 'rack')
    # Six requests at once for three racks, each its own boot message: the
    # super conductor runs them concurrently and both workers answer them.
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda n: deployment.cli(
            'server', 'create', f'race-{n}', '--flavor', 'small', '--group', 'race'),
            range(6)))
    uuids = [a[0]['id'] for a in answers]
    shown = deployment.cli('server', 'group', 'show', 'race')
    assert sorted(m['id'] for m in shown['members']) == sorted(uuids)
    final = _wait_final(deployment, uuids)
    active = [s for s in final if s['status'] == 'ACTIVE']
    assert len(active) == 3, final
    assert sorted(RACK_OF[s['host']] for s in active) == ['r1', 'r2', 'r3']


def _wait_final(deployment, uuids):

    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        found = [s for s in deployment.cli('server', 'list') if s['id'] in uuids]
        if len(found) == len(uuids) and all(s['status'] in ('ACTIVE', 'ERROR')
                                            for s in found):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(1)


def test_two_scheduler_workers_placing_first_members_of_an_affinity_group_keep_one_rack(
        deployment):
    deployment.cli('server', 'group', 'create', 'together', '--policy', 'affinity',
                   '--level', 'rack')
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda n: deployment.cli(
            'server', 'create', f'together-{n}', '--flavor', 'small', '--group',
            'together'), range(4)))
    final = _wait_final(deployment, [a[0]['id'] for a in answers])
    assert {s['status'] for s in final} == {'ACTIVE'}, final
    assert len({RACK_OF[s['host']] for s in final}) == 1
