"""Daemon lifecycle: graceful SIGTERM, the shutdown bound, SIGHUP reload, refusing bad configs."""
from __future__ import annotations

import signal
import threading
import time

import pytest

from cellplane.context import new_context
from conductor.cell.rpcapi import CellConductorAPI
from tests.integration.daemons import cell_conductor_config, compute_config

# A liveness deadline (it stopped at all without a kill), not a speed bound.
IDLE_STOP_DEADLINE_SECONDS = 5


def _ping_in_background(api: CellConductorAPI, hold_seconds: float) -> dict:
    outcome = {}

    def call():
        try:
            outcome['pong'] = api.ping(new_context(), 'in flight', hold_seconds=hold_seconds)
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            outcome['error'] = exc
    outcome['thread'] = threading.Thread(target=call)
    outcome['thread'].start()
    return outcome


def test_sigterm_lets_work_in_flight_finish_then_the_daemon_exits_0(
        daemons, transport_url_factory, sqlite_cell_db, client_transport_factory):
    url = transport_url_factory('sigterm')
    conductor = daemons.conductor('cond1', cell_conductor_config(url, sqlite_cell_db))
    conductor.start().wait_until_serving()
    api = CellConductorAPI(client_transport_factory(url), timeout=60)

    outcome = _ping_in_background(api, hold_seconds=3)
    conductor.wait_for_log(r"Ping 'in flight': holding")
    conductor.signal(signal.SIGTERM)

    assert conductor.wait_exit() == 0
    outcome['thread'].join(60)
    assert 'error' not in outcome, outcome.get('error')
    assert outcome['pong'].message == 'in flight'
    assert outcome['pong'].held_seconds == 3
    # SIGTERM came while the ping was held, and the answer went out after it.
    log = conductor.log()
    assert (log.index("Ping 'in flight': holding") < log.index('received SIGTERM')
            < log.index("Ping 'in flight': held 3.0 s, answering")
            < log.index('stopped cleanly'))
    # Importing oslo.messaging pulls in eventlet, which warns; operators never see it.
    assert 'Eventlet' not in log + conductor.stderr_path.read_text()
    # A clean start and stop leaves nothing for an operator to worry about.
    assert ' WARNING ' not in log and ' ERROR ' not in log, log


def test_sigterm_stops_an_idle_compute_agent_cleanly_at_once(
        daemons, transport_url_factory, sqlite_cell_db):
    # Issue 28: an idle agent took 9-12 s to stop (a wait on its own
    # periodic tasks and its broker connections). The bound here is a
    # deadline that it happens, not a measure of speed.
    url = transport_url_factory('sigterm_idle')
    conductor = daemons.conductor('cond1', cell_conductor_config(url, sqlite_cell_db))
    conductor.start().wait_until_serving()
    compute = daemons.compute('host1', compute_config(url, host='host1'))
    compute.start().wait_until_serving()
    time.sleep(3)   # past its start-up: idle
    compute.signal(signal.SIGTERM)
    started = time.monotonic()
    assert compute.process.wait(timeout=IDLE_STOP_DEADLINE_SECONDS) == 0, compute.log()
    stopped_in = time.monotonic() - started
    log = compute.log()
    assert log.index('received SIGTERM') < log.index('stopped cleanly'), log
    print(f'idle compute agent stopped {stopped_in:.2f} s after SIGTERM')


def test_work_outliving_graceful_shutdown_timeout_ends_the_daemon_with_exit_1(
        daemons, transport_url_factory, sqlite_cell_db, client_transport_factory):
    url = transport_url_factory('sigterm_bound')
    conductor = daemons.conductor('cond1', cell_conductor_config(
        url, sqlite_cell_db, graceful_shutdown_timeout=1))
    conductor.start().wait_until_serving()
    # The call is never answered: a short client timeout ends the test sooner.
    api = CellConductorAPI(client_transport_factory(url), timeout=5)

    outcome = _ping_in_background(api, hold_seconds=30)
    conductor.wait_for_log(r"Ping 'in flight': holding")
    conductor.signal(signal.SIGTERM)

    assert conductor.wait_exit() == 1
    assert 'still running after graceful_shutdown_timeout = 1 s' in conductor.log()
    outcome['thread'].join(60)
    assert 'pong' not in outcome
    assert 'MessagingTimeout' in type(outcome['error']).__name__


