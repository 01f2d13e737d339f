"""Server groups in the API DB (``server_groups``, ``server_group_members``): policies among instances.

A group is a policy (affinity, anti-affinity, and their soft forms) at a
level: ``host`` or one of the failure-domain levels the scheduler recorded
(``cellplane.objects.failure_domains``). What this module promises:

- a group is found by its uuid, or by its name within its project; names
  are unique per project (the database's unique (project, name) keeps it so
  under concurrent creates);
- a group's level is ``host`` or a recorded level (``UnknownLevel``), and
  ``max_per_domain`` (members one domain may hold, at least 1) is only for
  anti-affinity;
- members are written with their build requests (``add_members`` on the
  caller's connection); a deleted group's members simply leave it.

The places members hold are ``cellplane.objects.server_group_places``'.
"""
from __future__ import annotations

import dataclasses
import uuid as uuidlib
from typing import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import server_group_members, server_groups
from cellplane.objects import failure_domain_levels
from rpc_schemas.request_spec import AFFINITY, ANTI_AFFINITY, HOST_LEVEL, POLICIES, SOFT_ANTI_AFFINITY

NAME_MAX = 255


class ServerGroupError(Exception):
    """A server-group request the operator must correct."""


class GroupNotFound(ServerGroupError):
    """No group has this uuid, nor this name in the project."""


class GroupExists(ServerGroupError):
    """The project already has a group of this name."""


class MaxPerDomainError(ServerGroupError):
    """``max_per_domain`` given for an affinity policy, or below 1; ``problem`` says which."""

    def __init__(self, problem: str) -> None:
        super().__init__(f'max_per_domain {problem}')
        self.problem = problem


class UnknownLevel(ServerGroupError):
    """The level is neither ``host`` nor one the scheduler recorded."""


@dataclasses.dataclass(frozen=True)
class ServerGroup:
    uuid: str
    project_id: str
    user_id: str | None
    name: str
    policy: str
    level: str
    max_per_domain: int
    members: tuple[str, ...] = ()

    @property
    def hard(self) -> bool:
        return self.policy in (AFFINITY, ANTI_AFFINITY)

    @property
    def anti(self) -> bool:
        return self.policy in (ANTI_AFFINITY, SOFT_ANTI_AFFINITY)


def _view(conn: Connection, row) -> ServerGroup:
    return _views(conn, [row])[0]


def _views(conn: Connection, rows) -> list[ServerGroup]:
    """The groups of ``rows`` with their members in the order they joined: one statement."""
    members: dict[int, list[str]] = {row.id: [] for row in rows}
    if members:
        for group_id, uuid in conn.execute(sa.select(
                server_group_members.c.group_id, server_group_members.c.instance_uuid).where(
                server_group_members.c.group_id.in_(list(members))).order_by(
                server_group_members.c.id)):
            members[group_id].append(uuid)
    return [ServerGroup(uuid=row.uuid, project_id=row.project_id, user_id=row.user_id,
                        name=row.name, policy=row.policy, level=row.level,
                        max_per_domain=row.max_per_domain, members=tuple(members[row.id]))
            for row in rows]


def _row(conn: Connection, ref: str, project_id: str | None):
    found = conn.execute(sa.select(server_groups).where(
        server_groups.c.uuid == ref)).first()
    if found is not None:
        return found
    query = sa.select(server_groups).where(server_groups.c.name == ref)
    if project_id is not None:
        query = query.where(server_groups.c.project_id == project_id)
    rows = conn.execute(query).all()
    if len(rows) == 1:
        return rows[0]
    if not rows:
        where = f' in project {project_id}' if project_id is not None else ''
        raise GroupNotFound(f'no server group with id or name {ref!r}{where}')
    raise GroupNotFound(f'{len(rows)} server groups of several projects are named '
                        f'{ref!r}; give an id or --project')


