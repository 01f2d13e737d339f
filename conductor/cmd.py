"""``cellplane-conductor``: start a super or a cell conductor daemon.

A cell conductor (``[conductor] role = cell``) holds its cell DB, its cell
bus and a Placement client (``[placement]``, required): it records its
agents' heartbeats, instance states and compute nodes, and reschedules
failed builds to their alternates (conductor/cell_manager.py).

Exit codes: 0 after a clean SIGTERM, 1 if work in flight outlived
``graceful_shutdown_timeout``, 2 for a configuration the operator must fix
(the message on stderr names the option and the file).
"""
from __future__ import annotations

import sys
from typing import Sequence

from cellplane import cell_guard, config
from cellplane.db.engines import DatabaseNotConfigured, create_engine
from cellplane.heartbeat import current_status
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import TransportURLError, get_transport
from cellplane.service import Service
from conductor import conf as conductor_conf
from conductor import cell_wiring, rpcapi, service_records, super_wiring
from conductor.manager import ConductorManager
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
        transport = get_transport(transport_url, conf)
    except (config.ConfigError, DatabaseNotConfigured, client_conf.PlacementNotConfigured,
            rpc_options.TransportNotConfigured, TransportURLError) as exc:
        print(f'{BINARY}: {exc}', file=sys.stderr)
        return EXIT_CONFIG_ERROR

    cell_engine = None
    heartbeat = None
    if role == conductor_conf.ROLE_CELL:
        cell_engine = create_engine(conf.database.connection,
                                    pool_size=conf.database.pool_size,
                                    max_overflow=conf.database.max_overflow)

        def heartbeat() -> None:
            # The cell conductor is in its own cell DB's services table too.
            service_records.record_heartbeat(
                cell_engine, current_status(conf, binary=BINARY, topic=rpcapi.TOPIC))

    endpoints = [ConductorManager(role=role, cell_engine=cell_engine)]
    super_parts = None
    if role == conductor_conf.ROLE_SUPER:
        super_parts = super_wiring.build(conf, transport, BINARY)
        endpoints.append(super_parts.manager)
    if role == conductor_conf.ROLE_CELL:
        endpoints.append(cell_wiring.build(conf, transport, cell_engine, BINARY))
    service = Service(conf, binary=BINARY, topic=rpcapi.TOPIC, transport=transport,
                      endpoints=endpoints, heartbeat=heartbeat)
    try:
        return service.run()
    finally:
        if cell_engine is not None:
            cell_engine.dispose()
        if super_parts is not None:
            super_parts.close()


if __name__ == '__main__':
    sys.exit(main())