def test_sighup_rereads_the_log_level(daemons, transport_url_factory, sqlite_cell_db,
                                      client_transport_factory):
    url = transport_url_factory('sighup')
    sections = cell_conductor_config(url, sqlite_cell_db, debug=False)
    conductor = daemons.conductor('cond1', sections)
    conductor.start().wait_until_serving()
    api = CellConductorAPI(client_transport_factory(url), timeout=30)
    api.ping(new_context(), 'before')
    assert ' DEBUG ' not in conductor.log()

    sections['DEFAULT']['debug'] = True
    conductor.write_config(sections)
    conductor.signal(signal.SIGHUP)
    conductor.wait_for_log('reloaded its configuration')
    api.ping(new_context(), 'after')
    [line] = conductor.wait_for_log(" DEBUG .*Answering ping 'after'")
    assert "Answering ping 'before'" not in conductor.log()
    assert 'Ignoring change to immutable option' not in conductor.log()
    assert conductor.process.poll() is None


def test_cell_conductor_given_the_api_database_refuses_to_start_naming_option_and_file(
        daemons, tmp_path):
    sections = cell_conductor_config('rabbit://guest:guest@127.0.0.1:5672/unused',
                                     f'sqlite:///{tmp_path}/cell.sqlite')
    sections['api_database'] = {'connection': 'postgresql+psycopg2://postgres@db/api'}
    conductor = daemons.conductor('cond1', sections)
    code, stderr = conductor.run_to_exit()
    assert code == 2
    assert '[api_database] connection' in stderr
    assert str(conductor.config_path) in stderr
    assert 'postgresql' not in stderr  # the URL (a secret) is never echoed


def test_compute_agent_given_a_database_refuses_to_start_naming_option_and_file(daemons):
    sections = compute_config('rabbit://guest:guest@127.0.0.1:5672/unused', host='cmp1')
    sections['database'] = {'connection': 'sqlite:////tmp/never-used.sqlite'}
    compute = daemons.compute('cmp1', sections)
    code, stderr = compute.run_to_exit()
    assert code == 2
    assert '[database] connection' in stderr
    assert str(compute.config_path) in stderr


def test_daemon_without_transport_url_refuses_to_start(daemons, tmp_path):
    sections = compute_config('', host='cmp1')
    del sections['DEFAULT']['transport_url']
    code, stderr = daemons.compute('cmp1', sections).run_to_exit()
    assert code == 2
    assert '[DEFAULT] transport_url' in stderr


def test_compute_agent_with_an_unusable_version_cap_refuses_to_start(daemons):
    sections = compute_config('rabbit://guest:guest@127.0.0.1:5672/unused', host='cmp1')
    sections['upgrade_levels'] = {'cell_conductor': '2.0'}
    code, stderr = daemons.compute('cmp1', sections).run_to_exit()
    assert code == 2
    assert '[upgrade_levels] cell_conductor = 2.0 has another major version' in stderr


def test_the_deprecated_conductor_cap_still_caps_the_compute_agent(daemons):
    sections = compute_config('rabbit://guest:guest@127.0.0.1:5672/unused', host='cmp1')
    sections['upgrade_levels'] = {'conductor': '2.0'}
    code, stderr = daemons.compute('cmp1', sections).run_to_exit()
    assert code == 2
    assert 'Option "conductor" from group "upgrade_levels" is deprecated' in stderr
    assert '[upgrade_levels] cell_conductor = 2.0 has another major version' in stderr


def test_cell_conductor_without_its_cell_database_refuses_to_start(daemons):
    sections = cell_conductor_config('rabbit://guest:guest@127.0.0.1:5672/unused', 'unused')
    del sections['database']
    code, stderr = daemons.conductor('cond1', sections).run_to_exit()
    assert code == 2
    assert 'needs [database] connection' in stderr


@pytest.mark.parametrize('url, says', [
    ('rabbit://guest:wrong-password@127.0.0.1:5672/', 'the broker refused the login'),
    ('rabbit://guest:guest@127.0.0.1:5672/no-such-vhost-here',
     'the broker refused the virtual host'),
])
def test_a_daemon_the_broker_refuses_says_which_bus_in_one_line(daemons, url, says):
    code, stderr = daemons.compute('cmp1', compute_config(url, host='cmp1')).run_to_exit()
    assert code == 1
    [line] = [text for text in stderr.splitlines() if text.startswith('cellplane-compute:')]
    assert 'cannot use the message bus at rabbit://guest:***@127.0.0.1:5672/' in line
    assert '[DEFAULT] transport_url, in ' in line and says in line
    assert 'wrong-password' not in stderr and 'Traceback' not in stderr
