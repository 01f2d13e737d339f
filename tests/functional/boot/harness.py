"""The top level of the boot flow in one process, on real components.

SQLite API and cell databases (migrated), Placement in-process on its own
SQLite file, one in-memory bus per level (``MemoryBus``: messages copied
through JSON as RabbitMQ would), a real scheduler (built by
``scheduler.wiring.build_scheduler``, as the daemon is; host cache read from
the cell databases, refreshed when a test asks) and a real super conductor
(``build_super_conductor``). Compute agents are stood in
for by ``ComputeRecorder``: an RPC server per host on its cell's bus that
records the casts it receives, so a test sees exactly what crossed the wire.
"""
from __future__ import annotations

import datetime
import threading
import uuid as uuidlib
from dataclasses import dataclass, field

import sqlalchemy as sa
from oslo_config import cfg

from cellplane import conf as shared_conf
from cellplane import config
from cellplane.cells.databases import CellDatabases
from cellplane.db import engines, migrate
from cellplane.db.cell.models import compute_nodes, services
from cellplane.objects import cell_mappings, flavors
from cellplane.objects.cell_mappings import CellMapping
from cellplane.rpc import options as rpc_options
from cellplane.rpc.server import build_server
from cellplane_embedded.memory_transport import MemoryBus
from compute_agent.rpcapi import ComputeAPI
from conductor import conf as conductor_conf
from conductor.super.rpcapi import SuperConductorAPI

# isort: split
import oslo_messaging as messaging

from conductor.super.wiring import build_super_conductor
from placement.client import Inventory, PlacementClient
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from scheduler import conf as scheduler_conf
from scheduler.rpcapi import SchedulerAPI
from scheduler.wiring import build_scheduler
from tests.support.polling import eventually

# A bound on something that must happen, not a performance expectation.
DEADLINE_SECONDS = 30


def node_uuid(host: str) -> str:
    return str(uuidlib.uuid5(uuidlib.NAMESPACE_DNS, f'node-{host}'))


@dataclass
class Build:
    host: str
    instance: Instance
    request_spec: RequestSpec
    host_list: list[Selection]


@dataclass
class ComputeRecorder:
    """What compute agents received: builds and terminations, in arrival order."""
    builds: list[Build] = field(default_factory=list)
    terminated: list[tuple[str, str]] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def endpoint(self, host: str):
        recorder = self
        served = host

        class Agent:
            target = messaging.Target(version='1.2')

            def build_and_run_instance(self, ctxt, instance, request_spec, host_list):
                with recorder.changed:
                    recorder.builds.append(Build(host, instance, request_spec, host_list))
                    recorder.changed.notify_all()

            def terminate_instance(self, ctxt, instance_uuid, host=None):
                with recorder.changed:
                    # Recorded as the server that received it; a host argument
                    # naming another host would show up as a mismatch.
                    received = served if host in (None, served) else f'{served}!={host}'
                    recorder.terminated.append((received, instance_uuid))
                    recorder.changed.notify_all()
        return Agent()

    def wait_for(self, predicate, what: str):
        with self.changed:
            if not self.changed.wait_for(predicate, timeout=DEADLINE_SECONDS):
                raise AssertionError(f'never happened: {what}')


