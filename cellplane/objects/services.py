"""Services (``services``, in the API DB and in each cell DB): one row per (host, binary), written by heartbeats.

A cell's services (its conductor and compute agents) are in that cell's
database; the top-level services (schedulers, super conductors) are in the
API database's table of the same shape. Every function takes the engine of
the database concerned.

A heartbeat creates the row the first time and afterwards bumps
``report_count`` and ``last_seen_at``. ``last_seen_at`` is the conductor's
clock (UTC), not the sender's: liveness is then judged on one clock, whatever
the skew between hosts, and ``Liveness`` is the one test of "this service is
down" (in Python and in SQL): a service an operator forced down
(``forced_down``, Nova's force-down) is down whatever its heartbeats say.
The ``disabled`` flag is taken from a heartbeat only when the row is
created; after that an operator's change in the DB wins. Each row gets a
``uuid`` when it is created: the compute API's service id from 2.53.
"""
from __future__ import annotations

import dataclasses
import datetime
import functools
import uuid as uuidlib
from typing import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

from cellplane.db.cell.models import services
from cellplane.db.columns import naive_utc, utcnow
from rpc_schemas.service_status import ServiceStatus


def record_heartbeat(engine: Engine, status: ServiceStatus) -> None:
    """Insert or refresh the service row of ``status`` in one statement."""
    record_heartbeats(engine, [status])


def record_heartbeats(engine: Engine, statuses: Sequence[ServiceStatus]) -> None:
    """Insert or refresh the rows of ``statuses`` in one transaction (a hollow agent's hosts).

    The rows that exist are refreshed by one UPDATE per (binary, topic,
    version), the hosts passed as one parameter; only the hosts it did not
    find (their first heartbeat, or a row deleted) go through the upsert. A
    hollow agent's 500 hosts then cost one statement of a few rows' work, not
    500 rows of parameters every ``report_interval`` (the upsert of 250 cost
    the cell conductor about 25 ms of CPU, the UPDATE about 1 ms).
    A status repeated for one (host, binary) is written once (the last wins):
    PostgreSQL refuses one statement touching a row twice.
    """
    groups: dict[tuple[str, str, str], dict[str, ServiceStatus]] = {}
    latest = {(s.host, s.binary): s for s in statuses}
    for (host, _binary), status in latest.items():
        groups.setdefault((status.binary, status.topic, status.version), {})[host] = status
    _record(engine, groups)


def record_host_heartbeats(engine: Engine, status: ServiceStatus,
                           hosts: Sequence[str]) -> None:
    """The heartbeat of ``hosts``, which share ``status`` but for their names (one agent's hosts).

    The same statements as ``record_heartbeats`` (one UPDATE of the rows
    found, an upsert of the hosts without one), with no status per host:
    ``status.host`` (the sender) is not written unless it is one of ``hosts``.
    """
    _record(engine, {(status.binary, status.topic, status.version):
                     dict.fromkeys(hosts, status)})


def _record(engine: Engine,
            groups: dict[tuple[str, str, str], dict[str, ServiceStatus]]) -> None:
    """(binary, topic, version) -> {host: its status}: refresh the rows found, upsert the others."""
    groups = {key: hosts for key, hosts in groups.items() if hosts}
    if not groups:
        return
    now = utcnow()
    refresh = _heartbeat_refresh(engine.dialect.name)
    missing: list[tuple[str, ServiceStatus]] = []
    with engine.begin() as conn:
        for (binary, topic, version), by_host in groups.items():
            found = set(conn.execute(refresh, {'of_binary': binary, 'new_topic': topic,
                                               'new_version': version, 'now': now,
                                               'hosts': list(by_host)}).scalars())
            missing.extend((host, status) for host, status in by_host.items()
                           if host not in found)
        if not missing:
            return
        rows = [dict(uuid=str(uuidlib.uuid4()), host=host, binary=s.binary, topic=s.topic,
                     report_count=1, last_seen_at=now, disabled=s.disabled,
                     disabled_reason=s.disabled_reason, version=s.version,
                     created_at=now, updated_at=now)
                for host, s in missing]
        # Parameters passed apart from the statement (an executemany): its
        # SQL is compiled once and cached, where values written into it
        # would be compiled anew for every batch.
        conn.execute(_heartbeat_upsert(engine.dialect.name), rows)


