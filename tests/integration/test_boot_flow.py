"""The boot flow end to end: real daemons started by the local launcher, boots through the CLI.

One deployment for the module (``tests/support/deployment.py``): Placement,
a scheduler and a super conductor on the top-level vhost, a cell conductor
per cell on its own vhost, and twelve compute agents, each with its own
config file; an API database, two cell databases and Placement's, on
PostgreSQL. The agents of two cells x five hosts serve ordinary boots
(``cell1-host1`` fails every build with "No more IP addresses"); two more
hosts of cell2 carry the trait CUSTOM_DOOMED and fail every build, each with
its own reason, and only the flavor ``doomed`` goes there. The same two and
``seq-ok`` (which builds) carry CUSTOM_SEQ, with less free memory each in
that order, for the flavor ``sequence``: a forced A fails, B fails, C builds.

Each case boots under a project of its own, so Placement's usages per
project are that case's alone.
"""
from __future__ import annotations

import json
import socket
import time

import pytest
import sqlalchemy as sa

from cellplane.db import engines
from cellplane.db.api.models import cell_mappings
from cellplane.db.cell.models import instance_action_events, instance_actions
from tests.support.deployment import ComputePlan, Deployment

NO_IP = 'No more IP addresses'
DISK_QUOTA = 'Disk quota exceeded'
FAILING_HOST = 'cell1-host1'
DOOMED = {'doomed-1': NO_IP, 'doomed-2': DISK_QUOTA}
STANDARD = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
# Most free memory first: the RAM weigher (spreading) ranks them in this order.
SEQUENCE = [('doomed-1', 65536), ('doomed-2', 49152), ('seq-ok', 32768)]
BUILD_EVENT = 'compute_build_and_run_instance'
RECORD_WAIT_SECONDS = 30


def _computes() -> list[ComputePlan]:
    plans = []
    for cell in ('cell1', 'cell2'):
        for n in range(1, 6):
            host = f'{cell}-host{n}'
            driver = ({'fail_all': True, 'failure_reason': NO_IP}
                      if host == FAILING_HOST else {})
            plans.append(ComputePlan(host, cell, driver))
    memory = dict(SEQUENCE)
    for host, reason in DOOMED.items():
        plans.append(ComputePlan(host, 'cell2', {
            'fail_all': True, 'failure_reason': reason,
            'traits': 'CUSTOM_DOOMED,CUSTOM_SEQ', 'memory_mb': memory[host]}))
    plans.append(ComputePlan('seq-ok', 'cell2', {'traits': 'CUSTOM_SEQ',
                                                 'memory_mb': memory['seq-ok']}))
    return plans


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    deployment = Deployment(tmp_path_factory.mktemp('boot-flow'), rabbit_server,
                            postgres_server, _computes(), max_attempts=3).create()
    try:
        deployment.cli('flavor', 'create', 'standard', '--vcpus', '1', '--ram', '512',
                       '--disk', '1', '--property', 'trait:CUSTOM_DOOMED=forbidden',
                       '--property', 'trait:CUSTOM_SEQ=forbidden')
        deployment.cli('flavor', 'create', 'sequence', '--vcpus', '1', '--ram', '512',
                       '--disk', '1', '--property', 'trait:CUSTOM_SEQ=required')
        deployment.cli('flavor', 'create', 'huge', '--vcpus', '10000', '--ram', '512',
                       '--disk', '1')
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


def _show_with_record(deployment: Deployment, uuid: str) -> dict:
    """``server show`` once its scheduling record is written (a background thread
    of the scheduler writes it just after replying)."""
    deadline = time.monotonic() + RECORD_WAIT_SECONDS
    while True:
        shown = _show(deployment, uuid)
        if shown['scheduling'] is not None or time.monotonic() > deadline:
            return shown
        time.sleep(0.2)


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
    for shown in hit.values():
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


def test_forced_sequence_shows_every_attempt_in_order_with_its_scheduling_record(
        deployment):
    # Runs before the doomed boots below: the doomed hosts have no failed
    # builds yet, so the weighers rank the three by free memory alone.
    (created,) = deployment.cli('server', 'create', 'seq', '--flavor', 'sequence',
                                '--project', 'p-seq', '--user', 'u1', '--wait')
    shown = _show_with_record(deployment, created['id'])

    assert (shown['status'], shown['host']) == ('ACTIVE', 'seq-ok'), shown
    builds = [(e['host'], e['result'], e['reason']) for e in shown['events']
              if e['event'] == BUILD_EVENT]
    assert builds == [('doomed-1', 'failed', NO_IP), ('doomed-2', 'failed', DISK_QUOTA),
                      ('seq-ok', 'ok', None)], shown['events']
    build_events = [e for e in shown['events'] if e['event'] == BUILD_EVENT]
    assert all(e['start'] and e['finish'] and e['start'] <= e['finish']
               for e in build_events), build_events
    assert [e['start'] for e in build_events] == sorted(e['start'] for e in build_events)
    # The scheduling record, read from the top level, joined in the same view.
    scheduling = shown['scheduling']
    assert scheduling['outcome'] == 'selected', scheduling
    assert (scheduling['selected'], scheduling['alternates']) == (
        'doomed-1', ['doomed-2', 'seq-ok']), scheduling
    assert [w['host'] for w in scheduling['weighed']] == [h for h, _ in SEQUENCE]
    assert scheduling['claims'] == [{'host': 'doomed-1', 'outcome': 'claimed',
                                     'detail': '', 'code': ''}]

    events = deployment.cli('server', 'events', created['id'])
    assert [(e['host'], e['result'], e['reason']) for e in events
            if e['event'] == BUILD_EVENT] == builds


