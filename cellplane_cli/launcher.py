"""``cellplane-launch`` (``deploy/run-local.sh``): run a deployment's real daemons on this machine.

    deploy/run-local.sh start   [NAME...] [--config-dir deploy/two-cell] [--run-dir .run/two-cell]
    deploy/run-local.sh status  [NAME...] [--run-dir ...] [--format json]
    deploy/run-local.sh stop    [NAME...] [--run-dir ...]
    deploy/run-local.sh restart [NAME...] [--config-dir ...] [--run-dir ...]
    deploy/run-local.sh purge   [--config-dir ...] [--run-dir ...]

A deployment is a directory of config files named by role, as in
``deploy/two-cell``: ``placement.conf`` (cellplane-placement), ``top.conf``
(the scheduler and the super conductor), ``cell*.conf`` (one cell conductor
each), ``compute-*.conf`` (one compute agent each, of one host or, with
``[compute] hosted_hosts``, many) and, optionally, ``scheduler-*.conf`` (one
more scheduler worker each, reading ``top.conf`` then that file, which names
its ``[DEFAULT] host``), ``scheduler.conf`` and ``super-conductor.conf`` (read
after ``top.conf`` by the first scheduler and by the super conductor: what
only that daemon sets, such as its ``[metrics] bind_port``) and ``api.conf``
(cellplane-api, the compute API: reads ``top.conf``, for the API database and
the top-level bus, then ``api.conf``, its ``[api]``; started last, ready when
it answers HTTP at its ``[api] bind_host:bind_port``). ``start``:

1. creates what the files point at and is missing: the RabbitMQ vhosts of
   every ``transport_url`` and their users (with ``rabbitmqctl``: a user the
   broker does not know is created with the URL's password; each user is
   granted its URL's vhost only) and the PostgreSQL databases of every connection (through the same server's
   ``postgres`` database);
2. creates or upgrades each schema (``db sync``) and maps each cell in the
   API database (``cell create``) unless a cell of that name is mapped;
3. starts the daemons that do not run (running ones are left alone),
   dependencies first, each with its own config file, its log in the run
   directory and its pid in ``<run-dir>/<name>.pid``, and waits until each
   serves (Placement answers HTTP; an RPC daemon logs, after the marker this
   start wrote, that it serves its topic). A daemon that dies or does not
   serve is reported with the last lines of this start's output and makes
   ``start`` exit 1; the others keep running.

``stop`` sends SIGTERM to every pid recorded (only if that pid is still the
process this launcher started: same start time) and waits for each to exit;
``restart`` stops, then starts; ``status`` shows each daemon, its pid, state,
uptime, log file and the file:line of its last error. ``purge`` stops them
and deletes the vhosts and databases the files name, and the broker users
they name that are left with no permission on any vhost.
"""
from __future__ import annotations

import argparse
import dataclasses
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Iterable, Sequence
from urllib.parse import unquote, urlsplit

import requests
import sqlalchemy as sa
import urllib3
from oslo_config import cfg
from sqlalchemy.engine import make_url

from cellplane.db import engines, migrate
from cellplane.objects import cell_mappings

DEFAULT_CONFIG_DIR = 'deploy/two-cell'
DEFAULT_RUN_DIR = '.run/two-cell'
# A bound on things that must happen (a daemon starting), not a speed target.
READY_SECONDS = 90
STOP_SECONDS = 60
SERVING = re.compile(r'serving topic \S+ as ')

MODULES = {
    'placement': 'placement.cmd',
    'scheduler': 'scheduler.cmd',
    'conductor': 'conductor.cmd',
    'compute': 'compute_agent.cmd',
    'api': 'cellplane_api.cmd',
}
# The daemons that are ready when they answer HTTP at their address.
HTTP_KINDS = ('placement', 'api')


class LaunchError(Exception):
    """The deployment cannot be started as asked; the message says what to fix."""


@dataclasses.dataclass(frozen=True)
class DaemonSpec:
    """One daemon to run: its name in the run directory, its kind and config files."""

    name: str
    kind: str
    config_files: tuple[str, ...]

    def command(self, run_dir: Path) -> list[str]:
        argv = [sys.executable, '-m', MODULES[self.kind]]
        for path in self.config_files:
            argv += ['--config-file', path]
        return argv + ['--log-file', str(run_dir / f'{self.name}.log')]


