"""A consumer in a long idle wait reads a message at once and stops at once (cellplane.rpc.idle_wait).

On the local RabbitMQ with oslo.messaging's own server and transport. The
waits are made minutes long here (the ramp's first wait and its cap at 300
s, client heartbeats that allow a 300 s read). The broker's own heartbeat
frames (every 30 s at its default 60 s) still end a blocking read: without
the wake, a stop here took 28-33 s, past the deadline below. The deadlines
are liveness bounds, not measures of speed; tests/unit/rpc/test_idle_wait.py
checks how each wait ends without a broker.
"""
from __future__ import annotations

import threading
import time

import oslo_messaging as messaging
import pytest
from oslo_config import cfg
from oslo_messaging._drivers import amqpdriver

from cellplane.rpc import idle_wait
from cellplane.rpc.server import build_server

LONG_WAIT_SECONDS = 300
DEADLINE_SECONDS = 20
# Past a consumer's start: its first wait has begun.
SETTLE_SECONDS = 2


class Endpoint:
    target = messaging.Target(version='1.0')

    def __init__(self) -> None:
        self.received = threading.Event()

    def hello(self, ctxt, name):
        self.received.set()
        return f'hello {name}'


@pytest.fixture
def long_waits(monkeypatch, client_transport_factory):
    assert idle_wait.installed(), 'the idle wait of this oslo.messaging is not the known one'
    monkeypatch.setattr(amqpdriver, 'ACK_REQUEUE_EVERY_SECONDS_MIN', LONG_WAIT_SECONDS)
    monkeypatch.setattr(amqpdriver, 'ACK_REQUEUE_EVERY_SECONDS_MAX', LONG_WAIT_SECONDS)
    # The driver reads at most heartbeat_timeout_threshold / rate / 2 at a time.
    cfg.CONF.set_override('heartbeat_timeout_threshold', 4 * LONG_WAIT_SECONDS,
                          group='oslo_messaging_rabbit')
    cfg.CONF.set_override('heartbeat_rate', 2, group='oslo_messaging_rabbit')
    yield client_transport_factory
    cfg.CONF.clear_override('heartbeat_timeout_threshold', group='oslo_messaging_rabbit')
    cfg.CONF.clear_override('heartbeat_rate', group='oslo_messaging_rabbit')


def _in_background(fn) -> threading.Thread:
    thread = threading.Thread(target=fn, daemon=True)
    thread.start()
    return thread


def _serving(transport, endpoint: Endpoint):
    server = build_server(transport, topic='idle-wait', server='host1', endpoints=[endpoint])
    server.start()
    time.sleep(SETTLE_SECONDS)
    return server


def test_a_cast_to_a_server_in_a_long_idle_wait_is_handled_at_once(
        transport_url_factory, long_waits):
    transport = long_waits(transport_url_factory('idle_wait_cast'))
    endpoint = Endpoint()
    server = _serving(transport, endpoint)
    try:
        client = messaging.get_rpc_client(transport, messaging.Target(topic='idle-wait'))
        client.cast({}, 'hello', name='cast')
        assert endpoint.received.wait(DEADLINE_SECONDS), 'the cast was not read while waiting'
    finally:
        server.stop()
        server.wait()


def test_stopping_a_server_in_a_long_idle_wait_ends_the_wait(transport_url_factory, long_waits):
    transport = long_waits(transport_url_factory('idle_wait_stop'))
    server = _serving(transport, Endpoint())
    stopping = _in_background(lambda: (server.stop(), server.wait()))
    stopping.join(DEADLINE_SECONDS)
    assert not stopping.is_alive(), f'the server did not stop within {DEADLINE_SECONDS} s'


def test_a_call_is_answered_and_the_reply_waiter_stops_when_its_transport_is_cleaned_up(
        transport_url_factory, long_waits):
    url = transport_url_factory('idle_wait_reply')
    server_transport = long_waits(url)
    server = _serving(server_transport, Endpoint())
    caller = messaging.get_rpc_transport(cfg.CONF, url=url)
    try:
        client = messaging.get_rpc_client(caller, messaging.Target(topic='idle-wait'),
                                          timeout=DEADLINE_SECONDS)
        assert client.call({}, 'hello', name='call') == 'hello call'
        time.sleep(SETTLE_SECONDS)
        cleanup = _in_background(caller.cleanup)
        cleanup.join(DEADLINE_SECONDS)
        assert not cleanup.is_alive(), f'the reply waiter did not stop in {DEADLINE_SECONDS} s'
    finally:
        server.stop()
        server.wait()
