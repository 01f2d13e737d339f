"""One clear ERROR line for every RPC message a daemon refuses, and no crash.

What happens to a bad message, found by publishing to a topic queue with
kombu (oslo.messaging 18.3.1, rabbit driver):

- body not JSON, JSON that is not an object, ``oslo.message`` not JSON, or a
  non-JSON content type: the driver's consumer callback fails while decoding,
  logs "Failed to process message ... skipping it." with a traceback whose
  last line is all that says what was wrong (for a text/plain body: "ValueError:
  dictionary update sequence element #0 has length 1"), and rejects the
  message without requeue: it is dropped, not redelivered, and the consumer
  goes on. ``DecodeFailureFilter`` rewrites that record into one line that
  says the message was dropped and why.
- a JSON object that is not an RPC message (no method name, arguments not
  an object): the dispatcher would fail on ``getattr(endpoint, None)`` with
  a TypeError traceback; ``cellplane.rpc.server`` checks the shape first and
  raises ``MalformedMessage`` after logging what is missing.
- a decodable message whose payload is wrong (unknown name or version,
  missing field): ``PayloadSerializer`` logs its own ERROR naming the
  problem and raises ``PayloadRejected``.
- for both, oslo.messaging logs the exception again with a traceback, which
  ``DuplicateRejectionFilter`` drops; a caller still receives the error as
  its RPC's exception.

``install()`` attaches both filters; the serializer module calls it on import.
"""
from __future__ import annotations

import logging

RABBIT_DRIVER_LOGGER = 'oslo.messaging._drivers.impl_rabbit'
RPC_SERVER_LOGGER = 'oslo_messaging.rpc.server'
_DRIVER_DECODE_FAILURE = 'Failed to process message ... skipping it.'


class MessageRejected(Exception):
    """A received message was refused; the reason is already logged at ERROR."""


class PayloadRejected(MessageRejected):
    """A received message carried a payload this service will not accept."""


class MalformedMessage(MessageRejected):
    """A decoded message lacks what every RPC message has (a method name...)."""


class DecodeFailureFilter(logging.Filter):
    """Turn the rabbit driver's decode-failure traceback into one actionable line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == _DRIVER_DECODE_FAILURE and record.exc_info:
            exc = record.exc_info[1]
            record.msg = ('Dropped an RPC message that is not a JSON oslo.messaging '
                          'message (not JSON, not a JSON object, or a non-JSON content '
                          'type); it was rejected without requeue: %s: %s')
            record.args = (type(exc).__name__, exc)
            record.exc_info = None
            record.exc_text = None
        return True


class DuplicateRejectionFilter(logging.Filter):
    """Drop oslo.messaging's traceback for a message we already logged as rejected."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, MessageRejected)


_installed = False


def install() -> None:
    global _installed
    if _installed:
        return
    logging.getLogger(RABBIT_DRIVER_LOGGER).addFilter(DecodeFailureFilter())
    logging.getLogger(RPC_SERVER_LOGGER).addFilter(DuplicateRejectionFilter())
    _installed = True
