"""The local launcher's reading of a deployment directory, and its care with pids."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from cellplane_cli import launcher

TWO_CELL = Path(__file__).resolve().parents[2] / 'deploy' / 'two-cell'


def test_two_cell_example_starts_in_dependency_stages():
    stages = launcher.Deployment.from_dir(TWO_CELL).stages()

    names = [[spec.name for spec in stage] for stage in stages]
    assert names == [
        ['placement'],
        ['conductor-cell1', 'conductor-cell2'],
        ['compute-cell1-host1', 'compute-cell1-host2', 'compute-cell2-host1',
         'compute-cell2-host2'],
        ['scheduler', 'super-conductor'],
        ['api'],
    ]
    # Each daemon gets its own file only: cell daemons never read top.conf.
    by_name = {spec.name: spec for stage in stages for spec in stage}
    assert by_name['conductor-cell1'].config_files == (str(TWO_CELL / 'cell1.conf'),)
    assert by_name['compute-cell2-host1'].config_files == (
        str(TWO_CELL / 'compute-cell2-host1.conf'),)
    assert by_name['scheduler'].config_files == by_name['super-conductor'].config_files \
        == (str(TWO_CELL / 'top.conf'),)
    # The compute API reads top.conf (API database, top-level bus), then its own.
    assert by_name['api'].config_files == (str(TWO_CELL / 'top.conf'),
                                           str(TWO_CELL / 'api.conf'))


def test_what_the_two_cell_files_point_at():
    deployment = launcher.Deployment.from_dir(TWO_CELL)

    assert [u.rsplit('/', 1)[1] for u in launcher.transport_urls(deployment)] == \
        ['cell1', 'cell2', 'top']
    assert sorted(launcher.database_urls(deployment).values()) == \
        ['api', 'cell', 'cell', 'placement']


def test_each_level_of_the_two_cell_example_has_a_broker_user_of_its_own():
    deployment = launcher.Deployment.from_dir(TWO_CELL)
    users = {path.name: urlsplit(launcher.option(path, 'DEFAULT', 'transport_url')).username
             for path in (deployment.top, *deployment.cells, *deployment.computes)}

    assert launcher.shared_users(launcher.transport_urls(deployment)) == {}
    assert users['top.conf'] == 'cellplane-top'
    # A cell's files hold its own user; none holds the top's or another cell's.
    for name, user in users.items():
        if name != 'top.conf':
            cell = 'cell1' if 'cell1' in name else 'cell2'
            assert user == f'cellplane-{cell}', name
    # Every file of the example declares the same queues (a queue keeps its type).
    sections = {path.name: launcher.read_sections(path)['oslo_messaging_rabbit']
                for path in (deployment.top, *deployment.cells, *deployment.computes)}
    assert len({str(sorted(s.items())) for s in sections.values()}) == 1


def test_a_user_named_for_two_vhosts_is_found():
    assert launcher.shared_users([
        'rabbit://cell1:a@h:5672/cell1', 'rabbit://cell1:a@h:5672/cell2',
        'rabbit://top:b@h:5672/top', 'rabbit://top:b@h2:5672/top']) == {
            'cell1': ['cell1', 'cell2']}


def test_a_directory_without_the_role_files_is_refused_naming_them(tmp_path):
    shutil.copy(TWO_CELL / 'cell1.conf', tmp_path)
    with pytest.raises(launcher.LaunchError, match=r'placement\.conf, top\.conf'):
        launcher.Deployment.from_dir(tmp_path)


def test_stop_never_signals_a_pid_now_running_another_process(tmp_path):
    # A live process that the launcher did not start, under a recorded pid
    # whose start time does not match: as after a reboot or pid reuse.
    other = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
    try:
        (tmp_path / 'compute-x.pid').write_text(
            '{"pid": %d, "started": 1, "kind": "compute", "config_files": ["x.conf"]}'
            % other.pid)
        run = launcher.Launcher(tmp_path)

        assert run.find('compute-x').alive() is False
        assert run.stop() == []
        assert other.poll() is None, 'the launcher signalled a process it did not start'
        assert not (tmp_path / 'compute-x.pid').exists()
    finally:
        other.kill()
        other.wait()


def test_stop_ends_a_process_it_recorded(tmp_path):
    run = launcher.Launcher(tmp_path)
    spec = launcher.DaemonSpec('sleeper', 'compute', ('x.conf',))
    process = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
    record = launcher.RunningDaemon(spec, process.pid, launcher._start_ticks(process.pid),
                                    tmp_path / 'sleeper.log', tmp_path / 'sleeper.out')
    (tmp_path / 'sleeper.pid').write_text(
        '{"pid": %d, "started": %d, "kind": "compute", "config_files": ["x.conf"]}'
        % (process.pid, record.started))
    try:
        assert run.find('sleeper').alive() is True
        assert run.stop() == ['sleeper']
        assert process.wait(timeout=30) is not None
    finally:
        process.kill()
        process.wait()


def _dead_daemon(tmp_path, out: str, log: str = '', *, out_offset: int = 0,
                 log_offset: int = 0) -> launcher.RunningDaemon:
    (tmp_path / 'c.out').write_text(out)
    (tmp_path / 'c.log').write_text(log)
    spec = launcher.DaemonSpec('c', 'compute', ('c.conf',))
    # started=None: no process runs it (as after it died).
    return launcher.RunningDaemon(spec, 1, None, tmp_path / 'c.log', tmp_path / 'c.out',
                                  log_offset, out_offset, ready=False)


def test_a_dead_daemons_last_error_is_its_last_output_line_of_this_start(tmp_path):
    previous = 'old reason\n==== cellplane-launch: c starting at T ====\n'
    daemon = _dead_daemon(tmp_path, previous + 'Traceback...\nnew reason\n\n',
                          out_offset=len(previous))

    error = daemon.last_error()

    assert (error.path, error.line, error.text) == (tmp_path / 'c.out', 4, 'new reason')
    assert daemon.state() == 'failed'
    assert daemon.tail() == (tmp_path / 'c.out', ['Traceback...', 'new reason'])


def test_the_previous_starts_errors_are_not_this_starts(tmp_path):
    old_log = '2026-11-26 14:00:00.000 7 ERROR x [-] old failure\n'
    daemon = _dead_daemon(tmp_path, 'old reason\n', old_log, out_offset=len('old reason\n'),
                          log_offset=len(old_log))

    assert daemon.last_error() is None
    assert daemon.tail() == (tmp_path / 'c.out', [])


def test_without_output_a_dead_daemons_error_and_tail_come_from_its_log(tmp_path):
    log = ('2026-11-26 14:00:00.000 7 INFO x [-] starting\n'
           '2026-11-26 14:00:01.000 7 ERROR x [-] cannot reach Placement\n'
           '2026-11-26 14:00:01.500 7 INFO x [-] exiting\n')
    daemon = _dead_daemon(tmp_path, '', log)

    error = daemon.last_error()

    assert (error.path, error.line) == (tmp_path / 'c.log', 2)
    assert error.text.endswith('cannot reach Placement')
    assert daemon.tail(2)[1] == log.splitlines()[1:]


@pytest.mark.parametrize('seconds, shown', [
    (None, '-'), (0, '0s'), (59.9, '59s'), (65, '1m05s'), (3600 + 180, '1h03m'),
    (2 * 86400 + 4 * 3600, '2d04h'),
])
def test_uptime_is_shown_in_its_largest_two_units(seconds, shown):
    assert launcher.format_uptime(seconds) == shown


def test_an_unknown_daemon_name_is_a_usage_error_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        launcher.main(['stop', 'nosuch', '--config-dir', str(TWO_CELL),
                       '--run-dir', str(tmp_path)])

    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1
    assert 'no daemon nosuch in this deployment' in err and 'compute-cell1-host1' in err


def test_stop_says_which_recorded_daemons_were_not_running(tmp_path, capsys):
    (tmp_path / 'compute-x.pid').write_text(
        '{"pid": 1, "started": null, "kind": "compute", "config_files": ["x.conf"]}')

    assert launcher.main(['stop', '--run-dir', str(tmp_path)]) == 0

    assert capsys.readouterr().out == (
        'stopped 0 daemon(s); not running, record removed: compute-x\n')
    assert not (tmp_path / 'compute-x.pid').exists()
