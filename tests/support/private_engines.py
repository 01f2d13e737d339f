"""A RabbitMQ node and a PostgreSQL server of a test's own, speaking TLS only, torn down after.

The shared broker and database of the machine serve other tests at the
same time and must never be reconfigured; a test that needs an engine
configured otherwise (here: TLS only, with a certificate of the test's own
CA) starts a private one on free ports, with its data in a temporary
directory:

    rabbit = PrivateRabbit(workdir, server_cert).start()   # amqps only, no plain listener
    postgres = PrivatePostgres(server_cert).start()        # hostssl only
    Deployment(..., rabbit=rabbit.server(), postgres=postgres.server(), ...)
    rabbit.stop(); postgres.stop()

``server()`` is the ``RabbitServer`` / ``PostgresServer`` the harness
carves vhosts and databases out of (``tests/support/backing_services.py``).
Both skip the test (fail under CI) when the engine's programs are not
installed.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from tests.support import backing_services
from tests.support.backing_services import PostgresServer, RabbitServer
from tests.support.deployment import free_port
from tests.support.throwaway_ca import Issued

# A bound on an engine starting on a loaded machine, not a speed expectation.
START_SECONDS = 120
# A node's first start, when it exits early (a port taken meanwhile, ``start``).
START_ATTEMPTS = 3
RABBIT_BIN = Path('/usr/lib/rabbitmq/bin')
ERL_ARGS = '+S 1:1 +sbwt none +sbwtdcpu none +sbwtdio none'


class EngineExited(RuntimeError):
    """The engine's process ended before its start-up completed."""


def _tail(path: Path, size: int = 3000) -> str:
    return path.read_text(errors='replace')[-size:] if path.exists() else ''


