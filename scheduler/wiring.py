"""The one way to build a scheduler worker: from its configuration and resolved dependencies.

``cellplane-scheduler`` (``scheduler/cmd.py``), the embedded mode and the
test harnesses all call ``build_scheduler``; they differ only in the
transport, the cells' databases and the Placement client they hand it. The
filters, weighers, host cache, refresh interval and record backend come
from the configuration in every case (``[filter_scheduler]``,
``[scheduler]``), so what a test or the demo proves is what the daemon runs.

The returned ``Scheduler`` is not started. ``start`` records the
failure-domain levels in the API database and fills the host cache from
every cell before the RPC server takes its first request (a database error,
or levels the existing domains do not fit, is raised to the caller), then
serves; ``close`` stops the
refresher and flushes the scheduling records.
"""
from __future__ import annotations

import dataclasses
import json
import logging
from typing import Callable

from oslo_config import cfg
from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.heartbeat import current_status
from cellplane.objects import services
from cellplane.service import Service
from placement.client import PlacementClient
from scheduler import rpcapi
from scheduler.failure_domains import record_levels
from scheduler.host_cache import HostStateCache
from scheduler.host_refresher import HostRefresher
from scheduler.instance_locator import PlacementInstanceLocator
from scheduler.manager import SchedulerManager
from scheduler.placement_adapter import PlacementAdapter
from scheduler.records.backend import RecordBackend
from scheduler.records.writer import RecordWriter
from scheduler.server_group.book import ApiGroupBook
from scheduler.trace import SchedulingTrace

LOG = logging.getLogger(__name__)
TRACE_LOG = logging.getLogger('scheduler.trace')

BINARY = 'cellplane-scheduler'


def log_trace(trace: SchedulingTrace) -> None:
    """Each trace as one JSON line at DEBUG on logger ``scheduler.trace``."""
    if TRACE_LOG.isEnabledFor(logging.DEBUG):
        TRACE_LOG.debug('scheduling trace %s', json.dumps(trace.to_dict(), sort_keys=True))


def trace_sink(writer: RecordWriter | None,
               also: Callable[[SchedulingTrace], None] | None = None):
    """The manager's trace sink: the DEBUG line, the record queued for writing, and ``also``."""
    def sink(trace: SchedulingTrace) -> None:
        log_trace(trace)
        if writer is not None:
            writer.submit(trace)
        if also is not None:
            also(trace)
    return sink


@dataclasses.dataclass
class Scheduler:
    """A built scheduler worker: its ``Service`` and the parts around it."""

    service: Service
    manager: SchedulerManager
    cache: HostStateCache
    refresher: HostRefresher
    writer: RecordWriter | None

    api_engine: Engine | None = None
    failure_domain_levels: tuple[str, ...] = ()

    def prepare(self) -> None:
        """Fill the host cache, then record the failure-domain levels.

        Raises ``cellplane.objects.failure_domains.FailureDomainError`` for
        levels the existing domains do not fit,
        ``scheduler.failure_domains.LevelsNotRecorded`` when they cannot be
        written, and ``sqlalchemy.exc.SQLAlchemyError`` when the cell
        mappings or a cell database cannot be read.
        """
        self.refresher.start()
        if self.api_engine is not None:
            record_levels(self.api_engine, self.failure_domain_levels)

    def start(self) -> None:
        """``prepare``, then serve."""
        self.prepare()
        self.service.start()

    def close(self) -> None:
        """Stop refreshing and write the records still queued (after the service stopped)."""
        self.refresher.stop()
        if self.writer is not None:
            self.writer.close()
            if self.writer.dropped or self.writer.failed:
                LOG.warning('Scheduling records: %d written, %d dropped (queue full), '
                            '%d failed to write', self.writer.written,
                            self.writer.dropped, self.writer.failed)


def build_scheduler(conf: cfg.ConfigOpts, *, transport, cells: CellDatabases,
                    placement: PlacementClient, record_backend: RecordBackend | None,
                    on_trace: Callable[[SchedulingTrace], None] | None = None,
                    host: str | None = None, owns_transport: bool = True) -> Scheduler:
    """A scheduler worker on ``transport`` (the top-level bus), not started.

    Raises ``scheduler.errors.UnknownPlugin`` for a filter or weigher that is
    not installed. ``on_trace`` sees every trace as well (the demo keeps them).
    """
    cache = HostStateCache.from_conf(conf)
    refresher = HostRefresher(cache, cells,
                              service_down_time=conf.service.service_down_time,
                              interval=conf.scheduler.host_refresh_interval,
                              full_interval=conf.scheduler.host_full_refresh_interval)
    adapter = PlacementAdapter(placement)
    writer = (RecordWriter(record_backend, queue_size=conf.scheduler.record_queue_size,
                           weighed_hosts=conf.scheduler.record_weighed_hosts)
              if record_backend is not None else None)
    try:
        manager = SchedulerManager.from_conf(
            conf, candidate_source=adapter, claimer=adapter, cache=cache,
            instance_locator=PlacementInstanceLocator(placement, cache),
            group_book=ApiGroupBook(cells),
            on_trace=trace_sink(writer, on_trace),
            follow_changes=refresher.follow_changes)
    except Exception:
        if writer is not None:
            writer.close()
        raise
    host = host or conf.host

    def heartbeat() -> None:
        # A top-level service: its liveness row is in the API database.
        services.record_heartbeat(cells.api_engine, current_status(
            conf, binary=BINARY, topic=rpcapi.TOPIC, host=host))

    service = Service(conf, binary=BINARY, topic=rpcapi.TOPIC, transport=transport,
                      endpoints=[manager], heartbeat=heartbeat, host=host,
                      owns_transport=owns_transport)
    service.add_reload_hook('cell list', refresher.reload_cells)
    return Scheduler(service=service, manager=manager, cache=cache, refresher=refresher,
                     writer=writer, api_engine=cells.api_engine,
                     failure_domain_levels=tuple(conf.scheduler.failure_domain_levels))
