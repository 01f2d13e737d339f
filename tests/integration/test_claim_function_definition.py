"""placement/db/placement_claim.sql is the claim function a migrated PostgreSQL database runs.

The migrations that made ``placement_claim()`` keep their own frozen copies;
the .sql file is its readable current definition. PostgreSQL itself is the
judge of "the same": the file is run in an empty database and
``pg_get_functiondef`` (body, arguments, language and per-function settings)
must equal the migrated database's.
"""
from __future__ import annotations

import pathlib

import sqlalchemy as sa

import placement.db
from cellplane.db import engines, migrate

SQL_FILE = pathlib.Path(placement.db.__file__).parent / 'placement_claim.sql'
DEFINITION = sa.text(
    "SELECT pg_get_functiondef(p.oid) FROM pg_proc p WHERE p.proname = 'placement_claim'")


def _definitions(engine) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(DEFINITION).scalars())


def test_the_sql_file_is_the_function_the_migrations_leave(postgres_url_factory):
    migrated = engines.create_engine(postgres_url_factory('claim_migrated'))
    from_file = engines.create_engine(postgres_url_factory('claim_from_file'))
    try:
        migrate.sync('placement', migrated)
        raw = from_file.raw_connection()
        try:
            # The driver's own execute, without parameters: the file is SQL
            # as an operator would feed it to psql, '%' signs included.
            with raw.cursor() as cursor:
                cursor.execute(SQL_FILE.read_text())
            raw.commit()
        finally:
            raw.close()
        [expected] = _definitions(migrated)
        assert _definitions(from_file) == [expected]
        # The settings are part of what is compared.
        assert "SET enable_seqscan TO 'off'" in expected
        assert "SET plan_cache_mode TO 'force_generic_plan'" in expected
    finally:
        migrated.dispose()
        from_file.dispose()
