"""Server groups as the API role shows them: each member with its status, host and domain.

The group and its members are the API database's
(``cellplane.objects.server_groups``); where a member runs is its cell's,
and which domain that host is in at the group's level is the failure
domains' (``cellplane.objects.failure_domains``). A member in ERROR or
deleted holds no domain, so none is shown for it.
"""
from __future__ import annotations

import dataclasses

from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.objects import failure_domains, server_groups
from cellplane_api import servers
from cellplane_api.conf import DEFAULT_CELL_TIMEOUT
from rpc_schemas.request_spec import HOST_LEVEL


@dataclasses.dataclass(frozen=True)
class MemberView:
    uuid: str
    name: str | None
    status: str
    host: str | None
    # The name of its domain at the group's level (the host at ``host``);
    # None while it runs nowhere, is in ERROR, or its host is in no domain.
    domain: str | None


def domain_names(api_engine: Engine, level: str) -> dict[str, str]:
    """Host -> the name of its domain at ``level`` (the host itself at ``host``)."""
    if level == HOST_LEVEL:
        return {}
    return {host: domain.name for domain in failure_domains.list_all(api_engine, level=level)
            for host in domain.hosts}


def member_views(api_engine: Engine, cells: CellDatabases, group: server_groups.ServerGroup,
                 *, cell_timeout: float = DEFAULT_CELL_TIMEOUT) -> list[MemberView]:
    """The group's members in the order they joined."""
    if not group.members:
        return []
    found = {s.uuid: s for s in servers.list_servers(
        api_engine, cells, group.members, include_deleted=True, cell_timeout=cell_timeout)}
    names = domain_names(api_engine, group.level)
    views = []
    for uuid in group.members:
        server = found.get(uuid)
        if server is None:
            views.append(MemberView(uuid, None, servers.DELETED, None, None))
            continue
        holds = server.host is not None and server.status not in (servers.ERROR,
                                                                  servers.DELETED)
        domain = None
        if holds:
            domain = (server.host if group.level == HOST_LEVEL
                      else names.get(server.host))
        views.append(MemberView(uuid, server.name, server.status, server.host, domain))
    return views
