"""The embedded bus behaves like RabbitMQ where it matters: copies, isolation, JSON only."""
from __future__ import annotations

import threading

import pytest

from cellplane.context import new_context
from cellplane.rpc.serializer import PayloadSerializer
from cellplane.rpc.server import build_server
from cellplane_embedded.memory_transport import MemoryBus

# isort: split
import oslo_messaging as messaging

from rpc_schemas.flavor import Flavor

DEADLINE = 30  # seconds; a bound on something that must happen, not a speed check


class Recorder:
    target = messaging.Target(version='1.0')

    def __init__(self):
        self.received = []
        self.arrived = threading.Event()

    def mutate(self, ctxt, data):
        self.received.append(data)
        data['changed_by_receiver'] = True
        data['items'].append('receiver')
        self.arrived.set()
        return data

    def keep(self, ctxt, flavor):
        self.received.append(flavor)
        self.arrived.set()


@pytest.fixture
def serve():
    started = []

    def start(bus, topic, endpoint, server='host1'):
        rpc_server = build_server(bus.transport, topic=topic, server=server,
                                  endpoints=[endpoint])
        rpc_server.start()
        started.append(rpc_server)
        return rpc_server
    yield start
    for rpc_server in started:
        rpc_server.stop()
        rpc_server.wait()


def client(bus, topic):
    return messaging.get_rpc_client(bus.transport, messaging.Target(topic=topic),
                                    serializer=PayloadSerializer())


def test_a_call_hands_the_receiver_a_copy_and_the_caller_a_copy_of_the_reply(serve):
    bus = MemoryBus('top')
    recorder = Recorder()
    serve(bus, 'copies', recorder)
    sent = {'items': ['sender']}

    reply = client(bus, 'copies').call(new_context(), 'mutate', data=sent)

    assert sent == {'items': ['sender']}, 'the receiver changed the sender\'s dict'
    assert reply == {'items': ['sender', 'receiver'], 'changed_by_receiver': True}
    assert reply is not recorder.received[0]
    bus.cleanup()


def test_a_typed_payload_arrives_as_a_new_object_of_its_class(serve):
    bus = MemoryBus('top')
    recorder = Recorder()
    serve(bus, 'payloads', recorder)
    flavor = Flavor(name='m1.small', vcpus=1, memory_mb=512, extra_specs={'a': 'b'})

    client(bus, 'payloads').cast(new_context(), 'keep', flavor=flavor)

    assert recorder.arrived.wait(DEADLINE)
    received = recorder.received[0]
    assert isinstance(received, Flavor) and received == flavor
    assert received is not flavor and received.extra_specs is not flavor.extra_specs
    bus.cleanup()


def test_two_buses_do_not_see_each_others_casts(serve):
    top, cell = MemoryBus('top'), MemoryBus('cell1')
    on_top, on_cell = Recorder(), Recorder()
    serve(top, 'conductor', on_top)
    serve(cell, 'conductor', on_cell)

    client(cell, 'conductor').cast(new_context(), 'mutate', data={'items': []})

    assert on_cell.arrived.wait(DEADLINE)
    # The top-level server polls the same topic name; give it a chance to
    # (wrongly) take the message before looking.
    on_top.arrived.wait(0.5)
    assert on_top.received == [] and len(on_cell.received) == 1
    top.cleanup()
    cell.cleanup()


def test_a_value_json_cannot_carry_is_refused_at_the_sender():
    bus = MemoryBus('top')
    # jsonutils, as the rabbit driver uses it, refuses it with ValueError.
    with pytest.raises(ValueError):
        client(bus, 'nobody').cast(new_context(), 'mutate', data={'x': object()})
    bus.cleanup()
