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
def config_file(tmp_path):
    path = tmp_path / 'service.conf'
    path.write_text('[DEFAULT]\ndebug = false\n')
    return path


@pytest.fixture
def service(config_file):
    conf = config.load(['--config-file', str(config_file)], prog='cellplane-unit',
                       setup_logging=False, registrars=[rpc_options.register_opts])
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


def test_reload_picks_up_a_changed_mutable_option(service, config_file):
    config_file.write_text('[DEFAULT]\ndebug = true\n')
    service.reload()
    assert service.conf.debug is True


def test_reload_of_an_unparseable_file_keeps_the_config_and_skips_the_hooks(
        service, config_file, caplog):
    ran = []
    service.add_reload_hook('cells', lambda: ran.append('cells'))
    config_file.write_text('this is [not an ini file\n')
    service.reload()
    assert ran == []
    assert service.conf.debug is False
    assert 'could not reload its configuration files' in caplog.text


def test_periodic_tasks_given_to_the_service_stop_before_its_transport_closes(config_file):
    conf = config.load(['--config-file', str(config_file)], prog='cellplane-unit',
                       setup_logging=False, registrars=[rpc_options.register_opts])
    transport = get_transport('fake://', cfg.CONF)
    closed = threading.Event()
    real_cleanup = transport.cleanup

    def cleanup():
        closed.set()
        real_cleanup()
    transport.cleanup = cleanup
    runs_after_close = []
    started = threading.Event()

    def report():
        started.set()
        if closed.is_set():
            runs_after_close.append(1)

    task = PeriodicTask('unit-report', 0.01, report)
    svc = Service(conf, binary='cellplane-test', topic='unit-test', transport=transport,
                  endpoints=[], periodic_tasks=[task])
    svc.start()
    assert started.wait(5)
    assert svc.stop() is True
    assert closed.is_set()
    assert not task.running
    assert runs_after_close == []
