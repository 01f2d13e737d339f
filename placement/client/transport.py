"""How the Placement client reaches Placement: over HTTP (``urllib3`` or a keystoneauth1 adapter), or in-process.

Every transport sends one request and returns a ``Response`` (status and
decoded JSON). ``HttpTransport`` and ``KeystoneTransport`` retry a
connection failure or a 503 with exponential backoff, then raise
``PlacementUnreachable``, and report each attempt to ``cellplane.outage``
(one WARNING when Placement stops answering, one INFO when it is back);
``InProcessTransport`` hands WebOb requests
straight to ``placement.wsgi.make_app`` and retries its 503s the same way;
``CountedTransport`` counts and times each request (``cellplane.metrics``).
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

import requests
import tenacity
import urllib3
from keystoneauth1 import exceptions as ks_exc

from cellplane import metrics, outage
from placement.client.errors import PlacementUnreachable

MICROVERSION = '1.39'
# Connections kept to Placement per process: about the threads that send at once.
POOL_SIZE = 16


@dataclass(frozen=True)
class Response:
    status: int
    body: Any   # decoded JSON, or None

    def error(self) -> tuple[str, str | None]:
        try:
            err = self.body['errors'][0]
            return err.get('detail', ''), err.get('code')
        except (TypeError, KeyError, IndexError):
            return str(self.body), None


class Transport(Protocol):
    def request(self, method: str, path: str, body: Any = None,
                microversion: str = MICROVERSION) -> Response: ...


class RetryingTransport:
    """What both HTTP transports share: one request retried while Placement is away.

    A subclass says how one attempt is sent (``_send``) and which of its
    library's errors mean "unreachable" and "TLS refused"; this class
    retries, reports each attempt to ``cellplane.outage`` and words the
    error. ``base_url`` is what the messages name.
    """

    # What "Placement cannot be reached" looks like to the HTTP library a
    # subclass sends with (each sets its own).
    unreachable: tuple[type[Exception], ...] = ()
    # A TLS handshake that failed (a certificate not signed by the CA we
    # trust, a wrong host name): a configuration to fix, not an outage to wait out.
    tls_failures: tuple[type[Exception], ...] = ()

    def __init__(self, base_url: str, *, attempts: int | None = 5, max_wait: float = 2.0,
                 retry_timeout: float | None = None):
        self.base_url = base_url.rstrip('/')
        stops = []
        if attempts is not None:
            stops.append(tenacity.stop_after_attempt(attempts))
        if retry_timeout is not None:
            stops.append(tenacity.stop_after_delay(retry_timeout))
        stop = stops[0] if len(stops) == 1 else tenacity.stop_any(*stops)
        self._retrying = tenacity.Retrying(
            retry=(tenacity.retry_if_exception(self._transient)
                   | tenacity.retry_if_result(lambda resp: resp.status_code == 503)),
            stop=stop,
            wait=tenacity.wait_exponential(multiplier=0.05, max=max_wait),
            retry_error_callback=_last_outcome)
        self._outage = outage.dependency('Placement', self.base_url)

    def request(self, method, path, body=None, microversion=MICROVERSION) -> Response:
        headers = {'accept': 'application/json',
                   'openstack-api-version': f'placement {microversion}'}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers['content-type'] = 'application/json'
        began = time.monotonic()
        retrying = self._retrying.copy()
        try:
            resp = retrying(self._attempt, method, path, data, headers)
        except self.tls_failures as exc:
            raise PlacementUnreachable(
                f'placement at {self.base_url} unreachable: TLS {_why(exc)} (is its '
                f'certificate signed by the CA of [placement] cafile?)') from exc
        except self.unreachable as exc:
            attempts = retrying.statistics.get('attempt_number', 1)
            raise PlacementUnreachable(
                f'placement at {self.base_url} unreachable after {attempts} '
                f'attempt(s) in {time.monotonic() - began:.1f} s: {_why(exc)}') from exc
        return Response(resp.status_code, _json_body(resp))

    def _transient(self, exc: BaseException) -> bool:
        return isinstance(exc, self.unreachable) and not isinstance(exc, self.tls_failures)

    def _attempt(self, method: str, path: str, data: str | None, headers: dict):
        """``_send``, reporting whether Placement answered to the process's outage state."""
        try:
            resp = self._send(method, path, data, headers)
        except (*self.unreachable, *self.tls_failures) as exc:
            self._outage.failed(_why(exc))
            raise
        if resp.status_code == 503:
            self._outage.failed('503 Service Unavailable')
        else:
            self._outage.answered()
        return resp

    def _send(self, method: str, path: str, data: str | None, headers: dict):
        raise NotImplementedError


