"""Consumers and the projects, users and consumer types they belong to.

A consumer is whatever holds allocations (an instance, a migration). Its row
exists exactly while it has allocations: the allocation writer creates it on
first claim and deletes it when its last allocation goes. Projects, users and
consumer types are only ever added, never renamed or removed, so their
external name -> internal id mapping is cached per process once a
transaction that saw the row has committed.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from placement.db import api as db_api
from placement.db import models

# The project and user that consumers written before microversion 1.8
# (which did not require them) are filed under, as in the reference.
INCOMPLETE_CONSUMER_ID = '00000000-0000-0000-0000-000000000000'


@dataclass(frozen=True)
class Consumer:
    id: int
    uuid: str
    generation: int
    project_id: int
    user_id: int
    consumer_type_id: int | None


class _NameCache:
    """external name -> id for a table whose rows never change or go away.

    Kept per database (engine URL), so that one process may serve several.
    """

    def __init__(self, table: sa.Table, column: str):
        self._table = table
        self._column = table.c[column]
        self._ids: dict[tuple[str, str], int] = {}
        self._names: dict[tuple[str, int], str] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._ids.clear()
            self._names.clear()

    def _remember(self, db: str, name: str, id_: int) -> None:
        with self._lock:
            self._ids[(db, name)] = id_
            self._names[(db, id_)] = name

    def id_of(self, engine: Engine, name: str, *, create: bool) -> int | None:
        """The id of ``name``, creating its row when ``create`` is set."""
        db = db_api.database_key(engine)
        found = self._ids.get((db, name))
        if found is not None:
            return found
        with engine.begin() as conn:
            if create:
                conn.execute(_insert_ignoring_duplicates(
                    engine, self._table, {self._column.name: name}))
            row = conn.execute(
                sa.select(self._table.c.id).where(self._column == name)).first()
        if row is None:
            return None
        self._remember(db, name, row.id)
        return row.id

    def name_of(self, conn: Connection, id_: int | None) -> str | None:
        if id_ is None:
            return None
        db = db_api.database_key(conn.engine)
        found = self._names.get((db, id_))
        if found is not None:
            return found
        row = conn.execute(
            sa.select(self._column).where(self._table.c.id == id_)).first()
        if row is None:
            return None
        self._remember(db, row[0], id_)
        return row[0]


def _insert_ignoring_duplicates(engine: Engine, table: sa.Table, values: dict):
    dialect = postgresql if engine.dialect.name == 'postgresql' else sqlite
    return dialect.insert(table).values(**values).on_conflict_do_nothing()


projects = _NameCache(models.projects, 'external_id')
users = _NameCache(models.users, 'external_id')
consumer_types = _NameCache(models.consumer_types, 'name')


def forget_cached_names() -> None:
    """Drop the per-process caches (tests that recreate the database)."""
    for cache in (projects, users, consumer_types):
        cache.clear()


_SELECT_CONSUMERS = sa.text(
    'SELECT id, uuid, generation, project_id, user_id, consumer_type_id '
    'FROM consumers WHERE uuid IN :uuids'
).bindparams(sa.bindparam('uuids', expanding=True))


def lock_consumers(conn: Connection, uuids: list[str]) -> dict[str, Consumer]:
    """The existing consumers among ``uuids``, row-locked until commit.

    The lock serialises writers of the same consumer on PostgreSQL; on
    SQLite the whole transaction already holds the write lock.
    """
    stmt = _SELECT_CONSUMERS
    if conn.dialect.name == 'postgresql':
        stmt = _SELECT_CONSUMERS_FOR_UPDATE
    return {row.uuid: Consumer(*row) for row in conn.execute(stmt, {'uuids': uuids})}


_SELECT_CONSUMERS_FOR_UPDATE = sa.text(
    'SELECT id, uuid, generation, project_id, user_id, consumer_type_id '
    'FROM consumers WHERE uuid IN :uuids ORDER BY uuid FOR UPDATE'
).bindparams(sa.bindparam('uuids', expanding=True))


@dataclass(frozen=True)
class ConsumerView:
    """A consumer as the API shows it."""
    uuid: str
    generation: int
    project_id: str
    user_id: str
    consumer_type: str | None


_CONSUMER_VIEW = sa.text(
    'SELECT c.uuid, c.generation, p.external_id AS project, '
    'u.external_id AS user_ext, c.consumer_type_id '
    'FROM consumers c JOIN projects p ON p.id = c.project_id '
    'JOIN users u ON u.id = c.user_id WHERE c.uuid = :uuid')


def view_of(conn: Connection, uuid: str, generation: int, project: str | None,
            user: str | None, consumer_type_id: int | None) -> ConsumerView | None:
    """The consumer as the API shows it; None without its project or user row.

    A project's and a user's ``external_id`` are NOT NULL, so a null one
    read through an outer join means the row is not there.
    """
    if project is None or user is None:
        return None
    return ConsumerView(uuid, generation, project, user,
                        consumer_types.name_of(conn, consumer_type_id))


def get_consumer(conn: Connection, uuid: str) -> ConsumerView | None:
    row = conn.execute(_CONSUMER_VIEW, {'uuid': uuid}).first()
    if row is None:
        return None
    return view_of(conn, row.uuid, row.generation, row.project, row.user_ext,
                   row.consumer_type_id)
