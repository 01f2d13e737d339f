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
  caller's connection) and a group with members cannot be deleted;
- a member holds a place, (domain, slot), once the scheduler claimed it a
  host (``hold``): under anti-affinity at most ``max_per_domain`` members
  of a group hold one domain, kept by the database's unique (group,
  domain, slot), so of two schedulers racing for a domain's last place one
  is refused and must go elsewhere; under affinity every member holds the
  same domain (the group's row is locked while one is taken); a member in
  ERROR, deleted, or whose claim was removed gives its place back
  (``release``).
"""
from __future__ import annotations

import dataclasses
import uuid as uuidlib
from typing import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import server_group_members, server_groups
from cellplane.objects import failure_domains
from rpc_schemas.request_spec import RequestSpec

AFFINITY = 'affinity'
ANTI_AFFINITY = 'anti-affinity'
SOFT_AFFINITY = 'soft-affinity'
SOFT_ANTI_AFFINITY = 'soft-anti-affinity'
POLICIES = (AFFINITY, ANTI_AFFINITY, SOFT_AFFINITY, SOFT_ANTI_AFFINITY)
HOST_LEVEL = 'host'
NAME_MAX = 255


class ServerGroupError(Exception):
    """A server-group request the operator must correct."""


class GroupNotFound(ServerGroupError):
    """No group has this uuid, nor this name in the project."""


class GroupExists(ServerGroupError):
    """The project already has a group of this name."""


class GroupInUse(ServerGroupError):
    """The group has members."""


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


@dataclasses.dataclass(frozen=True)
class Member:
    instance_uuid: str
    # The place it holds: the domain uuid at the group's level (the host name
    # at ``host``) and a slot in it; None while it holds none.
    domain: str | None
    slot: int | None


def _view(conn: Connection, row) -> ServerGroup:
    members = conn.execute(sa.select(server_group_members.c.instance_uuid).where(
        server_group_members.c.group_id == row.id).order_by(
        server_group_members.c.id)).scalars()
    return ServerGroup(uuid=row.uuid, project_id=row.project_id, user_id=row.user_id,
                       name=row.name, policy=row.policy, level=row.level,
                       max_per_domain=row.max_per_domain, members=tuple(members))


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
            raise ServerGroupError(f'--max-per-domain is for anti-affinity policies, '
                                   f'not {policy}')
        if max_per_domain < 1:
            raise ServerGroupError(f'--max-per-domain must be at least 1, not '
                                   f'{max_per_domain}')
    levels = failure_domains.levels(engine)
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


def list_all(engine: Engine, *, project_id: str | None = None) -> list[ServerGroup]:
    """Every group (of ``project_id``), by project and name."""
    query = sa.select(server_groups).order_by(server_groups.c.project_id,
                                              server_groups.c.name)
    if project_id is not None:
        query = query.where(server_groups.c.project_id == project_id)
    with engine.connect() as conn:
        return [_view(conn, row) for row in conn.execute(query).all()]


def delete(engine: Engine, ref: str, *, project_id: str | None = None) -> ServerGroup:
    """Delete the group; refused (``GroupInUse``) while it has members."""
    with engine.begin() as conn:
        row = _row(conn, ref, project_id)
        group = _view(conn, row)
        if group.members:
            raise GroupInUse(
                f'server group {group.name} ({group.uuid}) has {len(group.members)} '
                f'member(s) ({", ".join(group.members[:5])}'
                f'{", ..." if len(group.members) > 5 else ""}); delete them first')
        # Guarded so that a member added since the read keeps its group.
        done = conn.execute(server_groups.delete().where(
            server_groups.c.id == row.id,
            ~sa.exists().where(server_group_members.c.group_id == row.id)))
        if done.rowcount != 1:
            raise GroupInUse(f'server group {group.name} ({group.uuid}) gained members '
                             f'meanwhile')
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


def members(engine: Engine, group_uuid: str) -> list[Member]:
    """The group's members in the order they joined, with the place each holds."""
    query = (sa.select(server_group_members.c.instance_uuid,
                       server_group_members.c.domain, server_group_members.c.slot)
             .select_from(server_group_members.join(
                 server_groups, server_groups.c.id == server_group_members.c.group_id))
             .where(server_groups.c.uuid == group_uuid)
             .order_by(server_group_members.c.id))
    with engine.connect() as conn:
        return [Member(r.instance_uuid, r.domain, r.slot) for r in conn.execute(query)]


def group_of(engine: Engine, instance_uuid: str) -> ServerGroup | None:
    """The group the instance is a member of, if any."""
    with engine.connect() as conn:
        row = conn.execute(sa.select(server_groups).select_from(server_groups.join(
            server_group_members, server_groups.c.id == server_group_members.c.group_id))
            .where(server_group_members.c.instance_uuid == instance_uuid)).first()
        return None if row is None else _view(conn, row)


def hold(engine: Engine, instance_uuid: str, domain: str,
         max_per_domain: int | None) -> bool:
    """Make the member hold a place in ``domain``; False when it may not.

    Anti-affinity (``max_per_domain`` a number): False when the domain is
    full. Each slot is tried in its own transaction: a unique violation
    means another member (perhaps another scheduler's, a moment ago) has
    that slot. Affinity (``max_per_domain`` None): False when another member
    holds another domain; the group's row is locked first, so that of two
    first members placed at once in two domains one is refused. A member
    that held a place elsewhere gives it up. An instance that is no member
    (its group was sent without being recorded) has nothing to hold: True.
    """
    if max_per_domain is None:
        return _hold_with_the_others(engine, instance_uuid, domain)
    for slot in range(max_per_domain):
        try:
            with engine.begin() as conn:
                conn.execute(server_group_members.update().where(
                    server_group_members.c.instance_uuid == instance_uuid).values(
                    domain=domain, slot=slot))
        except sa.exc.IntegrityError:
            continue
        return True
    return False


def _hold_with_the_others(engine: Engine, instance_uuid: str, domain: str) -> bool:
    with engine.begin() as conn:
        group_id = conn.execute(sa.select(server_group_members.c.group_id).where(
            server_group_members.c.instance_uuid == instance_uuid)).scalar_one_or_none()
        if group_id is None:
            return True
        conn.execute(sa.select(server_groups.c.id).where(
            server_groups.c.id == group_id).with_for_update())
        elsewhere = conn.execute(sa.select(server_group_members.c.domain).where(
            server_group_members.c.group_id == group_id,
            server_group_members.c.instance_uuid != instance_uuid,
            server_group_members.c.domain.is_not(None),
            server_group_members.c.domain != domain).limit(1)).first()
        if elsewhere is not None:
            return False
        conn.execute(server_group_members.update().where(
            server_group_members.c.instance_uuid == instance_uuid).values(
            domain=domain, slot=None))
    return True


def follow(engine: Engine, member: Member, domain: str, max_per_domain: int | None) -> bool:
    """Move a member's place to where it runs now (a reschedule moved it); False if it could not.

    Only if it still holds the place it was read with. Under anti-affinity
    a full ``domain`` keeps the old place (each slot tried as in ``hold``).
    """
    slots: list[int | None] = [None] if max_per_domain is None else list(range(max_per_domain))
    for slot in slots:
        try:
            with engine.begin() as conn:
                done = conn.execute(server_group_members.update().where(
                    server_group_members.c.instance_uuid == member.instance_uuid,
                    server_group_members.c.domain == member.domain).values(
                    domain=domain, slot=slot))
        except sa.exc.IntegrityError:
            continue
        return done.rowcount == 1
    return False


def release_on(conn: Connection, instance_uuids: Iterable[str]) -> None:
    """The members hold no place any more (ERROR, deleted, claim removed), on the caller's transaction."""
    uuids = list(instance_uuids)
    if uuids:
        conn.execute(server_group_members.update().where(
            server_group_members.c.instance_uuid.in_(uuids)).values(domain=None, slot=None))


def release(engine: Engine, instance_uuids: Iterable[str]) -> None:
    """``release_on`` in a transaction of its own."""
    with engine.begin() as conn:
        release_on(conn, instance_uuids)


def release_stale(engine: Engine, held: Iterable[Member]) -> None:
    """Give back these places if the members still hold exactly them (another writer may have moved them)."""
    with engine.begin() as conn:
        for member in held:
            conn.execute(server_group_members.update().where(
                server_group_members.c.instance_uuid == member.instance_uuid,
                server_group_members.c.domain == member.domain).values(
                domain=None, slot=None))


def with_places(engine: Engine, spec: RequestSpec) -> RequestSpec:
    """``spec`` with its server group's members and the places they hold now, for the cell.

    What the cell conductor needs to check an alternate against the group
    without reading this database (``conductor/cell/group_check.py``).
    """
    group = spec.instance_group
    if group is None:
        return spec
    found = members(engine, group.uuid)
    return dataclasses.replace(spec, instance_group=dataclasses.replace(
        group, members=[m.instance_uuid for m in found],
        domains=sorted(m.domain for m in found if m.domain is not None)))
