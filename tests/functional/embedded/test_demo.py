"""``cellplane demo`` in-process, small: its summary keeps the boot flow's promises."""
from __future__ import annotations

import json
import subprocess
import sys

from cellplane.db import engines
from cellplane_cli import cli
from cellplane_cli.demo import render
from scheduler.records.backend import RecordQuery
from scheduler.records.database import DatabaseBackend


def test_demo_json_summary_keeps_the_boot_flows_promises(capsys, tmp_path):
    code = cli.main(['demo', '--instances', '24', '--hosts-per-cell', '3', '--seed', '7',
                     '--fail-fraction', '0.1', '--state-dir', str(tmp_path),
                     '--format', 'json'])

    out = capsys.readouterr().out
    summary = json.loads(out)   # one JSON object and nothing else on stdout
    assert code == 0, summary
    # 24 asked for, plus the 2 of a flavor no host can hold.
    assert summary['instances'] == 26 and summary['building'] == 0
    assert summary['active'] + summary['error'] == 26

    # Allocations in Placement are exactly the ACTIVE instances' flavors.
    placement = summary['placement']
    assert placement['allocations_match_instances'] is True
    assert placement['problems'] == []
    assert placement['consumers_with_allocations'] == summary['active']
    assert placement['usage'] == placement['sum_of_active_flavors']
    assert sum(summary['placed_per_cell'].values()) == summary['active']

    # Every failure has a reason, the unplaceable ones included.
    assert summary['every_failure_has_a_reason'] is True
    faults = [i['fault'] for i in summary['failed']['instances']]
    assert len(faults) == summary['error'] and all(f and f.strip() for f in faults)
    assert sum(1 for f in faults if f.startswith('NoValidHost')) == 2

    # The host failing every build was tried, and each instance it failed was
    # rebuilt elsewhere in its cell or ran out of alternates with a fault.
    rescheduled = summary['rescheduled']
    assert rescheduled['failed_builds_by_host'].get('cell1-host1', 0) >= 1
    assert rescheduled['failed_builds_by_reason'].get('No more IP addresses', 0) >= 1
    assert 'cell1-host1' not in summary['active_per_host']
    assert rescheduled['ended_active'] + rescheduled['ended_error'] == rescheduled['instances']
    assert summary['rescheduled_away_from_failing_hosts'] is True

    # The state directory asked for holds the databases and the service log.
    assert {'api.sqlite', 'cell1.sqlite', 'cell2.sqlite', 'placement.sqlite',
            'cellplane.log'} <= {p.name for p in tmp_path.iterdir()}

    # Then the last host was drained: each of its instances moved (and, the
    # Placement check above read after the drain, holds only its new host),
    # or is named with the reason it stayed.
    drain = summary['drain']
    assert (drain['host'], drain['mode']) == ('cell2-host3', 'live')
    assert drain['moved'] + drain['not_moved'] == drain['instances'] >= 1
    assert all(m['to'] != 'cell2-host3' for m in drain['moves'])
    assert all(s['reason'] for s in drain['not_moved_instances'])
    assert drain['host_empty'] == (drain['not_moved'] == 0)
    assert summary['active_per_host'].get('cell2-host3', 0) == drain['left_on_host']

    # The readable report says the same.
    report = render(summary)
    assert 'they MATCH' in report and 'No more IP addresses' in report
    assert f'Drained cell2-host3 (live, 5 at a time) in {drain["seconds"]} s: ' in report
    assert f'ACTIVE {summary["active"]}   ERROR {summary["error"]}' in report

    # Every scheduler run left its record in the API database: the unplaceable
    # instances' records say no valid host, and which resource was short.
    api = engines.create_engine(f'sqlite:///{tmp_path}/api.sqlite')
    try:
        records = DatabaseBackend(api, retention=1000)
        assert records.find(RecordQuery(last=1000))
        unplaceable = [i['uuid'] for i in summary['failed']['instances']
                       if i['fault'].startswith('NoValidHost')]
        for uuid in unplaceable:
            (found,) = records.find(RecordQuery(instance_uuid=uuid))
            assert found.outcome == 'no valid host'
            assert found.body['placement']['shortage'], found.body['placement']
    finally:
        api.dispose()