def test_scheduling_record_is_found_by_request_id_and_by_instance(deployment):
    (created,) = deployment.cli('server', 'create', 'rec', '--flavor', 'standard',
                                '--project', 'p-rec', '--user', 'u1', '--wait')
    _show_with_record(deployment, created['id'])
    (by_instance,) = deployment.cli('scheduler', 'records', '--instance', created['id'])
    request_id = by_instance['request_id']
    assert request_id.startswith('req-'), by_instance
    (by_request,) = deployment.cli('scheduler', 'records', '--request-id', request_id)
    record = by_request['record']
    assert record['instance_uuids'] == [created['id']]
    assert record['request']['flavor']['name'] == 'standard'
    assert record['placement']['candidate_hosts'] >= 1
    assert ['resources', 'DISK_GB:1,MEMORY_MB:512,VCPU:1'] in record['placement']['query']
    (instance,) = record['instances']
    assert [f['filter'] for f in instance['filters']][0] == 'ComputeFilter'
    assert instance['selections'][0]['host'] == created['host']
    assert set(record['stage_ms']) >= {'placement_candidates', 'filters', 'weighers',
                                       'claims'}
    last = deployment.cli('scheduler', 'records', '--last', '1')
    assert [r['request_id'] for r in last] == [request_id]


def test_no_valid_host_for_a_flavor_nothing_can_hold_names_the_short_resource(deployment):
    (created,) = deployment.cli('server', 'create', 'huge', '--flavor', 'huge',
                                '--project', 'p-huge', '--user', 'u1', '--wait',
                                exit_code=1)
    shown = _show_with_record(deployment, created['id'])
    assert shown['status'] == 'ERROR', shown
    assert 'Placement returned no allocation candidates' in shown['fault'], shown
    assert 'no resource provider has VCPU:10000 (each asked alone)' in shown['fault'], shown
    assert shown['scheduling']['outcome'] == 'no valid host', shown


def test_when_every_host_fails_instances_end_in_error_naming_each_host_and_reason(
        deployment):
    doomed = deployment.cli('server', 'create', 'doomed', '--flavor', 'doomed', '--count',
                            '2', '--project', 'p-doomed', '--user', 'u1', '--wait',
                            exit_code=1)

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
        # The fault lists the attempts in the order they were made.
        tried = [e['host'] for e in shown['events']
                 if e['event'] == BUILD_EVENT and e['result'] == 'failed']
        positions = [fault.index(f'{host}: build failed') for host in tried]
        assert positions == sorted(positions), (tried, fault)
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


def test_server_list_answers_with_a_cell_database_unreachable(deployment, fifty):
    """Last in the module: cell2's mapping points at a closed port for the CLI.

    The daemons keep the engines they built at start, so only the CLI's read
    of the mapping goes to the closed port; the mapping is put back after.
    """
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        closed_port = probe.getsockname()[1]
    api = engines.create_engine(deployment.databases['api'])
    try:
        with api.begin() as conn:
            real = conn.execute(sa.select(cell_mappings.c.database_connection).where(
                cell_mappings.c.name == 'cell2')).scalar_one()
            conn.execute(cell_mappings.update().where(cell_mappings.c.name == 'cell2')
                         .values(database_connection=f'postgresql+psycopg2://nobody@'
                                                     f'127.0.0.1:{closed_port}/gone'))
        try:
            listed = {s['id']: s for s in deployment.cli('server', 'list')}
        finally:
            with api.begin() as conn:
                conn.execute(cell_mappings.update().where(cell_mappings.c.name == 'cell2')
                             .values(database_connection=real))
    finally:
        api.dispose()
    in_cell2 = [s['id'] for s in fifty if s['cell'] == 'cell2']
    in_cell1 = [s['id'] for s in fifty if s['cell'] == 'cell1']
    assert in_cell2 and in_cell1
    for uuid in in_cell2:
        assert (listed[uuid]['status'], listed[uuid]['cell']) == ('UNKNOWN', 'cell2')
    for uuid in in_cell1:
        assert listed[uuid]['status'] == 'ACTIVE'
