"""One RPC server answering as many server names on the in-memory bus (the embedded hollow agent).

The RabbitMQ side of ``multi_listen`` is exercised through the daemons in
``tests/integration/test_hollow_agents.py``.
"""
from __future__ import annotations

import threading
import time

import oslo_messaging as messaging
import pytest
from oslo_config import cfg

from cellplane.rpc.server import build_server
from cellplane.rpc.transport import get_transport

TOPIC = 'multi'
HOSTS = [f'host-{i}' for i in range(1, 301)]


class Recorder:
    target = messaging.Target(version='1.0')

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.expected = 0

    def note(self, ctxt, host, n):
        with self.lock:
            self.seen.append((host, n))
            if len(self.seen) >= self.expected:
                self.done.set()


@pytest.fixture
def bus():
    transport = get_transport('fake://', cfg.CONF)
    recorder = Recorder()
    server = build_server(transport, topic=TOPIC, server=HOSTS[0], endpoints=[recorder],
                          also_as=HOSTS[1:])
    server.start()
    yield transport, recorder
    server.stop()
    server.wait()


def _client(transport, host=None):
    return messaging.get_rpc_client(transport, messaging.Target(topic=TOPIC, server=host))


def test_a_cast_to_any_hosted_name_reaches_the_one_server(bus):
    transport, recorder = bus
    recorder.expected = 2 * len(HOSTS)
    for round_ in range(2):
        for host in HOSTS:
            _client(transport, host).cast({}, 'note', host=host, n=round_)
    assert recorder.done.wait(30), f'{len(recorder.seen)} of {recorder.expected} arrived'
    assert sorted(recorder.seen) == sorted((h, r) for h in HOSTS for r in range(2))


def test_the_topic_queue_is_served_too(bus):
    transport, recorder = bus
    recorder.expected = 1
    _client(transport).cast({}, 'note', host='any', n=7)
    assert recorder.done.wait(10)
    assert recorder.seen == [('any', 7)]


def test_a_busy_host_does_not_hold_back_the_others(bus):
    """Queues are taken in turn: a late host's message is not served after every early one."""
    transport, recorder = bus
    busy, late = HOSTS[0], HOSTS[-1]
    recorder.expected = 51
    for n in range(50):
        _client(transport, busy).cast({}, 'note', host=busy, n=n)
    _client(transport, late).cast({}, 'note', host=late, n=0)
    assert recorder.done.wait(30)
    position = recorder.seen.index((late, 0))
    assert position < 10, f'the late host was served {position}th of 51'
    assert sorted(n for h, n in recorder.seen if h == busy) == list(range(50))


def test_a_cast_to_a_name_not_hosted_reaches_nobody(bus):
    transport, recorder = bus
    recorder.expected = 1
    _client(transport, 'someone-else').cast({}, 'note', host='someone-else', n=0)
    _client(transport, HOSTS[5]).cast({}, 'note', host=HOSTS[5], n=1)
    assert recorder.done.wait(10)
    time.sleep(0.3)
    assert recorder.seen == [(HOSTS[5], 1)]
