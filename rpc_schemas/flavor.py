"""Flavor: the size and the extra specs of an instance, as the scheduler receives it.

``extra_specs`` holds the operator's scheduling knobs as flat strings:
``resources:CLASS=N`` (override or, with 0, remove a resource class),
``trait:NAME=required|forbidden`` and
``aggregate_instance_extra_specs:KEY=VALUE``. The scheduler reads them;
nothing else in the payload is interpreted by it.
"""
from __future__ import annotations

import dataclasses

from rpc_schemas.base import Payload, field
from rpc_schemas.registry import register


@register
@dataclasses.dataclass(frozen=True)
class Flavor(Payload):
    NAME = 'Flavor'
    VERSION = '1.0'
    DESCRIPTION = 'Size of an instance and the extra specs that steer its scheduling.'

    name: str = field(minLength=1, maxLength=255)
    vcpus: int = field(minimum=0)
    memory_mb: int = field(minimum=0)
    root_gb: int = field(default=0, minimum=0)
    flavorid: str | None = field(default=None, maxLength=255)
    extra_specs: dict[str, str] = field(default_factory=dict)
