"""Starting real cellplane daemons for a test, each with its own config and log file.

A ``Daemon`` is one subprocess (``python -m conductor.cmd`` ...) with a
config file the test wrote; the test reads its log file, signals it and
collects its exit code. ``DaemonLauncher`` (the ``daemons`` fixture) stops
whatever a test started, whatever the test's outcome.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

# A deadline for things that must happen, not a performance expectation:
# a test fails only if something never happens within it.
EVENTUALLY_SECONDS = 60

MODULES = {'conductor': 'conductor.cmd', 'compute': 'compute_agent.cmd',
           'scheduler': 'scheduler.cmd', 'placement': 'placement.cmd'}
UNUSED_PLACEMENT_URL = 'http://127.0.0.1:9'
# Nothing listens there: give up at once rather than retry for [placement] retry_timeout.
UNUSED_PLACEMENT = {'endpoint_url': UNUSED_PLACEMENT_URL, 'connect_attempts': 1}


def render_config(sections: dict[str, dict[str, object]]) -> str:
    lines = []
    for section, options in sections.items():
        lines.append(f'[{section}]')
        lines.extend(f'{key} = {value}' for key, value in options.items())
        lines.append('')
    return '\n'.join(lines)


class Daemon:
    def __init__(self, name: str, kind: str, workdir: Path,
                 sections: dict[str, dict[str, object]]) -> None:
        self.name = name
        self.kind = kind
        self.log_path = workdir / f'{name}.log'
        self.stderr_path = workdir / f'{name}.stderr'
        self.config_path = workdir / f'{name}.conf'
        self.process: subprocess.Popen | None = None
        self.write_config(sections)

    def write_config(self, sections: dict[str, dict[str, object]]) -> None:
        """(Re)write the config file; the log file stays the one this test reads."""
        sections = {k: dict(v) for k, v in sections.items()}
        sections.setdefault('DEFAULT', {}).setdefault('log_file', self.log_path)
        self.config_path.write_text(render_config(sections))

    def start(self) -> 'Daemon':
        with open(self.stderr_path, 'wb') as stderr:
            self.process = subprocess.Popen(
                [sys.executable, '-m', MODULES[self.kind], '--config-file',
                 str(self.config_path)],
                stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
                env={**os.environ, 'PYTHONUNBUFFERED': '1'})
        return self

    def run_to_exit(self) -> tuple[int, str]:
        """Start and wait for it to exit by itself: (exit code, stderr)."""
        self.start()
        code = self.process.wait(timeout=EVENTUALLY_SECONDS)
        return code, self.stderr_path.read_text()

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path.exists() else ''

    def wait_for_log(self, pattern: str, count: int = 1) -> list[str]:
        """Wait until ``pattern`` (a regex) matches ``count`` log lines; return them."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + EVENTUALLY_SECONDS
        while True:
            lines = [line for line in self.log().splitlines() if regex.search(line)]
            if len(lines) >= count:
                return lines
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(
                    f'{self.name} exited with {self.process.returncode} before its log '
                    f'showed {pattern!r}\nstderr:\n{self.stderr_path.read_text()}\n'
                    f'log:\n{self.log()}')
            if time.monotonic() > deadline:
                raise AssertionError(
                    f'{self.name} did not log {pattern!r} {count} time(s) within '
                    f'{EVENTUALLY_SECONDS} s\nlog:\n{self.log()}')
            time.sleep(0.1)

    def wait_until_serving(self) -> None:
        self.wait_for_log(r'serving topic \S+ as ')

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)

    def wait_exit(self) -> int:
        return self.process.wait(timeout=EVENTUALLY_SECONDS)

    def stop(self) -> None:
        self.request_stop()
        self.wait_stopped()

    def request_stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def wait_stopped(self) -> None:
        if self.process is None:
            return
        try:
            self.process.wait(timeout=EVENTUALLY_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class DaemonLauncher:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.started: list[Daemon] = []

    def conductor(self, name: str, sections: dict[str, dict[str, object]]) -> Daemon:
        return self._make(name, 'conductor', sections)

    def compute(self, name: str, sections: dict[str, dict[str, object]]) -> Daemon:
        return self._make(name, 'compute', sections)

    def scheduler(self, name: str, sections: dict[str, dict[str, object]]) -> Daemon:
        return self._make(name, 'scheduler', sections)

    def placement(self, name: str, sections: dict[str, dict[str, object]]) -> Daemon:
        return self._make(name, 'placement', sections)

    def _make(self, name: str, kind: str, sections) -> Daemon:
        daemon = Daemon(name, kind, self.workdir, sections)
        self.started.append(daemon)
        return daemon

    def stop_all(self) -> None:
        # All at once: each daemon spends seconds closing its transport, and
        # stopping them one after another made teardown the slowest part.
        for daemon in reversed(self.started):
            daemon.request_stop()
        for daemon in reversed(self.started):
            daemon.wait_stopped()


def cell_conductor_config(transport_url: str, db_url: str, *, host: str = 'cond1',
                          cell: str = 'cell1', report_interval: int = 1,
                          **default: object) -> dict[str, dict[str, object]]:
    return {
        'DEFAULT': {'transport_url': transport_url, 'host': host, **default},
        'conductor': {'role': 'cell'},
        'database': {'connection': db_url},
        'service': {'report_interval': report_interval},
        'cell': {'name': cell},
        # Cell services need a Placement endpoint to start; these tests never
        # build, so nothing needs to answer there.
        'placement': dict(UNUSED_PLACEMENT),
    }


def compute_config(transport_url: str, *, host: str, cell: str = 'cell1',
                   report_interval: int = 1) -> dict[str, dict[str, object]]:
    return {
        'DEFAULT': {'transport_url': transport_url, 'host': host},
        'service': {'report_interval': report_interval},
        'cell': {'name': cell},
        'placement': dict(UNUSED_PLACEMENT),
    }