def _wait_listening(port: int, process: subprocess.Popen, what: str, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while not backing_services._port_open('127.0.0.1', port, timeout=0.5):
        if process.poll() is not None:
            raise EngineExited(f'{what} exited ({process.poll()}) before it listened on '
                               f'127.0.0.1:{port}:\n{_tail(log)}')
        if time.monotonic() > deadline:
            raise RuntimeError(f'{what} did not listen on 127.0.0.1:{port} within '
                               f'{START_SECONDS} s:\n{_tail(log)}')
        time.sleep(0.3)


class PrivateRabbit:
    """A RabbitMQ node named ``cp-tls-<hex>@localhost``, listening for AMQP over TLS only.

    Given no certificate, it listens for plain AMQP instead, under the name
    and with the Erlang cookie given (a node of ``tests/support/rabbit_cluster.py``).

    Its own ports (AMQPS, Erlang distribution), data, logs, plugins (none:
    no management listener to clash with the shared node's) and Erlang
    cookie (``HOME`` is its directory), so nothing is shared with the
    machine's node but epmd. The system's ``rabbitmq-env.conf`` (which
    names the shared node) is not read.
    """

    def __init__(self, workdir: Path, cert: Issued | None, *, name: str | None = None,
                 cookie: str | None = None, erl_args: str = ERL_ARGS,
                 advanced_config: str = '[].') -> None:
        self.workdir = Path(workdir)
        # None: a plain AMQP listener (a node of tests/support/rabbit_cluster.py).
        self.cert = cert
        self.node = f'{name or "cp-tls-" + uuid.uuid4().hex[:8]}@localhost'
        # Nodes of one cluster share theirs; a lone node makes its own.
        self.cookie = cookie or uuid.uuid4().hex.upper()
        self.port = free_port()
        self.dist_port = free_port()
        self.process: subprocess.Popen | None = None
        # The Erlang VM's flags and advanced.config (a benchmark compares others).
        self.erl_args = erl_args
        self.advanced_config = advanced_config

    def _program(self, name: str) -> str:
        # Not the /usr/sbin wrappers: as root they run as the rabbitmq user,
        # with that user's cookie and the system's environment file.
        program = RABBIT_BIN / name
        if program.exists():
            return str(program)
        found = shutil.which(name)
        if found is None:
            backing_services.unavailable('a private RabbitMQ node', f'{name} is not installed')
        return found

    def _env(self) -> dict[str, str]:
        base = self.workdir
        return {**os.environ, 'HOME': str(base),
                'RABBITMQ_CONF_ENV_FILE': str(base / 'rabbitmq-env.conf'),
                'RABBITMQ_NODENAME': self.node,
                'RABBITMQ_NODE_IP_ADDRESS': '127.0.0.1',
                'RABBITMQ_DIST_PORT': str(self.dist_port),
                'RABBITMQ_MNESIA_BASE': str(base / 'mnesia'),
                'RABBITMQ_LOG_BASE': str(base / 'log'),
                'RABBITMQ_CONFIG_FILE': str(base / 'rabbitmq.conf'),
                'RABBITMQ_ADVANCED_CONFIG_FILE': str(base / 'advanced.config'),
                'RABBITMQ_ENABLED_PLUGINS_FILE': str(base / 'enabled_plugins'),
                'RABBITMQ_PID_FILE': str(base / 'rabbitmq.pid'),
                'ERL_EPMD_ADDRESS': '127.0.0.1',
                # One scheduler thread, no busy waiting: the machine's cores
                # are shared with every other test and with the node's peers.
                'RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS': self.erl_args,
                'ERL_CRASH_DUMP': str(base / 'erl_crash.dump')}

    def start(self) -> PrivateRabbit:
        """Start the node; a first start that exits early is tried again on fresh ports.

        ``free_port`` finds a port free, then closes it: another test's
        process (pytest-xdist runs three) may bind it before the node does.
        The node then exits, while the port answers for the other process.
        A restart keeps its ports: the cluster's URLs name them.
        """
        attempts = START_ATTEMPTS if self._startups() == 0 else 1
        for attempt in range(1, attempts + 1):
            try:
                return self._start_once()
            except EngineExited:
                if attempt == attempts:
                    raise
                shutil.rmtree(self.workdir / 'mnesia', ignore_errors=True)
                self.port, self.dist_port = free_port(), free_port()
        raise AssertionError('unreachable')

    def _start_once(self) -> PrivateRabbit:
        server = self._program('rabbitmq-server')
        base = self.workdir
        for sub in ('mnesia', 'log'):
            (base / sub).mkdir(parents=True, exist_ok=True)
        (base / 'rabbitmq-env.conf').write_text('')
        (base / 'enabled_plugins').write_text('[].\n')
        cookie = base / '.erlang.cookie'
        if not cookie.exists():
            cookie.write_text(self.cookie)
            cookie.chmod(0o400)
        (base / 'rabbitmq.conf').write_text('\n'.join(self._listeners()))
        (base / 'advanced.config').write_text(self.advanced_config + '\n')
        log = base / 'server.out'
        started = self._startups()
        with open(log, 'ab') as out:
            self.process = subprocess.Popen(
                [server], cwd=base, env=self._env(), stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait_listening(self.port, self.process, f'RabbitMQ node {self.node}', log)
            self._wait_started(started)
        except BaseException:
            self.stop()
            raise
        return self

    def _listeners(self) -> list[str]:
        if self.cert is None:
            return [f'listeners.tcp.default = 127.0.0.1:{self.port}', '']
        return [
            'listeners.tcp = none',
            f'listeners.ssl.default = 127.0.0.1:{self.port}',
            f'ssl_options.cacertfile = {self.cert.ca}',
            f'ssl_options.certfile = {self.cert.cert}',
            f'ssl_options.keyfile = {self.cert.key}',
            'ssl_options.verify = verify_none',
            'ssl_options.fail_if_no_peer_cert = false',
            '']

    def _wait_started(self, seen: int) -> None:
        # Its log, not ``rabbitmqctl await_startup``: each rabbitmqctl run
        # boots an Erlang VM, seconds of CPU on a loaded machine.
        log = self.workdir / 'log' / f'{self.node}.log'
        deadline = time.monotonic() + START_SECONDS
        while not (log.exists() and log.read_text(errors='replace').count(
                'Server startup complete') > seen):
            if self.process.poll() is not None:
                raise EngineExited(
                    f'RabbitMQ node {self.node} exited ({self.process.poll()}) before its '
                    f'start-up completed (port {self.port}, distribution port '
                    f'{self.dist_port}):\n{_tail(self.workdir / "server.out")}\n{_tail(log)}')
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f'RabbitMQ node {self.node} did not complete its start-up within '
                    f'{START_SECONDS} s:\n{_tail(log)}')
            time.sleep(0.2)

    def _startups(self) -> int:
        # A restarted node appends to the log of its last run.
        log = self.workdir / 'log' / f'{self.node}.log'
        return log.read_text(errors='replace').count('Server startup complete') \
            if log.exists() else 0

    def ctl(self, args: list[str]) -> str:
        """``rabbitmqctl -n NODE ARGS`` on this node; its output."""
        done = subprocess.run([self._program('rabbitmqctl'), '-q', '-n', self.node, *args],
                              env=self._env(), capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f'rabbitmqctl {" ".join(args)} on {self.node} failed: '
                               f'{done.stderr.strip() or done.stdout.strip()}')
        return done.stdout

    def eval(self, expression: str) -> str:
        """The value of an Erlang ``expression`` evaluated on the node (``erl_call``), as printed.

        Cheaper than ``rabbitmqctl`` (which boots an Erlang VM per run): a
        small C program speaking the distribution protocol.
        """
        program = backing_services._ErlCall.program()
        if program is None:
            backing_services.unavailable('a private RabbitMQ node', 'erl_call is not installed')
        return backing_services._ErlCall(program, self.node, self.cookie).eval(
            expression, env=self._env(), timeout=START_SECONDS)

    def _import_definitions(self, definitions: str) -> None:
        subprocess.run([self._program('rabbitmqctl'), '-q', '-n', self.node,
                        'import_definitions'], input=definitions, text=True, check=True,
                       env=self._env(), capture_output=True, timeout=60)

    def server(self) -> RabbitServer:
        """This node as the harness's ``RabbitServer`` (a user per vhost, made by rabbitmqctl).

        Its vhosts are not deleted one by one: they go with the node.
        """
        add, _ = backing_services._rabbitmqctl_admin(
            lambda args: self.ctl(args), self._import_definitions)
        return RabbitServer(f'rabbit://guest:guest@127.0.0.1:{self.port}/', add,
                            lambda vhost, user: None, lambda args: self.ctl(args))

    def connections(self) -> list[dict[str, str]]:
        """Each client connection: ``user``, ``vhost``, ``ssl`` (true/false), ``ssl_protocol``."""
        columns = ('user', 'vhost', 'ssl', 'ssl_protocol')
        out = self.ctl(['list_connections', '--no-table-headers', *columns])
        return [dict(zip(columns, line.split('\t'), strict=True))
                for line in out.splitlines() if line.strip()]

    def kill(self) -> None:
        """SIGKILL to the node's whole process group (beam, epmd's client, port programs)."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, 9)
        except ProcessLookupError:
            pass
        self.process.wait()
        self.process = None

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            # The node stops cleanly on SIGTERM (RabbitMQ 3.8 and later).
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()
        self.process = None


class PrivatePostgres:
    """A PostgreSQL server of its own (initdb in a temporary directory) accepting TLS only.

    ``pg_hba.conf`` has ``hostssl`` lines alone, so a connection without
    TLS is refused by the server, whatever the client asks. Run as the
    ``postgres`` user when the tests run as root (PostgreSQL refuses root).
    """

    def __init__(self, cert: Issued) -> None:
        self.cert = cert
        self.port = free_port()
        # Not under pytest's tmp_path: that is private to the user running
        # the tests, and the server may run as another.
        self.directory = Path(tempfile.mkdtemp(prefix='cp-tls-pg-'))
        self.data = self.directory / 'data'
        self.started = False

    def _bin(self, name: str) -> str:
        found = sorted(glob.glob(f'/usr/lib/postgresql/*/bin/{name}')) or \
            ([shutil.which(name)] if shutil.which(name) else [])
        if not found:
            backing_services.unavailable('a private PostgreSQL', f'{name} is not installed')
        return found[-1]

    def _as_owner(self, argv: list[str]) -> list[str]:
        if os.geteuid() != 0:
            return argv
        return ['runuser', '-u', 'postgres', '--', *argv]

    def _run(self, argv: list[str]) -> None:
        done = subprocess.run(self._as_owner(argv), capture_output=True, text=True,
                              timeout=START_SECONDS, cwd=self.directory)
        if done.returncode != 0:
            raise RuntimeError(f'{" ".join(argv)} failed: {done.stderr.strip()}\n'
                               f'{done.stdout.strip()}')

    def start(self) -> PrivatePostgres:
        if os.geteuid() == 0:
            shutil.chown(self.directory, 'postgres')
        try:
            self._run([self._bin('initdb'), '-D', str(self.data), '-A', 'trust', '-U',
                       'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'])
            for name, source in (('server.pem', self.cert.cert), ('server.key', self.cert.key),
                                 ('ca.pem', self.cert.ca)):
                target = self.data / name
                shutil.copyfile(source, target)
                target.chmod(0o600)
                if os.geteuid() == 0:
                    shutil.chown(target, 'postgres')
            (self.data / 'pg_hba.conf').write_text(
                'local all all trust\n'
                'hostssl all all 127.0.0.1/32 trust\n')
            options = ' '.join([
                f'-p {self.port}', '-c listen_addresses=127.0.0.1',
                f'-c unix_socket_directories={self.directory}', '-c ssl=on',
                '-c ssl_cert_file=server.pem', '-c ssl_key_file=server.key',
                '-c ssl_ca_file=ca.pem', '-c fsync=off', '-c max_connections=200'])
            self._run([self._bin('pg_ctl'), '-D', str(self.data), '-l',
                       str(self.directory / 'server.log'), '-w', '-t', str(START_SECONDS),
                       '-o', options, 'start'])
            self.started = True
        except BaseException:
            self.stop()
            raise
        return self

    def url(self, database: str = 'postgres', *, ca: Path | None = None) -> str:
        """A URL to ``database`` that verifies the server's certificate against ``ca`` (its CA)."""
        return (f'postgresql+psycopg2://postgres@127.0.0.1:{self.port}/{database}'
                f'?sslmode=verify-full&sslrootcert={ca or self.cert.ca}')

    def server(self) -> PostgresServer:
        """This server as the harness's ``PostgresServer``: every URL it gives verifies TLS."""
        return PostgresServer(self.url())

    def stop(self) -> None:
        if self.started:
            try:
                self._run([self._bin('pg_ctl'), '-D', str(self.data), '-m', 'fast', '-w',
                           'stop'])
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
            self.started = False
        shutil.rmtree(self.directory, ignore_errors=True)
