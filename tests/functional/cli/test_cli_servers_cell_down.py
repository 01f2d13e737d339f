"""``cellplane server list`` with a cell that does not answer: bounded by ``[cells] read_timeout``.

The cells' databases are stood in for by a TCP port that accepts connections
and never says a word (a database host gone silent: without a bound, libpq
waits forever for the server's greeting) and a closed port (refused at once).
The command runs as a subprocess: if it hung, the subprocess timeout fails
the test instead of the suite.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys

import pytest
import sqlalchemy as sa

from cellplane.cells.scatter_gather import CellTimeout, gather
from cellplane.db import engines
from cellplane.db.api.models import cell_mappings as cell_mappings_table
from cellplane.db.api.models import instance_mappings
from cellplane.objects import cell_mappings
from cellplane_cli import manage

# Far above read_timeout (1 s) + connect_timeout (2 s): only a hang reaches it.
HANG_SECONDS = 60
SILENT_UUID = '00000000-0000-4000-8000-0000000000a1'
CLOSED_UUID = '00000000-0000-4000-8000-0000000000c1'


@pytest.fixture
def silent_port():
    """A port whose listener accepts and then says nothing."""
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(16)
    yield listener.getsockname()[1]
    listener.close()


def _closed_port() -> int:
    probe = socket.socket()
    probe.bind(('127.0.0.1', 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def _map_instance(engine, cell_name: str, db_url: str, *instance_uuids: str,
                  queued_for_delete: bool = False) -> None:
    try:
        cell = cell_mappings.get(engine, cell_name)
    except cell_mappings.CellMappingError:
        cell = cell_mappings.create(engine, name=cell_name,
                                    transport_url=f'memory://{cell_name}',
                                    database_connection=db_url)
    with engine.begin() as conn:
        cell_id = conn.execute(sa.select(cell_mappings_table.c.id).where(
            cell_mappings_table.c.uuid == cell.uuid)).scalar_one()
        for instance_uuid in instance_uuids:
            conn.execute(instance_mappings.insert().values(
                instance_uuid=instance_uuid, cell_id=cell_id, project_id='p',
                queued_for_delete=queued_for_delete))


def test_server_list_marks_silent_and_closed_cells_unknown_instead_of_hanging(
        tmp_path, silent_port):
    api_url = f'sqlite:///{tmp_path}/api.sqlite'
    conf = tmp_path / 'top.conf'
    conf.write_text(f'[api_database]\nconnection = {api_url}\n[cells]\nread_timeout = 1\n')
    assert manage.main(['db', 'sync', '--database', 'api', '--config-file', str(conf)]) == 0
    engine = engines.create_engine(api_url)
    try:
        _map_instance(engine, 'silent',
                      f'postgresql+psycopg2://x@127.0.0.1:{silent_port}/none', SILENT_UUID)
        _map_instance(engine, 'closed',
                      f'postgresql+psycopg2://x@127.0.0.1:{_closed_port()}/none', CLOSED_UUID)
    finally:
        engine.dispose()

    proc = subprocess.run(
        [sys.executable, '-m', 'cellplane_cli.cli', 'server', 'list',
         '--config-file', str(conf), '-f', 'json'],
        capture_output=True, text=True, timeout=HANG_SECONDS)
    assert proc.returncode == 0, proc.stderr
    listed = {s['id']: s for s in json.loads(proc.stdout)}
    assert (listed[SILENT_UUID]['status'], listed[SILENT_UUID]['cell']) == ('UNKNOWN', 'silent')
    assert (listed[CLOSED_UUID]['status'], listed[CLOSED_UUID]['cell']) == ('UNKNOWN', 'closed')

    shown = subprocess.run(
        [sys.executable, '-m', 'cellplane_cli.cli', 'server', 'show', SILENT_UUID,
         '--config-file', str(conf), '-f', 'json'],
        capture_output=True, text=True, timeout=HANG_SECONDS)
    assert shown.returncode == 0, shown.stderr
    fault = json.loads(shown.stdout)['fault']
    assert fault.startswith('the database of cell silent cannot be read: '), fault


def test_a_deleted_server_does_not_reappear_while_its_cell_cannot_be_read(tmp_path):
    deleted = '00000000-0000-4000-8000-0000000000d1'
    api_url = f'sqlite:///{tmp_path}/api.sqlite'
    conf = tmp_path / 'top.conf'
    conf.write_text(f'[api_database]\nconnection = {api_url}\n[cells]\nread_timeout = 1\n')
    assert manage.main(['db', 'sync', '--database', 'api', '--config-file', str(conf)]) == 0
    engine = engines.create_engine(api_url)
    db_url = f'postgresql+psycopg2://x@127.0.0.1:{_closed_port()}/none'
    try:
        _map_instance(engine, 'closed', db_url, CLOSED_UUID)
        # Its delete was asked (the terminate cast); the cell never said it was done.
        _map_instance(engine, 'closed', db_url, deleted, queued_for_delete=True)
    finally:
        engine.dispose()

    proc = subprocess.run(
        [sys.executable, '-m', 'cellplane_cli.cli', 'server', 'list',
         '--config-file', str(conf), '-f', 'json'],
        capture_output=True, text=True, timeout=HANG_SECONDS)
    assert proc.returncode == 0, proc.stderr
    listed = {s['id']: s['status'] for s in json.loads(proc.stdout)}
    assert listed == {CLOSED_UUID: 'UNKNOWN'}


def test_gather_answers_for_the_cells_that_answered_and_times_out_the_others():
    never = __import__('threading').Event()

    def stuck():
        never.wait()

    def broken():
        raise sa.exc.OperationalError('SELECT 1', {}, Exception('refused'))

    answers = gather({'a': lambda: 'rows of a', 'b': stuck, 'c': broken}, 0.2)
    assert answers['a'] == 'rows of a'
    assert isinstance(answers['b'], CellTimeout)
    assert 'read_timeout' in str(answers['b'])
    assert isinstance(answers['c'], sa.exc.OperationalError)
    never.set()
