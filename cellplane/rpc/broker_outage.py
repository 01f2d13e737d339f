"""Say a broker outage once per daemon: oslo.messaging's reconnect lines, read as outage reports.

While RabbitMQ does not answer, oslo.messaging's rabbit driver logs, for
every connection and every retry, "AMQP server on HOST:PORT is unreachable:
... Trying again in N seconds" (ERROR), and "Reconnected to AMQP server on
HOST:PORT ..." (INFO) once a connection is back. ``BrokerOutageFilter``
reads those records (it lets them through) and reports them to
``cellplane.outage``, so the operator also finds one WARNING when the
broker at HOST:PORT stopped answering and one INFO, with how long it was
away, when it answers again, however many connections and retries there
were. ``install()`` attaches it, and keeps the driver's logger at INFO
(oslo.log's default for oslo.messaging): a filter sees only the records
its logger lets be made, and without "Reconnected" an outage never ends;
``cellplane.rpc.transport`` calls it.
"""
from __future__ import annotations

import logging

from cellplane import outage

RABBIT_DRIVER_LOGGER = 'oslo.messaging._drivers.impl_rabbit'
# The driver's templates (oslo.messaging 18.x), matched on their stable parts.
_UNREACHABLE = 'AMQP server on %(hostname)s:%(port)s is unreachable'
_RECONNECTED = 'Reconnected to AMQP server on %(hostname)s:%(port)s'


class BrokerOutageFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        template = record.msg if isinstance(record.msg, str) else ''
        args = record.args if isinstance(record.args, dict) else None
        if args is None or ('AMQP server' not in template):
            return True
        try:
            broker = outage.dependency('Broker', f'amqp://{args["hostname"]}:{args["port"]}')
            if _UNREACHABLE in template:
                broker.failed(str(args.get('err_str') or 'unreachable'))
            elif _RECONNECTED in template:
                broker.answered()
        except Exception:  # noqa: BLE001 - a log filter must never break logging
            pass
        return True


_installed = False


def install() -> None:
    global _installed
    if not _installed:
        driver = logging.getLogger(RABBIT_DRIVER_LOGGER)
        driver.addFilter(BrokerOutageFilter())
        if driver.level == logging.NOTSET or driver.level > logging.INFO:
            driver.setLevel(logging.INFO)
        _installed = True
