"""A consumer told to stop sees it within half a second, so an idle daemon stops at once on SIGTERM.

oslo.messaging (18.x) waits on an idle queue with a timeout that doubles
up to ``amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX`` (5 s): an RPC server's
listener and a transport's reply waiter sit in the broker socket that
long, and ``stop_consuming`` is only a flag read between two waits. So a
SIGTERM to an idle daemon waited up to 5 s for its listener
(``RPCServer.stop``) and up to 5 s more for its reply waiter
(``transport.cleanup``): an idle compute agent took 9-12 s to stop
(issue 28). With the idle wait capped at ``IDLE_POLL_SECONDS`` each is
bounded by that; an idle consumer then returns from select() twice a
second instead of once every 5 s. A message that arrives is read at once
either way: the wait ends when data comes.
"""
from __future__ import annotations

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first

# isort: split
from oslo_messaging._drivers import amqpdriver

IDLE_POLL_SECONDS = 0.5


def install() -> None:
    """Cap oslo.messaging's idle poll timeout (module-wide; idempotent)."""
    amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX = min(amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX,
                                                   IDLE_POLL_SECONDS)
