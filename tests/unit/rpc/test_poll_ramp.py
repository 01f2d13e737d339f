"""The listeners' waits after a message start at poll_ramp.RAMP_START_SECONDS in every daemon."""
from __future__ import annotations

from oslo_messaging._drivers import amqpdriver

from cellplane.rpc import (
    poll_ramp,
    stop_latency,
    transport,  # noqa: F401 - installs it, as every daemon does
)


def test_the_ramp_starts_at_50_ms_and_ends_at_the_idle_cap():
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == poll_ramp.RAMP_START_SECONDS == 0.05
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX == stop_latency.IDLE_POLL_SECONDS
    # From 50 ms, doubling: 50, 100, 200, 400, 500 ms - five waits after a message, not ten.
    waits, timeout = [], amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN
    while not waits or waits[-1] < amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX:
        waits.append(timeout)
        timeout = min(timeout * 2, amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX)
    assert waits == [0.05, 0.1, 0.2, 0.4, 0.5]


def test_installing_again_changes_nothing():
    poll_ramp.install()
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == 0.05
