"""A whole cellplane deployment on real RabbitMQ and PostgreSQL, for integration tests and benchmarks.

``Deployment.create`` carves a vhost per level (top, each cell; each with a
broker user of its own, allowed on it alone) and a database per level plus
Placement's out of the test servers (``backing_services``), writes one
config file per service by role, as in ``deploy/two-cell``
(``placement.conf``, ``top.conf``, ``cellN.conf``, ``compute-<host>.conf``;
``[oslo_messaging_rabbit]`` as the example's unless ``queues`` names other
settings), and starts every daemon with the local launcher
(``deploy/run-local.sh start``: schemas, cell mappings, daemons, pids).
``destroy`` stops them (``deploy/run-local.sh stop``) and removes the vhosts
and databases. ``cli`` runs the ``cellplane`` command against ``top.conf``.

Placement runs ``noauth2`` unless the deployment is given a ``keystone``
(``tests/support/keystone.py``): then Placement runs ``auth_strategy =
keystone`` (keystonemiddleware validating tokens as the ``placement``
user), every daemon's ``[placement]`` logs in as the ``service`` user with
keystoneauth1's password plugin and finds Placement in the catalog, in a
region of the deployment's own, and ``placement()`` is the Keystone admin's.
With ``compute_api=True`` too, that region also holds the compute API, its
image catalog (``images``: the catalog file's text) and Keystone itself,
so that the OpenStack clients find everything from a login
(``tests/support/clients.py``). ``quota`` adds ``[quota]`` options (the
driver); ``oslo_limit`` writes ``[oslo_limit]`` for unified limits, with
the compute endpoint of that region.

``proxied_databases`` (``placement``, ``api``, a cell's name) are reached
by every daemon through a ``TcpProxy`` of their own
(``database_proxies[name]``): stopping it is that database going away
(connections dropped, new ones refused) for this deployment alone;
``direct_url(name)`` is the database without the proxy.

With ``https`` (a certificate of ``tests/support/throwaway_ca.py``),
Placement and the compute API serve HTTPS with it (``[api]
ssl_cert_file``, ``ssl_key_file``) and every client's ``[placement]
cafile`` is its CA; ``rabbit_options`` adds ``[oslo_messaging_rabbit]``
options to every file (``ssl``, ``ssl_ca_file``); a ``postgres`` whose URL
asks for ``sslmode=verify-full`` gives that to every database URL.
"""
from __future__ import annotations

import dataclasses
import json
import re
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from cellplane import config
from cellplane.db import engines
from cellplane.objects import compute_nodes, host_mappings
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import get_transport
from cellplane_cli.launcher import MARKER, Launcher
from compute_agent.hosted_host import hosted_host_names
from placement.client import KeystoneTransport, PlacementClient
from tests.support import cli_runner
from tests.support.backing_services import PostgresServer, RabbitServer
from tests.support.keystone import ADMIN, SERVICE, Keystone
from tests.support.tcp_proxy import TcpProxy
from tests.support.throwaway_ca import Issued

REPO = Path(__file__).resolve().parents[2]
RUN_LOCAL = REPO / 'deploy' / 'run-local.sh'
# A bound on things that must happen, not a performance expectation.
EVENTUALLY_SECONDS = 120
UNLIMITED_QUOTA = {'instances': -1, 'cores': -1, 'ram': -1, 'server_groups': -1,
                   'server_group_members': -1}
# oslo.log's defaults, plus the scheduler's cache refreshes at DEBUG (what
# wait_until_schedulable watches for) and, when asked, its per-request trace.
LOG_LEVELS = ('amqp=WARN,amqplib=WARN,kombu=WARN,oslo.messaging=INFO,oslo_messaging=INFO,'
              'sqlalchemy=WARN,stevedore=WARN,urllib3=WARN,requests=WARN,'
              'oslo_policy=INFO,scheduler.host_refresher=DEBUG')


@dataclasses.dataclass(frozen=True)
class ComputePlan:
    host: str
    cell: str
    # [fake_driver] options: fail_all, failure_reason, traits, vcpus...
    fake_driver: dict[str, Any] = dataclasses.field(default_factory=dict)
    # > 1: a hollow agent named ``host`` serving <host>-1..N.
    hosted_hosts: int = 1

    @property
    def hosts(self) -> list[str]:
        return hosted_host_names(self.host, self.hosted_hosts)


