"""A PostgreSQL engine's pool keeps its INFO lines to itself.

SQLAlchemy names a pool's logger after the pool's class, and cellplane's
pool class lives in ``cellplane.db.engines``: outside the ``sqlalchemy``
logger that SQLAlchemy (and oslo.log) keep at WARNING. Every CLI command
(cliff logs INFO to stderr) and Placement's and the scheduler's logs then
carried "Pool disposed. Pool size: 10 ..." and "Pool recreating".
"""
from __future__ import annotations

import logging

from cellplane.db import engines


def test_disposing_an_engine_logs_nothing_at_info(caplog):
    caplog.set_level(logging.INFO)
    engine = engines.create_engine('postgresql+psycopg2://nobody@127.0.0.1:1/none')
    engine.dispose()
    assert [r.getMessage() for r in caplog.records if r.name.startswith('cellplane.db')] == []
