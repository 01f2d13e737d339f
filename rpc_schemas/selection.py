"""Selection: one host the scheduler chose (and claimed) or offers as an alternate.

``select_destinations`` returns, per instance, a list of these: the claimed
host first, then alternates in the same cell, each with the Placement
allocation request the cell conductor uses to claim it on a retry.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from rpc_schemas.base import Payload, field
from rpc_schemas.registry import register


def allocations_of(allocation_request: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Provider uuid -> {resource class: amount} of a Placement allocation request.

    ``allocation_request`` is the body Placement gives in
    ``allocation_requests``: ``{"allocations": {"<rp uuid>": {"resources":
    {"VCPU": 2}}}, ...}``. The scheduler reads candidates' bodies with it
    before any ``Selection`` exists; ``Selection.allocations`` is the same.
    """
    return {rp: {rc: int(n) for rc, n in (entry.get('resources') or {}).items()}
            for rp, entry in (allocation_request.get('allocations') or {}).items()}


@register
@dataclasses.dataclass(frozen=True)
class Selection(Payload):
    NAME = 'Selection'
    VERSION = '1.0'
    DESCRIPTION = ('A host chosen for an instance, with the Placement '
                   'allocation request that claims it.')

    service_host: str = field(minLength=1, maxLength=255)
    nodename: str = field(minLength=1, maxLength=255)
    compute_node_uuid: str = field(minLength=1, maxLength=36)
    cell_uuid: str = field(minLength=1, maxLength=36)
    # The body of PUT /allocations/{consumer} as Placement returned it in
    # allocation_requests, at allocation_request_version.
    allocation_request: dict[str, Any] = field()
    allocation_request_version: str = field(pattern=r'^1\.[0-9]+$')
    # Resource class -> the most the host may hand out (capacity), for the
    # compute agent's own last-moment check.
    limits: dict[str, int] = field(default_factory=dict)
    availability_zone: str | None = field(default=None, maxLength=255)

    @property
    def allocations(self) -> dict[str, dict[str, int]]:
        """Provider uuid -> {resource class: amount}: what claiming this host takes."""
        return allocations_of(self.allocation_request)
