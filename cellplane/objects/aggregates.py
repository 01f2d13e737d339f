"""Host aggregates in the API DB (``aggregates``, ``aggregate_hosts``): named groups of hosts with metadata.

The scheduler reads them at every host refresh, and at its first request
after any change made here (each raises the ``scheduling`` change stamp,
``cellplane/objects/change_stamps.py``). AggregateInstanceExtraSpecsFilter
matches a flavor's ``aggregate_instance_extra_specs:KEY=VALUE`` against the
metadata of a host's aggregates, and the metadata key ``availability_zone``
(Nova's convention) puts the aggregate's hosts in that zone.

What this module promises:

- names and UUIDs are unique; an aggregate is found by either;
- a host is never in two aggregates whose zones differ: adding the host, or
  giving an aggregate a zone, is refused naming both aggregates and the host;
- an aggregate that still has hosts cannot be deleted.

Hosts are named as their compute service reports them (``[DEFAULT] host``
of ``cellplane-compute``) and must be mapped to a cell (the scheduler maps
each host it reads; ``cellplane-manage cell discover-hosts`` on demand), so
a typo is refused; ``allow_unmapped`` groups a host before its service
first reports.
"""
from __future__ import annotations

import datetime
import uuid as uuidlib
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import aggregate_hosts, aggregates
from cellplane.objects import change_stamps, host_mappings

AVAILABILITY_ZONE_KEY = 'availability_zone'
MAX_KEY_LENGTH = 255
MAX_VALUE_LENGTH = 255


class AggregateError(Exception):
    """An aggregate request an operator must correct."""


class AggregateNotFound(AggregateError):
    """No aggregate has this name or UUID."""


class ZoneConflict(AggregateError):
    """The request would put one host in two availability zones."""


class AggregateInUse(AggregateError):
    """The aggregate still has hosts."""


@dataclass(frozen=True)
class Aggregate:
    uuid: str
    name: str
    metadata: dict[str, str] = field(default_factory=dict)
    hosts: tuple[str, ...] = ()
    # The row's id and times (the compute API's os-aggregates shows them); not compared.
    id: int | None = field(default=None, compare=False)
    created_at: datetime.datetime | None = field(default=None, compare=False)
    updated_at: datetime.datetime | None = field(default=None, compare=False)

    @property
    def availability_zone(self) -> str | None:
        return self.metadata.get(AVAILABILITY_ZONE_KEY) or None


def _checked_metadata(properties: Mapping[str, str], zone: str | None) -> dict[str, str]:
    """``properties`` with ``zone`` folded in as ``availability_zone``, checked."""
    metadata = {str(k): str(v) for k, v in properties.items()}
    if zone is not None:
        given = metadata.get(AVAILABILITY_ZONE_KEY)
        if given is not None and given != zone:
            raise AggregateError(
                f'--zone {zone} and --property {AVAILABILITY_ZONE_KEY}={given} '
                f'disagree; give the zone once')
        metadata[AVAILABILITY_ZONE_KEY] = zone
    for key, value in metadata.items():
        if not key or len(key) > MAX_KEY_LENGTH:
            raise AggregateError(f'metadata key {key!r}: must be 1 to '
                                 f'{MAX_KEY_LENGTH} characters')
        if len(value) > MAX_VALUE_LENGTH:
            raise AggregateError(f'metadata {key}: the value is longer than '
                                 f'{MAX_VALUE_LENGTH} characters')
    if AVAILABILITY_ZONE_KEY in metadata and not metadata[AVAILABILITY_ZONE_KEY]:
        raise AggregateError(f'an empty {AVAILABILITY_ZONE_KEY} is no zone; unset '
                             f'the property to take the aggregate out of its zone')
    return metadata


def _row(conn: Connection, name_or_uuid: str):
    row = conn.execute(sa.select(aggregates).where(
        (aggregates.c.name == name_or_uuid) | (aggregates.c.uuid == name_or_uuid))).first()
    if row is None:
        raise AggregateNotFound(f'no aggregate named or with uuid {name_or_uuid!r}; '
                                f'see `cellplane aggregate list`')
    return row


def _hosts_of(conn: Connection, aggregate_id: int) -> tuple[str, ...]:
    return tuple(conn.execute(
        sa.select(aggregate_hosts.c.host)
        .where(aggregate_hosts.c.aggregate_id == aggregate_id)
        .order_by(aggregate_hosts.c.host)).scalars())


