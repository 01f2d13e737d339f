"""Where the tests find a real RabbitMQ and PostgreSQL, and how they carve them up.

Order of discovery, for each service:
1. the environment: ``CELLPLANE_TEST_TRANSPORT_URL`` / ``CELLPLANE_TEST_DB_URL``
   (the DB URL is an admin URL: the tests create and drop databases with it);
2. testcontainers, when a Docker engine answers;
3. the local services on their default ports.

Each test gets its own vhost (with a broker user of its own, allowed on it
alone) and its own database, created and removed here, so tests never see
each other's messages or rows. When nothing answers,
integration tests skip with a message saying what to set, unless
``CI=true`` or ``CELLPLANE_REQUIRE_INTEGRATION=1``, where that is a failure.
"""
from __future__ import annotations

import base64
import concurrent.futures
import glob
import hashlib
import json
import os
import shutil
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
import requests
import sqlalchemy as sa
from sqlalchemy.engine import make_url

LOCAL_TRANSPORT_URL = 'rabbit://guest:guest@127.0.0.1:5672/'
LOCAL_DB_URL = 'postgresql+psycopg2://postgres@127.0.0.1:5432/postgres'


def integration_required() -> bool:
    return (os.environ.get('CI', '').lower() == 'true'
            or os.environ.get('CELLPLANE_REQUIRE_INTEGRATION') == '1')


def unavailable(what: str, how: str) -> None:
    """Skip (or fail, when integration is required) for a missing service."""
    message = f'{what} is not reachable: {how}'
    if integration_required():
        pytest.fail(message + ' (integration tests are required here)', pytrace=False)
    pytest.skip(message)


