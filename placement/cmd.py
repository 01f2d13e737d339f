"""``cellplane-placement``: the Placement HTTP daemon.

    cellplane-placement --config-file placement.conf

Serves the API on ``[api] bind_host``:``[api] bind_port`` with gunicorn
(``[api] workers`` processes of ``[api] worker_threads`` threads). Before
forking it checks the database schema (or migrates it when
``[placement_database] sync_on_startup``) and makes sure the standard
resource classes and traits are present; each worker then builds its own
engine, so no connection crosses a fork. SIGTERM stops gracefully, exit 0.
A configuration problem is reported on stderr with exit status 2.
"""
from __future__ import annotations

import json
import logging
import sys

import gunicorn.app.base
import gunicorn.util
import sqlalchemy as sa

from cellplane import config
from cellplane.db import engines, migrate
from placement import auth
from placement import conf as placement_conf

LOG = logging.getLogger(__name__)
EXIT_CONFIG = 2


class StartupError(Exception):
    """Something an operator must fix before the daemon can serve."""


def _bind_address(host: str, port: int) -> str:
    return f'[{host}]:{port}' if ':' in host else f'{host}:{port}'


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
            raise StartupError(
                'the Placement database has no schema: run the placement '
                'migrations first or set [placement_database] sync_on_startup = true')
        from placement.objects import standards
        standards.sync(engine)
    except sa.exc.OperationalError as exc:
        raise StartupError(f'cannot use the Placement database: {exc.orig}') from None
    finally:
        engine.dispose()


class PlacementServer(gunicorn.app.base.BaseApplication):
    """gunicorn, embedded: our options, our app, no gunicorn command line."""

    def __init__(self, conf):
        self.conf = conf
        super().__init__(prog='cellplane-placement')

    def load_config(self):
        api = self.conf.api
        settings = {
            'bind': _bind_address(api.bind_host, api.bind_port),
            'workers': api.workers,
            'threads': api.worker_threads,
            'worker_class': 'gthread',
            'graceful_timeout': api.graceful_timeout,
            'keepalive': 30,
            'accesslog': None,
            'errorlog': '-',
            'loglevel': 'info',
            'proc_name': 'cellplane-placement',
            'preload_app': False,
        }
        if 'control_socket_disable' in self.cfg.settings:
            # gunicorn >= 25 opens a control socket at one fixed path per
            # user: two daemons on a host would fight over it.
            settings['control_socket_disable'] = True
        for key, value in settings.items():
            self.cfg.set(key, value)

    def load(self):
        # Runs in each worker after fork: the engine (and its pool) is the
        # worker's own.
        from placement import wsgi
        gunicorn.util.write_error = _write_json_error
        return wsgi.app_from_conf(self.conf, sync_standards=False)


def _write_json_error(sock, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's answer to a request it cannot even parse (a bad header, a
    bad Content-Length), in the API's JSON error format instead of HTML."""
    body = json.dumps({'errors': [{'status': status_int, 'title': reason,
                                   'detail': mesg}]}).encode()
    head = (f'HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n'
            f'Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n')
    gunicorn.util.write_nonblock(sock, head.encode('latin-1') + body)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        conf = config.load(argv, prog='cellplane-placement',
                           registrars=[placement_conf.register_opts])
        if conf.api.auth_strategy == 'tokens':
            # Read now so a bad token file stops the daemon before it forks.
            auth.make_authenticator('tokens', token_file=conf.api.token_file)
        prepare_database(conf)
    except (config.ConfigError, auth.TokenFileError, StartupError) as exc:
        print(f'cellplane-placement: {exc}', file=sys.stderr)
        return EXIT_CONFIG
    PlacementServer(conf).run()
    return 0


if __name__ == '__main__':
    sys.exit(main())
