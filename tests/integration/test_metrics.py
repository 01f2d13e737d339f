"""Prometheus metrics scraped from the real daemons while they boot servers.

One cell, one hollow agent of 2 hosts; the scheduler, the super conductor,
the cell conductor and the compute agent each serve ``/metrics`` on their
own port (``[metrics] bind_port``). Four servers are booted in two
requests, and one more asks for a flavor no host can hold; then each
daemon's counters must say exactly that. A daemon whose metrics port is
taken refuses to start, in one line naming the options.
"""
from __future__ import annotations

import subprocess
import sys
import time

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment, free_port

DAEMONS = ('scheduler', 'super-conductor', 'cell1', 'compute-cell1-a')


@pytest.fixture
def deployment(tmp_path, rabbit_server, postgres_server):
    computes = [ComputePlan('cell1-a', 'cell1', hosted_hosts=2,
                            fake_driver={'build_seconds': 0.2})]
    deployment = Deployment(tmp_path, rabbit_server, postgres_server, computes,
                            metrics_ports={d: free_port() for d in DAEMONS}).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        deployment.cli('flavor', 'create', 'huge', '--vcpus', '512', '--ram', '256',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


def _scrape(deployment, daemon: str) -> dict[tuple, float]:
    """(sample name, sorted labels) -> value, from the daemon's /metrics."""
    port = deployment.metrics_ports[daemon]
    text = requests.get(f'http://127.0.0.1:{port}/metrics', timeout=10).text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def _value(samples, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def _settled(deployment) -> list[dict]:
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        listed = deployment.cli('server', 'list')
        if listed and all(s['status'] in ('ACTIVE', 'ERROR') for s in listed):
            return listed
        assert time.monotonic() < deadline, listed
        time.sleep(0.5)


def test_each_daemon_counts_what_it_did_for_the_boots(deployment):
    for name in ('web', 'db'):
        deployment.cli('server', 'create', name, '--flavor', 'small', '--count', '2')
    deployment.cli('server', 'create', 'big', '--flavor', 'huge')
    listed = _settled(deployment)
    assert sorted(s['status'] for s in listed) == ['ACTIVE'] * 4 + ['ERROR']

    top = _scrape(deployment, 'super-conductor')
    assert _value(top, 'cellplane_instances_taken_total', via='boot') == 5
    assert _value(top, 'cellplane_instances_placed_total') == 4
    assert _value(top, 'cellplane_instances_failed_total', reason='no_valid_host') == 1
    assert _value(top, 'cellplane_rpc_messages_total', method='schedule_and_build_instances',
                  outcome='handled') == 3

    scheduler = _scrape(deployment, 'scheduler')
    assert _value(scheduler, 'cellplane_scheduling_seconds_count', outcome='placed') == 2
    assert _value(scheduler, 'cellplane_scheduling_seconds_count',
                  outcome='no_valid_host') == 1
    assert _value(scheduler, 'cellplane_scheduled_instances_total', outcome='placed') == 4
    # The NoValidHost is a refusal the scheduler answered, not an RPC error.
    assert _value(scheduler, 'cellplane_rpc_messages_total', method='select_destinations',
                  outcome='refused') == 1
    assert _value(scheduler, 'cellplane_rpc_messages_total', method='select_destinations',
                  outcome='error') == 0
    candidates = sum(v for (name, labels), v in scheduler.items()
                     if name == 'cellplane_placement_client_requests_total'
                     and ('route', '/allocation_candidates') in labels
                     and ('status', '200') in labels)
    assert candidates >= 3
    assert not any('/resource_providers/' in dict(labels).get('route', '{uuid}')
                   and '{uuid}' not in dict(labels)['route']
                   for (_, labels) in scheduler)   # no UUID makes a label of its own

    cell = _scrape(deployment, 'cell1')
    assert _value(cell, 'cellplane_builds_ended_total', state='active') == 4
    assert _value(cell, 'cellplane_compute_services', cell='cell1', state='up') == 2
    assert _value(cell, 'cellplane_compute_heartbeat_age_seconds_count', cell='cell1') == 2
    assert _value(cell, 'cellplane_rpc_messages_total', method='instance_update',
                  outcome='handled') >= 4

    compute = _scrape(deployment, 'compute-cell1-a')
    assert _value(compute, 'cellplane_rpc_messages_total', method='build_and_run_instance',
                  outcome='handled') == 4


def test_a_daemon_whose_metrics_port_is_taken_refuses_to_start_in_one_line(deployment):
    taken = deployment.metrics_ports['super-conductor']
    extra = deployment.config_dir / 'busy.conf'
    extra.write_text(f'[DEFAULT]\nhost = scheduler-busy\n[metrics]\nbind_port = {taken}\n')
    proc = subprocess.run(
        [sys.executable, '-m', 'scheduler.cmd', '--config-file',
         str(deployment.config('top.conf')), '--config-file', str(extra),
         '--log-file', str(deployment.workdir / 'busy.log')],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f'cellplane-scheduler: cannot serve metrics on 127.0.0.1:{taken} ([metrics] '
        f'bind_host and bind_port, in {extra}): Address already in use')