def _load(conn: Connection, name_or_uuid: str) -> Aggregate:
    row = _row(conn, name_or_uuid)
    return Aggregate(uuid=row.uuid, name=row.name, metadata=dict(row.metadata or {}),
                     hosts=_hosts_of(conn, row.id), id=row.id, created_at=row.created_at,
                     updated_at=row.updated_at)


def _check_zone(conn: Connection, *, aggregate_id: int, aggregate_name: str,
                zone: str | None, hosts: Iterable[str]) -> None:
    """Refuse if any of ``hosts`` is in another aggregate whose zone differs from ``zone``."""
    hosts = list(hosts)
    if zone is None or not hosts:
        return
    others = conn.execute(
        sa.select(aggregate_hosts.c.host, aggregates.c.name, aggregates.c.metadata)
        .select_from(aggregate_hosts.join(
            aggregates, aggregates.c.id == aggregate_hosts.c.aggregate_id))
        .where(aggregate_hosts.c.host.in_(hosts), aggregates.c.id != aggregate_id)
        .order_by(aggregate_hosts.c.host, aggregates.c.name))
    for other in others:
        other_zone = (other.metadata or {}).get(AVAILABILITY_ZONE_KEY)
        if other_zone and other_zone != zone:
            raise ZoneConflict(
                f'host {other.host} is in aggregate {other.name} (zone {other_zone}); '
                f'aggregate {aggregate_name} (zone {zone}) would put it in a second '
                f'zone. Remove the host from {other.name} first, or give both '
                f'aggregates the same zone')


def create(engine: Engine, name: str, *, zone: str | None = None,
           properties: Mapping[str, str] | None = None) -> Aggregate:
    """A new aggregate with no hosts; AggregateError if the name is taken."""
    if not name or len(name) > 255:
        raise AggregateError('an aggregate name must be 1 to 255 characters')
    metadata = _checked_metadata(properties or {}, zone)
    aggregate = Aggregate(uuid=str(uuidlib.uuid4()), name=name, metadata=metadata)
    with engine.begin() as conn:
        clash = conn.execute(sa.select(aggregates.c.id).where(
            (aggregates.c.name == name) | (aggregates.c.uuid == name))).first()
        if clash is not None:
            raise AggregateError(f'an aggregate named {name!r} exists')
        try:
            conn.execute(aggregates.insert().values(
                uuid=aggregate.uuid, name=name, metadata=metadata))
        except sa.exc.IntegrityError as exc:
            # Another create of the same name committed since the check.
            raise AggregateError(f'an aggregate named {name!r} exists') from exc
        change_stamps.bump(conn)
    return aggregate


def list_all(engine: Engine) -> list[Aggregate]:
    """Every aggregate with its hosts, by name."""
    with engine.connect() as conn:
        rows = conn.execute(sa.select(aggregates).order_by(aggregates.c.name)).all()
        members: dict[int, list[str]] = {}
        for link in conn.execute(sa.select(aggregate_hosts.c.aggregate_id,
                                           aggregate_hosts.c.host)
                                 .order_by(aggregate_hosts.c.host)):
            members.setdefault(link.aggregate_id, []).append(link.host)
    return [Aggregate(uuid=r.uuid, name=r.name, metadata=dict(r.metadata or {}),
                      hosts=tuple(members.get(r.id, ())), id=r.id, created_at=r.created_at,
                      updated_at=r.updated_at) for r in rows]


def get(engine: Engine, name_or_uuid: str) -> Aggregate:
    with engine.connect() as conn:
        return _load(conn, name_or_uuid)


def set_metadata(engine: Engine, name_or_uuid: str, *,
                 properties: Mapping[str, str] | None = None,
                 zone: str | None = None) -> Aggregate:
    """Add or change metadata keys; a new zone must not conflict for any of its hosts."""
    changes = _checked_metadata(properties or {}, zone)
    if not changes:
        raise AggregateError('nothing to set: give --property KEY=VALUE or --zone AZ')
    with engine.begin() as conn:
        row = _row(conn, name_or_uuid)
        metadata = {**(row.metadata or {}), **changes}
        _check_zone(conn, aggregate_id=row.id, aggregate_name=row.name,
                    zone=metadata.get(AVAILABILITY_ZONE_KEY),
                    hosts=_hosts_of(conn, row.id))
        conn.execute(aggregates.update().where(aggregates.c.id == row.id)
                     .values(metadata=metadata))
        change_stamps.bump(conn)
        return _load(conn, row.uuid)


