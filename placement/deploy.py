"""The middleware around the Placement app, as the configuration asks.

From the outside in, a request meets:

1. the health check (oslo.middleware), answering ``GET /healthcheck``
   without a token, so a load balancer needs no credentials;
2. the request log (``placement.requestlog``): one INFO line per request;
3. CORS (oslo.middleware), when ``[cors] allowed_origin`` is set: it
   answers preflight ``OPTIONS`` itself, before authentication, as the
   reference's does;
4. keystonemiddleware's auth_token, with ``[api] auth_strategy = keystone``
   (``placement.auth``);
5. ``placement.wsgi.PlacementApp``: noauth2, credentials, policy, the API.
"""
from __future__ import annotations

from oslo_config import cfg
from oslo_middleware import cors, healthcheck

from cellplane.wsgi import stack
from cellplane.wsgi.stack import HEALTHCHECK_PATH  # noqa: F401 - part of this module's API
from placement import auth
from placement.requestlog import RequestLog


def wrap(app, conf: cfg.ConfigOpts) -> Stack:
    """``app`` inside the middleware ``conf`` asks for."""
    stack = app
    if conf.api.auth_strategy == 'keystone':
        stack = auth.keystone_auth(stack, conf)
    if conf.cors.allowed_origin:
        stack = cors.CORS(stack, conf)
    return Stack(RequestLog(stack), healthcheck.Healthcheck(None, conf), app)



class Stack(stack.Stack):
    """The ground's ``Stack`` (``cellplane/wsgi/stack.py``); ``placement`` is the app inside."""

    @property
    def placement(self):
        return self.app
