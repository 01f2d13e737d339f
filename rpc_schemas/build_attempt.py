"""BuildAttempt: one try at building an instance on one host, and how it ended.

The compute agent sends one with every outcome (success to the cell
conductor's ``instance_update``, failure with ``reschedule_build``); the
cell conductor records each as an action event of the instance in the cell
DB (``instance_action_events``: host, node, start, finish, result, reason),
so the attempt history never depends on the top level.
"""
from __future__ import annotations

import dataclasses
import datetime

from rpc_schemas.base import Payload, field
from rpc_schemas.registry import register

OK = 'ok'
FAILED = 'failed'
RESULTS = (OK, FAILED)


@register
@dataclasses.dataclass(frozen=True)
class BuildAttempt(Payload):
    NAME = 'BuildAttempt'
    VERSION = '1.0'
    DESCRIPTION = ('A build of an instance on one host: when it started and '
                   'finished, whether it worked, and if not, why.')

    host: str = field(minLength=1, maxLength=255)
    nodename: str = field(minLength=1, maxLength=255)
    start: datetime.datetime
    finish: datetime.datetime
    result: str = field(enum=list(RESULTS))
    # What the operator reads when the build failed ("No more IP addresses").
    reason: str | None = field(default=None, maxLength=65535)
