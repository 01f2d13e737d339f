"""benchmarks/boot_bench.py's start-up timeline: each step from the daemons' logs and the deployment's own."""
from __future__ import annotations

import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / 'benchmarks'))

import boot_bench  # benchmarks/ is not a package: found through sys.path

BEGAN = time.mktime((2026, 11, 27, 12, 0, 0, 0, 0, -1))


def _stamp(seconds: float) -> str:
    """An oslo.log line's time, ``seconds`` after BEGAN."""
    at = BEGAN + seconds
    return time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(at)) + f'.{int(at % 1 * 1000):03d}'


def _marker(name: str, seconds: float) -> str:
    return (f'==== cellplane-launch: {name} starting at '
            f'{time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(BEGAN + seconds))} ====')


def test_each_step_is_when_the_last_daemon_of_its_kind_got_there(tmp_path):
    logs = {
        'placement': [_marker('placement', 5)],
        'conductor-cell1': [_marker('conductor-cell1', 8),
                            f'{_stamp(9.5)} 1 INFO cellplane.service [-] cellplane-conductor '
                            'serving topic conductor as cell1-conductor with 8 handler threads'],
        'compute-cell1-hollow': [
            'an older start\'s line', _marker('compute-cell1-hollow', 10),
            f'{_stamp(12.25)} 2 INFO cellplane.service [-] cellplane-compute serving topic '
            'compute as cell1-hollow with 8 handler threads',
            f'{_stamp(40)} 2 INFO compute_agent.wiring [-] 500 of 500 hosted host(s) in sync '
            'with Placement'],
        'compute-cell2-hollow': [
            _marker('compute-cell2-hollow', 10),
            f'{_stamp(13)} 3 INFO cellplane.service [-] cellplane-compute serving topic '
            'compute as cell2-hollow with 8 handler threads',
            f'{_stamp(30)} 3 INFO compute_agent.wiring [-] 500 of 500 hosted host(s) in sync '
            'with Placement'],
        'scheduler': [_marker('scheduler', 14)],
    }
    for name, lines in logs.items():
        (tmp_path / f'{name}.log').write_text('\n'.join(lines) + '\n')
    deployment = types.SimpleNamespace(run_dir=tmp_path, timeline={
        'began': BEGAN, 'vhosts and databases': BEGAN + 2, 'daemons serving': BEGAN + 16,
        'hosts registered': BEGAN + 45, 'scheduler read every host': BEGAN + 52})

    steps = boot_bench.startup_timeline(deployment)

    assert steps == {
        'vhosts and databases': 2.0, 'placement spawned': 5.0,
        'cell conductors spawned': 8.0, 'cell conductors serving': 9.5,
        'compute agents spawned': 10.0, 'compute agents serving': 13.0,
        'scheduler and super conductor spawned': 14.0, 'daemons serving': 16.0,
        'first agent in sync with Placement': 30.0,
        'last agent in sync with Placement': 40.0,
        'hosts registered': 45.0, 'scheduler read every host': 52.0}
    assert list(steps) == sorted(steps, key=steps.get)