@functools.cache
def _heartbeat_refresh(dialect: str):
    """UPDATE the rows of ``:hosts`` of ``:of_binary``, RETURNING the hosts found."""
    if dialect == 'postgresql':
        # One array parameter: the statement's text is the same whatever the hosts.
        hosts = services.c.host == sa.func.any(
            sa.bindparam('hosts', type_=postgresql.ARRAY(sa.String)))
    else:
        hosts = services.c.host.in_(sa.bindparam('hosts', expanding=True))
    return (services.update()
            .where(services.c.binary == sa.bindparam('of_binary'), hosts)
            .values(topic=sa.bindparam('new_topic'), version=sa.bindparam('new_version'),
                    report_count=services.c.report_count + 1,
                    last_seen_at=sa.bindparam('now'), updated_at=sa.bindparam('now'))
            .returning(services.c.host))


@functools.cache
def _heartbeat_upsert(dialect: str):
    # Built once per dialect: constructing the statement and its EXCLUDED
    # alias cost about as much as running it, on every heartbeat. It covers
    # a row inserted by another transaction since the UPDATE did not find it.
    insert = (postgresql.insert if dialect == 'postgresql' else sqlite.insert)(services)
    return insert.on_conflict_do_update(
        index_elements=[services.c.host, services.c.binary],
        set_={
            'topic': insert.excluded.topic,
            'version': insert.excluded.version,
            'report_count': services.c.report_count + 1,
            'last_seen_at': insert.excluded.last_seen_at,
            'updated_at': insert.excluded.updated_at,
        })


def delete_hosts(engine: Engine, hosts: Iterable[str], binary: str) -> int:
    """Delete the ``binary`` rows of ``hosts`` (hosts an agent no longer runs); how many went."""
    hosts = list(hosts)
    if not hosts:
        return 0
    with engine.begin() as conn:
        return conn.execute(sa.delete(services).where(
            services.c.binary == binary, services.c.host.in_(hosts))).rowcount


def get_service(engine: Engine, host: str, binary: str) -> dict | None:
    """The row of (host, binary) as a dict, or None."""
    with engine.connect() as conn:
        row = conn.execute(
            sa.select(services).where(services.c.host == host,
                                      services.c.binary == binary)).mappings().first()
    return dict(row) if row else None


def set_disabled(engine: Engine, host: str, binary: str, *, disabled: bool,
                 reason: str | None = None) -> dict | None:
    """Disable (with ``reason``) or enable the (host, binary) service; its row after, or None if there is none."""
    with engine.begin() as conn:
        changed = conn.execute(services.update().where(
            services.c.host == host, services.c.binary == binary).values(
                disabled=disabled, disabled_reason=reason if disabled else None,
                updated_at=utcnow())).rowcount
    return get_service(engine, host, binary) if changed else None


def set_forced_down(engine: Engine, host: str, binary: str, *,
                    forced_down: bool) -> dict | None:
    """Force the (host, binary) service down, or lift that; its row after, or None if there is none."""
    with engine.begin() as conn:
        changed = conn.execute(services.update().where(
            services.c.host == host, services.c.binary == binary).values(
                forced_down=forced_down, updated_at=utcnow())).rowcount
    return get_service(engine, host, binary) if changed else None


def get_by_uuid(engine: Engine, uuid: str) -> dict | None:
    """The row whose ``uuid`` is ``uuid``, as a dict, or None."""
    with engine.connect() as conn:
        row = conn.execute(sa.select(services).where(
            services.c.uuid == uuid)).mappings().first()
    return dict(row) if row else None