@dataclasses.dataclass(frozen=True)
class Deployment:
    """A config directory read by role: what to create, what to start, in which order."""

    config_dir: Path
    placement: Path
    top: Path
    cells: tuple[Path, ...]
    computes: tuple[Path, ...]
    # More scheduler workers: each scheduler-*.conf is read after top.conf.
    schedulers: tuple[Path, ...] = ()
    # Read after top.conf by the first scheduler, and by the super conductor.
    scheduler_own: Path | None = None
    super_conductor_own: Path | None = None
    # The compute API (cellplane-api), read after top.conf; None: not run.
    api: Path | None = None

    @classmethod
    def from_dir(cls, config_dir: str | Path) -> 'Deployment':
        config_dir = Path(config_dir).resolve()
        placement, top = config_dir / 'placement.conf', config_dir / 'top.conf'
        cells = tuple(sorted(Path(p) for p in glob.glob(str(config_dir / 'cell*.conf'))))
        computes = tuple(sorted(Path(p) for p in glob.glob(str(config_dir / 'compute-*.conf'))))
        missing = [p.name for p in (placement, top) if not p.exists()]
        if missing or not cells or not computes:
            raise LaunchError(
                f'{config_dir} is not a deployment directory: it needs placement.conf, '
                f'top.conf, cell*.conf and compute-*.conf files'
                + (f' (missing: {", ".join(missing)})' if missing else ''))
        schedulers = tuple(sorted(Path(p) for p in
                                  glob.glob(str(config_dir / 'scheduler-*.conf'))))
        own = {name: config_dir / f'{name}.conf' for name in ('scheduler', 'super-conductor')}
        own = {name: path if path.exists() else None for name, path in own.items()}
        api = config_dir / 'api.conf'
        return cls(config_dir, placement, top, cells, computes, schedulers,
                   own['scheduler'], own['super-conductor'], api if api.exists() else None)

    def stages(self) -> list[list[DaemonSpec]]:
        """Every daemon, in start stages: a stage needs only the ones before it."""
        stages = [
            [DaemonSpec('placement', 'placement', (str(self.placement),))],
            [DaemonSpec(f'conductor-{p.stem}', 'conductor', (str(p),)) for p in self.cells],
            [DaemonSpec(p.stem, 'compute', (str(p),)) for p in self.computes],
            [DaemonSpec('scheduler', 'scheduler', self._top_and(self.scheduler_own)),
             *(DaemonSpec(p.stem, 'scheduler', (str(self.top), str(p)))
               for p in self.schedulers),
             DaemonSpec('super-conductor', 'conductor',
                        self._top_and(self.super_conductor_own))],
        ]
        if self.api is not None:
            # Users' requests go to the super conductor and the scheduler: after them.
            stages.append([DaemonSpec('api', 'api', self._top_and(self.api))])
        return stages

    def _top_and(self, own: Path | None) -> tuple[str, ...]:
        return (str(self.top),) + ((str(own),) if own is not None else ())

    def cell_name(self, path: Path) -> str:
        return option(path, 'cell', 'name') or path.stem


def read_sections(path: Path) -> dict[str, dict[str, list[str]]]:
    """The sections of one config file, as oslo.config parses it (no option registered)."""
    sections: dict = {}
    cfg.ConfigParser(str(path), sections).parse()
    return sections


def option(path: Path, section: str, name: str) -> str | None:
    values = read_sections(path).get(section, {}).get(name)
    return values[-1] if values else None


def required_option(path: Path, section: str, name: str) -> str:
    value = option(path, section, name)
    if not value:
        raise LaunchError(f'{path} has no [{section}] {name}')
    return value


# -- creating what the files point at ----------------------------------------

def transport_urls(deployment: Deployment) -> list[str]:
    paths = (deployment.top, *deployment.cells, *deployment.computes)
    return sorted({required_option(p, 'DEFAULT', 'transport_url') for p in paths})


def database_urls(deployment: Deployment) -> dict[str, str]:
    """Database URL -> history name (api, cell or placement)."""
    found = {required_option(deployment.top, 'api_database', 'connection'): 'api',
             required_option(deployment.placement, 'placement_database', 'connection'):
                 'placement'}
    for path in deployment.cells:
        found[required_option(path, 'database', 'connection')] = 'cell'
    return found


