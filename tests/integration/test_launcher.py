"""The local launcher on its second day: ``deploy/run-local.sh`` run again on a running deployment.

One deployment of one cell and two compute agents on real RabbitMQ and
PostgreSQL (a vhost and database of its own per level, a run directory in
tmp), shared by the tests of this file, which drive ``deploy/run-local.sh``
as a subprocess as an operator would: a compute config with a wrong broker
password added to the running deployment, a compute restarted with a
misspelled ``endpoint_url``, ``start`` run twice, ``stop NAME`` and
``restart NAME``. Each test leaves the deployment as it found it: every
daemon running.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from cellplane_cli.launcher import _start_ticks
from tests.support.deployment import RUN_LOCAL, ComputePlan, Deployment

DAEMONS = {'placement', 'conductor-cell1', 'compute-cell1-a', 'compute-cell1-b',
           'scheduler', 'super-conductor'}


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    deployment = Deployment(tmp_path_factory.mktemp('launcher'), rabbit_server,
                            postgres_server, [ComputePlan('cell1-a', 'cell1'),
                                              ComputePlan('cell1-b', 'cell1')]).create()
    try:
        yield deployment
    finally:
        deployment.destroy()


def run_local(deployment: Deployment, *args: str) -> subprocess.CompletedProcess:
    """``deploy/run-local.sh ARGS`` on the deployment's directories, whatever its exit code."""
    return subprocess.run(
        ['sh', str(RUN_LOCAL), *args, '--config-dir', str(deployment.config_dir),
         '--run-dir', str(deployment.run_dir)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, 'PYTHON': sys.executable})


def status(deployment: Deployment) -> dict[str, dict]:
    proc = run_local(deployment, 'status', '--format', 'json')
    assert proc.returncode == 0, proc.stderr
    return {row['name']: row for row in json.loads(proc.stdout)}


def running_pids(deployment: Deployment) -> dict[str, int]:
    return {name: row['pid'] for name, row in status(deployment).items()
            if row['state'] == 'running'}


def alive(pid: int) -> bool:
    """``pid`` runs (a zombie does not)."""
    return _start_ticks(pid) is not None


def this_start_of(path: Path) -> str:
    """What ``path`` holds after the launcher's last start marker."""
    return path.read_text().rsplit('==== cellplane-launch:', 1)[1]


def test_start_again_leaves_every_running_daemon_alone(deployment):
    before = running_pids(deployment)
    assert set(before) == DAEMONS

    proc = run_local(deployment, 'start', '--no-create')

    assert proc.returncode == 0, proc.stderr
    assert 'started 0, already running 6, failed 0' in proc.stdout
    assert running_pids(deployment) == before


def test_a_compute_refused_by_the_broker_is_named_and_the_others_keep_running(deployment):
    """Finding 1: a bad compute config added to a running deployment stopped all of it."""
    before = running_pids(deployment)
    good = urlsplit(deployment.transport_url('cell1'))
    wrong = good._replace(netloc=f'{good.username}:not-the-password@{good.hostname}:'
                                 f'{good.port or 5672}')
    bad_conf = deployment.config('compute-cell1-bad.conf')
    bad_conf.write_text(deployment.config('compute-cell1-a.conf').read_text()
                        .replace(deployment.transport_url('cell1'), urlunsplit(wrong))
                        .replace('cell1-a', 'cell1-bad'))
    try:
        # Twice: the second start must not take the first one's lines for its own.
        for _ in range(2):
            proc = run_local(deployment, 'start', '--no-create')

            assert proc.returncode == 1, proc.stdout
            assert all(alive(pid) for pid in before.values()), 'a healthy daemon was stopped'
            assert 'compute-cell1-bad exited while starting (exit status 1)' in proc.stderr
            assert 'the broker refused the login' in proc.stderr
            assert 'did not start: compute-cell1-bad; 6 daemon(s) running' in proc.stderr
            assert running_pids(deployment) == before

        row = status(deployment)['compute-cell1-bad']
        assert row['state'] == 'failed'
        assert row['uptime_seconds'] is None
        # The reason is where status says, at that line, in this start's lines.
        error = row['last_error']
        assert error['file'] == row['output']
        assert 'the broker refused the login' in error['text']
        lines = Path(error['file']).read_text().splitlines()
        assert error['text'] == lines[error['line'] - 1].strip()
        assert lines[error['line'] - 2].startswith('==== cellplane-launch: compute-cell1-bad')
    finally:
        bad_conf.unlink()
        proc = run_local(deployment, 'stop', 'compute-cell1-bad')
    assert proc.stdout.strip() == \
        'stopped 0 daemon(s); not running, record removed: compute-cell1-bad', proc.stderr
    assert 'compute-cell1-bad' not in status(deployment)