def get_by_id(engine: Engine, row_id: int) -> dict | None:
    """The row of id ``row_id`` (ids are per database), as a dict, or None."""
    with engine.connect() as conn:
        row = conn.execute(sa.select(services).where(
            services.c.id == row_id)).mappings().first()
    return dict(row) if row else None


def delete_row(engine: Engine, row_id: int) -> bool:
    """Delete the row of id ``row_id``; whether there was one."""
    with engine.begin() as conn:
        return bool(conn.execute(sa.delete(services).where(services.c.id == row_id)).rowcount)


def list_all(engine: Engine) -> list[dict]:
    """Every service row, by binary then host.

    The API DB's and the cell DBs' tables have the same columns, so one
    query serves both (``services`` is the cell table's object; the SQL
    names the table and its columns only).
    """
    with engine.connect() as conn:
        rows = conn.execute(sa.select(services).order_by(
            services.c.binary, services.c.host)).mappings().all()
    return [dict(r) for r in rows]


@dataclasses.dataclass(frozen=True)
class Liveness:
    """When a service is down: forced down, never reported, or its last heartbeat is older than ``down_before``.

    ``is_down`` judges values read; ``down_clause`` is the same test in SQL,
    over a ``last_seen_at`` column or subquery (and ``forced_down``'s, when
    the query has the service row). Both read ``down_before``.
    """

    down_before: datetime.datetime

    @classmethod
    def at(cls, service_down_time: float, now: datetime.datetime | None = None) -> 'Liveness':
        """Judged at ``now`` (default: the current UTC time) with ``service_down_time`` seconds."""
        now = naive_utc(now) if now is not None else utcnow()
        return cls(now - datetime.timedelta(seconds=service_down_time))

    def is_down(self, last_seen_at: datetime.datetime | None, forced_down: bool = False) -> bool:
        return bool(forced_down) or last_seen_at is None or last_seen_at < self.down_before

    def down_clause(self, last_seen_at: sa.ColumnElement,
                    forced_down: sa.ColumnElement | None = None) -> sa.ColumnElement[bool]:
        clause = sa.or_(last_seen_at.is_(None), last_seen_at < self.down_before)
        # An outer join's missing row has a NULL forced_down: not forced.
        return clause if forced_down is None else sa.or_(forced_down.is_(True), clause)


def is_up(row: dict, *, service_down_time: float,
          now: datetime.datetime | None = None) -> bool:
    """Whether the row is not forced down and its last heartbeat is younger than ``service_down_time`` seconds."""
    return not Liveness.at(service_down_time, now).is_down(row.get('last_seen_at'),
                                                           row.get('forced_down', False))


def silent_hosts(engine: Engine, hosts: Iterable[str], binary: str, *,
                 service_down_time: float) -> dict[str, datetime.datetime | None]:
    """Those of ``hosts`` whose ``binary`` row says it is down: host -> last heartbeat.

    A host without a row is not listed: nothing says it is down (it may
    not have reported yet).
    """
    hosts = list(hosts)
    if not hosts:
        return {}
    with engine.connect() as conn:
        rows = conn.execute(sa.select(services.c.host, services.c.last_seen_at,
                                      services.c.forced_down).where(
            services.c.binary == binary, services.c.host.in_(hosts))).all()
    liveness = Liveness.at(service_down_time)
    return {row.host: row.last_seen_at for row in rows
            if liveness.is_down(row.last_seen_at, row.forced_down)}


def count_silent(engine: Engine, binary: str, *, service_down_time: float,
                 now: datetime.datetime | None = None) -> tuple[int, int]:
    """(silent, all): the ``binary`` rows, and those not heard of for ``service_down_time``."""
    silent = Liveness.at(service_down_time, now).down_clause(services.c.last_seen_at,
                                                             services.c.forced_down)
    with engine.connect() as conn:
        row = conn.execute(sa.select(
            sa.func.count().filter(silent), sa.func.count()).where(
                services.c.binary == binary)).one()
    return row[0], row[1]
