"""A listener's waits after a message start at 50 ms, not 1 ms: the CPU of a daemon per message.

oslo.messaging (18.x) waits on a queue with a timeout that starts at
``amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN`` (1 ms) after every message and
doubles up to the idle cap (5 s, ``idle_wait``), so that the
acknowledgements the handler threads queue are sent soon: the listener's
thread owns the connection and sends them between two waits. From 1 ms that
is nine waits in the first half second after each message (1, 2, 4 ... 256
ms), and every wait that times out runs kombu's and the driver's retry
wrappers and raises and catches a timeout through them. Measured on this
machine with an RPC server of oslo.messaging on the local RabbitMQ and 100
casts 50 ms apart, the server's CPU per cast was 4.9 ms from 1 ms, 3.4 from
20 ms, 2.6-3.1 from 50 ms and 2.2 from 100 ms; with casts 300 ms apart, 9.1
against 5.9 from 50 ms.

From ``RAMP_START_SECONDS`` an acknowledgement waits up to 50 ms to be sent.
Nothing waits on it: the next message is read as it comes either way (the
wait ends when data comes), the queues' prefetch (64) leaves room for the
messages that arrive meanwhile, and a daemon killed in that window has
its message delivered again, as one killed before acknowledging always
did. A reply waiter acknowledges as it reads: it only wakes less often.
"""
from __future__ import annotations

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first

# isort: split
from oslo_messaging._drivers import amqpdriver

RAMP_START_SECONDS = 0.05


def install() -> None:
    """Start oslo.messaging's poll timeouts at ``RAMP_START_SECONDS`` (module-wide; idempotent)."""
    amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN = max(amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN,
                                                   RAMP_START_SECONDS)
