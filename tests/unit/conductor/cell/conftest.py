"""``cell_db``: a migrated cell database in memory (SQLite, no file), fresh for each test.

The Rescheduler keeps its record (attempt history, build plan, fault) in
the cell database through ``cellplane.objects``; the tests use that code on
a database in memory rather than a stand-in for it. The schema is migrated
once per session and copied per test.
"""
from __future__ import annotations

import pytest

from cellplane.db import engines, migrate

_template = []


def _migrated():
    if not _template:
        engine = engines.create_engine('sqlite://')
        migrate.sync('cell', engine)
        _template.append(engine)
    return _template[0]


@pytest.fixture
def cell_db():
    engine = engines.create_engine('sqlite://')
    source = _migrated().raw_connection()
    target = engine.raw_connection()
    try:
        source.driver_connection.backup(target.driver_connection)
    finally:
        source.close()
        target.close()
    yield engine
    engine.dispose()