class HttpTransport(RetryingTransport):
    """Placement over HTTP with ``urllib3``; retries while Placement is away.

    A connection refused or timed out, or a 503 (Placement restarting, or
    out of database connections), is retried with exponential backoff
    (0.05 s doubling up to ``max_wait``) until ``attempts`` were made or
    ``retry_timeout`` seconds went by, whichever comes first (``None``: no
    bound of that kind). Then a connection failure raises
    ``PlacementUnreachable`` with one line naming Placement, how long and
    why; a last 503 is returned as Placement gave it. A certificate that
    does not verify (``verify``: the CA file, or False) is not retried:
    ``PlacementUnreachable`` at once, naming TLS and what failed.
    ``token`` and ``roles`` (sent as ``X-Roles``) are noauth2's identity.

    What ``requests`` would do, read once here: the proxy for Placement's
    URL from the environment (unless ``NO_PROXY`` names it) and the CA
    bundle (``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE``, else certifi's).
    ``requests`` is not used to send: its per-request work (preparing,
    merging settings, hooks) was half of a GET's CPU in the client, in
    every daemon, and a scheduler sends several per request.
    """

    unreachable = (urllib3.exceptions.TimeoutError, urllib3.exceptions.ProtocolError,
                   urllib3.exceptions.ProxyError)
    tls_failures = (urllib3.exceptions.SSLError,)

    def __init__(self, base_url: str, *, token: str = 'admin',
                 roles: list[str] | None = None,
                 timeout: float = 30.0, attempts: int | None = 5, max_wait: float = 2.0,
                 retry_timeout: float | None = None, verify: bool | str = True,
                 cert: str | tuple[str, str] | None = None):
        super().__init__(base_url, attempts=attempts, max_wait=max_wait,
                         retry_timeout=retry_timeout)
        self.token = token
        # noauth2's identity: the token, and the roles asserted (X-Roles), if any.
        self._identity = {'x-auth-token': token}
        if roles:
            self._identity['x-roles'] = ','.join(roles)
        self.timeout = timeout
        self.proxies = requests.utils.get_environ_proxies(self.base_url)
        if verify is True:
            verify = (os.environ.get('REQUESTS_CA_BUNDLE') or os.environ.get('CURL_CA_BUNDLE')
                      or True)
        self.verify = verify
        self.cert = cert
        self.pool = _pool_manager(self.base_url, self.proxies, timeout, verify, cert)
        # Without a proxy, one host: its pool is asked directly, with the
        # path alone. A PoolManager would parse the URL and look the pool up
        # again at every request (about a tenth of a request's CPU here).
        self._path_prefix = (urlsplit(self.base_url).path
                             if isinstance(self.pool, urllib3.HTTPConnectionPool) else None)

    def _send(self, method: str, path: str, data: str | None, headers: dict):
        """One attempt: the answer's status and body (``_Answer``)."""
        headers = {**headers, **self._identity}
        if self._path_prefix is None:
            return _Answer(self.pool.request(method, self.base_url + path, body=data,
                                             headers=headers))
        return _Answer(self.pool.urlopen(method, self._path_prefix + path, body=data,
                                         headers=headers, retries=False, redirect=False,
                                         assert_same_host=False))


def _pool_manager(base_url: str, proxies: dict[str, str], timeout: float,
                  verify: bool | str, cert: str | tuple[str, str] | None):
    """urllib3's connections to ``base_url`` (its pool, or a proxy's manager), set as ``requests`` would.

    TLS and the proxy are taken as ``requests`` takes them.

    No retries and no redirects: ``RetryingTransport`` retries, and
    Placement does not redirect (a 3xx is returned as it came). A CA or
    certificate file that does not exist is refused here, in one line, not
    retried at every request as an outage (https only: plain http reads none).
    """
    options: dict[str, Any] = {
        'retries': False, 'timeout': urllib3.Timeout(connect=timeout, read=timeout),
        'maxsize': POOL_SIZE}
    if base_url.startswith('https:'):
        files = [verify] if isinstance(verify, str) else []
        files += [cert] if isinstance(cert, str) else list(cert or ())
        for path in files:
            if not os.path.exists(path):
                raise FileNotFoundError(f'TLS file for Placement at {base_url} not found: '
                                        f'{path}')
        if verify is False:
            options['cert_reqs'] = 'CERT_NONE'
        else:
            options['cert_reqs'] = 'CERT_REQUIRED'
            bundle = requests.certs.where() if verify is True else verify
            options['ca_cert_dir' if os.path.isdir(bundle) else 'ca_certs'] = bundle
        if isinstance(cert, str):
            options['cert_file'] = cert
        elif cert is not None:
            options['cert_file'], options['key_file'] = cert
    proxy = proxies.get(urlsplit(base_url).scheme) or proxies.get('all')
    if proxy:
        # The proxy's credentials in its URL (http://user:pw@proxy:3128), sent
        # as requests sends them: urllib3 sends only the headers it is given.
        user, password = requests.utils.get_auth_from_url(proxy)
        headers = (urllib3.make_headers(proxy_basic_auth=f'{user}:{password}')
                   if user else None)
        return urllib3.ProxyManager(proxy, proxy_headers=headers, **options)
    return urllib3.connection_from_url(base_url, **options)


