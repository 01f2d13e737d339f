"""``cellplane-launch`` (``deploy/run-local.sh``): run a deployment's real daemons on this machine.

    deploy/run-local.sh start  [--config-dir deploy/two-cell] [--run-dir .run/two-cell]
    deploy/run-local.sh status [--run-dir ...]
    deploy/run-local.sh stop   [--run-dir ...]
    deploy/run-local.sh purge  [--config-dir ...] [--run-dir ...]

A deployment is a directory of config files named by role, as in
``deploy/two-cell``: ``placement.conf`` (cellplane-placement), ``top.conf``
(the scheduler and the super conductor), ``cell*.conf`` (one cell conductor
each), ``compute-*.conf`` (one compute agent each, of one host or, with
``[compute] hosted_hosts``, many) and, optionally, ``scheduler-*.conf`` (one
more scheduler worker each, reading ``top.conf`` then that file, which names
its ``[DEFAULT] host``), ``scheduler.conf`` and ``super-conductor.conf`` (read
after ``top.conf`` by the first scheduler and by the super conductor: what
only that daemon sets, such as its ``[metrics] bind_port``). ``start``:

1. creates what the files point at and is missing: the RabbitMQ vhosts of
   every ``transport_url`` (with ``rabbitmqctl``, granting the URL's user) and
   the PostgreSQL databases of every connection (through the same server's
   ``postgres`` database);
2. creates or upgrades each schema (``db sync``) and maps each cell in the
   API database (``cell create``) unless a cell of that name is mapped;
3. starts the daemons, dependencies first, each with its own config file,
   its log in the run directory and its pid in ``<run-dir>/<name>.pid``, and
   waits until each serves (Placement answers HTTP; an RPC daemon logs that
   it serves its topic).

``stop`` sends SIGTERM to every pid recorded (only if that pid is still the
process this launcher started: same start time) and waits for each to exit; ``status``
shows each daemon, its pid, whether it runs, and its log file. ``purge``
stops them and deletes the vhosts and databases the files name.
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
from pathlib import Path
from typing import Iterable, Sequence
from urllib.parse import unquote, urlsplit

import requests
import sqlalchemy as sa
from oslo_config import cfg
from sqlalchemy.engine import make_url

from cellplane.objects import cell_mappings
from cellplane.db import engines, migrate

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
}


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
        return cls(config_dir, placement, top, cells, computes, schedulers,
                   own['scheduler'], own['super-conductor'])

    def stages(self) -> list[list[DaemonSpec]]:
        """Every daemon, in start stages: a stage needs only the ones before it."""
        return [
            [DaemonSpec('placement', 'placement', (str(self.placement),))],
            [DaemonSpec(f'conductor-{p.stem}', 'conductor', (str(p),)) for p in self.cells],
            [DaemonSpec(p.stem, 'compute', (str(p),)) for p in self.computes],
            [DaemonSpec('scheduler', 'scheduler', self._top_and(self.scheduler_own)),
             *(DaemonSpec(p.stem, 'scheduler', (str(self.top), str(p)))
               for p in self.schedulers),
             DaemonSpec('super-conductor', 'conductor',
                        self._top_and(self.super_conductor_own))],
        ]

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
    """Create the vhost of ``transport_url`` with rabbitmqctl unless it exists."""
    vhost = _vhost(transport_url)
    user = unquote(urlsplit(transport_url).username or 'guest')
    existing = _rabbitmqctl('list_vhosts', '--no-table-headers').split()
    if vhost not in existing:
        _rabbitmqctl('add_vhost', vhost)
    _rabbitmqctl('set_permissions', '-p', vhost, user, '.*', '.*', '.*')


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


def purge(deployment: Deployment) -> None:
    """Delete every vhost and database the deployment's files name (after ``stop``)."""
    for url in transport_urls(deployment):
        if _vhost(url) != '/':
            remove_vhost(url)
    for url in database_urls(deployment):
        drop_database(url)


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
        for url in transport_urls(deployment):
            ensure_vhost(url)
        for url in database_urls(deployment):
            ensure_database(url)
    sync_and_map(deployment)


# -- running daemons -----------------------------------------------------------

@dataclasses.dataclass
class RunningDaemon:
    spec: DaemonSpec
    pid: int
    started: int | None     # the process's start time, in clock ticks after boot
    log_path: Path
    output_path: Path

    def alive(self) -> bool:
        """True if ``pid`` still runs the process this launcher started (not a reused pid)."""
        return self.started is not None and _start_ticks(self.pid) == self.started


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


