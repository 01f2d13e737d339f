"""Placement's own /metrics: the requests it served, by route, method and status, and their time.

Placement runs ``[api] workers`` processes (granian); each counts the
requests it serves, and the main process serves ``/metrics`` for all of
them at ``[metrics] bind_host:bind_port`` (off by default), in
prometheus_client's multiprocess mode: the main process points
``PROMETHEUS_MULTIPROC_DIR`` at a directory of its own before anything
imports prometheus_client, the workers it forks inherit it and write their
counts there, and the main's collector adds them up. The directory goes
when the daemon stops. The route label is the route's template
(``/resource_providers/{uuid}``; ``unmatched`` for a path no route has),
so no UUID or name makes a series of its own.
"""
from __future__ import annotations

from cellplane.wsgi import metrics
from cellplane.wsgi.metrics import MULTIPROC_DIR_ENV, UNMATCHED, Endpoint  # noqa: F401 - this module's API


def start(conf) -> Endpoint | None:
    """In the main process, before the workers fork: the endpoint, or None when off."""
    return metrics.start(conf, 'placement')


def observe(method: str, route: str, status: str, seconds: float) -> None:
    """Count one request served (``status``: ``'200 OK'`` or the code alone)."""
    metrics.observe('placement', 'Placement', method, route, status, seconds)
