"""ComputeNodeRecord: a compute node as its agent reports it to the cell conductor.

The cell conductor upserts it into the cell DB's ``compute_nodes`` (keyed
by ``uuid``, which is also the node's resource provider in Placement); the
scheduler reads those rows downward. Capacities are the totals the virt
driver reports; ``stats`` carries free-form facts for the scheduler's
filters (``supported_instances``, ``failed_builds``...).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from rpc_schemas.base import Payload, field
from rpc_schemas.registry import register


@register
@dataclasses.dataclass(frozen=True)
class ComputeNodeRecord(Payload):
    NAME = 'ComputeNodeRecord'
    VERSION = '1.0'
    DESCRIPTION = ('A compute node: its identity (also its Placement resource '
                   'provider), its capacity and its availability zone.')

    uuid: str = field(minLength=36, maxLength=36)
    host: str = field(minLength=1, maxLength=255)
    nodename: str = field(minLength=1, maxLength=255)
    vcpus: int = field(minimum=0)
    memory_mb: int = field(minimum=0)
    local_gb: int = field(minimum=0)
    cpu_allocation_ratio: float = field(default=1.0, exclusiveMinimum=0)
    ram_allocation_ratio: float = field(default=1.0, exclusiveMinimum=0)
    disk_allocation_ratio: float = field(default=1.0, exclusiveMinimum=0)
    availability_zone: str | None = field(default=None, maxLength=255)
    stats: dict[str, Any] = field(default_factory=dict)
