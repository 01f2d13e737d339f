"""The local launcher's reading of a deployment directory, and its care with pids."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

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
    ]
    # Each daemon gets its own file only: cell daemons never read top.conf.
    by_name = {spec.name: spec for stage in stages for spec in stage}
    assert by_name['conductor-cell1'].config_files == (str(TWO_CELL / 'cell1.conf'),)
    assert by_name['compute-cell2-host1'].config_files == (
        str(TWO_CELL / 'compute-cell2-host1.conf'),)
    assert by_name['scheduler'].config_files == by_name['super-conductor'].config_files \
        == (str(TWO_CELL / 'top.conf'),)


def test_what_the_two_cell_files_point_at():
    deployment = launcher.Deployment.from_dir(TWO_CELL)

    assert [u.rsplit('/', 1)[1] for u in launcher.transport_urls(deployment)] == \
        ['cell1', 'cell2', 'top']
    assert sorted(launcher.database_urls(deployment).values()) == \
        ['api', 'cell', 'cell', 'placement']


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
