"""The boot flow end to end: real daemons started by the local launcher, boots through the CLI.

One deployment for the module (``tests/support/deployment.py``): Placement,
a scheduler and a super conductor on the top-level vhost, a cell conductor
per cell on its own vhost, and twelve compute agents, each with its own
config file; an API database, two cell databases and Placement's, on
PostgreSQL. The agents of two cells x five hosts serve ordinary boots
(``cell1-host1`` fails every build with "No more IP addresses"); two more
hosts of cell2 carry the trait CUSTOM_DOOMED and fail every build, each with
its own reason, and only the flavor ``doomed`` goes there.

Each case boots under a project of its own, so Placement's usages per
project are that case's alone.
"""
from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from cellplane.db.cell.models import instance_action_events, instance_actions
from tests.support.deployment import ComputePlan, Deployment

NO_IP = 'No more IP addresses'
DISK_QUOTA = 'Disk quota exceeded'
FAILING_HOST = 'cell1-host1'
DOOMED = {'doomed-1': NO_IP, 'doomed-2': DISK_QUOTA}
STANDARD = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
BUILD_EVENT = 'compute_build_and_run_instance'


def _computes() -> list[ComputePlan]:
    plans = []
    for cell in ('cell1', 'cell2'):
        for n in range(1, 6):
            host = f'{cell}-host{n}'
            driver = ({'fail_all': True, 'failure_reason': NO_IP}
                      if host == FAILING_HOST else {})
            plans.append(ComputePlan(host, cell, driver))
    for host, reason in DOOMED.items():
        plans.append(ComputePlan(host, 'cell2', {
            'fail_all': True, 'failure_reason': reason, 'traits': 'CUSTOM_DOOMED'}))
    return plans


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    deployment = Deployment(tmp_path_factory.mktemp('boot-flow'), rabbit_server,
                            postgres_server, _computes(), max_attempts=3).create()
    try:
        deployment.cli('flavor', 'create', 'standard', '--vcpus', '1', '--ram', '512',
                       '--disk', '1', '--property', 'trait:CUSTOM_DOOMED=forbidden')
        deployment.cli('flavor', 'create', 'doomed', '--vcpus', '1', '--ram', '256',
                       '--disk', '1', '--property', 'trait:CUSTOM_DOOMED=required')
        yield deployment
    finally:
        deployment.destroy()


@pytest.fixture(scope='module')
def fifty(deployment):
    """50 instances of one multi-create, booted through the CLI, waited for."""
    return deployment.cli('server', 'create', 'web', '--flavor', 'standard', '--count',
                          '50', '--project', 'p-fifty', '--user', 'u1', '--wait')


def _show(deployment: Deployment, uuid: str) -> dict:
    return deployment.cli('server', 'show', uuid)


def _provider_uuids(placement) -> dict[str, str]:
    body = placement.transport.request('GET', '/resource_providers').body
    return {p['name']: p['uuid'] for p in body['resource_providers']}


def _usages(placement, project_id: str) -> dict[str, int]:
    # 1.9: the flat form (from 1.38 usages are grouped by consumer type).
    body = placement.transport.request('GET', f'/usages?project_id={project_id}',
                                       microversion='1.9').body
    return {rc: n for rc, n in body['usages'].items() if n}


def test_fifty_instances_go_active_in_both_cells_with_allocations_on_their_hosts(
        deployment, fifty):
    assert len(fifty) == 50
    assert {s['status'] for s in fifty} == {'ACTIVE'}, fifty
    assert {s['cell'] for s in fifty} == {'cell1', 'cell2'}
    assert not {s['host'] for s in fifty} & {FAILING_HOST, *DOOMED}

    placement = deployment.placement()
    assert _usages(placement, 'p-fifty') == {rc: 50 * n for rc, n in STANDARD.items()}
    providers = _provider_uuids(placement)
    for server in fifty:
        held = placement.get_allocations(server['id']).allocations
        assert held == {providers[server['host']]: STANDARD}, server


