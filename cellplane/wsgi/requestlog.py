"""One INFO line per request, as the reference Placement's and Nova's request logs write.

    127.0.0.1 "GET /servers?name=web" status: 200 len: 97 microversion: 2.1 time: 0.004 request_id: req-...

on the logger the service names: the caller, method and path with its
query, the status, the body's length, the microversion it was answered at
(the service's ``OpenStack-API-Version`` answer header, without the service
type), the seconds the app took, and the request id the answer carries (a
caller's ``X-OpenStack-Request-Id`` when it sent a valid one). Requests
refused before the app (keystonemiddleware's 401) are logged too; the
health check is not (it is answered in front of this middleware).
"""
from __future__ import annotations

import logging
import time


class RequestLog:
    """WSGI middleware that logs each request it passes on (see the module's docstring)."""

    def __init__(self, application, logger: logging.Logger, service_type: str) -> None:
        self.application = application
        self.log = logger
        self.service_prefix = f'{service_type} '

    def __call__(self, environ, start_response):
        if not self.log.isEnabledFor(logging.INFO):
            return self.application(environ, start_response)
        started = time.monotonic()
        seen: dict = {}

        def logged_start_response(status, headers, *args):
            seen['status'] = status.split(None, 1)[0]
            seen['headers'] = headers
            return start_response(status, headers, *args)
        body = self.application(environ, logged_start_response)
        self._log(environ, seen, body, time.monotonic() - started)
        return body

    def _log(self, environ, seen: dict, body, seconds: float) -> None:
        headers = {k.lower(): v for k, v in seen.get('headers', ())}
        if isinstance(body, (list, tuple)):
            length = str(sum(len(chunk) for chunk in body))
        else:
            length = headers.get('content-length', '-')
        path = environ.get('SCRIPT_NAME', '') + environ.get('PATH_INFO', '')
        if environ.get('QUERY_STRING'):
            path += '?' + environ['QUERY_STRING']
        request_id = (headers.get('x-openstack-request-id')
                      or environ.get('openstack.request_id') or '-')
        # The version the answer was given at (``latest`` resolved).
        microversion = headers.get('openstack-api-version', '-').replace(
            self.service_prefix, '')
        self.log.info('%s "%s %s" status: %s len: %s microversion: %s time: %.3f '
                      'request_id: %s', environ.get('REMOTE_ADDR', '-'),
                      environ.get('REQUEST_METHOD', '-'), path, seen.get('status', '-'),
                      length, microversion, seconds, request_id)
