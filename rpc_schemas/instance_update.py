"""InstanceUpdate: a compute agent's change of one instance's state, for its cell conductor.

The agent holds no database credentials: every state it reaches (ACTIVE
with host, node and launch time; ERROR; DELETED) travels as one of these to
``CellConductorAPI.instance_update``, with the build attempt that led to it
when there was one, so the state and the attempt history change together.
"""
from __future__ import annotations

import dataclasses
import datetime

from rpc_schemas.base import Payload, field
from rpc_schemas.build_attempt import BuildAttempt
from rpc_schemas.instance import TASK_STATES, VM_STATES
from rpc_schemas.registry import register


@register
@dataclasses.dataclass(frozen=True)
class InstanceUpdate(Payload):
    NAME = 'InstanceUpdate'
    VERSION = '1.0'
    DESCRIPTION = ("A change of one instance's state, reported by the host "
                   'that made it, with the build attempt behind it if any.')

    instance_uuid: str = field(minLength=36, maxLength=36)
    vm_state: str = field(enum=list(VM_STATES))
    task_state: str | None = field(default=None, enum=[*TASK_STATES, None])
    host: str | None = field(default=None, maxLength=255)
    node: str | None = field(default=None, maxLength=255)
    launched_at: datetime.datetime | None = None
    attempt: BuildAttempt | None = None
    # For ERROR: what the operator reads in the instance's fault.
    fault_message: str | None = field(default=None, maxLength=65535)
