"""``cellplane-compute``: start a compute agent daemon.

It serves topic ``compute`` as server ``[DEFAULT] host`` (builds and
terminations cast by conductors), or, with ``[compute] hosted_hosts = N``
(N > 1, fake driver only), as a hollow agent serving N hosts named
``<host>-1..N`` (``compute_agent/hosted_host.py``), casts its heartbeat to its cell conductor
every ``[service] report_interval``, and reports its node every ``[compute]
report_interval`` (resource provider, inventory and traits in Placement;
the compute node record to its cell conductor), once the conductor has
answered a ping (it waits for it at start). It holds no database
credentials: it refuses to start with ``[database] connection`` or with any
top-level option. Exit codes as for ``cellplane-conductor``; a missing
``[placement] endpoint_url`` or an unknown ``[compute] virt_driver`` is a
configuration error (exit 2).
"""
from __future__ import annotations

import logging
import sys
from typing import NoReturn, Sequence

from cellplane import cell_guard, config
from cellplane.context import new_context
from cellplane.rpc import options as rpc_options
from cellplane.rpc.broker_errors import run_reporting_broker_errors
from cellplane.rpc.client import InvalidVersionCap
from cellplane.rpc.transport import TransportURLError, get_transport
from cellplane.service import exit_process
from compute_agent import conf as compute_conf
from compute_agent.virt import driver as virt_driver
from compute_agent.virt.fake import FakeDriver
from compute_agent.wiring import BINARY, build_compute_agent
from conductor.cell.rpcapi import CellConductorAPI
from placement import client_conf

LOG = logging.getLogger(__name__)

EXIT_CONFIG_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        conf = config.load(argv, prog=BINARY, registrars=[
            compute_conf.register_opts, rpc_options.register_opts])
        cell_guard.refuse_database_credentials(conf, 'the compute agent')
        transport_url = rpc_options.require_transport_url(conf, BINARY)
        rpc_options.size_pools(conf)
        rpc_options.name_queues(conf, BINARY)
        transport = get_transport(transport_url, conf)
        conductor = CellConductorAPI(transport, conf=conf)
        placement = client_conf.client_from_conf(conf, 'the compute agent')
        driver = virt_driver.load(conf.compute.virt_driver, conf=conf)
        config.check_values(conf)   # the driver's own options, now registered
        if conf.compute.hosted_hosts > 1 and conf.compute.virt_driver != 'fake':
            raise config.ConfigError(
                f'[compute] hosted_hosts = {conf.compute.hosted_hosts} needs '
                f'[compute] virt_driver = fake (a hollow agent runs fake hosts); '
                f'it is {conf.compute.virt_driver!r}')
    except (config.ConfigError, rpc_options.TransportNotConfigured,
            TransportURLError, InvalidVersionCap, client_conf.PlacementNotConfigured,
            virt_driver.UnknownVirtDriver) as exc:
        print(f'{BINARY}: {exc}', file=sys.stderr)
        return EXIT_CONFIG_ERROR

    def serve() -> int:
        # Casts sent before the conductor's queue exists are lost; waiting
        # also tells the operator, in this agent's log, what it is waiting for.
        pong = conductor.wait_until_answering(new_context(), attempt_timeout=3)
        LOG.info('Cell conductor %s on %s answered; starting', pong.binary, pong.host)
        if conf.compute.hosted_hosts > 1:
            def driver_for(host: str):
                return FakeDriver.for_host(conf, host)
        else:
            def driver_for(host: str):
                return driver
        agent = build_compute_agent(conf, transport=transport, placement=placement,
                                    conductor=conductor, driver_for=driver_for)
        if len(agent.hosts) == 1:
            LOG.info('Compute node %s has resource provider %s', agent.host,
                     agent.node_uuid)
        else:
            LOG.info('Hollow compute agent %s serves %d hosts: %s ... %s', agent.name,
                     len(agent.hosts), agent.host, list(agent.hosts)[-1])
        return agent.service.run()
    return run_reporting_broker_errors(BINARY, conf, serve)


def run() -> NoReturn:
    """The console script: ``main``'s exit code ends the process at once (``exit_process``)."""
    exit_process(main())


if __name__ == '__main__':
    run()