def render(sections: dict[str, dict[str, Any]]) -> str:
    lines = []
    for section, options in sections.items():
        lines.append(f'[{section}]')
        for key, value in options.items():
            if isinstance(value, bool):
                value = 'true' if value else 'false'
            elif isinstance(value, (list, tuple)):
                value = ','.join(value)
            lines.append(f'{key} = {value}')
        lines.append('')
    return '\n'.join(lines)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class Deployment:
    """Placement, a scheduler, a super conductor, a conductor per cell, an agent per host."""

    def __init__(self, workdir: Path, rabbit: RabbitServer, postgres: PostgresServer,
                 computes: list[ComputePlan], *, max_attempts: int = 3,
                 rpc_handler_threads: int = 8, trace_scheduling: bool = False,
                 placement_workers: int = 2, record_backend: str | None = None,
                 service_down_time: int | None = None,
                 default_intervals: bool = False, scheduler_workers: int = 1,
                 cell_conductor: dict[str, Any] | None = None,
                 super_conductor: dict[str, Any] | None = None,
                 rpc_response_timeout: int | None = None,
                 queues: str = 'quorum+',
                 metrics_ports: dict[str, int] | None = None,
                 scheduler_only: dict[str, dict[str, Any]] | None = None,
                 keystone: Keystone | None = None,
                 compute_api: bool = False, images: str | None = None,
                 api_workers: int = 1,
                 proxied_databases: tuple[str, ...] = (),
                 https: Issued | None = None,
                 rabbit_options: dict[str, Any] | None = None,
                 quota: dict[str, Any] | None = None,
                 oslo_limit: dict[str, Any] | None = None,
                 ready_seconds: float = EVENTUALLY_SECONDS) -> None:
        self.workdir = Path(workdir)
        # How long create() waits for every host to be registered and read
        # by the scheduler (a benchmark of thousands of hosts gives more).
        self.ready_seconds = ready_seconds
        # When create() reached each of its steps (time.time(), to compare
        # with the daemons' log lines): 'began', 'vhosts and databases',
        # 'daemons serving', 'hosts registered', 'scheduler read every host'.
        self.timeline: dict[str, float] = {}
        self.config_dir = self.workdir / 'etc'
        self.run_dir = self.workdir / 'run'
        self.rabbit = rabbit
        self.postgres = postgres
        self.computes = computes
        self.cells = sorted({c.cell for c in computes})
        self.max_attempts = max_attempts
        self.rpc_handler_threads = rpc_handler_threads
        self.trace_scheduling = trace_scheduling
        self.placement_workers = placement_workers
        # [scheduler] record_backend of the scheduler (None: its default);
        # jsonlines writes to records_file below.
        self.record_backend = record_backend
        self.records_file = self.workdir / 'scheduling-records.jsonl'
        # Tests shorten the heartbeat, report and refresh intervals so that
        # things happen within a test; a benchmark may keep the defaults.
        self.default_intervals = default_intervals
        self.scheduler_workers = scheduler_workers
        # More [conductor] options of the cell conductors.
        self.cell_conductor = dict(cell_conductor or {})
        # More [conductor] options of the super conductor (top.conf).
        self.super_conductor = dict(super_conductor or {})
        # [DEFAULT] rpc_response_timeout of the top level (None: the default).
        self.rpc_response_timeout = rpc_response_timeout
        # The queue settings of every daemon and of the CLI, by name
        # (cellplane.rpc.options.QUEUE_SETTINGS): 'quorum+' is deploy/two-cell's
        # (quorum queues, stable reply and fanout names, stream fanouts).
        self.queues = queues
        self.rabbit_section: dict[str, Any] = {**rpc_options.QUEUE_SETTINGS[queues],
                                               **(rabbit_options or {})}
        # Placement's and the compute API's certificate (HTTPS), if any.
        self.https = https
        self.scheme = 'https' if https is not None else 'http'
        # Stable queue names are counted per hostname:processname on this
        # machine (/dev/shm): each deployment names its hosts apart.
        self.tag = uuid.uuid4().hex[:8]
        self.service_section: dict[str, Any] = {} if default_intervals else {
            'report_interval': 1}
        if service_down_time is not None:
            self.service_section['service_down_time'] = service_down_time
        # [metrics] bind_port per daemon: 'scheduler', 'super-conductor', a
        # cell's name (its conductor), 'compute-<host>' or 'api' (cellplane-api).
        self.metrics_ports = dict(metrics_ports or {})
        # Sections of scheduler.conf, read by the scheduler alone after
        # top.conf (the CLI, which reads top.conf, does not see them).
        self.scheduler_only = dict(scheduler_only or {})
        # Real tokens (auth_strategy = keystone) when given; else noauth2.
        self.keystone = keystone
        self.region = f'cp-{uuid.uuid4().hex[:10]}'
        self.region_registered = False
        # Run cellplane-api too (api.conf; keystone when given one, else noauth2)
        # at compute_api_url.
        self.compute_api = compute_api
        # [api] workers of cellplane-api (processes; a benchmark gives the daemon's default).
        self.api_workers = api_workers
        # [quota] of top.conf (the CLI, and cellplane-api, which reads it first):
        # unlimited, since most tests boot more than Nova's defaults allow one
        # project; a quota test gives its project limits (os-quota-sets).
        self.quota = {**UNLIMITED_QUOTA, **(quota or {})}
        # [oslo_limit] of top.conf ([quota] driver = unified_limits): the
        # keystoneauth options given, and the compute endpoint of the
        # deployment's own region, so its registered limits are its own.
        self.oslo_limit = dict(oslo_limit) if oslo_limit is not None else None
        self.compute_api_url = ''
        # The API's image catalog file's text ([image_catalog] images_file), if any.
        self.images = images
        self.vhosts: dict[str, str] = {}
        self.databases: dict[str, str] = {}
        self.proxied_databases = tuple(proxied_databases)
        self.database_proxies: dict[str, TcpProxy] = {}
        self._direct_urls: dict[str, str] = {}
        self.placement_url = ''

    # -- set up ---------------------------------------------------------------------
    def create(self) -> 'Deployment':
        self.timeline = {'began': time.time()}
        try:
            levels = ('top', *self.cells)
            self.vhosts.update(zip(levels, self.rabbit.create_vhosts(list(levels)), strict=True))
            for name in ('api', 'placement', *self.cells):
                self.databases[name] = self.postgres.create_database(name)
                if name in self.proxied_databases:
                    self.databases[name] = self._through_proxy(name, self.databases[name])
            self.placement_url = f'{self.scheme}://127.0.0.1:{free_port()}'
            if self.keystone is not None:
                self.region_registered = True
                self.keystone.add_endpoint('placement', self.placement_url, self.region)
            if self.compute_api:
                self.compute_api_url = f'{self.scheme}://127.0.0.1:{free_port()}'
                if self.keystone is not None:
                    # What an operator registers for users' clients: the
                    # compute API, its image catalog, and Keystone itself,
                    # all in the deployment's region.
                    self.keystone.add_endpoint('compute', self.compute_api_url + '/v2.1',
                                               self.region)
                    self.keystone.add_endpoint('image', self.compute_api_url + '/image',
                                               self.region)
                    self.keystone.add_endpoint('identity', self.keystone.url, self.region)
            self.timeline['vhosts and databases'] = time.time()
            self._write_configs()
            self.launch('start', '--no-create')
            self.timeline['daemons serving'] = time.time()
            self.wait_until_schedulable()
        except BaseException:
            self.destroy()
            raise
        return self

    def _through_proxy(self, name: str, url: str) -> str:
        self._direct_urls[name] = url
        real = sa.engine.make_url(url)
        proxy = TcpProxy(real.host or '127.0.0.1', real.port or 5432).start()
        self.database_proxies[name] = proxy
        return real.set(host='127.0.0.1', port=proxy.port).render_as_string(
            hide_password=False)

    def direct_url(self, name: str) -> str:
        """The URL of database ``name`` not through its proxy (the same as ``databases`` if none)."""
        return self._direct_urls.get(name, self.databases[name])

    def transport_url(self, level: str) -> str:
        return self.rabbit.url_for(self.vhosts[level])

    def client_transport(self, level: str):
        """An RPC transport of this test process to ``level``'s bus, as its daemons have it.

        Transports are built on the global ``cfg.CONF``, which a command run
        in-process earlier in this worker (``manage.main`` in a functional
        test) may have left holding its own files: another
        ``control_exchange`` there sends every cast to an exchange no
        daemon of this deployment reads. The global config is loaded again
        without files first, as ``client_transport_factory`` does.
        """
        config.load([], prog='cellplane-tests', setup_logging=False,
                    registrars=[rpc_options.register_opts])
        return get_transport(self.transport_url(level))

    def _common(self, host: str) -> dict[str, Any]:
        trace = 'DEBUG' if self.trace_scheduling else 'INFO'
        return {'host': host, 'rpc_handler_threads': self.rpc_handler_threads,
                'default_log_levels': f'{LOG_LEVELS},scheduler.trace={trace}'}

    def _placement_client_section(self) -> dict[str, Any]:
        trust = {'cafile': self.https.ca} if self.https is not None else {}
        if self.keystone is not None:
            # No endpoint_url: Placement is found in the catalog.
            return {**self.keystone.password_options(SERVICE), 'region_name': self.region,
                    'valid_interfaces': 'internal,public', **trust}
        # noauth2: the admin, with the service role the Keystone user above holds.
        return {'endpoint_url': self.placement_url, 'token': 'admin',
                'roles': 'admin,service', **trust}

    def _https_server(self) -> dict[str, Any]:
        """``[api]`` options of an HTTP daemon: its certificate, when HTTPS."""
        if self.https is None:
            return {}
        return {'ssl_cert_file': self.https.cert, 'ssl_key_file': self.https.key}

    def _placement_auth(self) -> dict[str, dict[str, Any]]:
        if self.keystone is None:
            return {'api': {'auth_strategy': 'noauth2'}}
        return {'api': {'auth_strategy': 'keystone'},
                'keystone_authtoken': self.keystone.authtoken_section()}

    def _scheduler_section(self) -> dict[str, Any]:
        section: dict[str, Any] = {} if self.default_intervals else {
            'host_refresh_interval': 1}
        if self.record_backend is not None:
            section['record_backend'] = self.record_backend
            section['records_file'] = str(self.records_file)
        return section

    def _write_configs(self) -> None:
        self.config_dir.mkdir(parents=True, exist_ok=True)
        port = self.placement_url.rsplit(':', 1)[1]
        auth = self._placement_auth()
        self._write('placement.conf', {
            'placement_database': {'connection': self.databases['placement']},
            'api': {'bind_host': '127.0.0.1', 'bind_port': port,
                    'workers': self.placement_workers, **auth.pop('api'),
                    **self._https_server()},
            'placement': {'randomize_allocation_candidates': True},
            **auth,
        })
        self._write('top.conf', {
            'DEFAULT': {**self._common('top'), 'transport_url': self.transport_url('top'),
                        **({'rpc_response_timeout': self.rpc_response_timeout}
                           if self.rpc_response_timeout else {})},
            'api_database': {'connection': self.databases['api']},
            'conductor': {'role': 'super', 'max_attempts': self.max_attempts,
                          **self.super_conductor},
            'scheduler': self._scheduler_section(),
            'service': self.service_section,
            'placement': self._placement_client_section(),
            'quota': self.quota,
            **({'oslo_limit': {'endpoint_service_type': 'compute',
                               'endpoint_region_name': self.region,
                               'endpoint_interface': 'public', **self.oslo_limit}}
               if self.oslo_limit is not None else {}),
        })
        for daemon in ('scheduler', 'super-conductor'):
            sections = self._metrics(daemon) if daemon in self.metrics_ports else {}
            if daemon == 'scheduler':
                for name, options in self.scheduler_only.items():
                    sections[name] = {**sections.get(name, {}), **options}
            if sections:
                self._write(f'{daemon}.conf', sections)
        if self.compute_api:
            # The same authentication as Placement's: keystone with a Keystone, else noauth2.
            api_auth = self._placement_auth()
            images = {}
            if self.images is not None:
                (self.config_dir / 'images.yaml').write_text(self.images)
                images = {'image_catalog': {
                    'images_file': str(self.config_dir / 'images.yaml')}}
            self._write('api.conf', {
                'api': {'bind_host': '127.0.0.1',
                        'bind_port': self.compute_api_url.rsplit(':', 1)[1],
                        'workers': self.api_workers, **api_auth.pop('api'),
                        **self._https_server()},
                **api_auth, **images, **self._metrics('api')})
        for n in range(2, self.scheduler_workers + 1):
            # Read after top.conf by the launcher: a worker of its own name.
            self._write(f'scheduler-{n}.conf', {'DEFAULT': {'host': f'scheduler-{n}'}})
        for cell in self.cells:
            self._write(f'{cell}.conf', {
                'DEFAULT': {**self._common(f'{cell}-conductor'),
                            'transport_url': self.transport_url(cell)},
                'database': {'connection': self.databases[cell]},
                'cell': {'name': cell},
                'conductor': {'role': 'cell', 'max_attempts': self.max_attempts,
                              **self.cell_conductor},
                'service': self.service_section,
                'placement': self._placement_client_section(),
                **self._metrics(cell),
            })
        for compute in self.computes:
            sections = {
                'DEFAULT': {**self._common(compute.host),
                            'transport_url': self.transport_url(compute.cell)},
                'cell': {'name': compute.cell},
                'service': self.service_section,
                # The failed-builds count reaches the scheduler with the node
                # record: often, so the weigher learns within a test.
                'compute': {'hosted_hosts': compute.hosted_hosts,
                            **({} if self.default_intervals else {'report_interval': 2})},
                'placement': self._placement_client_section(),
                **self._metrics(f'compute-{compute.host}'),
            }
            if compute.fake_driver:
                sections['fake_driver'] = dict(compute.fake_driver)
            self._write(f'compute-{compute.host}.conf', sections)

    def _metrics(self, daemon: str) -> dict[str, dict[str, Any]]:
        port = self.metrics_ports.get(daemon)
        return {'metrics': {'bind_port': port}} if port else {}

    def _write(self, name: str, sections: dict[str, dict[str, Any]]) -> None:
        if 'DEFAULT' in sections and name != 'placement.conf':
            rabbit = dict(self.rabbit_section)
            if rabbit.get('use_queue_manager'):
                rabbit['hostname'] = f'{sections["DEFAULT"]["host"]}@{self.tag}'
                sections = {**sections, 'oslo_concurrency': {
                    'lock_path': str(self.workdir / 'locks')}}
            sections = {**sections, 'oslo_messaging_rabbit': rabbit}
        (self.config_dir / name).write_text(render(sections))

    def config(self, name: str) -> Path:
        return self.config_dir / name

    # -- running ------------------------------------------------------------------------
    def launch(self, action: str, *args: str) -> str:
        """``deploy/run-local.sh ACTION`` for this deployment; its stdout.

        The script's ``python -m cellplane_cli.launcher``, forked by
        ``cli_runner`` as the tests' other commands are, in the repository
        as the script runs it (``tests/integration/test_launcher.py`` runs
        the script itself).
        """
        proc = cli_runner.run(
            'cellplane_cli.launcher',
            [action, *args, '--config-dir', str(self.config_dir), '--run-dir', str(self.run_dir)],
            timeout=600, cwd=REPO)
        if proc.returncode != 0:
            raise AssertionError(f'run-local.sh {action} failed ({proc.returncode}):\n'
                                 f'{proc.stderr}\n{proc.stdout}')
        return proc.stdout

    def pid(self, name: str) -> int:
        """The pid the launcher recorded for daemon ``name`` (``compute-cell1-a``, ``scheduler``...)."""
        daemon = Launcher(self.run_dir).find(name)
        if daemon is None:
            raise AssertionError(f'no daemon {name} recorded in {self.run_dir}')
        return daemon.pid

    def scheduler_logs(self) -> list[str]:
        """The log of every scheduler worker."""
        return [self.log('scheduler'), *(self.log(f'scheduler-{n}')
                                         for n in range(2, self.scheduler_workers + 1))]

    def queued(self, level: str, queue: str) -> int:
        """Messages on ``queue`` of ``level``'s vhost ('top', 'cell1'...), held by a consumer or not."""
        return self.rabbit.messages(self.vhosts[level], queue)

    def log(self, name: str) -> str:
        path = self.run_dir / f'{name}.log'
        return path.read_text() if path.exists() else ''

    def allocations_by_host(self, consumer: str, cell: str = 'cell1') -> dict[str, dict[str, int]]:
        """``consumer``'s allocations in Placement keyed by host name: ``{host: {class: amount}}``.

        Each provider is named by the compute host of ``cell`` whose node it
        is (one node per host, named for it); a provider of no such host is
        a KeyError.
        """
        hosts = [h for c in self.computes if c.cell == cell for h in c.hosts]
        engine = self.cell_engine(cell)
        try:
            names = {compute_nodes.node_of(engine, host, host): host for host in hosts}
        finally:
            engine.dispose()
        return {names[rp]: resources for rp, resources in
                self.placement().get_allocations(consumer).allocations.items()}

    def cell_engine(self, cell: str) -> sa.engine.Engine:
        return engines.create_engine(self.direct_url(cell))

    def placement(self) -> PlacementClient:
        """Placement as an administrator: noauth2's admin, or Keystone's (through the catalog)."""
        if self.keystone is None:
            return PlacementClient.over_http(
                self.placement_url, verify=str(self.https.ca) if self.https else True)
        return PlacementClient(KeystoneTransport(self.keystone.adapter(
            ADMIN, service_type='placement', region_name=self.region, interface='public',
            raise_exc=False)))

    def wait_until_schedulable(self) -> None:
        """Every agent's node and heartbeat in its cell DB, then read by the scheduler."""
        wanted = {host for c in self.computes for host in c.hosts}
        deadline = time.monotonic() + self.ready_seconds
        cell_engines = [self.cell_engine(cell) for cell in self.cells]
        try:
            while True:
                seen = set()
                try:
                    for engine in cell_engines:
                        seen |= compute_nodes.hosts_with_service(engine)
                except sa.exc.OperationalError as exc:
                    # A server shared with other work may refuse a connection
                    # for a while (too many clients): look again until the deadline.
                    assert time.monotonic() < deadline, f'cell databases unreadable: {exc}'
                    time.sleep(1.0)
                    continue
                if seen >= wanted:
                    break
                missing = sorted(wanted - seen)
                assert time.monotonic() < deadline, (
                    f'{len(missing)} of {len(wanted)} hosts never registered: '
                    f'{", ".join(missing[:10])}{" ..." if len(missing) > 10 else ""}')
                time.sleep(0.2)
        finally:
            for engine in cell_engines:
                engine.dispose()
        self.timeline['hosts registered'] = time.time()
        # A refresh of the scheduler now running that read every node, each
        # of them up: the scheduler can choose any host. (Only what this
        # scheduler process logged counts: a restarted one starts empty.)
        count = len(wanted)
        refreshed = re.compile(
            rf'Host cache refreshed: {count} compute node\(s\), {count} up;')
        while not refreshed.search(self._since_last_start('scheduler')):
            assert time.monotonic() < deadline, 'the scheduler never read every node up'
            time.sleep(0.2)
        # Then every host mapped to its cell (the scheduler maps the hosts a
        # refresh found just after it logs the refresh): an operator can put
        # any of them in an aggregate or a failure domain.
        api = engines.create_engine(self.direct_url('api'))
        try:
            while not wanted <= {host for host, _ in host_mappings.list_all(api)}:
                assert time.monotonic() < deadline, 'the scheduler never mapped every host'
                time.sleep(0.2)
        finally:
            api.dispose()
        self.timeline['scheduler read every host'] = time.time()

    def _since_last_start(self, name: str) -> str:
        """Daemon ``name``'s log since the launcher last started it (the whole log if never)."""
        text = self.log(name)
        marker = text.rfind(MARKER.split('{when}')[0].format(name=name))
        return text if marker < 0 else text[marker:]

    def manage(self, *argv: str) -> Any:
        """``cellplane-manage ARGV --config-file top.conf -f json``; its parsed output."""
        return self.cli(*argv, module='cellplane_cli.manage')

    def cli(self, *argv: str, json_output: bool = True, exit_code: int | None = 0,
            module: str = 'cellplane_cli.cli') -> Any:
        """``cellplane ARGV --config-file top.conf [-f json]``; its parsed output.

        ``exit_code`` is the one the command must end with (1 for ``server
        create --wait`` when servers end in ERROR; None: any).
        """
        command = [*argv, '--config-file', str(self.config('top.conf'))]
        if json_output:
            command += ['-f', 'json']
        proc = cli_runner.run(module, command)
        if exit_code is not None and proc.returncode != exit_code:
            raise AssertionError(f'cellplane {" ".join(argv)} failed '
                                 f'({proc.returncode}):\n{proc.stderr}\n{proc.stdout}')
        return json.loads(proc.stdout) if json_output else proc.stdout

    # -- tear down ---------------------------------------------------------------------
    def destroy(self) -> None:
        if self.run_dir.exists():
            try:
                self.launch('stop')
            except AssertionError:
                pass
        self.rabbit.delete_vhosts(list(self.vhosts.values()))
        for proxy in self.database_proxies.values():
            proxy.stop()
        for url in self.databases.values():
            self.postgres.drop_database(url)
        self.vhosts.clear()
        self.databases.clear()
        # oslo.messaging's queue name counters (use_queue_manager) of this deployment.
        for counter in Path('/dev/shm').glob(f'*@{self.tag}_*_qmanager'):
            counter.unlink(missing_ok=True)
        self.database_proxies.clear()
        if self.region_registered:
            self.keystone.remove_region(self.region)
            self.region_registered = False
