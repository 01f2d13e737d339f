"""benchmarks/compute_api_client.py: how boot_bench's ``--via api`` reads its boots from ``GET /servers/detail``."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'benchmarks'))

import compute_api_client  # benchmarks/ is not a package: found through sys.path
import progress


class _Lists:
    """Answers ``servers()`` with what the API would list, and keeps the queries asked."""

    def __init__(self, servers: list[dict]) -> None:
        self.listed = servers
        self.asked: list = []

    def servers(self, path='/v2.1/servers/detail', params=None):
        self.asked.append((path, params))
        return self.listed


def test_a_poll_counts_the_boots_not_listed_as_active_and_errors_by_reason():
    client = _Lists([
        {'name': 'api-batch-0-1', 'status': 'BUILD'},
        {'name': 'api-batch-0-2', 'status': 'ERROR', 'fault': {'message': 'NoValidHost: full'}},
        {'name': 'api-batch-1-1', 'status': 'ERROR', 'fault': {'message': 'NoValidHost: full'}},
        {'name': 'api-batch-1-2', 'status': 'ERROR'},
        {'name': 'api-single-3', 'status': 'BUILD'},        # another scenario's
    ])
    watch = compute_api_client.BootWatch(client, 'api-batch-', expected=10)
    seen = watch.look()
    assert seen == progress.Seen(active=6, errors={'NoValidHost: full': 2,
                                                   'ERROR without a fault': 1})
    path, params = client.asked[0]
    assert path == '/v2.1/servers/detail'
    assert ('status', 'BUILD') in params and ('status', 'ERROR') in params
    assert dict(params)['changes-since'] == watch.since


def test_the_wait_ends_when_no_boot_is_left_building():
    client = _Lists([])
    watch = compute_api_client.BootWatch(client, 'api-single-', expected=3)
    assert watch.wait(progress.Progress(3, stall_seconds=30), poll_seconds=0) == {
        'active': 3, 'error': 0}


def test_boot_bench_refuses_both_paths_when_the_hosts_cannot_hold_both(capsys):
    import boot_bench
    with pytest.raises(SystemExit) as exited:
        boot_bench.main(['--instances', '200', '--cells', '2', '--hosts-per-cell', '5',
                         '--via', 'direct,api', '--list-servers', '100'])
    assert exited.value.code == 2
    assert ('--instances 200 boots 802 instances (200 as single requests, then 200 in '
            'batches, through each of 2 paths, nothing deleted in between), but 2 cells x '
            '5 hosts hold 640 of bench.small (64 per host); use --instances 159 or '
            'fewer') in capsys.readouterr().err


def test_boot_bench_refuses_an_unknown_path(capsys):
    import boot_bench
    with pytest.raises(SystemExit) as exited:
        boot_bench.main(['--via', 'direct,http'])
    assert exited.value.code == 2
    assert '--via takes direct, api or both' in capsys.readouterr().err