def create(engine: Engine, *, project_id: str, user_id: str | None, name: str,
           policy: str, level: str = HOST_LEVEL,
           max_per_domain: int | None = None) -> ServerGroup:
    """A new group; refused (``ServerGroupError``) when the arguments cannot make one."""
    if not name or not name.strip():
        raise ServerGroupError('a server group name must not be empty or blank')
    if len(name) > NAME_MAX:
        raise ServerGroupError(f'a server group name has at most {NAME_MAX} characters, '
                               f'not {len(name)}')
    if policy not in POLICIES:
        raise ServerGroupError(f'unknown policy {policy!r} (one of {", ".join(POLICIES)})')
    if max_per_domain is not None:
        if policy not in (ANTI_AFFINITY, SOFT_ANTI_AFFINITY):
            raise MaxPerDomainError(f'is for anti-affinity policies, not {policy}')
        if max_per_domain < 1:
            raise MaxPerDomainError(f'must be at least 1, not {max_per_domain}')
    levels = failure_domain_levels.levels(engine)
    with engine.begin() as conn:
        if level != HOST_LEVEL and level not in levels:
            raise UnknownLevel(
                f'unknown level {level!r}: the levels are host and those the scheduler '
                f'uses ([scheduler] failure_domain_levels: '
                f'{", ".join(levels) or "none recorded"})')
        taken = conn.execute(sa.select(server_groups.c.uuid).where(
            server_groups.c.project_id == project_id,
            server_groups.c.name == name)).first()
        if taken is not None:
            raise GroupExists(f'project {project_id} already has a server group named '
                              f'{name!r} ({taken.uuid})')
        group_uuid = str(uuidlib.uuid4())
        try:
            with conn.begin_nested():
                conn.execute(server_groups.insert().values(
                    uuid=group_uuid, project_id=project_id, user_id=user_id, name=name,
                    policy=policy, level=level, max_per_domain=max_per_domain or 1))
        except sa.exc.IntegrityError:
            raise GroupExists(f'project {project_id} already has a server group named '
                              f'{name!r}') from None
        return _view(conn, _row(conn, group_uuid, None))


def get(engine: Engine, ref: str, *, project_id: str | None = None) -> ServerGroup:
    """The group with uuid ``ref``, else the one named ``ref`` (in ``project_id`` if given)."""
    with engine.connect() as conn:
        return _view(conn, _row(conn, ref, project_id))


def list_all(engine: Engine, *, project_id: str | None = None,
             by_creation: bool = False) -> list[ServerGroup]:
    """Every group (of ``project_id``), by project and name, or oldest first (``by_creation``)."""
    query = sa.select(server_groups).order_by(
        *((server_groups.c.id,) if by_creation
          else (server_groups.c.project_id, server_groups.c.name)))
    if project_id is not None:
        query = query.where(server_groups.c.project_id == project_id)
    with engine.connect() as conn:
        return _views(conn, conn.execute(query).all())


def delete(engine: Engine, ref: str, *, project_id: str | None = None) -> ServerGroup:
    """Delete the group; its members leave it and keep running where they are, as in Nova.

    The group's row is locked first, so a place being taken under affinity
    meanwhile waits and then finds no member to hold
    (``server_group_places.hold``: True). A
    member being scheduled afterwards is scheduled without the group.
    """
    with engine.begin() as conn:
        row = _row(conn, ref, project_id)
        conn.execute(sa.select(server_groups.c.id).where(
            server_groups.c.id == row.id).with_for_update())
        group = _view(conn, row)
        conn.execute(server_group_members.delete().where(
            server_group_members.c.group_id == row.id))
        conn.execute(server_groups.delete().where(server_groups.c.id == row.id))
    return group


def add_members(conn: Connection, group_uuid: str, instance_uuids: Sequence[str]) -> None:
    """Make the instances members of the group, on the caller's transaction."""
    group_id = conn.execute(sa.select(server_groups.c.id).where(
        server_groups.c.uuid == group_uuid)).scalar_one_or_none()
    if group_id is None:
        raise GroupNotFound(f'no server group {group_uuid}')
    conn.execute(server_group_members.insert(),
                 [{'group_id': group_id, 'instance_uuid': u} for u in instance_uuids])


def remove_members(engine: Engine, instance_uuids: Iterable[str]) -> None:
    """The instances (deleted) are no longer members of any group."""
    uuids = list(instance_uuids)
    if uuids:
        with engine.begin() as conn:
            conn.execute(server_group_members.delete().where(
                server_group_members.c.instance_uuid.in_(uuids)))


def count_of_project(conn: Connection, project_id: str) -> int:
    """How many server groups the project has."""
    return conn.execute(sa.select(sa.func.count()).select_from(server_groups).where(
        server_groups.c.project_id == project_id)).scalar_one()


def member_count(conn: Connection, group_uuid: str) -> int:
    """How many members the group has."""
    return conn.execute(sa.select(sa.func.count()).select_from(
        server_group_members.join(server_groups,
                                  server_group_members.c.group_id == server_groups.c.id)).where(
        server_groups.c.uuid == group_uuid)).scalar_one()