def test_a_compute_that_served_before_and_dies_at_its_restart_is_not_reported_running(
        deployment):
    """Findings 2 and 3: the previous run's "serving topic" line was taken for this start's."""
    conf = deployment.config('compute-cell1-b.conf')
    good = conf.read_text()
    log = deployment.run_dir / 'compute-cell1-b.log'
    assert 'serving topic compute as cell1-b' in log.read_text()
    # Ended as by a crash or an operator's kill: its record stays behind.
    pid = deployment.pid('compute-cell1-b')
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while alive(pid):
        assert time.monotonic() < deadline, f'compute-cell1-b ({pid}) outlived SIGKILL'
        time.sleep(0.1)
    conf.write_text(good.replace('endpoint_url =', 'endpont_url ='))
    try:
        for _ in range(2):
            proc = run_local(deployment, 'start', '--no-create')

            assert proc.returncode == 1, proc.stdout
            assert 'compute-cell1-b exited while starting' in proc.stderr
            assert 'needs [placement] endpoint_url' in proc.stderr
            row = status(deployment)['compute-cell1-b']
            assert row['state'] == 'failed'
            assert 'needs [placement] endpoint_url' in row['last_error']['text']
            # The log begins this start with a marker, and none of the
            # previous run's lines follow it.
            assert 'serving topic' not in this_start_of(log)
            assert 'endpont_url is not an option' in this_start_of(log)
    finally:
        conf.write_text(good)

    proc = run_local(deployment, 'restart', 'compute-cell1-b')

    assert proc.returncode == 0, proc.stderr
    assert 'started 1, already running 0, failed 0' in proc.stdout
    assert set(running_pids(deployment)) == DAEMONS
    assert status(deployment)['compute-cell1-b']['last_error'] is None
    assert 'serving topic compute as cell1-b' in this_start_of(log)


def test_restart_stop_and_start_one_daemon_by_name(deployment):
    before = running_pids(deployment)

    proc = run_local(deployment, 'restart', 'compute-cell1-a')
    assert proc.returncode == 0, proc.stderr
    assert 'started 1, already running 0, failed 0' in proc.stdout
    after = running_pids(deployment)
    assert after.pop('compute-cell1-a') != before.pop('compute-cell1-a')
    assert after == before

    proc = run_local(deployment, 'stop', 'compute-cell1-a')
    assert proc.stdout.strip() == 'stopped 1 daemon(s): compute-cell1-a', proc.stderr
    assert running_pids(deployment) == before

    proc = run_local(deployment, 'start', 'compute-cell1-a', '--no-create')
    assert proc.returncode == 0, proc.stderr
    row = status(deployment)['compute-cell1-a']
    assert row['state'] == 'running'
    assert 0 <= row['uptime_seconds'] < 60


def test_an_unknown_daemon_name_is_a_one_line_usage_error(deployment):
    proc = run_local(deployment, 'restart', 'compute-nosuch')

    assert proc.returncode == 2
    assert proc.stderr.count('\n') == 1
    assert 'no daemon compute-nosuch in this deployment' in proc.stderr
    assert 'compute-cell1-a' in proc.stderr
    assert set(running_pids(deployment)) == DAEMONS
