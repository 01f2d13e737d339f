"""HttpTransport's retry policy: connection failures and 503s are retried, then reported."""
from __future__ import annotations

import socket

import pytest
import urllib3

from placement.client import HttpTransport, PlacementUnreachable


class _Answered:
    def __init__(self, status: int, data: bytes) -> None:
        self.status = status
        self.data = data


class FlakyPool:
    """Fails to connect ``failures`` times (as urllib3 says it), then answers 200 with {}."""

    def __init__(self, failures: int, error=None):
        self.failures = failures
        self.error = error or urllib3.exceptions.NewConnectionError(
            None, 'Failed to establish a new connection: [Errno 111] Connection refused')
        self.calls = 0

    def urlopen(self, method, url, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return _Answered(200, b'{}')


def _transport(pool, attempts=5):
    t = HttpTransport('http://placement.invalid', attempts=attempts, max_wait=0.001)
    t.pool = pool
    t._retrying = t._retrying.copy(wait=lambda retry_state: 0)
    return t


def test_connection_errors_are_retried_until_success():
    pool = FlakyPool(failures=3)
    resp = _transport(pool).request('GET', '/')
    assert resp.status == 200
    assert pool.calls == 4


@pytest.mark.parametrize('error, why', [
    (urllib3.exceptions.ProtocolError('Connection aborted.',
                                      ConnectionResetError(104, 'Connection reset by peer')),
     'Connection reset by peer'),
    (urllib3.exceptions.ReadTimeoutError(None, '/', 'Read timed out.'), 'timed out'),
    (urllib3.exceptions.ConnectTimeoutError(None, 'timed out'), 'timed out'),
])
def test_a_connection_dropped_or_timed_out_is_retried_and_worded(error, why):
    assert _transport(FlakyPool(failures=1, error=error)).request('GET', '/').status == 200
    with pytest.raises(PlacementUnreachable, match=f'after 2 attempt.*: {why}$'):
        _transport(FlakyPool(failures=9, error=error), attempts=2).request('GET', '/')


def test_gives_up_after_the_attempts_with_a_clear_error():
    pool = FlakyPool(failures=100)
    with pytest.raises(PlacementUnreachable,
                       match='placement.invalid unreachable after 3 attempt.*: Connection refused$'):
        _transport(pool, attempts=3).request('GET', '/')
    assert pool.calls == 3


def test_a_certificate_refused_is_not_retried():
    pool = FlakyPool(failures=9, error=urllib3.exceptions.SSLError(
        '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate'))
    with pytest.raises(PlacementUnreachable, match='TLS certificate verify failed'):
        _transport(pool).request('GET', '/')
    assert pool.calls == 1


def test_real_refused_connection_is_reported():
    with socket.socket() as s:   # a port that was free a moment ago
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    t = HttpTransport(f'http://127.0.0.1:{port}', attempts=2, max_wait=0.001)
    with pytest.raises(PlacementUnreachable):
        t.request('GET', '/')


class UnavailablePool:
    """Answers 503 ``times`` times (Placement restarting), then 200 with {}."""

    def __init__(self, times: int):
        self.times = times
        self.calls = 0

    def urlopen(self, method, url, **kwargs):
        self.calls += 1
        return (_Answered(503, b'Service Unavailable') if self.calls <= self.times
                else _Answered(200, b'{}'))


def test_a_503_is_retried_like_a_refused_connection():
    pool = UnavailablePool(times=2)
    assert _transport(pool).request('GET', '/').status == 200
    assert pool.calls == 3


def test_a_503_that_lasts_is_returned_as_placement_gave_it():
    pool = UnavailablePool(times=100)
    resp = _transport(pool, attempts=4).request('GET', '/')
    assert resp.status == 503
    assert resp.error()[0] == 'Service Unavailable'
    assert pool.calls == 4
