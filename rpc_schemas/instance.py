"""Instance: what a compute agent needs to build one instance, and the states it goes through.

The super conductor creates the instance in its cell's database and casts
it to the first host with ``build_and_run_instance``; the cell conductor
carries it along a reschedule. The vm and task states are the strings the
cell DB stores (``instances.vm_state`` / ``task_state``).
"""
from __future__ import annotations

import dataclasses
import datetime

from rpc_schemas.base import Payload, field
from rpc_schemas.flavor import Flavor
from rpc_schemas.registry import register

# vm_state: where the instance is in its life.
BUILDING = 'building'
ACTIVE = 'active'
ERROR = 'error'
DELETED = 'deleted'
VM_STATES = (BUILDING, ACTIVE, ERROR, DELETED)

# task_state: what is being done to it right now (None: nothing).
SCHEDULING = 'scheduling'
SPAWNING = 'spawning'
DELETING = 'deleting'
TASK_STATES = (SCHEDULING, SPAWNING, DELETING)


@register
@dataclasses.dataclass(frozen=True)
class Instance(Payload):
    NAME = 'Instance'
    # 1.1: image_ref, the image the user asked for (the compute API's imageRef).
    # 1.2: description and launch_index (the compute API's server description
    # and the place of the instance in its create request, from 0).
    VERSION = '1.2'
    DESCRIPTION = ('One instance as a build needs it: who owns it, its size, '
                   'its image properties and where it is (to be) built.')

    uuid: str = field(minLength=36, maxLength=36)
    project_id: str = field(minLength=1, maxLength=255)
    user_id: str = field(minLength=1, maxLength=255)
    flavor: Flavor
    display_name: str | None = field(default=None, maxLength=255)
    image_properties: dict[str, str] = field(default_factory=dict)
    availability_zone: str | None = field(default=None, maxLength=255)
    vm_state: str = field(default=BUILDING, enum=list(VM_STATES))
    task_state: str | None = field(default=SCHEDULING, maxLength=32)
    host: str | None = field(default=None, maxLength=255)
    node: str | None = field(default=None, maxLength=255)
    cell_uuid: str | None = field(default=None, maxLength=36)
    launched_at: datetime.datetime | None = None
    image_ref: str | None = field(default=None, maxLength=255, since='1.1')
    description: str | None = field(default=None, maxLength=255, since='1.2')
    launch_index: int = field(default=0, minimum=0, since='1.2')