def test_instances_sent_to_the_failing_host_are_rebuilt_on_an_alternate_of_its_cell(
        deployment, fifty):
    # Which instances were ever built on the failing host, from cell1's own
    # record of build attempts; the CLI then shows each one's history.
    engine = deployment.cell_engine('cell1')
    try:
        with engine.connect() as conn:
            tried_there = set(conn.execute(
                sa.select(instance_actions.c.instance_uuid).join(
                    instance_action_events,
                    instance_action_events.c.action_id == instance_actions.c.id)
                .where(instance_action_events.c.event == BUILD_EVENT,
                       instance_action_events.c.host == FAILING_HOST)).scalars())
    finally:
        engine.dispose()
    # A multi-create spreads over every host with room, the failing one included.
    assert tried_there, 'no instance was ever scheduled to the failing host'
    assert tried_there <= {s['id'] for s in fifty}
    hit = {uuid: _show(deployment, uuid) for uuid in sorted(tried_there)}
    for uuid, shown in hit.items():
        builds = [e for e in shown['events'] if e['event'] == BUILD_EVENT]
        failed = [e for e in builds if e['result'] == 'failed']
        assert [(e['host'], e['reason']) for e in failed] == [(FAILING_HOST, NO_IP)], shown
        assert shown['status'] == 'ACTIVE' and shown['cell'] == 'cell1', shown
        assert shown['host'] != FAILING_HOST and shown['host'].startswith('cell1-'), shown
        assert builds[-1]['result'] == 'ok' and builds[-1]['host'] == shown['host'], shown

    placement = deployment.placement()
    failing_provider = _provider_uuids(placement)[FAILING_HOST]
    held = placement.transport.request(
        'GET', f'/resource_providers/{failing_provider}/allocations').body['allocations']
    assert held == {}, 'the failing host still holds allocations'


def test_when_every_host_fails_instances_end_in_error_naming_each_host_and_reason(
        deployment):
    doomed = deployment.cli('server', 'create', 'doomed', '--flavor', 'doomed', '--count',
                            '2', '--project', 'p-doomed', '--user', 'u1', '--wait')

    assert [s['status'] for s in doomed] == ['ERROR', 'ERROR'], doomed
    placement = deployment.placement()
    for server in doomed:
        shown = _show(deployment, server['id'])
        fault = shown['fault'] or ''
        for host, reason in DOOMED.items():
            assert f'{host}: build failed: {reason}' in fault, fault
        failed = {(e['host'], e['reason']) for e in shown['events']
                  if e['event'] == BUILD_EVENT and e['result'] == 'failed'}
        assert failed == set(DOOMED.items()), shown
        assert placement.get_allocations(server['id']).allocations == {}
    assert _usages(placement, 'p-doomed') == {}


def test_cell_services_run_without_top_level_options_and_still_boot_and_reschedule(
        deployment, fifty):
    top_bus = deployment.transport_url('top')
    cell_files = [deployment.config('cell1.conf'), deployment.config('cell2.conf')]
    compute_files = sorted(deployment.config_dir.glob('compute-*.conf'))
    for path in cell_files + compute_files:
        text = path.read_text()
        assert '[api_database]' not in text and deployment.databases['api'] not in text, path
        assert top_bus not in text, path
    for path in compute_files:
        assert '[database]' not in path.read_text(), path

    # Each cell daemon was started with its own cell's file and nothing else.
    for pid_file in deployment.run_dir.glob('*.pid'):
        record = json.loads(pid_file.read_text())
        name = pid_file.stem
        if name.startswith('conductor-cell') or record['kind'] == 'compute':
            assert len(record['config_files']) == 1, record
            started_with = record['config_files'][0]
            assert started_with.endswith(f'{name.removeprefix("conductor-")}.conf'), record

    # With those daemons, boots landed in both cells, and cell1's conductor
    # rescheduled the builds its failing host refused to alternates it claimed.
    assert {s['cell'] for s in fifty} == {'cell1', 'cell2'}
    conductor_log = deployment.log('conductor-cell1')
    rescheduled = [s['id'] for s in fifty
                   if f'Build of instance {s["id"]} failed on {FAILING_HOST}' in conductor_log]
    assert rescheduled
    for uuid in rescheduled:
        assert f'Instance {uuid} rescheduled to cell1-host' in conductor_log


def test_launcher_status_shows_every_daemon_running(deployment):
    status = deployment.launch('status').splitlines()
    rows = {line.split()[0]: line.split()[2] for line in status[1:] if line.strip()}
    expected = {'placement', 'scheduler', 'super-conductor', 'conductor-cell1',
                'conductor-cell2', *(f'compute-{c.host}' for c in _computes())}
    assert rows == {name: 'running' for name in expected}
