"""One INFO line per Placement request, as the reference Placement's request log writes.

    127.0.0.1 "GET /resource_providers?name=c1" status: 200 len: 97 microversion: 1.39 time: 0.004 request_id: req-...

on the logger ``placement.requestlog``: the caller, method and path with
its query, the status, the body's length, the microversion it was answered at, the
seconds the app took, and the request id the answer carries (a caller's
``X-OpenStack-Request-Id`` when it sent a valid one), so that a request a
service logged can be found in Placement's log. Requests refused before the
app (keystonemiddleware's 401) are logged too; ``/healthcheck`` is not.
"""
from __future__ import annotations

import logging

from cellplane.wsgi import requestlog

LOG = logging.getLogger('placement.requestlog')


class RequestLog(requestlog.RequestLog):
    """The ground's request log (``cellplane/wsgi/requestlog.py``) on ``placement.requestlog``."""

    def __init__(self, application) -> None:
        super().__init__(application, LOG, 'placement')
