"""The listeners' waits after a message start at poll_ramp.RAMP_START_SECONDS in every daemon."""
from __future__ import annotations

from oslo_messaging._drivers import amqpdriver

from cellplane.rpc import (
    idle_wait,
    poll_ramp,
    transport,  # noqa: F401 - installs it, as every daemon does
)


def test_the_ramp_starts_at_50_ms_and_ends_at_the_drivers_idle_cap():
    assert idle_wait.installed(), 'the idle wait of this oslo.messaging is not the known one'
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == poll_ramp.RAMP_START_SECONDS == 0.05
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX == 5.0
    waits, timeout = [], amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN
    while not waits or waits[-1] < amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX:
        waits.append(timeout)
        timeout = min(timeout * 2, amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX)
    assert [round(w, 2) for w in waits] == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0]
    # The three short ones are the driver's alone; from 0.4 s a wait goes through poll().
    assert [w for w in waits if w < idle_wait.POLL_FROM_SECONDS] == [0.05, 0.1, 0.2]


def test_installing_again_changes_nothing():
    poll_ramp.install()
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == 0.05
