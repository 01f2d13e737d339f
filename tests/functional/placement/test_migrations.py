"""The migrations build exactly the tables of placement/db/models.py,
the same on SQLite and PostgreSQL."""
from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from cellplane.db import engines, migrate
from placement.db import models

VERSION_TABLE = 'cellplane_placement_version'


def _differences(engine) -> list:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={'compare_type': True})
        return [d for d in compare_metadata(ctx, models.metadata)
                if not (d[0] == 'remove_table' and d[1].name == VERSION_TABLE)]


def _generic(sql_type) -> str:
    generic = sql_type.as_generic()
    # PostgreSQL reflects Float as DOUBLE PRECISION: the same column.
    return 'Float' if isinstance(generic, sa.Float) else type(generic).__name__


def _columns(engine) -> dict:
    """{table: [(column, generic type, nullable)]}: comparable across dialects."""
    inspector = sa.inspect(engine)
    return {t: [(c['name'], _generic(c['type']), c['nullable'])
                for c in inspector.get_columns(t)]
            for t in sorted(inspector.get_table_names()) if t != VERSION_TABLE}


@pytest.fixture
def sqlite_engine(tmp_path):
    engine = engines.create_engine(f'sqlite:///{tmp_path}/placement.sqlite')
    migrate.sync('placement', engine)
    yield engine
    engine.dispose()


def test_sqlite_schema_matches_models(sqlite_engine):
    assert _differences(sqlite_engine) == []
    assert set(_columns(sqlite_engine)) == set(models.metadata.tables)


def test_postgresql_schema_matches_models_and_sqlite(postgres_url, sqlite_engine):
    engine = engines.create_engine(postgres_url)
    try:
        migrate.sync('placement', engine)
        assert _differences(engine) == []
        assert _columns(engine) == _columns(sqlite_engine)
        # running it again is a no-op
        migrate.sync('placement', engine)
        assert migrate.current_revision('placement', engine) == \
            migrate.head_revision('placement', engine)
    finally:
        engine.dispose()


def _claim_foreign_keys(engine) -> dict:
    inspector = sa.inspect(engine)
    return {table: sorted(tuple(fk['constrained_columns'])
                          for fk in inspector.get_foreign_keys(table))
            for table in ('allocations', 'consumers')}


def _downgrade(engine, revision: str) -> None:
    command.downgrade(migrate._alembic_config(migrate.history('placement'), engine), revision)


@pytest.mark.parametrize('backend', ['sqlite', 'postgresql'])
def test_claims_check_only_the_provider_key_and_downgrade_restores_the_others(
        backend, request, tmp_path):
    """Migration e3b8d5a2c7f1: a claim's inserts lock no shared row."""
    if backend == 'sqlite':
        url = f'sqlite:///{tmp_path}/keys.sqlite'
    else:
        url = request.getfixturevalue('postgres_url')
    engine = engines.create_engine(url)
    try:
        migrate.sync('placement', engine)
        assert _claim_foreign_keys(engine) == {
            'allocations': [('resource_provider_id',)], 'consumers': []}
        _downgrade(engine, 'd7a3f0b6c1e5')
        engine.dispose()
        assert _claim_foreign_keys(engine) == {
            'allocations': [('resource_class_id',), ('resource_provider_id',)],
            'consumers': [('consumer_type_id',), ('project_id',), ('user_id',)]}
        migrate.sync('placement', engine)
        engine.dispose()
        assert _claim_foreign_keys(engine) == {
            'allocations': [('resource_provider_id',)], 'consumers': []}
    finally:
        engine.dispose()
