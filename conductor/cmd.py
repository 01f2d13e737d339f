"""``cellplane-conductor``: start a super or a cell conductor daemon.

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
from conductor import rpcapi, service_records
from conductor.manager import ConductorManager

BINARY = 'cellplane-conductor'
EXIT_CONFIG_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        conf = config.load(argv, prog=BINARY, registrars=[
            conductor_conf.register_opts, rpc_options.register_opts])
        role = conf.conductor.role
        if role == conductor_conf.ROLE_CELL:
            cell_guard.refuse_top_level_options(conf, 'the cell conductor')
            if not conf.database.connection:
                raise DatabaseNotConfigured(
                    'the cell conductor needs [database] connection (its cell '
                    f'database){config.describe_location(conf, "connection", "database")}')
        transport_url = rpc_options.require_transport_url(conf, BINARY)
        rpc_options.size_pools(conf)
        transport = get_transport(transport_url, conf)
    except (config.ConfigError, DatabaseNotConfigured,
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

    service = Service(conf, binary=BINARY, topic=rpcapi.TOPIC, transport=transport,
                      endpoints=[ConductorManager(role=role, cell_engine=cell_engine)],
                      heartbeat=heartbeat)
    try:
        return service.run()
    finally:
        if cell_engine is not None:
            cell_engine.dispose()


if __name__ == '__main__':
    sys.exit(main())
