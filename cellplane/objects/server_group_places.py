"""The places server-group members hold in the API DB (``server_group_members.domain``, ``.slot``).

What this module promises: a member holds a place, (domain, slot), once
the scheduler claimed it a host (``hold``). Under anti-affinity at most
``max_per_domain`` members of a group hold one domain, kept by the
database's unique (group, domain, slot), so of two schedulers racing for a
domain's last place one is refused and must go elsewhere; under affinity
every member holds the same domain (the group's row is locked while one is
taken). This is the database's guard of the rule
``cellplane.server_group_policy`` states (``place_limit`` slots per
domain), under concurrency. A member in ERROR, deleted, or whose claim was
removed gives its place back (``release``); one a reschedule moved follows
it (``follow``). The groups and who is a member are
``cellplane.objects.server_groups``'.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import server_group_members, server_groups


@dataclasses.dataclass(frozen=True)
class Member:
    instance_uuid: str
    # The place it holds: the domain uuid at the group's level (the host name
    # at ``host``) and a slot in it; None while it holds none.
    domain: str | None
    slot: int | None


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
