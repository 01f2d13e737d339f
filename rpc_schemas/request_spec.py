"""RequestSpec: everything the scheduler needs to place one boot request.

The super conductor sends it to ``select_destinations``; the scheduler
turns it into a Placement allocation-candidates query and into the questions
its filters ask each host. Its parts (server group, requested destination,
retry history) are payloads of their own so each carries its version.
"""
from __future__ import annotations

import dataclasses

from rpc_schemas.base import Payload, field
from rpc_schemas.flavor import Flavor
from rpc_schemas.registry import register

# A group's policy as the spec carries it; its soft form is ``soft=True``.
AFFINITY = 'affinity'
ANTI_AFFINITY = 'anti-affinity'
GROUP_POLICIES = (AFFINITY, ANTI_AFFINITY)
# The four policies a group is created with (the API's and the API database's names).
SOFT_AFFINITY = 'soft-affinity'
SOFT_ANTI_AFFINITY = 'soft-anti-affinity'
POLICIES = (AFFINITY, ANTI_AFFINITY, SOFT_AFFINITY, SOFT_ANTI_AFFINITY)
# The level below every failure-domain level: the host itself.
HOST_LEVEL = 'host'


@register
@dataclasses.dataclass(frozen=True)
class InstanceGroup(Payload):
    NAME = 'InstanceGroup'
    VERSION = '1.1'
    DESCRIPTION = ('A server group: its policy, the failure-domain level the '
                   'policy applies at, its members and the domains they held, '
                   'as known when the request was sent.')

    uuid: str = field(minLength=1, maxLength=36)
    policy: str = field(enum=list(GROUP_POLICIES))
    # Every member's instance uuid, the request's own included (the cell
    # conductor checks a rescheduled instance against all the others, the
    # other instances of its multi-create too), as the super conductor sends
    # it to the cell; the cell conductor locates them in Placement.
    members: list[str] = field(default_factory=list)
    # Filled by nothing: always empty. Kept on the wire because every 1.x
    # sender sends it and a receiver refuses a field it does not know;
    # dropping it is InstanceGroup 2.0.
    hosts: list[str] = field(default_factory=list)
    # A failure-domain level operators describe as Placement aggregates
    # ("rack", "row", ...); None (or ``HOST_LEVEL``) means the host itself:
    # read it through ``domain_level``.
    level: str | None = field(default=None, minLength=1, maxLength=255)
    # Soft policies are preferences (weighers), never a reason for NoValidHost.
    soft: bool = field(default=False, since='1.1')
    # Members one domain may hold under anti-affinity.
    max_per_domain: int = field(default=1, minimum=1, since='1.1')
    name: str | None = field(default=None, maxLength=255, since='1.1')
    # The domains (Placement aggregate uuids; host names at the host level)
    # the members held when the scheduler chose, its own choices included.
    domains: list[str] = field(default_factory=list, since='1.1')

    @property
    def domain_level(self) -> str | None:
        """The failure-domain level the policy applies at; None at the host level."""
        return None if self.level in (None, HOST_LEVEL) else self.level

    @property
    def level_name(self) -> str:
        """The level as an operator reads it: ``host`` or the failure-domain level."""
        return self.domain_level or HOST_LEVEL


@register
@dataclasses.dataclass(frozen=True)
class RequestedDestination(Payload):
    NAME = 'RequestedDestination'
    VERSION = '1.0'
    DESCRIPTION = ('Where the caller wants the instance: a host, a node, a cell '
                   'and/or Placement aggregates (each set field narrows).')

    host: str | None = field(default=None, maxLength=255)
    nodename: str | None = field(default=None, maxLength=255)
    cell_uuid: str | None = field(default=None, maxLength=36)
    # Placement aggregate UUIDs; the host must be in at least one of them.
    aggregates: list[str] = field(default_factory=list)


@register
@dataclasses.dataclass(frozen=True)
class SchedulingRetry(Payload):
    NAME = 'SchedulingRetry'
    VERSION = '1.0'
    DESCRIPTION = 'Earlier attempts of this request: how many, on which hosts.'

    num_attempts: int = field(default=0, minimum=0)
    # Filled by nothing: always empty. Kept on the wire because every 1.x
    # sender sends it and a receiver refuses a field it does not know;
    # dropping it is InstanceGroup 2.0.
    hosts: list[str] = field(default_factory=list)


@register
@dataclasses.dataclass(frozen=True)
class RequestSpec(Payload):
    NAME = 'RequestSpec'
    # 1.1: requested_networks, what the compute API's create asked of networks,
    # and image_ref, the image it asked for.
    VERSION = '1.1'
    DESCRIPTION = 'What to place and under which constraints: one boot request.'

    flavor: Flavor
    project_id: str = field(minLength=1, maxLength=255)
    # Placement records the project and user of every claim.
    user_id: str = field(minLength=1, maxLength=255)
    num_instances: int = field(default=1, minimum=1)
    # Image properties such as hw_architecture, img_hv_type, hw_vm_mode.
    image_properties: dict[str, str] = field(default_factory=dict)
    availability_zone: str | None = field(default=None, maxLength=255)
    # Hint name -> values, e.g. {"different_host": [instance uuids]}.
    scheduler_hints: dict[str, list[str]] = field(default_factory=dict)
    instance_group: InstanceGroup | None = None
    requested_destination: RequestedDestination | None = None
    ignore_hosts: list[str] = field(default_factory=list)
    retry: SchedulingRetry | None = None
    # "auto" or "none" as the compute API's create asked (2.37 and later);
    # None when it named none. Recorded, not acted on: cellplane has no
    # network service.
    requested_networks: str | None = field(default=None, enum=['auto', 'none', None],
                                           since='1.1')
    # The image asked for (the compute API's imageRef), as Nova's request spec
    # keeps it: a server whose cell cannot be read is shown with it.
    image_ref: str | None = field(default=None, maxLength=255, since='1.1')
