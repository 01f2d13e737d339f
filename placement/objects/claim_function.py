"""placement_claim(): the claim as one server-side call on PostgreSQL (migrations c4e7a1d2f9b3, d7a3f0b6c1e5).

Whether the database has it (``available``), calling it in its own
autocommit transaction on a pooled connection (``claim``; a refusal is
``Refused`` with the function's ``kind|arg|...`` message, which
``placement.objects.allocation`` turns into its errors), and opening a
worker's pool with empty claims (``warm_up``).
"""
from __future__ import annotations

import contextlib
import datetime

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine

from placement.db import api as db_api


class Refused(Exception):
    """placement_claim() refused the claim; ``message`` is ``kind|arg|...``."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


_available: dict[str, bool] = {}

_SIGNATURE = (
    'placement_claim(timestamp, text[], boolean[], integer[], integer[], integer[], '
    'integer[], text[], text[], integer[], text[], integer[])')


def available(engine: Engine) -> bool:
    """Whether the database has placement_claim() (PostgreSQL at migration
    c4e7a1d2f9b3 or later)."""
    if engine.dialect.name != 'postgresql':
        return False
    key = db_api.database_key(engine)
    found = _available.get(key)
    if found is None:
        with engine.connect() as conn:
            found = conn.execute(sa.text(
                f"SELECT to_regprocedure('{_SIGNATURE}') IS NOT NULL")).scalar()
        _available[key] = found
    return found


# Arguments, all arrays of one length per kind (the migration says what
# each is): now, then the consumers' c_uuid, c_check, c_gen, c_project,
# c_user, c_type, then the allocations' a_consumer, a_rp_uuid, a_rc,
# a_rc_name, a_amount.
_CALL = ('SELECT placement_claim(%s::timestamp, %s::text[], %s::boolean[], '
         '%s::integer[], %s::integer[], %s::integer[], %s::integer[], '
         '%s::text[], %s::text[], %s::integer[], %s::text[], %s::integer[])')


# plpgsql's RAISE EXCEPTION: how placement_claim() refuses.
_RAISED = 'P0001'


def claim(conn: Connection, params: tuple) -> None:
    """Run placement_claim(``params``) as its own transaction on ``conn``.

    Raises ``Refused`` when the function refuses the claim; other database
    errors come out as SQLAlchemy's.
    """
    try:
        db_api.execute_in_autocommit(conn, _CALL, params)
    except sa_exc.DBAPIError as exc:
        if getattr(exc.orig, 'pgcode', None) == _RAISED:
            raise Refused(exc.orig.diag.message_primary) from None
        raise


_EMPTY_CLAIM = (datetime.datetime(2000, 1, 1), [], [], [], [], [], [], [], [], [], [], [])


def warm_up(engine: Engine, connections: int) -> None:
    """Open ``connections`` pooled connections and run an empty claim on each.

    A fresh PostgreSQL connection costs its first claim about 15-30 ms
    instead of 2: the connection itself, then compiling placement_claim()
    and planning its statements in that backend. A worker that does this
    before it serves keeps that cost out of the first requests after a
    start (and out of short benchmarks). The empty claim locks, changes and
    commits nothing.
    """
    if not available(engine):
        return
    with contextlib.ExitStack() as stack:
        for _ in range(connections):
            conn = stack.enter_context(engine.connect())
            db_api.execute_in_autocommit(conn, _CALL, _EMPTY_CLAIM)
