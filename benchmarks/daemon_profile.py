"""py-spy on every daemon of a test deployment while a block runs, and what it found.

Used by ``boot_bench.py --profile DIR`` and ``move_bench.py --profile DIR``:
one file of collapsed stacks per daemon and phase, ``DIR/<daemon>-<phase>.txt``
(``scheduler``, ``super-conductor``, ``conductor-cell1``, ``placement``,
``compute-cell1-hollow``...), an HTTP daemon's workers with it, sampled 100
times a second with ``--gil`` (only the thread holding the GIL: where the
CPU went). ``summary`` reads them back: per daemon its samples and the
functions holding most of them.

    .venv/bin/python benchmarks/daemon_profile.py DIR [--top 12]
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import json
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

RATE = 100
# "function (path/to/file.py:123)": the function and the file, without the line.
_FRAME = re.compile(r'^(?P<function>.*?) \((?P<file>[^:()]+)(?::\d+)?\)$')


def py_spy() -> Path:
    """py-spy: this venv's, else the one on PATH."""
    here = Path(sys.executable).parent / 'py-spy'
    found = here if here.exists() else shutil.which('py-spy')
    if found is None:
        raise SystemExit('--profile needs py-spy (pip install py-spy)')
    return Path(found)


def daemon_pids(deployment) -> dict[str, int]:
    """Each daemon's pid, by the name the launcher recorded it under."""
    return {pid_file.stem: json.loads(pid_file.read_text())['pid']
            for pid_file in deployment.run_dir.glob('*.pid')}


@contextlib.contextmanager
def profiled(deployment, out: Path | None, phase: str):
    """With ``out``: py-spy records each daemon while the block runs (collapsed stacks)."""
    if out is None:
        yield
        return
    spies = [subprocess.Popen([str(py_spy()), 'record', '--pid', str(pid),
                               '--format', 'raw', '--rate', str(RATE), '--nonblocking',
                               '--subprocesses', '--gil',
                               '--output', str(out / f'{name}-{phase}.txt')],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for name, pid in daemon_pids(deployment).items()]
    try:
        yield
    finally:
        for spy in spies:
            spy.send_signal(signal.SIGINT)
        for spy in spies:
            spy.wait(timeout=60)


def _short(frame: str) -> str:
    match = _FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    path = match['file']
    for marker in ('site-packages/', 'lib/python3'):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{match['function']} ({path})"


def summarize(path: Path, top: int = 12) -> tuple[int, list[tuple[str, int]]]:
    """(samples, [(function, samples it was on the stack), ...]) of one collapsed-stack file."""
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(' ')
        if not stack or not count.isdigit():
            continue
        samples = int(count)
        total += samples
        for function in {_short(f) for f in stack.split(';')[1:]}:  # [0] is the thread
            inclusive[function] += samples
    return total, inclusive.most_common(top)


def summary(directory: Path, top: int = 12) -> str:
    """Every file's samples (as CPU seconds) and its most sampled functions."""
    lines = []
    for path in sorted(directory.glob('*.txt')):
        total, functions = summarize(path, top)
        lines.append(f'{path.stem}: {total} samples ({total / RATE:.1f} s of CPU)')
        lines += [f'  {100 * n / total:5.1f} %  {name}' for name, n in functions if total]
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('directory', type=Path)
    parser.add_argument('--top', type=int, default=12)
    args = parser.parse_args(argv)
    print(summary(args.directory, args.top))
    return 0


if __name__ == '__main__':
    sys.exit(main())
