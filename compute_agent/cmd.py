"""``cellplane-compute``: start a compute agent daemon.

It serves topic ``compute`` as server ``[DEFAULT] host`` and casts its
heartbeat to its cell conductor every ``[service] report_interval``, once
the conductor has answered a ping (it waits for it at start). It holds
no database credentials: it refuses to start with ``[database] connection``
or with any top-level option. Exit codes as for ``cellplane-conductor``.
"""
from __future__ import annotations

import logging
import sys
from typing import Sequence

from cellplane import cell_guard, config
from cellplane.context import new_context
from cellplane.heartbeat import current_status
from cellplane.rpc import options as rpc_options
from cellplane.rpc.client import InvalidVersionCap
from cellplane.rpc.transport import TransportURLError, get_transport
from cellplane.service import Service
from compute_agent import conf as compute_conf
from compute_agent import rpcapi
from compute_agent.manager import ComputeManager
from conductor.rpcapi import ConductorAPI

LOG = logging.getLogger(__name__)

BINARY = 'cellplane-compute'
EXIT_CONFIG_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        conf = config.load(argv, prog=BINARY, registrars=[
            compute_conf.register_opts, rpc_options.register_opts])
        cell_guard.refuse_database_credentials(conf, 'the compute agent')
        transport_url = rpc_options.require_transport_url(conf, BINARY)
        rpc_options.size_pools(conf)
        transport = get_transport(transport_url, conf)
        conductor = ConductorAPI(transport, conf=conf)
    except (config.ConfigError, rpc_options.TransportNotConfigured,
            TransportURLError, InvalidVersionCap) as exc:
        print(f'{BINARY}: {exc}', file=sys.stderr)
        return EXIT_CONFIG_ERROR

    # Heartbeats cast before the conductor's queue exists are lost; waiting
    # also tells the operator, in this agent's log, what it is waiting for.
    pong = conductor.wait_until_answering(new_context(), attempt_timeout=3)
    LOG.info('Cell conductor %s on %s answered; starting', pong.binary, pong.host)

    def heartbeat() -> None:
        conductor.service_heartbeat(
            new_context(), current_status(conf, binary=BINARY, topic=rpcapi.TOPIC))

    service = Service(conf, binary=BINARY, topic=rpcapi.TOPIC, transport=transport,
                      endpoints=[ComputeManager()], heartbeat=heartbeat)
    return service.run()


if __name__ == '__main__':
    sys.exit(main())
