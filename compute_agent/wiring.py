"""The one way to build a compute agent: from its configuration and resolved dependencies.

``cellplane-compute`` (``compute_agent/cmd.py``), the embedded mode and the
test harnesses all call ``build_compute_agent``; they differ only in what
they hand it (the transport, the Placement client, the virt driver, and the
host name where one process runs several hosts). What it promises:

- the agent serves topic ``compute`` as server ``host`` (``[DEFAULT] host``
  unless given), builds and terminates through ``ComputeManager``;
- its heartbeat goes to its cell conductor every ``[service]
  report_interval`` with this host's name and ``[cell] name``;
- its node (named after the host) is reported to Placement and to its cell
  conductor at start and every ``[compute] report_interval``, with
  ``[compute] availability_zone``.

The returned ``ComputeAgent`` is not started: the daemon calls
``service.run()``, in-process users ``service.start()`` and ``stop()``.
"""
from __future__ import annotations

import dataclasses

from oslo_config import cfg

from cellplane.context import new_context
from cellplane.heartbeat import current_status
from cellplane.periodic import PeriodicTask
from cellplane.service import Service
from compute_agent import rpcapi
from compute_agent.builder import InstanceBuilder
from compute_agent.manager import ComputeManager
from compute_agent.resource_reporter import ResourceReporter
from compute_agent.virt.driver import VirtDriver
from conductor.cell.rpcapi import CellConductorAPI
from placement.client import PlacementClient

BINARY = 'cellplane-compute'


@dataclasses.dataclass
class ComputeAgent:
    """A built compute agent: its ``Service`` and the parts tests and the demo look into."""

    host: str
    service: Service
    driver: VirtDriver
    builder: InstanceBuilder
    reporter: ResourceReporter
    manager: ComputeManager

    @property
    def node_uuid(self) -> str:
        return self.reporter.node_uuid


def build_compute_agent(conf: cfg.ConfigOpts, *, transport, placement: PlacementClient,
                        driver: VirtDriver, conductor: CellConductorAPI | None = None,
                        host: str | None = None,
                        owns_transport: bool = True) -> ComputeAgent:
    """A compute agent for ``host`` on ``transport`` (its cell's bus), not started."""
    host = host or conf.host
    conductor = conductor or CellConductorAPI(transport, conf=conf)
    # One node per host: the node is named after the host.
    builder = InstanceBuilder(host=host, nodename=host, driver=driver)
    reporter = ResourceReporter(
        host=host, nodename=host, driver=driver, placement=placement,
        conductor=conductor, availability_zone=conf.compute.availability_zone,
        failed_builds=lambda: builder.failed_builds)
    manager = ComputeManager(builder=builder, placement=placement, conductor=conductor)

    def heartbeat() -> None:
        conductor.service_heartbeat(
            new_context(), current_status(conf, binary=BINARY, topic=rpcapi.TOPIC,
                                          host=host))

    # The first report runs at once: the node is in Placement and in its
    # cell DB before the scheduler can be expected to choose it.
    resources = PeriodicTask(f'{host}-resources', conf.compute.report_interval,
                             reporter.periodic_report)
    service = Service(conf, binary=BINARY, topic=rpcapi.TOPIC, transport=transport,
                      endpoints=[manager], heartbeat=heartbeat,
                      periodic_tasks=[resources], host=host,
                      owns_transport=owns_transport)
    return ComputeAgent(host=host, service=service, driver=driver, builder=builder,
                        reporter=reporter, manager=manager)
