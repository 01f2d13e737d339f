"""Keep a harmless amqp WARNING, logged on every clean transport close, out of operators' logs.

When oslo.messaging (18.3.1) closes a connection it first deletes its own
fanout queue while still consuming from it; the broker answers with
basic.cancel (AMQP method 60,30) as the channel closes, and the amqp
library logs "Received method (60, 30) during closing channel 1. This
method will be ignored" at WARNING. Every daemon did so on every SIGTERM.
Only that exact method during a close is dropped; other amqp warnings stay.
"""
from __future__ import annotations

import logging

AMQP_LOGGER = 'amqp'
_IGNORED_DURING_CLOSE = 'Received method %s during closing channel %s. This method will be ignored'
_BASIC_CANCEL = (60, 30)


class BasicCancelOnCloseFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != _IGNORED_DURING_CLOSE or not record.args:
            return True
        try:
            return tuple(record.args[0]) != _BASIC_CANCEL
        except TypeError:
            return True


_installed = False


def install() -> None:
    global _installed
    if not _installed:
        logging.getLogger(AMQP_LOGGER).addFilter(BasicCancelOnCloseFilter())
        _installed = True
