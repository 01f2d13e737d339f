"""A live ``cellplane-placement`` serving the reference's YAML files of one profile.

Started as an operator starts it: ``cellplane-placement --config-file
FILE``, the profile's sections in that file, on a PostgreSQL database of
its own (created, migrated by the daemon's ``sync_on_startup``, dropped
at the end). Between files its data (providers, allocations, custom
classes and traits) is removed, so each file starts from what a new
deployment has.
"""
from __future__ import annotations

import configparser
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid

import requests
import sqlalchemy as sa

from cellplane.db import engines
from placement.client import HttpTransport


class DaemonError(Exception):
    """The daemon did not start or stop as it should; the message says why."""


# Tables holding what the API creates; projects, users and consumer types
# are kept: the daemon caches their ids per process, and nothing the API
# shows reads them without a consumer.
_DATA_TABLES = ('allocations', 'consumers', 'inventories', 'resource_provider_traits',
                'resource_provider_aggregates', 'placement_aggregates',
                'resource_providers')


class LiveDaemon:
    """``cellplane-placement`` with a config file, on its own PostgreSQL database."""

    def __init__(self, profile: str, sections: dict, admin_url: str, workdir: str,
                 *, code: str, workers: int = 2, start_timeout: float = 60.0):
        self.profile = profile
        self.port = _free_port()
        self.url = f'http://127.0.0.1:{self.port}'
        self._admin_url = admin_url
        self._database = f'cp_gabbi_{profile}_{uuid.uuid4().hex[:8]}'
        self._dir = os.path.join(workdir, profile)
        os.makedirs(self._dir, exist_ok=True)
        self.config_file = os.path.join(self._dir, 'placement.conf')
        self.log_file = os.path.join(self._dir, 'placement.log')
        self._sections = sections
        self._code = code
        self._workers = workers
        self._start_timeout = start_timeout
        self._process: subprocess.Popen | None = None
        self._created = False
        self._engine = None

    # ------------------------------------------------------------- lifecycle
    def __enter__(self):
        self._create_database()
        self._created = True
        try:
            self._write_config()
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._stop()
        finally:
            if self._engine is not None:
                self._engine.dispose()
            if self._created:
                self._drop_database()

    def _db_url(self) -> str:
        url = sa.engine.make_url(self._admin_url).set(database=self._database)
        return url.render_as_string(hide_password=False)

    def _admin_sql(self, statement: str) -> None:
        # engines.create_engine reads a bare postgresql:// as psycopg2, as
        # the daemon does.
        admin = engines.create_engine(self._admin_url, pool_size=1, max_overflow=0,
                                      connect_timeout=10)
        try:
            with admin.connect() as conn:
                conn.execution_options(isolation_level='AUTOCOMMIT').exec_driver_sql(statement)
        finally:
            admin.dispose()

    def _create_database(self) -> None:
        try:
            self._admin_sql(f'CREATE DATABASE {self._database}')
        except sa.exc.DBAPIError as exc:
            where = sa.engine.make_url(self._admin_url).render_as_string(hide_password=True)
            raise DaemonError(f'cannot create its database through {where}: '
                              f'{str(exc.orig).strip()}') from None

    def _drop_database(self) -> None:
        self._admin_sql(f'DROP DATABASE IF EXISTS {self._database} WITH (FORCE)')

    def _write_config(self) -> None:
        conf = configparser.ConfigParser(interpolation=None)
        conf['DEFAULT'] = {'debug': 'False'}
        conf['placement_database'] = {'connection': self._db_url(),
                                      'sync_on_startup': 'True'}
        conf['api'] = {'auth_strategy': 'noauth2', 'bind_host': '127.0.0.1',
                       'bind_port': str(self.port), 'workers': str(self._workers)}
        for name, options in self._sections.items():
            conf[name] = options
        with open(self.config_file, 'w') as f:
            conf.write(f)

    def _start(self) -> None:
        command = [_console_script('cellplane-placement'), '--config-file', self.config_file]
        log = open(self.log_file, 'ab')
        # The daemon runs the code of ``code`` (the checkout under test),
        # whatever the venv's install of cellplane points at.
        env = dict(os.environ)
        env['PYTHONPATH'] = os.pathsep.join(
            p for p in (self._code, env.get('PYTHONPATH')) if p)
        self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True,
                                         env=env)
        log.close()
        deadline = time.monotonic() + self._start_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise DaemonError(f'{self.profile}: cellplane-placement exited '
                                  f'{self._process.returncode} at start:\n{self.log_tail()}')
            try:
                if requests.get(self.url + '/', timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise DaemonError(f'{self.profile}: cellplane-placement did not answer on '
                          f'{self.url} within {self._start_timeout:.0f} s:\n{self.log_tail()}')

    def _stop(self) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        self._process.send_signal(signal.SIGTERM)
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()
            raise DaemonError(f'{self.profile}: cellplane-placement ignored SIGTERM '
                              f'for 30 s:\n{self.log_tail()}') from None

    def log_tail(self, lines: int = 30) -> str:
        try:
            with open(self.log_file, errors='replace') as f:
                return ''.join(f.readlines()[-lines:])
        except OSError:
            return '(no log)'

    # ------------------------------------------------------------- per file
    def gabbi_args(self) -> dict:
        # Plain HTTP: without cert_validate=False each test's client loads
        # the CA bundle it will never use (18 ms a test, a third of the run).
        return {'host': '127.0.0.1', 'port': self.port, 'cert_validate': False}

    def begin_file(self):
        if self._process.poll() is not None:
            raise DaemonError(f'{self.profile}: cellplane-placement died '
                              f'(exit {self._process.returncode}):\n{self.log_tail()}')
        self._reset()
        return HttpTransport(self.url, attempts=1)

    def end_file(self) -> None:
        pass

    def _reset(self) -> None:
        if self._engine is None:
            self._engine = engines.create_engine(self._db_url(), pool_size=1, max_overflow=0)
        with self._engine.begin() as conn:
            conn.exec_driver_sql(f'TRUNCATE {", ".join(_DATA_TABLES)}')
            conn.execute(sa.text('DELETE FROM traits WHERE name LIKE :custom'),
                         {'custom': 'CUSTOM\\_%'})
            conn.execute(sa.text('DELETE FROM resource_classes WHERE id >= :base'),
                         {'base': _custom_class_base()})


def _custom_class_base() -> int:
    from placement.objects.resource_class import CUSTOM_RESOURCE_CLASS_ID_BASE
    return CUSTOM_RESOURCE_CLASS_ID_BASE


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _console_script(name: str) -> str:
    """The command installed beside this Python (the venv's bin/), else on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), name)
    if os.path.exists(beside):
        return beside
    found = shutil.which(name)
    if found is None:
        raise DaemonError(f'{name} is not installed beside {sys.executable} nor on PATH')
    return found
