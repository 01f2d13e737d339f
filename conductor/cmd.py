"""``cellplane-conductor``: start a super or a cell conductor daemon.

A cell conductor (``[conductor] role = cell``) holds its cell DB, its cell
bus and a Placement client (``[placement]``, required): it records its
agents' heartbeats, instance states and compute nodes, and reschedules
failed builds to their alternates (``conductor/cell/``). A super conductor
(``role = super``) holds the API database, the top-level bus and a Placement
client, and hands each boot from the API role to the scheduler and the
chosen cell (``conductor/super/``). Each role is built by its package's
``wiring`` module, as the embedded mode and the tests build it.

Rolling upgrade: upgrade the conductors before their clients; a conductor
still serves the 1.x conductor API of the previous release
(``conductor/legacy.py``).

Exit codes: 0 after a clean SIGTERM, 1 if work in flight outlived
``graceful_shutdown_timeout``, 2 for a configuration the operator must fix
(the message on stderr names the option and the file).
"""
from __future__ import annotations

import sys
from typing import NoReturn, Sequence

from cellplane import cell_guard, config
from cellplane.cells.databases import CellDatabases
from cellplane.db import engines, pools
from cellplane.db.engines import DatabaseNotConfigured
from cellplane.rpc import options as rpc_options
from cellplane.rpc.broker_errors import run_reporting_broker_errors
from cellplane.rpc.transport import TransportCache, TransportURLError, get_transport
from cellplane.service import exit_process
from conductor import conf as conductor_conf
from conductor.cell import wiring as cell_wiring
from conductor.super import wiring as super_wiring
from placement import client_conf

BINARY = 'cellplane-conductor'
EXIT_CONFIG_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        conf = config.load(argv, prog=BINARY, registrars=[
            conductor_conf.register_opts, client_conf.register_opts,
            rpc_options.register_opts])
        role = conf.conductor.role
        if role == conductor_conf.ROLE_SUPER:
            super_wiring.check_conf(conf, BINARY)
        if role == conductor_conf.ROLE_CELL:
            cell_guard.refuse_top_level_options(conf, 'the cell conductor')
            if not conf.database.connection:
                raise DatabaseNotConfigured(
                    'the cell conductor needs [database] connection (its cell '
                    f'database){config.describe_location(conf, "connection", "database")}')
            cell_wiring.check_conf(conf, BINARY)
        transport_url = rpc_options.require_transport_url(conf, BINARY)
        rpc_options.size_pools(conf)
        rpc_options.name_queues(conf, f'{BINARY}-{role}')
        transport = get_transport(transport_url, conf)
        placement = client_conf.client_from_conf(conf, BINARY)
    except (config.ConfigError, DatabaseNotConfigured, client_conf.PlacementNotConfigured,
            rpc_options.TransportNotConfigured, TransportURLError) as exc:
        print(f'{BINARY}: {exc}', file=sys.stderr)
        return EXIT_CONFIG_ERROR

    if role == conductor_conf.ROLE_CELL:
        return _run_cell(conf, transport, placement)
    return _run_super(conf, transport, placement)


# Idle connections the super conductor keeps beyond its pools' sizes, all its
# pools together (ARCHITECTURE.md, "Connection budget").
SUPER_IDLE_OVERFLOW = 8


def _run_cell(conf, transport, placement) -> int:
    engines.name_process(f'{BINARY} {conf.cell.name or "cell"}')
    engine = pools.own_cell_engine(conf)
    try:
        conductor = cell_wiring.build_cell_conductor(
            conf, transport=transport, engine=engine, placement=placement)
        return run_reporting_broker_errors(BINARY, conf, conductor.service.run)
    finally:
        engine.dispose()


def _run_super(conf, transport, placement) -> int:
    engines.name_process(f'{BINARY} super')
    # One per deployment, each thread going from the API database to a cell's and
    # back: idle connections kept instead of a backend opened per transaction.
    engines.keep_idle_overflow(SUPER_IDLE_OVERFLOW)
    api_engine = pools.api_engine(conf)
    cells = CellDatabases(api_engine, engine_factory=pools.cell_engine_factory(conf))
    cell_transports = TransportCache(conf)
    try:
        conductor = super_wiring.build_super_conductor(
            conf, transport=transport, api_engine=api_engine, cells=cells,
            cell_transport=cell_transports.get, placement=placement)
        return run_reporting_broker_errors(BINARY, conf, conductor.service.run)
    finally:
        cell_transports.cleanup()
        cells.dispose()
        api_engine.dispose()


def run() -> NoReturn:
    """The console script: ``main``'s exit code ends the process at once (``exit_process``)."""
    exit_process(main())


if __name__ == '__main__':
    run()
