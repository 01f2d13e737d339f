"""One RPC server answering as many server names on a real RabbitMQ vhost: one queue, many bindings.

The daemons' side (a hollow agent's hosts, builds and reschedules) is
``tests/integration/test_hollow_agents.py``; here only the listener.
"""
from __future__ import annotations

import threading

import amqp.exceptions
import kombu
import oslo_messaging as messaging
import pytest
from oslo_config import cfg

from cellplane import config
from cellplane.rpc import options as rpc_options
from cellplane.rpc.server import build_server
from cellplane.rpc.transport import get_transport

TOPIC = 'multi'
AGENT = 'agent'
HOSTS = [f'{AGENT}-{i}' for i in range(1, 41)]


class Recorder:
    target = messaging.Target(version='1.0')

    def __init__(self, expected: int) -> None:
        self.seen: set[tuple[str, int]] = set()
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.expected = expected

    def note(self, ctxt, host, n):
        with self.lock:
            self.seen.add((host, n))
            if len(self.seen) >= self.expected:
                self.done.set()


def _queue_exists(url: str, name: str) -> bool:
    with kombu.Connection(url.replace('rabbit://', 'amqp://', 1)) as conn:
        try:
            conn.channel().queue_declare(name, passive=True)
        except amqp.exceptions.NotFound:
            return False
    return True


@pytest.fixture
def rabbit(transport_url_factory):
    config.load([], prog='cellplane-tests', setup_logging=False,
                registrars=[rpc_options.register_opts])
    url = transport_url_factory('multi')
    transport = get_transport(url, cfg.CONF)
    recorder = Recorder(expected=len(HOSTS) + 1)
    server = build_server(transport, topic=TOPIC, server=AGENT, endpoints=[recorder],
                          also_as=HOSTS)
    server.start()
    yield url, transport, recorder
    server.stop()
    server.wait()
    transport.cleanup()


def test_every_hosted_name_is_reached_through_one_queue_of_the_first_name(rabbit):
    url, transport, recorder = rabbit
    for n, host in enumerate([AGENT, *HOSTS]):
        client = messaging.get_rpc_client(transport,
                                          messaging.Target(topic=TOPIC, server=host))
        client.cast({}, 'note', host=host, n=n)
    assert recorder.done.wait(30), sorted(recorder.seen)
    assert recorder.seen == {(host, n) for n, host in enumerate([AGENT, *HOSTS])}
    # A queue per name would be a Raft group per host on the broker (quorum).
    assert _queue_exists(url, f'{TOPIC}.{AGENT}')
    assert not any(_queue_exists(url, f'{TOPIC}.{host}') for host in HOSTS[:3])
