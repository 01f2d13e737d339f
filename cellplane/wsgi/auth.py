"""keystonemiddleware's auth_token in front of an HTTP daemon, except for the paths anyone may read.

    app = keystone_auth(app, conf, open_paths=frozenset(('', '/')))

auth_token, configured by ``conf``'s ``[keystone_authtoken]``, validates
X-Auth-Token before the app sees a request, drops any identity header the
client sent and sets them from the token; a request for one of
``open_paths`` (version discovery) goes straight to the app.
"""
from __future__ import annotations

from keystonemiddleware import auth_token
from oslo_config import cfg


class OpenPathsAuthProtocol(auth_token.AuthProtocol):
    """auth_token, except for ``open_paths``."""

    def __init__(self, app, conf: dict, open_paths: frozenset[str]):
        self._inner_app = app
        self._open_paths = open_paths
        super().__init__(app, conf)

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '') in self._open_paths:
            return self._inner_app(environ, start_response)
        return super().__call__(environ, start_response)


def keystone_auth(app, conf: cfg.ConfigOpts, open_paths: frozenset[str]):
    """``app`` behind auth_token, configured by ``conf``'s ``[keystone_authtoken]``."""
    return OpenPathsAuthProtocol(app, {'oslo_config_config': conf}, open_paths)
