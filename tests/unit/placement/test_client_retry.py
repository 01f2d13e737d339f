"""HttpTransport's retry policy: connection failures and 503s are retried, then reported."""
from __future__ import annotations

import socket

import pytest
import requests

from placement.client import HttpTransport, PlacementUnreachable


class FlakySession(requests.Session):
    """Fails to connect ``failures`` times, then answers 200 with {}."""

    def __init__(self, failures: int):
        super().__init__()
        self.failures = failures
        self.calls = 0

    def request(self, method, url, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise requests.ConnectionError('connection refused')
        resp = requests.Response()
        resp.status_code = 200
        resp._content = b'{}'
        return resp


def _transport(session, attempts=5):
    t = HttpTransport('http://placement.invalid', attempts=attempts, max_wait=0.001)
    t.session = session
    t._retrying = t._retrying.copy(wait=lambda retry_state: 0)
    return t


def test_connection_errors_are_retried_until_success():
    session = FlakySession(failures=3)
    resp = _transport(session).request('GET', '/')
    assert resp.status == 200
    assert session.calls == 4


def test_gives_up_after_the_attempts_with_a_clear_error():
    session = FlakySession(failures=100)
    with pytest.raises(PlacementUnreachable, match='placement.invalid unreachable'):
        _transport(session, attempts=3).request('GET', '/')
    assert session.calls == 3


def test_real_refused_connection_is_reported():
    with socket.socket() as s:   # a port that was free a moment ago
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    t = HttpTransport(f'http://127.0.0.1:{port}', attempts=2, max_wait=0.001)
    with pytest.raises(PlacementUnreachable):
        t.request('GET', '/')


class UnavailableSession(requests.Session):
    """Answers 503 ``times`` times (Placement restarting), then 200 with {}."""

    def __init__(self, times: int):
        super().__init__()
        self.times = times
        self.calls = 0

    def request(self, method, url, **kwargs):
        self.calls += 1
        resp = requests.Response()
        resp.status_code, resp._content = ((503, b'Service Unavailable')
                                           if self.calls <= self.times else (200, b'{}'))
        return resp


def test_a_503_is_retried_like_a_refused_connection():
    session = UnavailableSession(times=2)
    assert _transport(session).request('GET', '/').status == 200
    assert session.calls == 3


def test_a_503_that_lasts_is_returned_as_placement_gave_it():
    session = UnavailableSession(times=100)
    resp = _transport(session, attempts=4).request('GET', '/')
    assert resp.status == 503
    assert resp.error()[0] == 'Service Unavailable'
    assert session.calls == 4