class _Answer:
    """What ``RetryingTransport`` reads of an answer: its status and body."""

    __slots__ = ('status_code', 'content')

    def __init__(self, resp) -> None:
        self.status_code = resp.status
        self.content = resp.data

    @property
    def text(self) -> str:
        return self.content.decode('utf-8', errors='replace')

    def json(self) -> Any:
        return json.loads(self.content)


class KeystoneTransport(RetryingTransport):
    """Placement over HTTP as a Keystone user: a keystoneauth1 adapter gets,
    caches and renews the token (once more on a 401), and finds Placement
    in the service catalog unless it was given its URL. Retries as
    ``HttpTransport``; the adapter's session (its TLS options, its proxies)
    sends each attempt."""

    unreachable = (ks_exc.ConnectFailure, ks_exc.ConnectTimeout)
    tls_failures = (ks_exc.SSLError,)

    def __init__(self, adapter, *, attempts: int | None = 5, max_wait: float = 2.0,
                 retry_timeout: float | None = None):
        where = adapter.endpoint_override or f'the catalog\'s {adapter.service_type} endpoint'
        super().__init__(where, attempts=attempts, max_wait=max_wait,
                         retry_timeout=retry_timeout)
        self.adapter = adapter

    def _send(self, method: str, path: str, data: str | None, headers: dict):
        return self.adapter.request(path, method, data=data, headers=headers,
                                    raise_exc=False)


def _last_outcome(state: tenacity.RetryCallState):
    """When retrying stops: raise the last exception, or return the last response."""
    if state.outcome.failed:
        raise state.outcome.exception()
    return state.outcome.result()


def _json_body(resp) -> Any:
    if not resp.content:
        return None
    try:
        return resp.json()
    except ValueError:
        # A proxy's or server's own error page (a 503 while restarting).
        return {'errors': [{'status': resp.status_code,
                            'detail': resp.text.strip()[:200]}]}


_ERRNO = re.compile(r'\[Errno -?\d+\] ([^\'"\)]+)')
# OpenSSL's reason, as Python's ssl module words it.
_SSL_REASON = re.compile(r'\[SSL: [A-Z_]+\] ([^\'"(]+)')


def _why(exc: Exception) -> str:
    """``Connection refused``, ``timed out``: the reason without the URL-laden chain."""
    # urllib3's refused connection is a ConnectTimeoutError too (for its own
    # backward compatibility): worded by its errno below.
    if (isinstance(exc, (ks_exc.ConnectTimeout, urllib3.exceptions.TimeoutError))
            and not isinstance(exc, urllib3.exceptions.NewConnectionError)):
        return 'timed out'
    found = _SSL_REASON.search(str(exc))
    if found:
        return found.group(1).strip()
    found = _ERRNO.search(str(exc))
    if found:
        return found.group(1).strip()
    # A connection dropped: ('Connection aborted.', ConnectionResetError(104, '...')).
    for arg in getattr(exc, 'args', ()):
        if isinstance(arg, OSError):
            return arg.strerror or str(arg) or type(arg).__name__
    return type(exc).__name__


class InProcessTransport:
    """Placement without a socket: WebOb requests into the WSGI app.

    A 503 (Placement's database busy) is retried as ``HttpTransport`` does:
    exponential backoff from 0.05 s, at most ``attempts`` tries; the last
    503 is returned as Placement gave it.
    """

    def __init__(self, app, *, token: str = 'admin', roles: list[str] | None = None,
                 attempts: int = 8, max_wait: float = 2.0):
        self.app = app
        self.token = token
        self.roles = roles
        self._retrying = tenacity.Retrying(
            retry=tenacity.retry_if_result(lambda resp: resp.status == 503),
            stop=tenacity.stop_after_attempt(attempts),
            wait=tenacity.wait_exponential(multiplier=0.05, max=max_wait),
            retry_error_callback=_last_outcome)

    def request(self, method, path, body=None, microversion=MICROVERSION) -> Response:
        return self._retrying.copy()(self._request_once, method, path, body, microversion)

    def _request_once(self, method, path, body, microversion) -> Response:
        import webob
        req = webob.Request.blank(path, method=method)
        req.headers['x-auth-token'] = self.token
        if self.roles:
            req.headers['x-roles'] = ','.join(self.roles)
        req.headers['accept'] = 'application/json'
        req.headers['openstack-api-version'] = f'placement {microversion}'
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        resp = req.get_response(self.app)
        return Response(resp.status_int, json.loads(resp.body) if resp.body else None)


class CountedTransport:
    """A transport whose every request is counted and timed (``cellplane.metrics``)."""

    def __init__(self, transport: Transport) -> None:
        self.inner = transport

    def request(self, method, path, body=None, microversion=MICROVERSION) -> Response:
        route = metrics.route_of(path)
        started = time.monotonic()
        try:
            response = self.inner.request(method, path, body, microversion)
        except PlacementUnreachable:
            metrics.PLACEMENT_REQUESTS.labels(method, route, 'unreachable').inc()
            raise
        finally:
            metrics.PLACEMENT_SECONDS.labels(method, route).observe(
                time.monotonic() - started)
        metrics.PLACEMENT_REQUESTS.labels(method, route, str(response.status)).inc()
        return response
