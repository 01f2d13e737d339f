"""The middleware around the compute API, as the configuration asks.

From the outside in, a request meets: the health check (oslo.middleware,
``GET /healthcheck``, no token); HTTPProxyToWSGI (the scheme and host a
TLS-terminating proxy saw), only when ``[oslo_middleware]
enable_proxy_headers_parsing`` is set;
the request log (``cellplane_api.requestlog``); CORS when ``[cors]
allowed_origin`` is set; oslo.middleware's request id, as Nova's (a new
``req-...`` per request in ``x-openstack-request-id`` and
``x-compute-request-id``; a caller's valid ``X-OpenStack-Request-ID`` becomes
the global request id); keystonemiddleware's auth_token with ``[api]
auth_strategy = keystone``; then ``cellplane_api.wsgi.ComputeApp``.
"""
from __future__ import annotations

import logging
import re

from oslo_config import cfg
from oslo_context import context as oslo_context
from oslo_middleware import cors, healthcheck, http_proxy_to_wsgi, request_id

from cellplane.wsgi import requestlog, stack
from cellplane_api import auth

LOG = logging.getLogger('cellplane_api.requestlog')


class ComputeRequestId(request_id.RequestId):
    """oslo.middleware's request id with Nova's compat header, without webob.

    What oslo.middleware's ``RequestId`` does, in plain WSGI: a caller's
    valid ``X-OpenStack-Request-ID`` becomes ``openstack.global_request_id``,
    a new ``req-<uuid>`` is ``openstack.request_id``, and the answer carries
    it in ``x-openstack-request-id`` and ``x-compute-request-id`` unless it
    has them. Its own ``__call__`` (webob's ``wsgify``) built a webob request
    and response around every request to do that: about a tenth of the
    middleware's CPU on ``POST /servers``.
    """

    compat_headers = ['x-compute-request-id']
    _INBOUND = 'HTTP_' + request_id.INBOUND_HEADER.upper().replace('-', '_')
    _GLOBAL_ID = re.compile(request_id.ID_FORMAT)

    def __call__(self, environ, start_response):
        caller_id = environ.get(self._INBOUND, '')
        if self._GLOBAL_ID.match(caller_id):
            environ[request_id.GLOBAL_REQ_ID] = caller_id
        req_id = oslo_context.generate_request_id()
        environ[request_id.ENV_REQUEST_ID] = req_id
        names = (request_id.HTTP_RESP_HEADER_REQUEST_ID, *self.compat_headers)

        def with_request_id(status, headers, exc_info=None):
            present = {name.lower() for name, _ in headers}
            headers = list(headers) + [(name, req_id) for name in names
                                       if name not in present]
            return start_response(status, headers, exc_info)
        return self.application(environ, with_request_id)


def wrap(app, conf: cfg.ConfigOpts) -> stack.Stack:
    """``app`` inside the middleware ``conf`` asks for."""
    outer = app
    if conf.api.auth_strategy == 'keystone':
        outer = auth.keystone_auth(outer, conf)
    outer = ComputeRequestId(outer)
    if conf.cors.allowed_origin:
        outer = cors.CORS(outer, conf)
    outer = requestlog.RequestLog(outer, LOG, 'compute')
    proxy = http_proxy_to_wsgi.HTTPProxyToWSGI(outer, conf)   # registers its option
    # Off, it would still build a webob request and inspect a signature per request
    # to do nothing: a tenth of the middleware's CPU on POST /servers.
    if conf.oslo_middleware.enable_proxy_headers_parsing:
        outer = proxy
    return stack.Stack(outer, healthcheck.Healthcheck(None, conf), app)