def unset_metadata(engine: Engine, name_or_uuid: str, keys: Iterable[str]) -> Aggregate:
    """Remove metadata keys; AggregateError naming any key the aggregate does not have."""
    keys = list(keys)
    if not keys:
        raise AggregateError('nothing to unset: give --property KEY')
    with engine.begin() as conn:
        row = _row(conn, name_or_uuid)
        metadata = dict(row.metadata or {})
        missing = sorted(k for k in keys if k not in metadata)
        if missing:
            raise AggregateError(f'aggregate {row.name} has no metadata '
                                 f'{", ".join(missing)}')
        for key in keys:
            metadata.pop(key, None)
        conn.execute(aggregates.update().where(aggregates.c.id == row.id)
                     .values(metadata=metadata))
        change_stamps.bump(conn)
        return _load(conn, row.uuid)


def add_host(engine: Engine, name_or_uuid: str, host: str, *,
             allow_unmapped: bool = False) -> Aggregate:
    """Put ``host`` in the aggregate; ZoneConflict if another of its aggregates has another zone."""
    if not host:
        raise AggregateError('a host name must not be empty')
    with engine.begin() as conn:
        row = _row(conn, name_or_uuid)
        if not allow_unmapped and not host_mappings.is_mapped(conn, host):
            raise AggregateError(
                f'no compute host {host!r} is mapped to a cell (the scheduler maps the '
                f'hosts it reads; `cellplane-manage cell discover-hosts` maps new ones '
                f'now); --allow-unmapped groups it before it first reports')
        if host in _hosts_of(conn, row.id):
            raise AggregateError(f'host {host} is already in aggregate {row.name}')
        _check_zone(conn, aggregate_id=row.id, aggregate_name=row.name,
                    zone=(row.metadata or {}).get(AVAILABILITY_ZONE_KEY), hosts=[host])
        try:
            conn.execute(aggregate_hosts.insert().values(aggregate_id=row.id, host=host))
        except sa.exc.IntegrityError as exc:
            # Another add of the same host committed since the check.
            raise AggregateError(f'host {host} is already in aggregate {row.name}') from exc
        change_stamps.bump(conn)
        return _load(conn, row.uuid)


def remove_host(engine: Engine, name_or_uuid: str, host: str) -> Aggregate:
    with engine.begin() as conn:
        row = _row(conn, name_or_uuid)
        removed = conn.execute(aggregate_hosts.delete().where(
            aggregate_hosts.c.aggregate_id == row.id,
            aggregate_hosts.c.host == host)).rowcount
        if not removed:
            raise AggregateError(f'host {host} is not in aggregate {row.name}')
        change_stamps.bump(conn)
        return _load(conn, row.uuid)


def delete(engine: Engine, name_or_uuid: str) -> None:
    """Delete an empty aggregate; AggregateInUse naming its hosts otherwise."""
    with engine.begin() as conn:
        row = _row(conn, name_or_uuid)
        hosts = _hosts_of(conn, row.id)
        if hosts:
            raise AggregateInUse(
                f'aggregate {row.name} still has host(s) {", ".join(hosts)}; remove '
                f'them first (`cellplane aggregate remove-host {row.name} HOST`)')
        conn.execute(aggregates.delete().where(aggregates.c.id == row.id))
        change_stamps.bump(conn)


@dataclass(frozen=True)
class Membership:
    """One host in one aggregate, with the aggregate's metadata (a row of the scheduler's read)."""

    host: str
    aggregate_uuid: str
    aggregate_name: str
    metadata: Mapping[str, str]


def memberships(engine: Engine) -> list[Membership]:
    """Every (host, aggregate) pair in one query, ordered by host then aggregate name.

    Raises ``sqlalchemy.exc.SQLAlchemyError`` when the API database cannot be read.
    """
    query = (sa.select(aggregate_hosts.c.host, aggregates.c.uuid, aggregates.c.name,
                       aggregates.c.metadata)
             .select_from(aggregate_hosts.join(
                 aggregates, aggregates.c.id == aggregate_hosts.c.aggregate_id))
             .order_by(aggregate_hosts.c.host, aggregates.c.name))
    with engine.connect() as conn:
        return [Membership(host=row.host, aggregate_uuid=row.uuid, aggregate_name=row.name,
                           metadata={str(k): str(v) for k, v in (row.metadata or {}).items()})
                for row in conn.execute(query)]
