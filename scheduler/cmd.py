"""``cellplane-scheduler``: start a scheduler worker daemon on the top-level bus.

It serves topic ``scheduler`` (``select_destinations``) with the filters and
weighers ``[filter_scheduler]`` names, claims in Placement (``[placement]``),
and reads the compute nodes of every enabled cell whose mapping is in the API
database (``[api_database] connection``) every ``[scheduler]
host_refresh_interval`` seconds. SIGHUP re-reads the list of cells. Several
workers may run at once, each its own process: Placement's generation checks
keep their claims from overcommitting a host.

Exit codes as for ``cellplane-conductor``: 0 after a clean SIGTERM, 1 if work
in flight outlived ``graceful_shutdown_timeout`` or the API database could not
be read at start, 2 for a configuration the operator must fix (the message on
stderr names the option).
"""
from __future__ import annotations

import json
import logging
import sys
from typing import Sequence

import sqlalchemy as sa

from cellplane import config
from cellplane.cells.databases import CellDatabases
from cellplane.db.engines import DatabaseNotConfigured, create_engine
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import TransportURLError, get_transport
from cellplane.service import Service
from placement import client_conf
from scheduler import conf as scheduler_conf
from scheduler import rpcapi
from scheduler.errors import UnknownPlugin
from scheduler.host_cache import HostStateCache
from scheduler.host_refresher import HostRefresher
from scheduler.instance_locator import PlacementInstanceLocator
from scheduler.manager import SchedulerManager
from scheduler.placement_adapter import PlacementAdapter
from scheduler.records.backend import RecordBackendError
from scheduler.records.loading import load_backend
from scheduler.records.writer import RecordWriter
from scheduler.trace import SchedulingTrace

LOG = logging.getLogger(__name__)
TRACE_LOG = logging.getLogger('scheduler.trace')

BINARY = 'cellplane-scheduler'
EXIT_API_DATABASE_UNREADABLE = 1
EXIT_CONFIG_ERROR = 2


def log_trace(trace: SchedulingTrace) -> None:
    """Each trace as one JSON line at DEBUG on logger ``scheduler.trace``."""
    if TRACE_LOG.isEnabledFor(logging.DEBUG):
        TRACE_LOG.debug('scheduling trace %s', json.dumps(trace.to_dict(), sort_keys=True))


def trace_sink(writer: RecordWriter | None):
    """The manager's trace sink: the DEBUG line, and the record queued for writing."""
    if writer is None:
        return log_trace

    def sink(trace: SchedulingTrace) -> None:
        log_trace(trace)
        writer.submit(trace)
    return sink


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        conf = config.load(argv, prog=BINARY, registrars=[
            scheduler_conf.register_opts, client_conf.register_opts,
            rpc_options.register_opts])
        if not conf.api_database.connection:
            raise DatabaseNotConfigured(
                'the scheduler needs [api_database] connection (it finds the '
                'cells and their databases through the cell mappings)'
                f'{config.describe_location(conf, "connection", "api_database")}')
        placement = client_conf.client_from_conf(conf, BINARY)
        transport_url = rpc_options.require_transport_url(conf, BINARY)
        rpc_options.size_pools(conf)
        backend = load_backend(conf)
        transport = get_transport(transport_url, conf)
    except (config.ConfigError, DatabaseNotConfigured, client_conf.PlacementNotConfigured,
            rpc_options.TransportNotConfigured, TransportURLError,
            RecordBackendError) as exc:
        print(f'{BINARY}: {exc}', file=sys.stderr)
        return EXIT_CONFIG_ERROR

    api_engine = create_engine(conf.api_database.connection)
    cells = CellDatabases(api_engine)
    cache = HostStateCache.from_conf(conf)
    refresher = HostRefresher(cache, cells,
                              service_down_time=conf.service.service_down_time,
                              interval=conf.scheduler.host_refresh_interval)
    adapter = PlacementAdapter(placement)
    writer = (RecordWriter(backend, queue_size=conf.scheduler.record_queue_size,
                           weighed_hosts=conf.scheduler.record_weighed_hosts)
              if backend is not None else None)
    try:
        manager = SchedulerManager.from_conf(
            conf, candidate_source=adapter, claimer=adapter, cache=cache,
            instance_locator=PlacementInstanceLocator(placement, cache),
            on_trace=trace_sink(writer))
    except UnknownPlugin as exc:
        print(f'{BINARY}: {exc}', file=sys.stderr)
        if writer is not None:
            writer.close()
        return EXIT_CONFIG_ERROR

    service = Service(conf, binary=BINARY, topic=rpcapi.TOPIC, transport=transport,
                      endpoints=[manager])
    service.add_reload_hook('cell list', refresher.reload_cells)
    try:
        failure = None
        try:
            # The cache is filled before the first request can arrive.
            refresher.start()
        except sa.exc.SQLAlchemyError as exc:
            failure = str(exc).splitlines()[0]
        if failure:
            # Logged outside the except block so oslo.log does not repeat it.
            LOG.error('Cannot read the cell mappings from the API database: %s', failure)
            print(f'{BINARY}: cannot read the cell mappings from the API database '
                  f'([api_database] connection): {failure}', file=sys.stderr)
            return EXIT_API_DATABASE_UNREADABLE
        return service.run()
    finally:
        refresher.stop()
        if writer is not None:
            writer.close()
            if writer.dropped or writer.failed:
                LOG.warning('Scheduling records: %d written, %d dropped (queue full), '
                            '%d failed to write', writer.written, writer.dropped,
                            writer.failed)
        cells.dispose()
        api_engine.dispose()


if __name__ == '__main__':
    sys.exit(main())
