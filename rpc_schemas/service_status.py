"""ServiceStatus: the heartbeat a daemon sends to say it is alive.

Compute agents cast it to their cell conductor every ``[service]
report_interval``; the cell conductor records it in the cell DB ``services``
table, which is what "is this service up" is answered from.

Since 1.1 a compute host's status also says which builds it holds
(``building``): the cell conductor marks them started, which is how a build
whose cast was lost is told apart from one that is only slow.
"""
from __future__ import annotations

import dataclasses
import datetime

from rpc_schemas.base import Payload, field
from rpc_schemas.registry import register


@register
@dataclasses.dataclass(frozen=True)
class ServiceStatus(Payload):
    NAME = 'ServiceStatus'
    VERSION = '1.1'
    DESCRIPTION = 'Heartbeat of one service on one host.'

    host: str = field(minLength=1, maxLength=255)
    binary: str = field(minLength=1, maxLength=255)
    topic: str = field(minLength=1, maxLength=255)
    report_time: datetime.datetime
    version: str = field(maxLength=32)
    cell_name: str | None = field(default=None, maxLength=255)
    # The service's own view when it first registers; once the row exists the
    # database (an operator's disable) is authoritative, not the heartbeat.
    disabled: bool = field(default=False)
    disabled_reason: str | None = field(default=None, maxLength=255)
    # The instances whose build this host has received and not yet reported
    # on (None: the sender does not say, as before 1.1).
    building: list[str] | None = field(default=None, since='1.1')
