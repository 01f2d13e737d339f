"""``cellplane-api``: the compute API daemon (Nova's v2.1 API over the API role).

    cellplane-api --config-file api.conf

Serves on ``[api] bind_host``:``[api] bind_port`` (127.0.0.1:8774) with
granian, as ``cellplane-placement`` does (``cellplane/wsgi/server.py``):
``[api] workers`` processes, each building its own API database engine,
cell database engines and top-level transport. A configuration problem is
reported on stderr with exit status 2. With ``[metrics] bind_port`` the
main process serves the workers' request counts at ``/metrics``.
"""
from __future__ import annotations

import functools
import sys

from cellplane import config
from cellplane.wsgi import metrics, server
from cellplane_api import service_conf

EXIT_CONFIG = 2
# A list of 1,000 detailed servers keeps about 10,000 new containers alive
# while it is built (rows, Servers, documents): at Python's default of 700 the
# collector ran about 15 young and 1-2 middle collections per list, each
# walking the answer under construction and freeing nothing, 3-4 ms of its
# CPU. What a request allocates is freed by reference counting when it is
# answered, so at 50,000 a collection is rare and finds the garbage cycles.
YOUNG_COLLECTION_THRESHOLD = 50_000


def app_from_conf(conf):
    """The WSGI app over the databases and buses ``conf`` names."""
    from cellplane.cells.databases import CellDatabases
    from cellplane.db import engines, pools
    from cellplane.rpc import options as rpc_options
    from cellplane.rpc.transport import TransportCache, get_transport
    from cellplane_api import policy, quota_drivers, wsgi
    from cellplane_api.image_catalog import ImageCatalog
    from cellplane_api.request import Services
    from compute_agent.rpcapi import ComputeAPI
    from conductor.super.rpcapi import SuperConductorAPI
    from placement import client_conf

    engines.name_process('cellplane-api')
    api_engine = pools.api_engine(conf)
    timeout = conf.cells.read_timeout
    cells = CellDatabases(api_engine, engine_factory=pools.cell_engine_factory(
        conf, connect_timeout=timeout))
    cells.reload()
    transport = get_transport(rpc_options.require_transport_url(conf, 'cellplane-api'), conf)
    transports = TransportCache(conf)
    placement = client_conf.client_from_conf(conf, 'cellplane-api')
    # One [quota] driver: servers are checked in it, and it is the server groups' quota.
    quota_driver = quota_drivers.from_conf(conf, api_engine, placement)
    services = Services(
        api_engine=api_engine, cells=cells, conductor=SuperConductorAPI(transport, conf=conf),
        compute_api_for=lambda cell: ComputeAPI(transports.get(cell.transport_url), conf=conf),
        enforcer=policy.PolicyEnforcer(conf), cell_timeout=timeout,
        max_body_size=conf.api.max_request_body_size,
        placement=placement, group_quota=quota_driver, quotas=quota_driver,
        service_down_time=conf.service.service_down_time,
        default_zone=conf.default_availability_zone,
        internal_zone=conf.internal_service_availability_zone,
        images=ImageCatalog(service_conf.images_path(conf)))
    return wsgi.make_app(services, conf=conf, count_requests=bool(conf.metrics.bind_port))


def worker_app(argv: list[str]):
    """One worker's app, from the configuration files; its heap frozen afterwards."""
    # The global ConfigOpts, read again in the worker (SIGHUP respawns workers,
    # so a changed file is picked up): oslo.messaging's RPC clients read their
    # tracing options from it, as in every cellplane process that casts.
    conf = config.load(argv, prog='cellplane-api', registrars=[service_conf.register_opts])
    app = app_from_conf(conf)
    settle_heap()
    return app


def settle_heap() -> None:
    """The worker's heap once its app is built: frozen, young collections rarer."""
    server.freeze_heap(young_threshold=YOUNG_COLLECTION_THRESHOLD)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        conf = config.load(argv, prog='cellplane-api', registrars=[service_conf.register_opts])
        service_conf.check(conf)
        metrics_endpoint = metrics.start(conf, 'api')
    except config.ConfigError as exc:
        print(f'cellplane-api: {exc}', file=sys.stderr)
        return EXIT_CONFIG
    try:
        server.serve(conf.api, 'cellplane_api.cmd:app_from_conf',
                     functools.partial(worker_app, list(argv)))
    finally:
        if metrics_endpoint is not None:
            metrics_endpoint.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