def ensure_vhost(transport_url: str) -> None:
    """Create the vhost and user of ``transport_url`` with rabbitmqctl unless they exist.

    The user is created with the URL's password and given every permission
    on this vhost; it is given nothing anywhere else, so a deployment whose
    levels each name a user of their own (``deploy/two-cell``) has a broker
    user per vhost, fenced from the others. An existing user keeps its password.
    """
    vhost = _vhost(transport_url)
    parts = urlsplit(transport_url)
    user = unquote(parts.username or 'guest')
    existing = _rabbitmqctl('list_vhosts', '--no-table-headers').split()
    if vhost not in existing:
        _rabbitmqctl('add_vhost', vhost)
    if user not in _broker_users():
        if not parts.password:
            raise LaunchError(f'cannot create broker user {user} of vhost {vhost}: '
                              'its transport_url has no password')
        _rabbitmqctl('add_user', user, unquote(parts.password))
    _rabbitmqctl('set_permissions', '-p', vhost, user, '.*', '.*', '.*')


def _broker_users() -> set[str]:
    return {line.split('\t', 1)[0]
            for line in _rabbitmqctl('list_users', '--no-table-headers').splitlines() if line}


def shared_users(transport_urls_: Iterable[str]) -> dict[str, list[str]]:
    """Broker users named for more than one vhost, with those vhosts (no fence between them)."""
    vhosts: dict[str, set[str]] = {}
    for url in transport_urls_:
        user = unquote(urlsplit(url).username or 'guest')
        vhosts.setdefault(user, set()).add(_vhost(url))
    return {user: sorted(found) for user, found in vhosts.items() if len(found) > 1}


