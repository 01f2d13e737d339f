"""``cellplane-manage db sync`` gives the same schema on PostgreSQL and SQLite, idempotently."""
from __future__ import annotations

import subprocess
import sys

import pytest
import sqlalchemy as sa

from cellplane.db import engines
from tests.support import cli_runner

SECTIONS = {'api': 'api_database', 'cell': 'database', 'placement': 'placement_database'}


def _db_sync(tmp_path, database: str, url: str) -> subprocess.CompletedProcess:
    conf = tmp_path / f'{database}.conf'
    conf.write_text(f'[{SECTIONS[database]}]\nconnection = {url}\n')
    return cli_runner.run('cellplane_cli.manage', ['db', 'sync', '--database', database,
                                                   '--config-file', str(conf)], timeout=120)


def _schema(url: str) -> dict[str, list[str]]:
    """Table name -> sorted column names, as the database reports them."""
    engine = engines.create_engine(url)
    try:
        inspector = sa.inspect(engine)
        return {table: sorted(col['name'] for col in inspector.get_columns(table))
                for table in sorted(inspector.get_table_names())}
    finally:
        engine.dispose()


@pytest.mark.parametrize('database', ['api', 'cell', 'placement'])
def test_db_sync_same_schema_on_postgresql_and_sqlite_and_idempotent(
        database, tmp_path, postgres_url_factory):
    pg_url = postgres_url_factory(f'sync_{database}')
    sqlite_url = f'sqlite:///{tmp_path}/{database}.sqlite'

    for url in (pg_url, sqlite_url):
        result = _db_sync(tmp_path, database, url)
        assert result.returncode == 0, result.stderr
    pg_schema, sqlite_schema = _schema(pg_url), _schema(sqlite_url)

    assert f'cellplane_{database}_version' in pg_schema
    assert len(pg_schema) > 1
    assert pg_schema == sqlite_schema

    for url, before in ((pg_url, pg_schema), (sqlite_url, sqlite_schema)):
        again = _db_sync(tmp_path, database, url)
        assert again.returncode == 0, again.stderr
        assert _schema(url) == before


def test_db_sync_without_connection_names_the_option(tmp_path):
    conf = tmp_path / 'empty.conf'
    conf.write_text('[DEFAULT]\n')
    result = subprocess.run(
        [sys.executable, '-m', 'cellplane_cli.manage', 'db', 'sync',
         '--database', 'api', '--config-file', str(conf)],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert '[api_database] connection' in result.stderr
    assert str(conf) in result.stderr