def test_demo_with_three_cells_and_no_failing_host_places_everything_it_can(capsys):
    code = cli.main(['demo', '--instances', '30', '--cells', '3', '--hosts-per-cell', '4',
                     '--failing-hosts', '0', '--fail-fraction', '0', '--drain', 'none',
                     '--format', 'json'])

    summary = json.loads(capsys.readouterr().out)
    assert code == 0, summary
    assert summary['run']['cells'] == 3 and summary['run']['failing_hosts'] == []
    # Only the two of the oversized flavor fail; nothing is rescheduled.
    assert (summary['active'], summary['error']) == (30, 2)
    assert summary['rescheduled']['instances'] == 0
    assert summary['drain'] is None     # --drain none
    assert set(summary['placed_per_cell']) <= {'cell1', 'cell2', 'cell3'}
    hosts = set(summary['active_per_host'])
    assert hosts <= {f'cell{c}-host{h}' for c in (1, 2, 3) for h in (1, 2, 3, 4)}


def test_demo_failing_hosts_go_round_the_cells():
    from cellplane_embedded.demo import DemoOptions
    options = DemoOptions(cells=2, hosts_per_cell=3, failing_hosts=3)
    assert options.failing_host_names() == ['cell1-host1', 'cell2-host1', 'cell1-host2']
    assert options.driver_for('cell2', 'cell2-host1').fail_all is True
    assert options.driver_for('cell2', 'cell2-host2').fail_all is False


def test_demo_refuses_impossible_sizes_in_one_line_with_exit_2(capsys):
    # As an operator's terminal shows it: one line on stderr, exit 2.
    done = subprocess.run([sys.executable, '-m', 'cellplane_cli.cli', 'demo', '--cells', '0'],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert 'argument --cells: must be 1 or more, not 0' in line
    for args, message in (
            (['--cells', '0'], 'argument --cells: must be 1 or more, not 0'),
            (['--hosts-per-cell', '2', '--failing-hosts', '4'],
             '--failing-hosts must be between 0 and 3 (some host must build), not 4'),
            (['--fail-fraction', '1.5'], 'argument --fail-fraction: must be from 0 to 1, not 1.5'),
            (['--drain', 'cell9-host1'], '--drain must name a host of the demo (cell1-host1 '
                                         'to cell2-host5), auto or none, not cell9-host1')):
        try:
            code = cli.main(['demo', *args])
        except SystemExit as exited:   # argparse refused it
            code = exited.code
        err = capsys.readouterr().err
        assert code == 2, (args, err)
        assert message in err


def test_no_progress_bar_when_the_output_is_not_a_terminal():
    # Piped or redirected (as here), stderr gets no bar to glue to the report.
    done = subprocess.run([sys.executable, '-m', 'cellplane_cli.cli', 'demo', '--instances',
                           '4', '--cells', '1', '--hosts-per-cell', '2', '--failing-hosts',
                           '0', '--fail-fraction', '0'],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('cellplane demo: 6 instances asked for'), done.stdout
    assert 'booting' not in done.stderr and '\r' not in done.stderr, done.stderr
    assert 'starting' not in done.stderr, done.stderr


def test_the_start_reports_the_hosts_registered_until_all_are():
    from cellplane_embedded.demo import DemoOptions, run_demo
    seen = []
    summary = run_demo(DemoOptions(instances=4, cells=2, hosts_per_cell=2, failing_hosts=0,
                                   fail_fraction=0, oversized=0, drain=None),
                       start_progress=lambda registered, hosts: seen.append((registered, hosts)))
    assert summary['active'] == 4
    assert seen and seen[-1] == (4, 4)
    assert all(hosts == 4 for _, hosts in seen)
    assert [r for r, _ in seen] == sorted(r for r, _ in seen)   # never goes back


def test_two_runs_with_one_seed_end_with_the_same_counts(capsys):
    counts = []
    for _ in range(2):
        assert cli.main(['demo', '--instances', '60', '--hosts-per-cell', '3', '--seed',
                         '42', '--fail-fraction', '0.3', '--format', 'json']) == 0
        summary = json.loads(capsys.readouterr().out)
        counts.append((summary['active'], summary['error']))
        # Random failures happened, and each was retried to the end.
        assert summary['rescheduled']['failed_builds_by_reason'].get(
            'Timed out waiting for the hypervisor', 0) >= 5
    assert counts == [(60, 2), (60, 2)]
