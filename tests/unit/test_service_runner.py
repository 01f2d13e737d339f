"""Service runner: reload hooks, a clean stop, and a periodic task that survives failures.

The runner is exercised here in-process on oslo.messaging's in-memory
``fake://`` transport; signals and real brokers are covered by the
integration tests that run the daemons.
"""
from __future__ import annotations

import threading

import pytest
from oslo_config import cfg

from cellplane import config
from cellplane.periodic import PeriodicTask
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import get_transport
from cellplane.service import Service


@pytest.fixture
def service():
    conf = config.load([], prog='cellplane-unit', setup_logging=False,
                       registrars=[rpc_options.register_opts])
    svc = Service(conf, binary='cellplane-test', topic='unit-test',
                  transport=get_transport('fake://', cfg.CONF), endpoints=[])
    return svc


def test_reload_runs_every_hook_even_after_one_fails(service):
    ran = []
    service.add_reload_hook('cells', lambda: ran.append('cells'))
    service.add_reload_hook('broken', lambda: 1 / 0)
    service.add_reload_hook('other', lambda: ran.append('other'))
    service.reload()
    assert ran == ['cells', 'other']


def test_stop_without_work_in_flight_is_clean(service):
    service.start()
    assert service.stop() is True


def test_periodic_task_keeps_running_after_a_failing_run():
    calls = []
    done = threading.Event()

    def run():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError('broker restarting')
        done.set()

    task = PeriodicTask('unit', 0.01, run)
    task.start()
    try:
        assert done.wait(30), 'the task stopped after its first failure'
    finally:
        task.stop(30)
    assert len(calls) >= 2
