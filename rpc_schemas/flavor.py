"""Flavor: the size and the extra specs of an instance, as the scheduler receives it.

``extra_specs`` holds the operator's scheduling knobs as flat strings:
``resources:CLASS=N`` (override or, with 0, remove a resource class),
``trait:NAME=required|forbidden`` and
``aggregate_instance_extra_specs:KEY=VALUE``. ``Flavor.placement_resources``
is the one reading of the size and the ``resources:`` specs (the scheduler's
query, the audit's re-claim, the compute agent's local claim); the rest is
read by the scheduler.
"""
from __future__ import annotations

import dataclasses
import re

from rpc_schemas.base import Payload, field
from rpc_schemas.registry import register

RESOURCES_PREFIX = 'resources'
_CLASS_RE = re.compile(r'^[A-Z0-9_]+$')
_GRANULAR_RE = re.compile(r'^resources[^:]+:')


class InvalidResourcesSpec(ValueError):
    """A ``resources`` extra spec that names no resource class or no whole amount."""


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

    def placement_resources(self) -> dict[str, int]:
        """Resource class -> amount one instance needs in Placement (no zeros).

        VCPU, MEMORY_MB and DISK_GB from the size, overridden or added by
        ``resources:CLASS=N`` specs and removed by ``resources:CLASS=0``:
        ``{"VCPU": 2, "MEMORY_MB": 2048, "CUSTOM_FPGA": 1}``. Raises
        ``InvalidResourcesSpec`` naming the bad key.
        """
        resources = {'VCPU': self.vcpus, 'MEMORY_MB': self.memory_mb,
                     'DISK_GB': self.root_gb}
        for key, value in self.extra_specs.items():
            if _GRANULAR_RE.match(key):
                raise InvalidResourcesSpec(
                    f'flavor {self.name}: extra spec {key!r} asks for a granular '
                    f'resource group, which this scheduler does not support yet; '
                    f'use unnumbered "resources:CLASS" keys')
            if not key.startswith(RESOURCES_PREFIX + ':'):
                continue
            rc = key.split(':', 1)[1]
            if not _CLASS_RE.match(rc):
                raise InvalidResourcesSpec(
                    f'flavor {self.name}: extra spec {key!r} does not name a '
                    f'resource class (upper case letters, digits, underscores)')
            try:
                amount = int(value)
            except (TypeError, ValueError):
                amount = -1
            if amount < 0:
                raise InvalidResourcesSpec(
                    f'flavor {self.name}: extra spec {key}={value!r} must be a '
                    f'whole number of {rc} (0 removes the class)')
            resources[rc] = amount
        return {rc: amount for rc, amount in resources.items() if amount > 0}
