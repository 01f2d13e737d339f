"""The outermost WSGI callable of an HTTP daemon: the health check, then the middleware.

``GET /healthcheck`` goes to oslo.middleware's health check (an app since
oslo.middleware 8, no longer a filter) without a token, so a load balancer
needs no credentials; everything else goes down the middleware to the
service's app, which stays reachable as ``.app`` for tests.
"""
from __future__ import annotations

HEALTHCHECK_PATH = '/healthcheck'


class Stack:
    """``/healthcheck`` to ``check``, everything else to ``application``."""

    def __init__(self, application, check, app):
        self.application = application
        self.check = check
        self.app = app

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO') == HEALTHCHECK_PATH:
            return self.check(environ, start_response)
        return self.application(environ, start_response)