def _port_open(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _docker_answers() -> bool:
    try:
        import docker  # installed with testcontainers
        client = docker.from_env(timeout=2)
        return bool(client.ping())
    except Exception:  # noqa: BLE001 - no docker package, no engine, no answer: all mean no
        return False


@dataclass
class PostgresServer:
    """A PostgreSQL server the tests may create databases on."""
    admin_url: str
    created: list[str] = field(default_factory=list)

    def __post_init__(self):
        self._admin = sa.create_engine(self.admin_url, isolation_level='AUTOCOMMIT',
                                       poolclass=sa.pool.NullPool)

    def reachable(self) -> bool:
        try:
            with self._admin.connect() as conn:
                conn.execute(sa.text('SELECT 1'))
            return True
        except sa.exc.OperationalError:
            return False

    def create_database(self, purpose: str = 'test') -> str:
        name = f'cp_{purpose}_{uuid.uuid4().hex[:10]}'
        with self._admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        self.created.append(name)
        return make_url(self.admin_url).set(database=name).render_as_string(
            hide_password=False)

    def drop_database(self, url_or_name: str) -> None:
        name = make_url(url_or_name).database if '://' in url_or_name else url_or_name
        with self._admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        if name in self.created:
            self.created.remove(name)


@dataclass
class RabbitServer:
    """A RabbitMQ broker the tests may create vhosts on, each with a user of its own.

    ``create_vhosts`` also creates a user per vhost, named as the vhost, with
    a random password and every permission on that vhost and none elsewhere;
    ``url_for`` gives that user's URL, so what runs on a vhost can reach no
    other (a broker user per cell, as ``deploy/run-local.sh`` makes).
    ``delete_vhosts`` removes both.
    """
    base_url: str
    # (vhost, user, password) each: the vhost, its user, the user's permissions.
    add_vhosts: Callable[[list[tuple[str, str, str]]], None]
    delete_vhost_and_user: Callable[[str, str | None], None]
    # rabbitmqctl on the broker's node, its output (None: only the management API).
    ctl: Callable[[list[str]], str] | None = None
    users: dict[str, tuple[str, str]] = field(default_factory=dict)

    def reachable(self) -> bool:
        parts = urlsplit(self.base_url)
        return _port_open(parts.hostname or '127.0.0.1', parts.port or 5672)

    def restart_app(self, down_seconds: float) -> None:
        """``rabbitmqctl stop_app``, ``down_seconds``, ``start_app``: the broker restarts, its node does not."""
        if self.ctl is None:
            unavailable('restarting RabbitMQ', 'run the tests beside a broker whose '
                        'rabbitmqctl they can run (local or in a testcontainer)')
        self.ctl(['stop_app'])
        try:
            time.sleep(down_seconds)
        finally:
            self.ctl(['start_app'])
        deadline = time.monotonic() + 60
        while not self.reachable():
            if time.monotonic() > deadline:
                raise RuntimeError('RabbitMQ did not listen again within 60 s of start_app')
            time.sleep(0.2)

    def messages(self, vhost: str, queue: str) -> int:
        """Messages on ``queue`` of ``vhost``, ready or delivered and not yet acknowledged (0: no such queue).

        What a daemon has published, even to a consumer that is frozen
        (SIGSTOP) holding them: a test waits for it rather than for a line
        the sender logs before it publishes.
        """
        if self.ctl is None:
            unavailable('counting the messages on a queue', 'run the tests beside a broker '
                        'whose rabbitmqctl they can run (local or in a testcontainer)')
        out = self.ctl(['list_queues', '-p', vhost, '--no-table-headers', 'name', 'messages'])
        for line in out.splitlines():
            name, _, count = line.strip().partition('\t')
            if name == queue:
                return int(count)
        return 0

    def url_for(self, vhost: str) -> str:
        """The URL of ``vhost`` as its own user (as the base URL's user for a vhost not made here)."""
        parts = urlsplit(self.base_url)
        netloc = parts.netloc
        if vhost in self.users:
            user, password = self.users[vhost]
            netloc = f'{quote(user, safe="")}:{quote(password, safe="")}@' \
                     f'{netloc.rsplit("@", 1)[-1]}'
        return urlunsplit((parts.scheme, netloc, '/' + quote(vhost, safe=''), '', ''))

    def create_vhost(self, purpose: str = 'test') -> str:
        return self.create_vhosts([purpose])[0]

    def create_vhosts(self, purposes: list[str]) -> list[str]:
        """A vhost and its user per purpose, made at once (one ``rabbitmqctl`` run locally)."""
        grants = [(f'cp_{purpose}_{uuid.uuid4().hex[:10]}', uuid.uuid4().hex)
                  for purpose in purposes]
        self.add_vhosts([(vhost, vhost, password) for vhost, password in grants])
        for vhost, password in grants:
            self.users[vhost] = (vhost, password)
        return [vhost for vhost, _ in grants]

    def delete_vhost(self, vhost: str) -> None:
        user, _ = self.users.pop(vhost, (None, None))
        self.delete_vhost_and_user(vhost, user)

    def delete_vhosts(self, vhosts: list[str]) -> None:
        """Delete each vhost and its user, side by side (each ``rabbitmqctl`` run is ~0.7 s of waiting)."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            for done in [pool.submit(self.delete_vhost, vhost) for vhost in vhosts]:
                done.result()


def password_hash(password: str) -> str:
    """RabbitMQ's ``rabbit_password_hashing_sha256`` of ``password``, for its definitions files."""
    salt = os.urandom(4)
    return base64.b64encode(salt + hashlib.sha256(salt + password.encode()).digest()).decode()


def _rabbitmqctl_admin(runner: Callable[[list[str]], object],
                       import_definitions: Callable[[str], None] | None = None):
    def add(grants: list[tuple[str, str, str]]) -> None:
        if import_definitions is not None:
            # One rabbitmqctl run (each costs ~0.7 s of CPU) instead of three per vhost.
            import_definitions(json.dumps({
                'vhosts': [{'name': vhost} for vhost, _, _ in grants],
                'users': [{'name': user, 'password_hash': password_hash(password),
                           'hashing_algorithm': 'rabbit_password_hashing_sha256',
                           'tags': []} for _, user, password in grants],
                'permissions': [{'user': user, 'vhost': vhost, 'configure': '.*',
                                 'write': '.*', 'read': '.*'} for vhost, user, _ in grants]}))
            return
        for vhost, user, password in grants:
            runner(['add_vhost', vhost])
            runner(['add_user', user, password])
            runner(['set_permissions', '-p', vhost, user, '.*', '.*', '.*'])

    def delete(vhost: str, user: str | None) -> None:
        runner(['delete_vhost', vhost])
        if user is not None:
            runner(['delete_user', user])
    return add, delete


def _local_rabbitmqctl(args: list[str]) -> str:
    return subprocess.run(['rabbitmqctl', '-q', *args], check=True, text=True,
                          capture_output=True, timeout=60).stdout


def _local_import_definitions(definitions: str) -> None:
    subprocess.run(['rabbitmqctl', '-q', 'import_definitions'], input=definitions, text=True,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)


# Who the broker's log names as having made or removed a vhost or user.
_ACTING_USER = 'cellplane-tests'


def _erl_binary(text: str) -> str:
    """``text`` as an Erlang binary literal (vhost, user and password names are hex and underscores)."""
    return '<<"' + text.replace('\\', '\\\\').replace('"', '\\"') + '">>'


class _ErlCall:
    """Erlang expressions evaluated on the local broker's node with ``erl_call``.

    ``rabbitmqctl`` boots an Erlang VM per run (about 0.9 s of CPU here, and
    the suite makes hundreds of runs to create and remove its vhosts and
    users); ``erl_call`` is a small C program speaking the distribution
    protocol (milliseconds). It calls the same functions ``rabbitmqctl``
    calls (``rabbit_vhost``, ``rabbit_auth_backend_internal``).
    ``find()`` gives None unless a probe answers, so a broker this cannot
    reach (no erl_call, a cookie not readable, another node name) is
    administered with ``rabbitmqctl`` as before.
    """

    def __init__(self, program: str, node: str, cookie: str) -> None:
        self._program, self.node, self.cookie = program, node, cookie

    @staticmethod
    def program() -> str | None:
        """Where ``erl_call`` is (Erlang's own, else on PATH); None if nowhere."""
        programs = sorted(glob.glob('/usr/lib/erlang/lib/erl_interface-*/bin/erl_call'))
        return programs[-1] if programs else shutil.which('erl_call')

    @classmethod
    def find(cls) -> '_ErlCall | None':
        program = cls.program()
        cookie = next((text for text in (_read(path) for path in _COOKIE_FILES) if text), None)
        if program is None or cookie is None:
            return None
        for node in _local_node_names():
            candidate = cls(program, node, cookie)
            try:
                if candidate.eval('ok') == 'ok':
                    return candidate
            except (OSError, RuntimeError, subprocess.TimeoutExpired):
                continue
        return None

    def eval(self, expression: str, *, env: dict[str, str] | None = None,
             timeout: float = 60) -> str:
        """The value of ``expression`` evaluated on the node, as printed; RuntimeError if it failed."""
        # A name of its own for erl_call's hidden node: two runs under one
        # name (its default) at once, from two tests, refuse each other.
        done = subprocess.run([self._program, '-h', f'cptest{uuid.uuid4().hex[:12]}',
                               '-sname', self.node, '-c', self.cookie, '-e'],
                              input=expression.rstrip().rstrip('.') + '.\n', env=env,
                              capture_output=True, text=True, timeout=timeout)
        value = done.stdout.strip()
        if done.returncode != 0 or not value.startswith('{ok,'):
            raise RuntimeError(f'erl_call on {self.node}: {expression}: '
                               f'{done.stderr.strip() or value}')
        return value[len('{ok,'):-1].strip()

    def admin(self):
        acting = _erl_binary(_ACTING_USER)

        def add(grants: list[tuple[str, str, str]]) -> None:
            calls = []
            for vhost, user, password in grants:
                v, u = _erl_binary(vhost), _erl_binary(user)
                calls += [f'ok = rabbit_vhost:add({v}, {acting})',
                          f'ok = rabbit_auth_backend_internal:add_user({u}, '
                          f'{_erl_binary(password)}, {acting})',
                          f'ok = rabbit_auth_backend_internal:set_permissions({u}, {v}, '
                          f'<<".*">>, <<".*">>, <<".*">>, {acting})']
            self.eval(', '.join([*calls, 'ok']))

        def delete(vhost: str, user: str | None) -> None:
            calls = [f'rabbit_vhost:delete({_erl_binary(vhost)}, {acting})']
            if user is not None:
                calls.append(f'rabbit_auth_backend_internal:delete_user({_erl_binary(user)}, '
                             f'{acting})')
            self.eval(', '.join([*calls, 'ok']))
        return add, delete


_COOKIE_FILES = (os.path.expanduser('~/.erlang.cookie'), '/var/lib/rabbitmq/.erlang.cookie')


def _read(path: str) -> str | None:
    try:
        with open(path) as cookie:
            return cookie.read().strip() or None
    except OSError:
        return None


def _local_node_names() -> list[str]:
    """The names the local broker's node may have: the environment's, its env file's, the default."""
    names = [os.environ.get('RABBITMQ_NODENAME', '')]
    env_file = _read('/etc/rabbitmq/rabbitmq-env.conf') or ''
    names += [line.split('=', 1)[1].strip().strip('"\'') for line in env_file.splitlines()
              if line.strip().startswith('NODENAME=')]
    names += ['rabbit@localhost', f'rabbit@{socket.gethostname().split(".")[0]}']
    return [name for name in dict.fromkeys(names) if name]


def _local_admin():
    """Create and delete vhosts and users on the local broker: by erl_call, else by rabbitmqctl."""
    erl_call = _ErlCall.find()
    if erl_call is not None:
        return erl_call.admin()
    return _rabbitmqctl_admin(_local_rabbitmqctl, _local_import_definitions)


def _management_api_admin(api_url: str, admin: str, admin_password: str):
    session = requests.Session()
    session.auth = (admin, admin_password)

    def add(grants: list[tuple[str, str, str]]) -> None:
        for vhost, user, password in grants:
            v, u = quote(vhost, safe=''), quote(user, safe='')
            session.put(f'{api_url}/api/vhosts/{v}', timeout=10).raise_for_status()
            session.put(f'{api_url}/api/users/{u}', json={'password': password, 'tags': ''},
                        timeout=10).raise_for_status()
            session.put(f'{api_url}/api/permissions/{v}/{u}',
                        json={'configure': '.*', 'write': '.*', 'read': '.*'},
                        timeout=10).raise_for_status()

    def delete(vhost: str, user: str | None) -> None:
        session.delete(f'{api_url}/api/vhosts/{quote(vhost, safe="")}', timeout=10)
        if user is not None:
            session.delete(f'{api_url}/api/users/{quote(user, safe="")}', timeout=10)
    return add, delete


class _Containers:
    """testcontainers started once per test session, when Docker answers."""
    postgres = None
    rabbit = None


def find_postgres() -> PostgresServer:
    url = os.environ.get('CELLPLANE_TEST_DB_URL')
    if url:
        return PostgresServer(url)
    if _docker_answers():
        from testcontainers.postgres import PostgresContainer
        if _Containers.postgres is None:
            _Containers.postgres = PostgresContainer('postgres:15').start()
        return PostgresServer(_Containers.postgres.get_connection_url())
    return PostgresServer(LOCAL_DB_URL)


def find_rabbit() -> RabbitServer:
    url = os.environ.get('CELLPLANE_TEST_TRANSPORT_URL')
    if url:
        api = os.environ.get('CELLPLANE_TEST_RABBITMQ_API')
        parts = urlsplit(url)
        if api:
            add, delete = _management_api_admin(api, parts.username or 'guest',
                                                parts.password or 'guest')
        else:
            add, delete = _local_admin()
        return RabbitServer(urlunsplit((parts.scheme, parts.netloc, '/', '', '')),
                            add, delete, None if api else _local_rabbitmqctl)
    if _docker_answers() and not shutil.which('rabbitmqctl'):
        from testcontainers.rabbitmq import RabbitMqContainer
        if _Containers.rabbit is None:
            _Containers.rabbit = RabbitMqContainer('rabbitmq:3.12').start()
        container = _Containers.rabbit

        def run_in_container(args: list[str]) -> str:
            code, out = container.get_wrapped_container().exec_run(['rabbitmqctl', *args])
            if code != 0:
                raise RuntimeError(out.decode(errors='replace'))
            return out.decode(errors='replace')
        add, delete = _rabbitmqctl_admin(run_in_container)
        host = container.get_container_host_ip()
        port = container.get_exposed_port(5672)
        return RabbitServer(f'rabbit://guest:guest@{host}:{port}/', add, delete,
                            run_in_container)
    add, delete = _local_admin()
    return RabbitServer(LOCAL_TRANSPORT_URL, add, delete, _local_rabbitmqctl)


def stop_containers() -> None:
    for container in (_Containers.postgres, _Containers.rabbit):
        if container is not None:
            container.stop()
