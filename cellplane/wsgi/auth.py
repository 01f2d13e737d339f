"""keystonemiddleware's auth_token in front of an HTTP daemon, except for the paths anyone may read.

    app = keystone_auth(app, conf, open_paths=frozenset(('', '/')))

auth_token, configured by ``conf``'s ``[keystone_authtoken]``, validates
X-Auth-Token before the app sees a request, drops any identity header the
client sent and sets them from the token; a request for one of
``open_paths`` (version discovery) goes straight to the app.
"""
from __future__ import annotations

import functools

import webob.exc
from keystonemiddleware import auth_token
from keystonemiddleware.auth_token import _request as auth_request
from oslo_config import cfg
from webob import headers as webob_headers


@functools.lru_cache(maxsize=512)
def _environ_key(name: str) -> str:
    """A header's key in the WSGI environ (``X-Roles`` -> ``HTTP_X_ROLES``), as webob makes it."""
    return webob_headers._trans_name(name)


class _EnvironHeaders(webob_headers.EnvironHeaders):
    """webob's view of the environ's headers, each name's key worked out once, ``get`` and ``pop`` a dict's.

    auth_token reads, sets and removes about seventy headers per request
    through this view; webob's own upper-cased and rewrote the name every
    time, and its ``pop`` and ``get`` (MutableMapping's) raised and caught a
    KeyError for every header that was not there.
    """

    def __getitem__(self, name):
        return self.environ[_environ_key(name)]

    def __setitem__(self, name, value):
        self.environ[_environ_key(name)] = value

    def __delitem__(self, name):
        del self.environ[_environ_key(name)]

    def __contains__(self, name):
        return _environ_key(name) in self.environ

    def get(self, name, default=None):
        return self.environ.get(_environ_key(name), default)

    def pop(self, name, *default):
        return self.environ.pop(_environ_key(name), *default)


class _AuthTokenRequest(auth_request._AuthTokenRequest):
    """auth_token's request, its headers read and written through ``_EnvironHeaders``."""

    # Every identity header a caller could fake, as auth_token lists them, by environ key.
    _AUTH_KEYS = tuple(_environ_key(name) for name in
                       auth_request._AuthTokenRequest._all_auth_headers(
                           auth_request._AuthTokenRequest))

    def _fast_headers(self):
        if self._headers is None:
            self._headers = _EnvironHeaders(self.environ)
        return self._headers

    headers = property(_fast_headers, auth_request._AuthTokenRequest.headers.fset)

    def remove_auth_headers(self):
        environ = self.environ
        for key in self._AUTH_KEYS:
            environ.pop(key, None)


class OpenPathsAuthProtocol(auth_token.AuthProtocol):
    """auth_token, except for ``open_paths``; its request handling without webob's wsgify.

    keystonemiddleware's own ``__call__`` is webob's ``wsgify``: around
    every request it built a webob request, an empty response, the app's
    answer as a second response and a merge of their cookies, to pass the
    app's answer through unchanged. Here its ``process_request`` (the
    token's validation, the identity headers) and ``process_response`` (a
    401's ``WWW-Authenticate``) run as they do there, and the app answers
    the server directly: about a third of auth_token's CPU per request.
    Its request reads and writes the headers as a dict does
    (``_AuthTokenRequest``): about half of what was left.
    """

    def __init__(self, app, conf: dict, open_paths: frozenset[str]):
        self._inner_app = app
        self._open_paths = open_paths
        super().__init__(app, conf)

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '') in self._open_paths:
            return self._inner_app(environ, start_response)
        # auth_token's own request class, its headers read as a dict (a private module of
        # keystonemiddleware; tests/unit/test_wsgi_auth.py compares the two paths).
        req = _AuthTokenRequest(environ)
        try:
            refused = self.process_request(req)
        except webob.exc.HTTPException as exc:      # 401, 503: what wsgify answers
            return exc(environ, start_response)
        if refused is not None:
            return refused(environ, start_response)

        def answered(status, headers, exc_info=None):
            if status.startswith('401'):
                headers = list(headers) + self._reject_auth_headers
            return start_response(status, headers, exc_info)
        try:
            return self._app(environ, answered)
        except webob.exc.HTTPException as exc:      # answered as wsgify does (as it is)
            return exc(environ, start_response)


def keystone_auth(app, conf: cfg.ConfigOpts, open_paths: frozenset[str]):
    """``app`` behind auth_token, configured by ``conf``'s ``[keystone_authtoken]``."""
    return OpenPathsAuthProtocol(app, {'oslo_config_config': conf}, open_paths)