def _rabbitmqctl(*args: str) -> str:
    try:
        done = subprocess.run(['rabbitmqctl', '-q', *args], check=True,
                              capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise LaunchError('rabbitmqctl is not installed here: create the vhosts '
                          'yourself and start with --no-create') from None
    except subprocess.CalledProcessError as exc:
        raise LaunchError(f'rabbitmqctl {" ".join(args)} failed: '
                          f'{exc.stderr.strip() or exc.stdout.strip()}') from None
    return done.stdout


def ensure_database(url: str) -> None:
    """Create the PostgreSQL database of ``url`` unless it exists (SQLite needs nothing)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != 'postgresql':
        return
    admin = sa.create_engine(parsed.set(database='postgres'),
                             isolation_level='AUTOCOMMIT', poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            exists = conn.execute(sa.text('SELECT 1 FROM pg_database WHERE datname = :n'),
                                  {'n': parsed.database}).first()
            if not exists:
                conn.execute(sa.text(f'CREATE DATABASE "{parsed.database}"'))
    except sa.exc.OperationalError as exc:
        raise LaunchError(f'cannot create database {parsed.database} on '
                          f'{parsed.host}:{parsed.port or 5432}: {exc.orig}') from None
    finally:
        admin.dispose()


def remove_vhost(transport_url: str) -> None:
    vhost = _vhost(transport_url)
    if vhost in _rabbitmqctl('list_vhosts', '--no-table-headers').split():
        _rabbitmqctl('delete_vhost', vhost)


def remove_idle_user(transport_url: str) -> bool:
    """Delete the URL's broker user if it holds no permission left on any vhost (after ``remove_vhost``).

    So a user ``start`` made for a deployment's vhost goes with it, and a
    user with rights elsewhere (``guest`` on ``/``) stays. True if deleted.
    """
    user = unquote(urlsplit(transport_url).username or 'guest')
    if user not in _broker_users():
        return False
    if _rabbitmqctl('list_user_permissions', user, '--no-table-headers').strip():
        return False
    _rabbitmqctl('delete_user', user)
    return True


def _vhost(transport_url: str) -> str:
    parts = urlsplit(transport_url)
    return unquote(parts.path[1:]) if parts.path not in ('', '/') else '/'


def drop_database(url: str) -> None:
    """Drop the PostgreSQL database of ``url`` if it exists (SQLite files are left alone)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != 'postgresql':
        return
    admin = sa.create_engine(parsed.set(database='postgres'),
                             isolation_level='AUTOCOMMIT', poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
    except sa.exc.OperationalError as exc:
        raise LaunchError(f'cannot drop database {parsed.database}: {exc.orig}') from None
    finally:
        admin.dispose()


def purge(deployment: Deployment) -> list[str]:
    """Delete every vhost and database the deployment's files name (after ``stop``).

    And each broker user they name that is left with no permission anywhere
    (``remove_idle_user``). Returns the users deleted.
    """
    urls = transport_urls(deployment)
    for url in urls:
        if _vhost(url) != '/':
            remove_vhost(url)
    users = [unquote(urlsplit(url).username or 'guest') for url in urls
             if remove_idle_user(url)]
    for url in database_urls(deployment):
        drop_database(url)
    return users


def sync_and_map(deployment: Deployment) -> None:
    """``db sync`` every database, then map every cell not mapped yet."""
    for url, history in database_urls(deployment).items():
        engine = engines.create_engine(url)
        try:
            migrate.sync(history, engine)
        finally:
            engine.dispose()
    api = engines.create_engine(required_option(deployment.top, 'api_database', 'connection'))
    try:
        mapped = {m.name for m in cell_mappings.list_all(api)}
        for path in deployment.cells:
            name = deployment.cell_name(path)
            if name not in mapped:
                cell_mappings.create(
                    api, name=name,
                    transport_url=required_option(path, 'DEFAULT', 'transport_url'),
                    database_connection=required_option(path, 'database', 'connection'))
    finally:
        api.dispose()


def prepare(deployment: Deployment, *, create: bool = True) -> None:
    """Vhosts and databases (when ``create``), schemas and cell mappings."""
    if create:
        urls = transport_urls(deployment)
        for user, vhosts in shared_users(urls).items():
            print(f'cellplane-launch: warning: broker user {user} is named for vhosts '
                  f'{", ".join(vhosts)}: what holds its password on one can reach the '
                  'others (give each level a user of its own)', file=sys.stderr)
        for url in urls:
            ensure_vhost(url)
        for url in database_urls(deployment):
            ensure_database(url)
    sync_and_map(deployment)


# -- running daemons -----------------------------------------------------------

# Written to <name>.log and <name>.out before each start: what follows the
# last marker is that start's output, and only that is read for readiness,
# for the reason of a failed start and for ``status``'s last error.
MARKER = '==== cellplane-launch: {name} starting at {when} ====\n'
# How much of a failed daemon's own output the launcher quotes.
TAIL_LINES = 15
# An oslo.log line at ERROR or CRITICAL (every line of a logged traceback too).
LOG_ERROR = re.compile(r'^\S+ \S+ \d+ (?:ERROR|CRITICAL) ')
# What an error looks like on a daemon's stdout/stderr while it still runs.
OUTPUT_ERROR = re.compile(r'Traceback|Error|ERROR|CRITICAL')


@dataclasses.dataclass(frozen=True)
class ErrorLine:
    """One line of a daemon's output: where it is (file, 1-based line) and what it says."""

    path: Path
    line: int
    text: str

    def __str__(self) -> str:
        return f'{self.path}:{self.line}'


def _since(path: Path, offset: int) -> tuple[int, list[str]]:
    """The lines of ``path`` after byte ``offset``, and the line number of the first."""
    try:
        data = path.read_bytes()
    except OSError:
        return 1, []
    offset = min(offset, len(data))
    first = data[:offset].count(b'\n') + 1
    return first, data[offset:].decode(errors='replace').splitlines()


@dataclasses.dataclass
class RunningDaemon:
    """A daemon as the run directory records it: its pid and where this start's output begins."""

    spec: DaemonSpec
    pid: int
    started: int | None     # the process's start time, in clock ticks after boot
    log_path: Path
    output_path: Path
    # Sizes of <name>.log and <name>.out when this start began (after its marker).
    log_offset: int = 0
    output_offset: int = 0
    # It served (answered HTTP, or logged that it serves its topic).
    ready: bool = True

    def alive(self) -> bool:
        """True if ``pid`` still runs the process this launcher started (not a reused pid)."""
        return self.started is not None and _start_ticks(self.pid) == self.started

    def state(self) -> str:
        """running, starting, failed (died before it served) or exited (after)."""
        if self.alive():
            return 'running' if self.ready else 'starting'
        return 'exited' if self.ready else 'failed'

    def uptime(self) -> float | None:
        """Seconds since the process started; None when it is not running."""
        if not self.alive() or self.started is None:
            return None
        booted_seconds = float(Path('/proc/uptime').read_text().split()[0])
        return max(0.0, booted_seconds - self.started / os.sysconf('SC_CLK_TCK'))

    def log_lines(self) -> tuple[int, list[str]]:
        return _since(self.log_path, self.log_offset)

    def output_lines(self) -> tuple[int, list[str]]:
        return _since(self.output_path, self.output_offset)

    def last_error(self) -> ErrorLine | None:
        """The last error of this start: on stdout/stderr if it died, else in its log."""
        out_first, out = self.output_lines()
        if not self.alive():
            for index in range(len(out) - 1, -1, -1):
                if out[index].strip():
                    return ErrorLine(self.output_path, out_first + index, out[index].strip())
        log_first, log = self.log_lines()
        for path, first, lines, pattern in ((self.log_path, log_first, log, LOG_ERROR),
                                            (self.output_path, out_first, out, OUTPUT_ERROR)):
            for index in range(len(lines) - 1, -1, -1):
                if pattern.search(lines[index]):
                    return ErrorLine(path, first + index, lines[index].strip())
        return None

    def tail(self, count: int = TAIL_LINES) -> tuple[Path, list[str]]:
        """The last lines of this start's stdout/stderr, or of its log if it wrote none there."""
        for path, (_, lines) in ((self.output_path, self.output_lines()),
                                 (self.log_path, self.log_lines())):
            lines = [line for line in lines if line.strip()]
            if lines:
                return path, lines[-count:]
        return self.output_path, []


def _start_ticks(pid: int) -> int | None:
    """When ``pid`` started (field 22 of /proc/PID/stat); None if gone or a zombie.

    The command line is no proof of identity: a daemon may retitle itself.
    """
    try:
        stat = Path(f'/proc/{pid}/stat').read_text()
    except OSError:
        return None
    fields = stat.rsplit(')', 1)[-1].split()
    return None if fields[0] == 'Z' else int(fields[19])


@dataclasses.dataclass(frozen=True)
class StartFailure:
    """A daemon this start spawned that did not come to serve: why, and its last lines."""

    name: str
    reason: str
    path: Path
    lines: tuple[str, ...]

    def message(self) -> str:
        quoted = ''.join(f'\n    {line}' for line in self.lines) or ' (it wrote nothing)'
        return f'{self.name} {self.reason}; the last lines of {self.path}:{quoted}'


@dataclasses.dataclass
class StartReport:
    """What one ``start`` did, daemon by daemon."""

    started: list[str] = dataclasses.field(default_factory=list)
    already_running: list[str] = dataclasses.field(default_factory=list)
    failed: list[StartFailure] = dataclasses.field(default_factory=list)
    # Not tried: a daemon they need failed in an earlier stage.
    not_started: list[str] = dataclasses.field(default_factory=list)


class Launcher:
    """Starts, finds and stops the daemons of one run directory."""

    def __init__(self, run_dir: str | Path, *, placement_url: str | None = None) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.placement_url = placement_url
        # The processes this launcher spawned: their exit status, when they die.
        self._processes: dict[str, subprocess.Popen] = {}

    def _pid_file(self, name: str) -> Path:
        return self.run_dir / f'{name}.pid'

    def start(self, deployment: Deployment, *,
              only: Iterable[str] | None = None) -> StartReport:
        """Start the daemons (or those named in ``only``) that do not run; leave running ones alone.

        Daemons start in stages (Placement; cell conductors; compute agents;
        scheduler and super conductor): a stage is spawned at once and waited
        for as a whole before the next, which needs it, begins. A daemon that
        dies or does not serve is reported, not retried, and the others keep
        running; only a failed Placement or cell conductor keeps the later
        stages from being tried (they need it), a failed compute agent does not.
        """
        self.run_dir.mkdir(parents=True, exist_ok=True)
        wanted = set(only) if only is not None else None
        placement_url = self.placement_url or _placement_url(deployment)
        report = StartReport()
        needed_failed: list[str] = []
        for stage in deployment.stages():
            spawned = []
            for spec in stage:
                if wanted is not None and spec.name not in wanted:
                    continue
                running = self.find(spec.name)
                if running is not None and running.alive():
                    report.already_running.append(spec.name)
                elif needed_failed:
                    report.not_started.append(spec.name)
                else:
                    spawned.append(self._spawn(spec))
            failed = self._wait_ready(spawned, {'placement': placement_url,
                                                'api': _api_url(deployment)})
            report.failed += failed
            report.started += [d.spec.name for d in spawned
                               if d.spec.name not in {f.name for f in failed}]
            needed_failed += [f.name for f in failed if f.name == 'placement'
                              or f.name.startswith('conductor-')]
        return report

    def _spawn(self, spec: DaemonSpec) -> RunningDaemon:
        log_path = self.run_dir / f'{spec.name}.log'
        output_path = self.run_dir / f'{spec.name}.out'
        marker = MARKER.format(name=spec.name, when=_now_iso())
        offsets = []
        for path in (log_path, output_path):
            with open(path, 'a+b') as stream:
                # A dying daemon's last line may lack its newline: the marker
                # starts a line of its own.
                stream.seek(0, os.SEEK_END)
                if stream.tell():
                    stream.seek(-1, os.SEEK_END)
                    if stream.read(1) != b'\n':
                        stream.write(b'\n')
                stream.write(marker.encode())
            offsets.append(path.stat().st_size)
        with open(output_path, 'ab') as output:
            process = subprocess.Popen(
                spec.command(self.run_dir), stdin=subprocess.DEVNULL, stdout=output,
                stderr=output, start_new_session=True,
                env={**os.environ, 'PYTHONUNBUFFERED': '1'})
        self._processes[spec.name] = process
        daemon = RunningDaemon(spec, process.pid, _start_ticks(process.pid), log_path,
                               output_path, offsets[0], offsets[1], ready=False)
        self._record(daemon)
        return daemon

    def _record(self, daemon: RunningDaemon) -> None:
        record = {'pid': daemon.pid, 'started': daemon.started, 'kind': daemon.spec.kind,
                  'config_files': list(daemon.spec.config_files),
                  'log_offset': daemon.log_offset, 'output_offset': daemon.output_offset,
                  'ready': daemon.ready}
        self._pid_file(daemon.spec.name).write_text(json.dumps(record) + '\n')

    def find(self, name: str) -> RunningDaemon | None:
        path = self._pid_file(name)
        if not path.exists():
            return None
        record = json.loads(path.read_text())
        spec = DaemonSpec(name, record['kind'], tuple(record['config_files']))
        return RunningDaemon(spec, record['pid'], record.get('started'),
                             self.run_dir / f'{name}.log', self.run_dir / f'{name}.out',
                             record.get('log_offset', 0), record.get('output_offset', 0),
                             record.get('ready', True))

    def recorded(self) -> list[RunningDaemon]:
        names = sorted(p.stem for p in self.run_dir.glob('*.pid'))
        found = [self.find(n) for n in names]
        return [d for d in found if d is not None]

    def stop(self, names: Iterable[str] | None = None) -> list[str]:
        """SIGTERM the recorded daemons (the last started first); the names stopped."""
        daemons = self.recorded()
        if names is not None:
            wanted = set(names)
            daemons = [d for d in daemons if d.spec.name in wanted]
        # The reverse of the start order: nothing loses a peer it still talks to.
        daemons.sort(key=_stop_rank)
        stopped = []
        for daemon in daemons:
            if daemon.alive():
                _signal(daemon.pid, signal.SIGTERM)
                stopped.append(daemon)
        self._wait_gone(stopped)
        for daemon in daemons:
            self._pid_file(daemon.spec.name).unlink(missing_ok=True)
        return [d.spec.name for d in stopped]

    @staticmethod
    def _wait_gone(daemons: list[RunningDaemon]) -> None:
        deadline = time.monotonic() + STOP_SECONDS
        for daemon in daemons:
            while daemon.alive() and time.monotonic() < deadline:
                time.sleep(0.1)
            if daemon.alive():
                _signal(daemon.pid, signal.SIGKILL)

    def _wait_ready(self, daemons: list[RunningDaemon],
                    urls: dict[str, str]) -> list[StartFailure]:
        """Wait until each serves or dies; the ones that did not serve, with why."""
        failed = []
        pending = list(daemons)
        deadline = time.monotonic() + READY_SECONDS
        while pending:
            for daemon in list(pending):
                if not daemon.alive():
                    failed.append(self._failure(daemon, f'exited while starting'
                                                        f'{self._exit_status(daemon)}'))
                    pending.remove(daemon)
                elif self._serves(daemon, urls):
                    daemon.ready = True
                    self._record(daemon)
                    pending.remove(daemon)
            if pending and time.monotonic() >= deadline:
                # Stopped, so that the next start tries it again rather than
                # taking a daemon that never served for a running one.
                for daemon in pending:
                    _signal(daemon.pid, signal.SIGTERM)
                self._wait_gone(pending)
                for daemon in pending:
                    what = (f'did not answer at {urls[daemon.spec.kind]}'
                            if daemon.spec.kind in HTTP_KINDS else 'did not start serving')
                    failed.append(self._failure(
                        daemon, f'{what} within {READY_SECONDS} s (stopped)'))
                pending = []
            time.sleep(0.1 if pending else 0)
        return failed

    def _exit_status(self, daemon: RunningDaemon) -> str:
        process = self._processes.get(daemon.spec.name)
        try:
            code = process.wait(timeout=5) if process is not None else None
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            return ''
        return f' (killed by signal {-code})' if code < 0 else f' (exit status {code})'

    @staticmethod
    def _failure(daemon: RunningDaemon, reason: str) -> StartFailure:
        path, lines = daemon.tail()
        return StartFailure(daemon.spec.name, reason, path, tuple(lines))

    @staticmethod
    def _serves(daemon: RunningDaemon, urls: dict[str, str]) -> bool:
        if daemon.spec.kind in HTTP_KINDS:
            try:
                # Whether the daemon just spawned answers, not whom to trust:
                # nothing is sent, so its certificate is not checked here.
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore', urllib3.exceptions.InsecureRequestWarning)
                    return requests.get(urls[daemon.spec.kind], timeout=2,
                                        verify=False).status_code == 200
            except requests.RequestException:
                return False
        return any(SERVING.search(line) for line in daemon.log_lines()[1])


def _signal(pid: int, signum: int) -> None:
    """Signal ``pid``, which may have exited since it was found alive."""
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _now_iso() -> str:
    return time.strftime('%Y-%m-%dT%H:%M:%S%z')


def _stop_rank(daemon: RunningDaemon) -> int:
    if daemon.spec.kind == 'placement':
        return 3
    if daemon.spec.kind == 'compute':
        return 1
    if daemon.spec.name.startswith('conductor-'):
        return 2
    return 0    # scheduler, super conductor, the compute API


def _api_url(deployment: Deployment) -> str:
    if deployment.api is None:
        return ''
    host = option(deployment.api, 'api', 'bind_host') or '127.0.0.1'
    port = option(deployment.api, 'api', 'bind_port') or '8774'
    return f'{_scheme(deployment.api)}://{host}:{port}/'


def _placement_url(deployment: Deployment) -> str:
    host = option(deployment.placement, 'api', 'bind_host') or '127.0.0.1'
    port = option(deployment.placement, 'api', 'bind_port') or '8778'
    return f'{_scheme(deployment.placement)}://{host}:{port}/'


def _scheme(path: Path) -> str:
    """https when the HTTP daemon's file gives it a certificate (``[api] ssl_cert_file``)."""
    return 'https' if option(path, 'api', 'ssl_cert_file') else 'http'


# -- the command -----------------------------------------------------------------

def format_uptime(seconds: float | None) -> str:
    """``45s``, ``4m05s``, ``2h03m``, ``3d04h``; ``-`` when not running."""
    if seconds is None:
        return '-'
    seconds = int(seconds)
    if seconds < 60:
        return f'{seconds}s'
    if seconds < 3600:
        return f'{seconds // 60}m{seconds % 60:02d}s'
    if seconds < 86400:
        return f'{seconds // 3600}h{seconds % 3600 // 60:02d}m'
    return f'{seconds // 86400}d{seconds % 86400 // 3600:02d}h'


def status_rows(launcher: Launcher) -> list[dict]:
    """Each recorded daemon: name, pid, state, uptime, log, output and last error."""
    rows = []
    for daemon in launcher.recorded():
        error = daemon.last_error()
        uptime = daemon.uptime()
        rows.append({
            'name': daemon.spec.name, 'pid': daemon.pid, 'state': daemon.state(),
            'uptime_seconds': None if uptime is None else round(uptime),
            'log': str(daemon.log_path), 'output': str(daemon.output_path),
            'last_error': None if error is None else {
                'file': str(error.path), 'line': error.line, 'text': error.text},
        })
    return rows


def _shown(path: str) -> str:
    """``path`` relative to the current directory when it is under it (as .run/two-cell/...)."""
    relative = os.path.relpath(path)
    return path if relative.startswith('..') else relative


def status_table(rows: list[dict]) -> list[str]:
    table = [('NAME', 'PID', 'STATE', 'UPTIME', 'LOG', 'LAST ERROR')]
    for row in rows:
        error = row['last_error']
        table.append((row['name'], str(row['pid']), row['state'],
                      format_uptime(row['uptime_seconds']), _shown(row['log']),
                      '-' if error is None else f'{_shown(error["file"])}:{error["line"]}'))
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    return ['  '.join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='cellplane-launch',
        description='Run the real daemons of a deployment directory on this machine.')
    parser.add_argument('action', choices=['start', 'stop', 'restart', 'status', 'purge'],
                        help='start: what does not run (running daemons are left alone); '
                             'restart: stop, then start; purge: stop, then delete the '
                             'vhosts and databases the config files name (everything the '
                             'deployment stored)')
    parser.add_argument('names', nargs='*', metavar='NAME',
                        help='only these daemons (as status names them: placement, '
                             'scheduler, conductor-cell1, compute-cell1-host1...)')
    parser.add_argument('--config-dir', default=DEFAULT_CONFIG_DIR,
                        help=f'the deployment\'s config files (default {DEFAULT_CONFIG_DIR})')
    parser.add_argument('--run-dir', default=DEFAULT_RUN_DIR,
                        help=f'pid and log files (default {DEFAULT_RUN_DIR})')
    parser.add_argument('--no-create', action='store_true',
                        help='do not create vhosts and databases (they exist)')
    parser.add_argument('-f', '--format', choices=['table', 'json'], default='table',
                        help='output format (default table)')

    def error(message: str):
        parser.exit(2, f'{parser.prog}: error: {message} (see --help)\n')
    parser.error = error
    return parser


def _check_names(parser: argparse.ArgumentParser, names: list[str],
                 known: Iterable[str]) -> None:
    known = sorted(set(known))
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f'no daemon {", ".join(unknown)} in this deployment; '
                     f'its daemons: {", ".join(known) or "none"}')


def _start(launcher: Launcher, args: argparse.Namespace) -> int:
    deployment = Deployment.from_dir(args.config_dir)
    prepare(deployment, create=not args.no_create)
    report = launcher.start(deployment, only=args.names or None)
    rows = status_rows(launcher)
    if args.format == 'json':
        print(json.dumps({
            'daemons': rows, 'started': report.started,
            'already_running': report.already_running, 'not_started': report.not_started,
            'failed': [{'name': f.name, 'reason': f.reason, 'file': str(f.path),
                        'last_lines': list(f.lines)} for f in report.failed]}, indent=2))
    else:
        print('\n'.join(status_table(rows)))
        print(f'started {len(report.started)}, already running '
              f'{len(report.already_running)}, failed {len(report.failed)}'
              + (f', not started {len(report.not_started)}' if report.not_started else ''))
    for failure in report.failed:
        print(f'cellplane-launch: {failure.message()}', file=sys.stderr)
    if report.not_started:
        print(f'cellplane-launch: not started, as they need a daemon that failed: '
              f'{", ".join(report.not_started)}', file=sys.stderr)
    if report.failed:
        running = sum(1 for r in rows if r['state'] == 'running')
        print(f'cellplane-launch: did not start: '
              f'{", ".join(f.name for f in report.failed)}; {running} daemon(s) running',
              file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    launcher = Launcher(args.run_dir)
    try:
        if args.names:
            if args.action == 'purge':
                parser.error('purge takes no daemon names: it stops them all')
            known = {d.spec.name for d in launcher.recorded()}
            try:
                known |= {spec.name for stage in Deployment.from_dir(args.config_dir).stages()
                          for spec in stage}
            except LaunchError:
                if args.action in ('start', 'restart'):
                    raise
            _check_names(parser, args.names, known)
        if args.action in ('start', 'restart'):
            if args.action == 'restart':
                launcher.stop(args.names or None)
            return _start(launcher, args)
        if args.action == 'purge':
            stopped = launcher.stop()
            deployment = Deployment.from_dir(args.config_dir)
            users = purge(deployment)
            vhosts = [_vhost(u) for u in transport_urls(deployment)]
            if args.format == 'json':
                print(json.dumps({'stopped': stopped, 'vhosts_deleted': vhosts,
                                  'users_deleted': users,
                                  'databases_deleted': len(database_urls(deployment))}))
            else:
                print(f'stopped {len(stopped)} daemon(s); deleted vhosts '
                      f'{", ".join(vhosts)}, broker users {", ".join(users) or "none"} '
                      f'and {len(database_urls(deployment))} databases')
        elif args.action == 'stop':
            recorded = {d.spec.name for d in launcher.recorded()}
            stopped = launcher.stop(args.names or None)
            # Records of daemons that had already died (failed, exited): removed.
            forgotten = sorted(n for n in recorded - set(stopped)
                               if not args.names or n in args.names)
            if args.format == 'json':
                print(json.dumps({'stopped': stopped, 'not_running': forgotten}))
            else:
                print(f'stopped {len(stopped)} daemon(s)'
                      + (f': {", ".join(stopped)}' if stopped else '')
                      + (f'; not running, record removed: {", ".join(forgotten)}'
                         if forgotten else ''))
        else:
            rows = [r for r in status_rows(launcher)
                    if not args.names or r['name'] in args.names]
            print(json.dumps(rows, indent=2) if args.format == 'json'
                  else '\n'.join(status_table(rows)))
    except LaunchError as exc:
        print(f'cellplane-launch: {exc}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
