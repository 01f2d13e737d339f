"""``cellplane-placement``: the Placement HTTP daemon.

    cellplane-placement --config-file placement.conf

Serves the API on ``[api] bind_host``:``[api] bind_port`` with granian
(``[api] workers`` processes of ``[api] worker_threads`` threads). Before
forking it checks the database schema (or migrates it when
``[placement_database] sync_on_startup``) and makes sure the standard
resource classes and traits are present; each worker then builds its own
engine, so no connection crosses a fork. SIGTERM stops gracefully, exit 0.
A configuration problem is reported on stderr with exit status 2. With
``[metrics] bind_port`` the main process serves the workers' request counts
at ``/metrics`` (``placement/metrics.py``).
"""
from __future__ import annotations

import functools
import logging
import sys

import sqlalchemy as sa

from cellplane import config
from cellplane.db import engines, migrate
from cellplane.wsgi import server
from placement import conf as placement_conf
from placement import metrics as placement_metrics

LOG = logging.getLogger(__name__)
EXIT_CONFIG = 2


class StartupError(Exception):
    """Something an operator must fix before the daemon can serve."""


def prepare_database(conf) -> None:
    """Schema present (or migrated) and standard classes/traits synced."""
    db = conf.placement_database
    try:
        engine = engines.create_engine(db.connection, pool_size=1, max_overflow=0)
    except engines.DatabaseNotConfigured:
        raise StartupError('[placement_database] connection is not set') from None
    except (sa.exc.ArgumentError, ImportError) as exc:
        raise StartupError(f'[placement_database] connection is invalid: {exc}') from None
    try:
        if db.sync_on_startup:
            migrate.sync('placement', engine)
        elif migrate.current_revision('placement', engine) is None:
            files = ' '.join(f'--config-file {f}' for f in conf.config_file) or '--config-file F'
            raise StartupError(
                'the Placement database has no schema: run `cellplane-manage db sync '
                f'--database placement {files}` first or set '
                '[placement_database] sync_on_startup = true')
        from placement.objects import standards
        standards.sync(engine)
    except sa.exc.OperationalError as exc:
        raise StartupError(f'cannot use the Placement database: {exc.orig}') from None
    finally:
        engine.dispose()


def serve(conf, argv: list[str]) -> None:
    """Serve HTTP with granian until SIGTERM or SIGINT (``cellplane/wsgi/server.py``)."""
    server.serve(conf.api, 'placement.wsgi:app_from_conf',
                 functools.partial(worker_app, list(argv)))


def worker_app(argv: list[str]):
    """Build a worker's WSGI app from the configuration files, then freeze
    the heap it leaves (``server.freeze_heap``: the thousands of objects a
    candidates answer allocates trigger a full collection every few requests)."""
    from oslo_config import cfg

    from placement import wsgi
    conf = config.load(argv, prog='cellplane-placement', conf=cfg.ConfigOpts(),
                       registrars=[placement_conf.register_opts])
    app = wsgi.app_from_conf(conf, sync_standards=False)
    server.freeze_heap()
    return app


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        conf = config.load(argv, prog='cellplane-placement',
                           registrars=[placement_conf.register_opts])
        placement_conf.check(conf)
        prepare_database(conf)
        # Before anything imports prometheus_client, and before the fork.
        metrics_endpoint = placement_metrics.start(conf)
    except (config.ConfigError, StartupError) as exc:
        print(f'cellplane-placement: {exc}', file=sys.stderr)
        return EXIT_CONFIG
    try:
        serve(conf, argv)
    finally:
        if metrics_endpoint is not None:
            metrics_endpoint.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
