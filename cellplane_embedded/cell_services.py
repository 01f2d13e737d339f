"""A cell's services in the embedded mode: its conductor's endpoints and its fake compute agents.

Built from the classes ``cellplane-conductor`` (role cell) and
``cellplane-compute`` wire together, with what they read from their config
files handed in as arguments instead: each agent has its own host name and
its own ``FakeSettings``, which one process-wide configuration could not
give a dozen agents. A cell's services get the cell's bus, its database
(the conductor only) and Placement; never the top level's.
"""
from __future__ import annotations

import datetime
import logging

from oslo_config import cfg
from sqlalchemy.engine import Engine

from cellplane.context import new_context
from cellplane.heartbeat import software_version
from cellplane.periodic import PeriodicTask
from compute_agent import rpcapi as compute_rpcapi
from compute_agent.builder import InstanceBuilder
from compute_agent.manager import ComputeManager
from compute_agent.resource_reporter import ResourceReporter
from compute_agent.rpcapi import ComputeAPI
from compute_agent.virt.fake import FakeDriver, FakeSettings
from conductor.cell_manager import CellConductorManager
from conductor.cell_reschedule import Rescheduler
from conductor.manager import ConductorManager
from conductor.rpcapi import ConductorAPI
from placement.client import PlacementClient
from rpc_schemas.service_status import ServiceStatus

LOG = logging.getLogger(__name__)

COMPUTE_BINARY = 'cellplane-compute'


def cell_conductor_endpoints(*, conf: cfg.ConfigOpts, engine: Engine, transport,
                             placement: PlacementClient) -> list[object]:
    """The cell conductor's endpoints: heartbeats, agents' reports, reschedules."""
    rescheduler = Rescheduler(engine=engine, placement=placement,
                              compute=ComputeAPI(transport, conf=conf),
                              max_attempts=conf.conductor.max_attempts)
    return [ConductorManager(role='cell', cell_engine=engine),
            CellConductorManager(engine=engine, rescheduler=rescheduler)]


class ComputeAgent:
    """One fake compute host: its RPC endpoint, its resource reports, its heartbeat."""

    def __init__(self, *, conf: cfg.ConfigOpts, host: str, cell_name: str, transport,
                 placement: PlacementClient, driver_settings: FakeSettings,
                 resource_report_interval: float) -> None:
        self.host = host
        self.cell_name = cell_name
        self.driver = FakeDriver(driver_settings)
        self.conductor = ConductorAPI(transport, conf=conf)
        self.builder = InstanceBuilder(host=host, nodename=host, driver=self.driver)
        self.reporter = ResourceReporter(
            host=host, nodename=host, driver=self.driver, placement=placement,
            conductor=self.conductor, failed_builds=lambda: self.builder.failed_builds)
        self.manager = ComputeManager(builder=self.builder, placement=placement,
                                      conductor=self.conductor)
        self._tasks = [
            PeriodicTask(f'{host}-heartbeat', conf.service.report_interval, self.heartbeat),
            PeriodicTask(f'{host}-resources', resource_report_interval,
                         self.reporter.periodic_report),
        ]

    @property
    def node_uuid(self) -> str:
        return self.reporter.node_uuid

    def endpoints(self) -> list[object]:
        return [self.manager]

    def heartbeat(self) -> None:
        self.conductor.service_heartbeat(new_context(), ServiceStatus(
            host=self.host, binary=COMPUTE_BINARY, topic=compute_rpcapi.TOPIC,
            cell_name=self.cell_name, version=software_version(),
            report_time=datetime.datetime.now(datetime.timezone.utc)))

    def start(self) -> None:
        """Heartbeat and report now (the periodic tasks' first runs), then periodically."""
        for task in self._tasks:
            task.start()

    def stop(self) -> None:
        for task in self._tasks:
            task.stop()
