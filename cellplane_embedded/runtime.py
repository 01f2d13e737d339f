"""The whole control plane in one process: the embedded mode behind ``cellplane demo``.

``EmbeddedCloud`` builds, from the same manager and client classes the
daemons use, Placement (in-process: the WSGI app without a socket), the
scheduler, the super conductor, one cell conductor per cell and a fake
hollow compute agent per cell (one process-local agent serving all of the
cell's hosts, each host with its own identity), and starts their RPC servers on in-memory buses
(``memory_transport``: one per level, copying every message through JSON as
RabbitMQ would). State lives in SQLite files in a state directory: the API
database, one database per cell, and Placement's.

What it promises:

- Levels stay apart as in a deployment: the top-level bus carries only the
  scheduler's and the super conductor's topics; each cell's bus carries its
  conductor and its computes; cell services are built without the API
  database or the top-level bus, so an upcall cannot happen here either.
- Every service is built by its package's builder, the function its daemon
  calls (``scheduler/wiring.py``, ``compute_agent/wiring.py``, the
  conductor's wiring); what differs from the daemons is the transport (the
  in-memory buses), the database URLs (SQLite files) and the host names
  (several hosts in one process).
- Settings come from a private ``ConfigOpts`` per level (the top level,
  each cell: ``[cell] name`` differs), never from the global ``cfg.CONF``
  (oslo.messaging keeps the global object for its own options; see
  ARCHITECTURE.md).
- ``start`` returns once every compute node is known to the scheduler, so
  the first boot can be placed; ``stop`` stops every server and waits for
  the messages in flight.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
import time
from pathlib import Path
from typing import Callable

import sqlalchemy as sa
from oslo_config import cfg

from cellplane import conf as shared_conf
from cellplane.cells.databases import CellDatabases
from cellplane.db import engines, migrate
from cellplane.objects import cell_mappings, compute_nodes
from cellplane.objects.cell_mappings import CellMapping
from cellplane.service import Service
from cellplane_embedded.memory_transport import MemoryBus
from compute_agent import conf as compute_conf
from compute_agent.hosted_host import HostedHost
from compute_agent.virt.fake import FakeDriver, FakeSettings
from compute_agent.wiring import ComputeAgent, build_compute_agent
from conductor import conf as conductor_conf
from conductor.cell.wiring import CellConductor, build_cell_conductor
from conductor.super.rpcapi import SuperConductorAPI
from conductor.super.wiring import build_super_conductor
from placement.client import PlacementClient
from placement.objects import standards
from scheduler import conf as scheduler_conf
from scheduler.records.loading import load_backend
from scheduler.trace import SchedulingTrace
from scheduler.wiring import Scheduler, build_scheduler

LOG = logging.getLogger(__name__)

# A bound on something that must happen (computes registering), not a speed
# target: how long registering may go on without one more host registered,
# and before the first, that plus an allowance per host (an agent registers
# its hosts together: 5,000 hosts in 10 cells took 71 s here before any showed).
READY_SECONDS = 60
READY_SECONDS_PER_HOST = 0.05


def _some(hosts: set[str], shown: int = 10) -> str:
    """The first ``shown`` of ``hosts`` by name, and how many more: an error line, not a list of thousands."""
    names = sorted(hosts)
    more = len(names) - shown
    return ', '.join(names[:shown]) + (f' and {more} more' if more > 0 else '')


class EmbeddedStartError(Exception):
    """The embedded control plane could not start; the message says what did not come up."""


@dataclasses.dataclass(frozen=True)
class HostPlan:
    name: str
    driver: FakeSettings = dataclasses.field(default_factory=FakeSettings)


@dataclasses.dataclass(frozen=True)
class CellPlan:
    name: str
    hosts: tuple[HostPlan, ...]


@dataclasses.dataclass(frozen=True)
class CloudPlan:
    """What to run: the cells and their hosts, and the few knobs of the boot flow."""

    cells: tuple[CellPlan, ...]
    max_attempts: int = 3
    rpc_handler_threads: int = 16
    report_interval: float = 5.0
    service_down_time: float = 60.0
    # Short, so that the scheduler learns of a host failing its builds (the
    # failed_builds stat its BuildFailureWeigher reads) within the demo's
    # few seconds: the report goes agent -> cell DB -> scheduler's next read.
    resource_report_interval: float = 1.0
    host_refresh_interval: float = 1.0

    @classmethod
    def uniform(cls, *, cells: int = 2, hosts_per_cell: int = 5,
                driver_for: Callable[[str, str], FakeSettings] | None = None,
                **knobs) -> 'CloudPlan':
        """``cells`` cells of ``hosts_per_cell`` hosts named cellN-hostM."""
        driver_for = driver_for or (lambda cell, host: FakeSettings())
        plans = []
        for c in range(1, cells + 1):
            cell = f'cell{c}'
            hosts = tuple(HostPlan(f'{cell}-host{h}', driver_for(cell, f'{cell}-host{h}'))
                          for h in range(1, hosts_per_cell + 1))
            plans.append(CellPlan(cell, hosts))
        return cls(cells=tuple(plans), **knobs)


def service_conf(plan: CloudPlan, *, cell_name: str | None = None,
                 api_database: str | None = None) -> cfg.ConfigOpts:
    """The private configuration of one level's services (no file, no global).

    The same options a deployment's config files would set: the top level
    gets ``[api_database] connection`` (the scheduler's records go there, as
    by default), each cell its ``[cell] name``.
    """
    conf = cfg.ConfigOpts()
    shared_conf.register_opts(conf)
    scheduler_conf.register_opts(conf)
    conductor_conf.register_opts(conf)
    compute_conf.register_opts(conf)
    conf([], project='cellplane', prog='cellplane-embedded',
         default_config_files=[], default_config_dirs=[])
    conf.set_override('rpc_handler_threads', plan.rpc_handler_threads)
    conf.set_override('max_attempts', plan.max_attempts, group='conductor')
    conf.set_override('report_interval', int(max(1, plan.report_interval)), group='service')
    conf.set_override('service_down_time', int(plan.service_down_time), group='service')
    conf.set_override('host_refresh_interval', plan.host_refresh_interval,
                      group='scheduler')
    conf.set_override('report_interval', int(max(1, plan.resource_report_interval)),
                      group='compute')
    if cell_name is not None:
        conf.set_override('name', cell_name, group='cell')
    if api_database is not None:
        conf.set_override('connection', api_database, group='api_database')
    return conf


class EmbeddedCloud:
    """Placement, scheduler, super conductor, cell conductors and fake computes, in-process."""

    def __init__(self, state_dir: str | Path, plan: CloudPlan, *,
                 start_progress: Callable[[int, int], None] | None = None) -> None:
        self.state_dir = Path(state_dir)
        self.plan = plan
        # Told (hosts registered, hosts) while the start waits for the hosts.
        self._start_progress = start_progress
        self.conf = service_conf(plan, api_database=f'sqlite:///{self.state_dir / "api"}.sqlite')
        self.cell_confs = {cell.name: service_conf(plan, cell_name=cell.name)
                           for cell in plan.cells}
        self.traces: list[SchedulingTrace] = []
        self._services: list[Service] = []
        self.scheduler: Scheduler | None = None
        self._stoppers: list[Callable[[], None]] = []
        self.top_bus: MemoryBus | None = None
        self.cell_buses: dict[str, MemoryBus] = {}
        self.cell_engines: dict[str, sa.engine.Engine] = {}
        self.cell_mappings: dict[str, CellMapping] = {}
        self.agents: dict[str, ComputeAgent] = {}
        self.computes: dict[str, HostedHost] = {}
        self.cell_conductors: dict[str, CellConductor] = {}

    # -- databases --------------------------------------------------------------
    def _sqlite(self, name: str) -> sa.engine.Engine:
        return engines.create_engine(f'sqlite:///{self.state_dir / name}.sqlite')

    def _create_databases(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.api_engine = self._sqlite('api')
        migrate.sync('api', self.api_engine)
        self.placement_engine = self._sqlite('placement')
        migrate.sync('placement', self.placement_engine)
        standards.sync(self.placement_engine)
        for cell in self.plan.cells:
            engine = self._sqlite(cell.name)
            migrate.sync('cell', engine)
            self.cell_engines[cell.name] = engine
            self.cell_mappings[cell.name] = cell_mappings.create(
                self.api_engine, name=cell.name,
                # The super conductor's cell_transport maps it to the cell's bus.
                transport_url=self._cell_url(cell.name),
                database_connection=str(engine.url))

    # -- servers ------------------------------------------------------------------
    def _start_service(self, service: Service) -> None:
        service.start()
        self._services.append(service)

    def start(self) -> 'EmbeddedCloud':
        """Start everything; on any failure, stop what was started and re-raise."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> 'EmbeddedCloud':
        started = time.monotonic()
        self._create_databases()
        # As the samples configure Placement: each scheduler request sees a
        # random window of the hosts ([scheduler] min_placement_results).
        self.placement = PlacementClient.in_process(self.placement_engine,
                                                    randomize_candidates=True)
        self.top_bus = MemoryBus('top')
        for cell in self.plan.cells:
            self.cell_buses[cell.name] = MemoryBus(cell.name)
        for cell in self.plan.cells:
            self._start_cell(cell)
        self._start_top()
        self._wait_until_schedulable()
        LOG.info('Embedded control plane up in %.1f s: %d cell(s), %d host(s)',
                 time.monotonic() - started, len(self.plan.cells),
                 sum(len(c.hosts) for c in self.plan.cells))
        return self

    # -- a cell: its conductor and computes, nothing of the top level -----------
    def _start_cell(self, cell: CellPlan) -> None:
        bus = self.cell_buses[cell.name]
        conf = self.cell_confs[cell.name]
        conductor = build_cell_conductor(
            conf, transport=bus.transport, engine=self.cell_engines[cell.name],
            placement=self.placement, host=f'{cell.name}-conductor', owns_transport=False)
        self.cell_conductors[cell.name] = conductor
        self._start_service(conductor.service)
        # One hollow agent serves all the hosts of the cell, each with its
        # own fake driver, RPC server name, provider and records.
        drivers = {host.name: FakeDriver(host.driver) for host in cell.hosts}
        agent = build_compute_agent(
            conf, transport=bus.transport, placement=self.placement,
            driver_for=drivers.__getitem__, host=f'{cell.name}-computes',
            hosts=list(drivers), owns_transport=False)
        self.agents[cell.name] = agent
        self.computes.update(agent.hosts)
        self._start_service(agent.service)

    # -- the top level: scheduler and super conductor ------------------------------
    @staticmethod
    def _cell_url(cell_name: str) -> str:
        return f'fake:///{cell_name}'

    def _cell_transport(self, url: str):
        for name, bus in self.cell_buses.items():
            if self._cell_url(name) == url:
                return bus.transport
        raise EmbeddedStartError(f'no in-memory bus for cell transport {url}')

    def _start_top(self) -> None:
        bus = self.top_bus
        self.cells = CellDatabases(self.api_engine)
        self.cells.reload()
        self.scheduler = build_scheduler(
            self.conf, transport=bus.transport, cells=self.cells,
            placement=self.placement, record_backend=load_backend(self.conf),
            on_trace=self.traces.append, host='scheduler', owns_transport=False)
        self.host_cache = self.scheduler.cache
        self.refresher = self.scheduler.refresher
        super_conductor = build_super_conductor(
            self.conf, transport=bus.transport, api_engine=self.api_engine,
            cells=self.cells, cell_transport=self._cell_transport,
            placement=self.placement, host='super-conductor', owns_transport=False)
        self._start_service(super_conductor.service)
        self.super_conductor = super_conductor
        self.conductor_api = SuperConductorAPI(bus.transport, conf=self.conf)

    def _wait_until_schedulable(self) -> None:
        """Every host's node recorded in its cell and up, then read by the scheduler."""
        wanted = {h.name for c in self.plan.cells for h in c.hosts}
        # Five thousand hosts take longer than a minute to register on a small
        # machine: the bound grows with the hosts, and with each host registered.
        started = time.monotonic()
        deadline = started + READY_SECONDS + READY_SECONDS_PER_HOST * len(wanted)
        registered = 0
        while True:
            ready = set()
            for engine in self.cell_engines.values():
                ready |= compute_nodes.hosts_with_service(engine)
            now_registered = len(ready & wanted)
            if self._start_progress is not None:
                self._start_progress(now_registered, len(wanted))
            if now_registered == len(wanted):
                break
            if now_registered > registered:
                registered = now_registered
                deadline = time.monotonic() + READY_SECONDS
            elif time.monotonic() > deadline:
                raise EmbeddedStartError(
                    f'{len(wanted - ready)} of {len(wanted)} compute hosts never registered '
                    f'(waited {time.monotonic() - started:.0f} s; '
                    f'{registered} registered): {_some(wanted - ready)}')
            time.sleep(0.05)
        # As the daemon does: the cache is filled before the first request.
        self.scheduler.start()
        self._services.append(self.scheduler.service)
        self._stoppers.append(self.scheduler.close)
        known = {r.host for r in self.host_cache.records() if r.service_up}
        if not known >= wanted:
            raise EmbeddedStartError(
                f'the scheduler does not see {len(wanted - known)} of {len(wanted)} hosts up: '
                f'{_some(wanted - known)}')

    # -- stopping --------------------------------------------------------------------
    def stop(self) -> None:
        services, self._services = self._services, []
        for service in services:
            service.begin_stop()
        # Each wait takes about a second (the executor winding down its
        # threads); waiting for all at once keeps stopping quick.
        waiters = [threading.Thread(target=s.finish_stop, name='embedded-stop')
                   for s in services]
        for waiter in waiters:
            waiter.start()
        for waiter in waiters:
            waiter.join()
        # After the servers: no trace can arrive any more.
        for stopper in reversed(self._stoppers):
            stopper()
        self._stoppers.clear()
        for bus in [self.top_bus, *self.cell_buses.values()]:
            if bus is not None:
                bus.cleanup()
        if getattr(self, 'cells', None) is not None:
            self.cells.dispose()
        for engine in [*self.cell_engines.values(),
                       getattr(self, 'api_engine', None),
                       getattr(self, 'placement_engine', None)]:
            if engine is not None:
                engine.dispose()

    def __enter__(self) -> 'EmbeddedCloud':
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()


