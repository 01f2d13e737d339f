"""What the cell is told of a request's server group: every member and the places they hold now.

After scheduling, the super conductor copies these into the spec it sends
to the cell (``with_places``): that is all the cell conductor knows of the
group, and what its group check (``conductor/cell/group_check.py``) tests
an alternate against without reading the API database. The members are all
of them, the request's own included: a rescheduled instance of a
multi-create must keep the policy with its siblings too.
"""
from __future__ import annotations

import dataclasses

from sqlalchemy.engine import Engine

from cellplane.objects import server_group_places
from rpc_schemas.request_spec import RequestSpec


def with_places(api_engine: Engine, spec: RequestSpec) -> RequestSpec:
    """``spec`` with its server group's members and the places they hold now, for the cell."""
    group = spec.instance_group
    if group is None:
        return spec
    found = server_group_places.members(api_engine, group.uuid)
    return dataclasses.replace(spec, instance_group=dataclasses.replace(
        group, members=[m.instance_uuid for m in found],
        domains=sorted(m.domain for m in found if m.domain is not None)))
