"""Change stamps in the API DB (``change_stamps``): how a cache learns the operator changed what it holds.

The scheduler caches hosts with their aggregates, zones, failure domains,
disabled flags and the list of cells, re-read every ``[scheduler]
host_refresh_interval``. Every change to one of them raises the
``scheduling`` stamp (``bump``, in the change's own transaction where the
change is in the API DB), and each scheduler worker reads the stamp before
every request (``read``: one primary-key lookup) and re-reads its cache
when it moved. So a change is seen by every worker at its next request,
however many workers run and whatever message is lost.

What this module promises:

- ``bump`` raises the stamp by one in the caller's transaction: a reader
  sees the new stamp only with the change committed;
- ``read`` is one primary-key lookup; a missing row reads as 0.
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db import reads
from cellplane.db.api.models import change_stamps

SCHEDULING = 'scheduling'

_READ = sa.select(change_stamps.c.stamp).where(change_stamps.c.name == sa.bindparam('b_name'))


def bump(conn: Connection, name: str = SCHEDULING) -> None:
    """Raise ``name``'s stamp by one, in ``conn``'s transaction (call it last: it locks the row)."""
    raised = conn.execute(change_stamps.update().where(change_stamps.c.name == name)
                          .values(stamp=change_stamps.c.stamp + 1,
                                  changed_at=sa.func.now())).rowcount
    if not raised:
        # Migrations seed the row; a schema made from the models has none.
        conn.execute(change_stamps.insert().values(name=name, stamp=1))


def bump_now(engine: Engine, name: str = SCHEDULING) -> None:
    """Raise ``name``'s stamp in a transaction of its own (a change made in a cell database)."""
    with engine.begin() as conn:
        bump(conn, name)


def read(engine: Engine, name: str = SCHEDULING) -> int:
    """The current stamp of ``name``.

    Raises ``sqlalchemy.exc.SQLAlchemyError`` when the API database cannot be read.
    """
    with reads.connect(engine) as conn:
        return conn.execute(_READ, {'b_name': name}).scalar_one_or_none() or 0
