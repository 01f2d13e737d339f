"""Why a payload was refused: the exceptions a receiver logs and a sender sees.

Every class derives from ``PayloadError`` so the RPC layer can reject any bad
payload with one ``except`` and a message that says what was wrong.
"""
from __future__ import annotations


class PayloadError(Exception):
    """A payload cannot be sent or accepted; the message says why."""


class MalformedPayload(PayloadError):
    """The envelope or the data does not match the payload's schema."""


class UnknownPayload(PayloadError):
    """The payload name is not one this service knows."""


class UnsupportedPayloadVersion(PayloadError):
    """The payload version is not one this service accepts."""


class PayloadDowngradeError(PayloadError):
    """A payload cannot be expressed at the older version a receiver needs."""
