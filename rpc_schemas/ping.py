"""Ping and Pong: a diagnostic echo any cellplane daemon answers.

``cellplane-manage rpc ping`` style diagnostics use it to prove a daemon is
consuming its queue; ``hold_seconds`` makes the server wait before answering,
which is how tests create in-flight work (bounded so a ping cannot pin a
handler thread for long).
"""
from __future__ import annotations

import dataclasses

from rpc_schemas.base import Payload, field
from rpc_schemas.registry import register

MAX_HOLD_SECONDS = 60.0


@register
@dataclasses.dataclass(frozen=True)
class Ping(Payload):
    NAME = 'Ping'
    VERSION = '1.0'
    DESCRIPTION = 'Diagnostic echo request.'

    message: str = field(default='', maxLength=1024)
    hold_seconds: float | None = field(default=None, minimum=0,
                                       maximum=MAX_HOLD_SECONDS)


@register
@dataclasses.dataclass(frozen=True)
class Pong(Payload):
    NAME = 'Pong'
    VERSION = '1.0'
    DESCRIPTION = 'Diagnostic echo answer: who answered, after how long a hold.'

    message: str = field(maxLength=1024)
    host: str = field(maxLength=255)
    binary: str = field(maxLength=255)
    held_seconds: float = field(default=0.0, minimum=0)
