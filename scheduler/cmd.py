"""``cellplane-scheduler``: start a scheduler worker daemon on the top-level bus.

It serves topic ``scheduler`` (``select_destinations``) with the filters and
weighers ``[filter_scheduler]`` names, claims in Placement (``[placement]``),
and reads the compute nodes of every enabled cell whose mapping is in the API
database (``[api_database] connection``) every ``[scheduler]
host_refresh_interval`` seconds. At start it records ``[scheduler]
failure_domain_levels`` in the API database (levels the existing failure
domains do not fit are a configuration error). SIGHUP re-reads the list of
cells. Several workers may run at once, each its own process: Placement's
generation checks keep their claims from overcommitting a host.

Exit codes as for ``cellplane-conductor``: 0 after a clean SIGTERM, 1 if work
in flight outlived ``graceful_shutdown_timeout`` or the API database could not
be read at start, 2 for a configuration the operator must fix (the message on
stderr names the option).
"""
from __future__ import annotations

import logging
import sys
from typing import NoReturn, Sequence

import sqlalchemy as sa

from cellplane import config
from cellplane.cells.databases import CellDatabases
from cellplane.db import engines, pools
from cellplane.db.engines import DatabaseNotConfigured
from cellplane.objects.failure_domains import FailureDomainError
from cellplane.rpc import options as rpc_options
from cellplane.rpc.broker_errors import run_reporting_broker_errors
from cellplane.rpc.transport import TransportURLError, get_transport
from cellplane.service import exit_process
from placement import client_conf
from scheduler import conf as scheduler_conf
from scheduler.errors import UnknownPlugin
from scheduler.failure_domains import LevelsNotRecorded
from scheduler.records.backend import RecordBackendError
from scheduler.records.loading import load_backend
from scheduler.wiring import BINARY, build_scheduler

LOG = logging.getLogger(__name__)

EXIT_API_DATABASE_UNREADABLE = 1
EXIT_CONFIG_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    engines.name_process(BINARY)    # before any engine: the records backend makes one
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
        rpc_options.name_queues(conf, BINARY)
        backend = load_backend(conf)
        transport = get_transport(transport_url, conf)
    except (config.ConfigError, DatabaseNotConfigured, client_conf.PlacementNotConfigured,
            rpc_options.TransportNotConfigured, TransportURLError,
            RecordBackendError) as exc:
        print(f'{BINARY}: {exc}', file=sys.stderr)
        return EXIT_CONFIG_ERROR

    api_engine = pools.api_engine(conf)
    cells = CellDatabases(api_engine, engine_factory=pools.cell_engine_factory(conf))
    try:
        scheduler = build_scheduler(conf, transport=transport, cells=cells,
                                    placement=placement, record_backend=backend)
    except UnknownPlugin as exc:
        print(f'{BINARY}: {exc}', file=sys.stderr)
        cells.dispose()
        api_engine.dispose()
        return EXIT_CONFIG_ERROR

    try:
        failure = None
        try:
            # The levels are recorded and the cache is filled before the
            # first request can arrive.
            scheduler.prepare()
        except FailureDomainError as exc:
            print(f'{BINARY}: [scheduler] failure_domain_levels: {exc}', file=sys.stderr)
            return EXIT_CONFIG_ERROR
        except LevelsNotRecorded as exc:
            LOG.error('%s', exc)
            print(f'{BINARY}: {exc}', file=sys.stderr)
            return EXIT_API_DATABASE_UNREADABLE
        except sa.exc.SQLAlchemyError as exc:
            failure = str(exc).splitlines()[0]
        if failure:
            # Logged outside the except block so oslo.log does not repeat it.
            LOG.error('Cannot read the cell mappings from the API database: %s', failure)
            print(f'{BINARY}: cannot read the cell mappings from the API database '
                  f'([api_database] connection): {failure}', file=sys.stderr)
            return EXIT_API_DATABASE_UNREADABLE
        return run_reporting_broker_errors(BINARY, conf, scheduler.service.run)
    finally:
        scheduler.close()
        cells.dispose()
        api_engine.dispose()


def run() -> NoReturn:
    """The console script: ``main``'s exit code ends the process at once (``exit_process``)."""
    exit_process(main())


if __name__ == '__main__':
    run()
