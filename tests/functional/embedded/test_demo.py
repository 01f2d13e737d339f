"""``cellplane demo`` in-process, small: its summary keeps the boot flow's promises."""
from __future__ import annotations

import json

from cellplane_cli import cli
from cellplane_cli.demo import render
from cellplane.db import engines
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

    # The readable report says the same.
    report = render(summary)
    assert 'they MATCH' in report and 'No more IP addresses' in report
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
