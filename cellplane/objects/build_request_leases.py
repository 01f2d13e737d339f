"""Leases on build requests (API DB ``build_requests``' lease columns): which super conductor is placing a boot.

A super conductor takes the build requests of a boot (``lease_and_read``:
those no one holds) before it schedules them, and places only what it
still holds (``build_requests.place_many`` under its ``Lease``). Its boot
message is acknowledged when it is received, so a super conductor that dies
mid-boot takes that message with it; what it leaves behind is found by
``orphans`` (leased by a process whose heartbeat stopped, or by an earlier
process of the same host, or never leased long after it was asked for: its
message was lost before any super conductor read it) and resumed by whoever
wins ``take_over``, a compare-and-set on the lease that works the same on
PostgreSQL and SQLite. ``release`` gives leases back. The resumption itself
is the super conductor's (``conductor/super/resume.py``).

The rest of a build request's life (written, placed, failed, deleted, and
the ``Lease`` a placing names) is ``cellplane/objects/build_requests.py``;
this module shares its table.
"""
from __future__ import annotations

import dataclasses
import datetime
from typing import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.db.api.models import build_requests as table
from cellplane.db.api.models import request_specs as request_specs_table
from cellplane.db.api.models import services
from cellplane.db.columns import utcnow
from cellplane.objects import build_requests
from cellplane.objects.services import Liveness
from rpc_schemas.request_spec import RequestSpec


@dataclasses.dataclass(frozen=True)
class Orphan:
    """A build request no live super conductor is placing, and why it is taken for lost."""

    instance_uuid: str
    request_spec: RequestSpec
    # The holder it is taken from; None: it was never leased.
    lease: build_requests.Lease | None
    why: str


# Built once, as build_requests' statements are: building a statement and its
# cache key costs more CPU than running it.
_LEASE = table.update().where(
    table.c.instance_uuid.in_(sa.bindparam('b_uuids', expanding=True)),
    table.c.fault_message.is_(None), build_requests.LIVE,
    table.c.lease_token.is_(None)).returning(*table.c)


def lease_and_read(engine: Engine, instance_uuids: Sequence[str],
                   holder: build_requests.Lease) -> dict[str, build_requests.BuildRequest]:
    """Lease to ``holder`` the build requests that exist, have not failed and no one holds.

    Returns the requests ``holder`` holds now, in the order given: one
    statement, usually. A request another super conductor holds (it resumed
    it while this message waited) is left to that one.
    """
    uuids = list(instance_uuids)
    with engine.begin() as conn:
        got = {row.instance_uuid: row for row in conn.execute(_LEASE, {
            'b_uuids': uuids, 'lease_host': holder.host, 'lease_token': holder.token,
            'leased_at': utcnow()})}
        if len(got) < len(uuids):
            # Those this holder already held (a resumption took them over).
            got.update((row.instance_uuid, row) for row in conn.execute(
                sa.select(table).where(
                    table.c.instance_uuid.in_([u for u in uuids if u not in got]),
                    table.c.fault_message.is_(None), build_requests.LIVE,
                    table.c.lease_token == holder.token)))
    return {u: build_requests.from_row(got[u]) for u in uuids if u in got}


def orphans(engine: Engine, *, holder: build_requests.Lease, binary: str,
            service_down_time: float, unleased_for: float, now: datetime.datetime | None = None) -> list[Orphan]:
    """The build requests not failed that no live super conductor is placing, oldest first.

    - leased by an earlier process of ``holder``'s host (it restarted);
    - leased more than ``service_down_time`` ago by a host whose ``binary``
      heartbeat (API DB ``services``) is older than that, or that has none;
    - never leased, and asked for more than ``unleased_for`` seconds ago.
    """
    now = now or utcnow()
    liveness = Liveness.at(service_down_time, now)
    down_before = liveness.down_before
    asked_before = now - datetime.timedelta(seconds=unleased_for)
    holder_seen = (sa.select(services.c.last_seen_at)
                   .where(services.c.host == table.c.lease_host,
                          services.c.binary == binary)
                   .scalar_subquery())
    query = (sa.select(table.c.instance_uuid, table.c.lease_host,
                       table.c.lease_token, table.c.created_at,
                       holder_seen.label('holder_seen'), request_specs_table.c.spec)
             .select_from(table.join(
                 request_specs_table,
                 request_specs_table.c.instance_uuid == table.c.instance_uuid))
             .where(table.c.fault_message.is_(None), sa.or_(
                 sa.and_(table.c.lease_token.is_(None),
                         table.c.created_at < asked_before),
                 sa.and_(table.c.lease_host == holder.host,
                         table.c.lease_token != holder.token),
                 # A lease taken within service_down_time was taken by a
                 # live process, whatever its heartbeat says.
                 sa.and_(table.c.lease_host != holder.host,
                         table.c.leased_at < down_before,
                         liveness.down_clause(holder_seen))))
             .order_by(table.c.id))
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    found = []
    for row in rows:
        if row.lease_token is None:
            taken_from = None
            why = (f'no super conductor picked it up in {unleased_for:g} s (asked for '
                   f'at {row.created_at:%H:%M:%S} UTC; its message was lost)')
        else:
            taken_from = build_requests.Lease(host=row.lease_host, token=row.lease_token)
            if row.lease_host == holder.host:
                why = (f'the super conductor on {row.lease_host} that was placing it '
                       f'restarted')
            elif row.holder_seen is None:
                why = (f'the super conductor on {row.lease_host} that was placing it '
                       f'has no heartbeat')
            else:
                why = (f'the super conductor on {row.lease_host} that was placing it '
                       f'is down (no heartbeat since {row.holder_seen:%H:%M:%S} UTC)')
        found.append(Orphan(instance_uuid=row.instance_uuid,
                            request_spec=RequestSpec.from_primitive(row.spec),
                            lease=taken_from, why=why))
    return found


def take_over(engine: Engine, orphan: Orphan, holder: build_requests.Lease) -> bool:
    """Whether ``holder`` now holds ``orphan`` (no one took, placed or failed it since it was found)."""
    held_by = (table.c.lease_token.is_(None) if orphan.lease is None
               else table.c.lease_token == orphan.lease.token)
    with engine.begin() as conn:
        return conn.execute(table.update().where(
            table.c.instance_uuid == orphan.instance_uuid,
            table.c.fault_message.is_(None), held_by).values(
                lease_host=holder.host, lease_token=holder.token,
                leased_at=utcnow())).rowcount == 1


def release(engine: Engine, instance_uuids: Iterable[str],
            holder: build_requests.Lease) -> None:
    """Give back ``holder``'s leases on these requests (unleased, they are found again later)."""
    with engine.begin() as conn:
        conn.execute(table.update().where(
            table.c.instance_uuid.in_(list(instance_uuids)),
            table.c.lease_token == holder.token).values(
                lease_host=None, lease_token=None, leased_at=None))