class TopLevel:
    """The harness; ``close()`` stops every server and disposes of every engine."""

    def __init__(self, tmp_path, cells: dict[str, dict[str, dict]], *,
                 max_attempts: int = 3) -> None:
        # Clients read [upgrade_levels]; transports need oslo.messaging's options.
        config.load([], prog='cellplane-tests', setup_logging=False,
                    registrars=[rpc_options.register_opts])
        self._servers = []
        self._buses: list[MemoryBus] = []
        self.api_engine = self._migrated(f'sqlite:///{tmp_path}/api.sqlite', 'api')
        placement_engine = self._migrated(f'sqlite:///{tmp_path}/placement.sqlite',
                                          'placement')
        self._engines = [self.api_engine, placement_engine]
        self.placement = PlacementClient.in_process(placement_engine)
        self.recorder = ComputeRecorder()
        self.cell_buses: dict[str, MemoryBus] = {}
        self.cells: dict[str, CellMapping] = {}
        self.cell_engines: dict[str, sa.engine.Engine] = {}
        for name, hosts in cells.items():
            self._add_cell(tmp_path, name, hosts)
        self.cell_dbs = CellDatabases(self.api_engine)
        self.top_bus = self._bus('top')

        sched_conf = cfg.ConfigOpts()
        shared_conf.register_opts(sched_conf)
        scheduler_conf.register_opts(sched_conf)
        conductor_conf.register_opts(sched_conf)
        sched_conf([], default_config_files=[], default_config_dirs=[])
        sched_conf.set_override('max_attempts', max_attempts, group='conductor')
        # Refreshed when a test says so (refresher.refresh()), not on a timer.
        sched_conf.set_override('host_refresh_interval', 3600, group='scheduler')
        # Resumed when a test says so (super_conductor.resumption.run()), never on a timer.
        sched_conf.set_override('resume_interval', 0, group='conductor')
        self.traces = []
        self.scheduler = build_scheduler(
            sched_conf, transport=self.top_bus.transport, cells=self.cell_dbs,
            placement=self.placement, record_backend=None,
            on_trace=self.traces.append, host='sched-1', owns_transport=False)
        self.scheduler.start()
        self.host_cache = self.scheduler.cache
        self.refresher = self.scheduler.refresher
        self.scheduler_api = SchedulerAPI(self.top_bus.transport, timeout=DEADLINE_SECONDS)
        self.super_conductor = build_super_conductor(
            sched_conf, transport=self.top_bus.transport, api_engine=self.api_engine,
            cells=self.cell_dbs, cell_transport=self._cell_transport,
            placement=self.placement, host='super-1', owns_transport=False)
        self.super_conductor.service.start()
        self.conductor_api = SuperConductorAPI(self.top_bus.transport)

    # -- building ----------------------------------------------------------
    def _migrated(self, url: str, history: str):
        engine = engines.create_engine(url)
        migrate.sync(history, engine)
        return engine

    def _bus(self, name: str) -> MemoryBus:
        bus = MemoryBus(name)
        self._buses.append(bus)
        return bus

    def _serve(self, bus: MemoryBus, topic: str, server: str, endpoint) -> None:
        rpc_server = build_server(bus.transport, topic=topic, server=server,
                                  endpoints=[endpoint])
        rpc_server.start()
        self._servers.append(rpc_server)

    def _add_cell(self, tmp_path, name: str, hosts: dict[str, dict]) -> None:
        url = f'sqlite:///{tmp_path}/{name}.sqlite'
        engine = self._migrated(url, 'cell')
        self._engines.append(engine)
        self.cell_engines[name] = engine
        self.cells[name] = cell_mappings.create(self.api_engine, name=name,
                                           transport_url=f'memory://{name}',
                                           database_connection=url)
        self.cell_buses[name] = bus = self._bus(name)
        for host, size in hosts.items():
            self.add_compute_node(name, host, **size)
            self._serve(bus, 'compute', host, self.recorder.endpoint(host))

    def add_compute_node(self, cell: str, host: str, *, vcpus: int = 8,
                         memory_mb: int = 4096, disk_gb: int = 100) -> str:
        """A compute node as its agent would report it: cell DB rows and a Placement provider."""
        uuid = node_uuid(host)
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        with self.cell_engines[cell].begin() as conn:
            conn.execute(compute_nodes.insert().values(
                uuid=uuid, host=host, nodename=host, vcpus=vcpus, memory_mb=memory_mb,
                local_gb=disk_gb, stats={}))
            conn.execute(services.insert().values(
                host=host, binary='cellplane-compute', topic='compute',
                report_count=1, last_seen_at=now))
        self.placement.ensure_provider(uuid, host)
        self.placement.set_inventory(uuid, {'VCPU': Inventory(vcpus),
                                            'MEMORY_MB': Inventory(memory_mb),
                                            'DISK_GB': Inventory(disk_gb)})
        return uuid

    def _cell_transport(self, url: str):
        for name, mapping in self.cells.items():
            if mapping.transport_url == url:
                return self.cell_buses[name].transport
        raise LookupError(url)

    def compute_api_for(self, cell: CellMapping) -> ComputeAPI:
        return ComputeAPI(self.cell_buses[cell.name].transport)

    def flavor(self, name: str = 'small', vcpus: int = 1, memory_mb: int = 512,
               root_gb: int = 10) -> flavors.FlavorRecord:
        return flavors.create(self.api_engine, name=name, vcpus=vcpus,
                              memory_mb=memory_mb, root_gb=root_gb)

    # -- reading -----------------------------------------------------------
    def cell_of_host(self, host: str) -> str:
        for name, engine in self.cell_engines.items():
            with engine.connect() as conn:
                if conn.execute(sa.select(compute_nodes.c.id).where(
                        compute_nodes.c.host == host)).first():
                    return name
        raise LookupError(host)

    def wait_until(self, predicate, what: str):
        eventually(predicate, what, seconds=DEADLINE_SECONDS)

    def close(self) -> None:
        self.super_conductor.service.stop()
        self.scheduler.service.stop()
        self.scheduler.close()
        for rpc_server in self._servers:
            rpc_server.stop()
            rpc_server.wait()
        for bus in self._buses:
            bus.cleanup()
        self.cell_dbs.dispose()
        for engine in self._engines:
            engine.dispose()
