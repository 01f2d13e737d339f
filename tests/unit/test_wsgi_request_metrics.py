"""A worker's first requests, arriving together, create its request metrics once and all get counted.

Placement and the compute API create their per-route counters on a
worker's first request. Several threads of a fresh worker meeting that
moment together each created them, and prometheus_client refused the
second registration of the same names: those requests were answered 500.
"""
from __future__ import annotations

import sys
import threading
import uuid

from prometheus_client import REGISTRY

from cellplane.wsgi import metrics

ROUNDS = 30


def test_first_requests_on_many_threads_at_once_are_all_counted():
    # Each round a service of its own: a worker's first requests, again.
    for _ in range(ROUNDS):
        _race(f'race{uuid.uuid4().hex[:8]}')


def _race(service: str) -> None:
    threads_count = 16
    start = threading.Barrier(threads_count)
    errors: list[BaseException] = []

    def first_request() -> None:
        start.wait()
        try:
            metrics.observe(service, 'The race test', 'GET', '/things', '200 OK', 0.001)
        except BaseException as error:  # noqa: BLE001 - what the worker would answer 500 for
            errors.append(error)

    # Switch threads as often as the interpreter can, so that they do meet
    # inside the metrics' creation.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=first_request) for _ in range(threads_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)

    assert errors == []
    counted = REGISTRY.get_sample_value(f'cellplane_{service}_requests_total',
                                        {'method': 'GET', 'route': '/things', 'status': '200'})
    assert counted == threads_count