class Launcher:
    """Starts, finds and stops the daemons of one run directory."""

    def __init__(self, run_dir: str | Path, *, placement_url: str | None = None) -> None:
        self.run_dir = Path(run_dir).resolve()
        self.placement_url = placement_url

    def _pid_file(self, name: str) -> Path:
        return self.run_dir / f'{name}.pid'

    def start(self, deployment: Deployment, *,
              only: Iterable[str] | None = None) -> list[RunningDaemon]:
        """Start the deployment's daemons (or those named in ``only``), waiting for each.

        Daemons start in stages (Placement; cell conductors; compute agents;
        scheduler and super conductor): a stage is spawned at once and waited
        for as a whole before the next, which needs it, begins.
        """
        self.run_dir.mkdir(parents=True, exist_ok=True)
        wanted = set(only) if only is not None else None
        placement_url = self.placement_url or _placement_url(deployment)
        started = []
        for stage in deployment.stages():
            spawned = []
            for spec in stage:
                if wanted is not None and spec.name not in wanted:
                    continue
                running = self.find(spec.name)
                if running is not None and running.alive():
                    started.append(running)
                    continue
                spawned.append(self._spawn(spec))
            for daemon in spawned:
                if daemon.spec.kind == 'placement':
                    self._wait_http(daemon, placement_url)
                else:
                    self._wait_log(daemon, SERVING)
            started += spawned
        return started

    def _spawn(self, spec: DaemonSpec) -> RunningDaemon:
        log_path = self.run_dir / f'{spec.name}.log'
        output_path = self.run_dir / f'{spec.name}.out'
        with open(output_path, 'ab') as output:
            process = subprocess.Popen(
                spec.command(self.run_dir), stdin=subprocess.DEVNULL, stdout=output,
                stderr=output, start_new_session=True,
                env={**os.environ, 'PYTHONUNBUFFERED': '1'})
        started = _start_ticks(process.pid)
        record = {'pid': process.pid, 'started': started, 'kind': spec.kind,
                  'config_files': list(spec.config_files)}
        self._pid_file(spec.name).write_text(json.dumps(record) + '\n')
        return RunningDaemon(spec, process.pid, started, log_path, output_path)

    def find(self, name: str) -> RunningDaemon | None:
        path = self._pid_file(name)
        if not path.exists():
            return None
        record = json.loads(path.read_text())
        spec = DaemonSpec(name, record['kind'], tuple(record['config_files']))
        return RunningDaemon(spec, record['pid'], record.get('started'),
                             self.run_dir / f'{name}.log', self.run_dir / f'{name}.out')

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
                os.kill(daemon.pid, signal.SIGTERM)
                stopped.append(daemon)
        deadline = time.monotonic() + STOP_SECONDS
        for daemon in stopped:
            while daemon.alive() and time.monotonic() < deadline:
                time.sleep(0.1)
            if daemon.alive():
                os.kill(daemon.pid, signal.SIGKILL)
        for daemon in daemons:
            self._pid_file(daemon.spec.name).unlink(missing_ok=True)
        return [d.spec.name for d in stopped]

    def _wait_http(self, daemon: RunningDaemon, url: str) -> None:
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            self._check_alive(daemon)
            try:
                if requests.get(url, timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise LaunchError(f'{daemon.spec.name} did not answer at {url} within '
                          f'{READY_SECONDS} s; see {daemon.output_path}')

    def _wait_log(self, daemon: RunningDaemon, pattern: re.Pattern) -> None:
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            self._check_alive(daemon)
            if daemon.log_path.exists() and pattern.search(daemon.log_path.read_text()):
                return
            time.sleep(0.1)
        raise LaunchError(f'{daemon.spec.name} did not start serving within '
                          f'{READY_SECONDS} s; see {daemon.log_path}')

    @staticmethod
    def _check_alive(daemon: RunningDaemon) -> None:
        if not daemon.alive():
            output = daemon.output_path.read_text() if daemon.output_path.exists() else ''
            raise LaunchError(f'{daemon.spec.name} exited while starting:\n'
                              f'{output.strip()[-2000:]}')


def _stop_rank(daemon: RunningDaemon) -> int:
    if daemon.spec.kind == 'placement':
        return 3
    if daemon.spec.kind == 'compute':
        return 1
    if daemon.spec.name.startswith('conductor-'):
        return 2
    return 0    # scheduler, super conductor


def _placement_url(deployment: Deployment) -> str:
    host = option(deployment.placement, 'api', 'bind_host') or '127.0.0.1'
    port = option(deployment.placement, 'api', 'bind_port') or '8778'
    return f'http://{host}:{port}/'


# -- the command -----------------------------------------------------------------

def _status_lines(launcher: Launcher) -> list[str]:
    rows = [('NAME', 'PID', 'STATE', 'LOG')]
    for daemon in launcher.recorded():
        rows.append((daemon.spec.name, str(daemon.pid),
                     'running' if daemon.alive() else 'stopped',
                     str(daemon.log_path)))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ['  '.join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog='cellplane-launch',
        description='Run the real daemons of a deployment directory on this machine.')
    parser.add_argument('action', choices=['start', 'stop', 'status', 'purge'],
                        help='purge: stop, then delete the vhosts and databases the '
                             'config files name (everything the deployment stored)')
    parser.add_argument('--config-dir', default=DEFAULT_CONFIG_DIR,
                        help=f'the deployment\'s config files (default {DEFAULT_CONFIG_DIR})')
    parser.add_argument('--run-dir', default=DEFAULT_RUN_DIR,
                        help=f'pid and log files (default {DEFAULT_RUN_DIR})')
    parser.add_argument('--no-create', action='store_true',
                        help='do not create vhosts and databases (they exist)')
    args = parser.parse_args(argv)
    launcher = Launcher(args.run_dir)
    try:
        if args.action == 'start':
            deployment = Deployment.from_dir(args.config_dir)
            prepare(deployment, create=not args.no_create)
            try:
                launcher.start(deployment)
            except LaunchError:
                launcher.stop()
                raise
            print('\n'.join(_status_lines(launcher)))
        elif args.action == 'purge':
            stopped = launcher.stop()
            deployment = Deployment.from_dir(args.config_dir)
            purge(deployment)
            print(f'stopped {len(stopped)} daemon(s); deleted vhosts '
                  f'{", ".join(_vhost(u) for u in transport_urls(deployment))} and '
                  f'{len(database_urls(deployment))} databases')
        elif args.action == 'stop':
            stopped = launcher.stop()
            print(f'stopped {len(stopped)} daemon(s)'
                  + (f': {", ".join(stopped)}' if stopped else ''))
        else:
            print('\n'.join(_status_lines(launcher)))
    except LaunchError as exc:
        print(f'cellplane-launch: {exc}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
