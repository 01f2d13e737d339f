"""Say a broker outage once per daemon: oslo.messaging's reconnect lines, read as outage reports.

While RabbitMQ does not answer, oslo.messaging's rabbit driver logs, for
every connection and every retry, "AMQP server on HOST:PORT is unreachable:
... Trying again in N seconds" (ERROR), and "Reconnected to AMQP server on
HOST:PORT ..." (INFO) once a connection is back. ``BrokerOutageFilter``
reads those records (it lets them through) and reports them to
``cellplane.outage``, so the operator also finds one WARNING when the
broker at HOST:PORT stopped answering and one INFO, with how long it was
away, when it answers again, however many connections and retries there
were.

After an outage, a pooled connection that sat idle through it finds its
socket dead on its next use (or its heartbeat's), though the broker
answers again, and reconnects on its first retry: that is no second
outage. So for ``AFTER_OUTAGE_SECONDS`` after the broker answers again, the
first "unreachable" of a connection that has not reconnected since that
outage began says only that it was lost, and the broker is said not to
answer once that connection's retry fails too (the outage counted from
the loss); a loss whose retry succeeds is left to the driver's lines. A
connection that did reconnect (every listener does, in an outage) has a
socket younger than the outage, so its loss is the broker not answering
at once, as is any loss at other times (a node of a cluster killed: its
connections go to the next node at their first retry). ``install()`` attaches it, and keeps the driver's logger at INFO
(oslo.log's default for oslo.messaging): a filter sees only the records
its logger lets be made, and without "Reconnected" an outage never ends;
``cellplane.rpc.transport`` calls it.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from cellplane import outage

RABBIT_DRIVER_LOGGER = 'oslo.messaging._drivers.impl_rabbit'
# The driver's templates (oslo.messaging 18.x), matched on their stable parts.
_UNREACHABLE = 'AMQP server on %(hostname)s:%(port)s is unreachable'
_RECONNECTED = 'Reconnected to AMQP server on %(hostname)s:%(port)s'
# The driver waits at most rabbit_interval_max (30 s by default) between
# one connection's retries.
RETRY_WITHIN_SECONDS = 60.0
# An idle connection is found dead by its next use or by its heartbeat
# (a check every few seconds; the broker's limit heartbeat_timeout_threshold
# is 60 s by default).
AFTER_OUTAGE_SECONDS = 120.0


class BrokerOutageFilter(logging.Filter):
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._lock = threading.Lock()
        # connection id -> [when it was lost, whether that is counted, its last report]
        self._lost: dict[str, list] = {}
        # Connections that reconnected since the last outage began.
        self._fresh: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        template = record.msg if isinstance(record.msg, str) else ''
        args = record.args if isinstance(record.args, dict) else None
        if args is None or ('AMQP server' not in template):
            return True
        try:
            broker = outage.dependency('Broker', f'amqp://{args["hostname"]}:{args["port"]}')
            connection = str(args.get('connection_id'))
            if _UNREACHABLE in template:
                self._unreachable(broker, connection, str(args.get('err_str') or 'unreachable'))
            elif _RECONNECTED in template:
                with self._lock:
                    self._lost.pop(connection, None)
                    self._fresh.add(connection)
                broker.answered()
        except Exception:  # noqa: BLE001 - a log filter must never break logging
            pass
        return True

    def _unreachable(self, broker: outage.Dependency, connection: str, reason: str) -> None:
        now = self._clock()
        with self._lock:
            lost = self._lost.get(connection)
            if lost is None or now - lost[2] > RETRY_WITHIN_SECONDS:
                # A fresh loss; an entry this old was a connection given up
                # on (a bounded retry, or closed) and lost again on a later use.
                self._forget_given_up(now)
                lost = self._lost[connection] = [now, False, now]
                if (connection not in self._fresh
                        and broker.answered_within(AFTER_OUTAGE_SECONDS)):
                    return          # maybe idle through the last outage: its retry tells
                attempts = 1
            else:
                attempts = 1 if lost[1] else 2      # its retry, and its loss if not counted yet
            seconds_ago = now - lost[0] if attempts == 2 else 0.0
            lost[1], lost[2] = True, now
            if not broker.down:
                self._fresh.clear()                 # an outage begins
        broker.failed(reason, seconds_ago=seconds_ago, attempts=attempts)

    def _forget_given_up(self, now: float) -> None:
        for connection in [c for c, lost in self._lost.items()
                           if now - lost[2] > RETRY_WITHIN_SECONDS]:
            del self._lost[connection]


_installed = False


def install() -> None:
    global _installed
    if not _installed:
        driver = logging.getLogger(RABBIT_DRIVER_LOGGER)
        driver.addFilter(BrokerOutageFilter())
        if driver.level == logging.NOTSET or driver.level > logging.INFO:
            driver.setLevel(logging.INFO)
        _installed = True
