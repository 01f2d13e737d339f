"""Scheduling records stored and found again: the ``database`` backend on a migrated
API database (find, retention, purge command), both backends chosen by config and
read by ``cellplane scheduler records``."""
from __future__ import annotations

import json

import pytest
from oslo_config import cfg

from cellplane.db import engines, migrate
from cellplane_cli import cli, manage
from scheduler import conf as scheduler_conf
from scheduler.records import database as record_database
from scheduler.records.backend import RecordBackendError, RecordQuery
from scheduler.records.database import DatabaseBackend
from scheduler.records.loading import load_backend
from scheduler.records.record import SchedulingRecord
from scheduler.records.writer import RecordWriter
from scheduler.trace import SchedulingTrace


def _trace(n: int, instances: list[str]) -> SchedulingTrace:
    trace = SchedulingTrace(project_id='p', num_instances=len(instances), num_alternates=0,
                            request_id=f'req-{n}', instance_uuids=instances)
    trace.outcome = 'selected' if n % 2 else 'no valid host'
    trace.stage_ms = {'placement_candidates': 1.5, 'claims': 0.5}
    return trace


@pytest.fixture(params=['sqlite', 'postgresql'])
def api(request, tmp_path):
    # Records are written many to a statement (insert ... returning): both
    # databases the API database may be on must give each record its own id.
    url = (f'sqlite:///{tmp_path}/api.sqlite' if request.param == 'sqlite'
           else request.getfixturevalue('postgres_url'))
    engine = engines.create_engine(url)
    migrate.sync('api', engine)
    yield url, engine
    engine.dispose()


def test_database_backend_finds_by_request_and_by_instance(api):
    _, engine = api
    backend = DatabaseBackend(engine, retention=100)
    backend.write([SchedulingRecord.from_trace(_trace(n, [f'i-{n}', 'i-shared']))
                   for n in range(4)])
    (found,) = backend.find(RecordQuery(request_id='req-2'))
    assert found.instance_uuids == ('i-2', 'i-shared')
    assert found.outcome == 'no valid host'
    assert found.body['stage_ms'] == {'placement_candidates': 1.5, 'claims': 0.5}
    assert [r.request_id for r in backend.find(RecordQuery(instance_uuid='i-shared'))] == [
        'req-3', 'req-2', 'req-1', 'req-0']
    assert [r.request_id for r in backend.find(RecordQuery(instance_uuid='i-1'))] == ['req-1']


def test_purge_keeps_the_newest_records_and_their_instances(api):
    _, engine = api
    backend = DatabaseBackend(engine, retention=100)
    backend.write([SchedulingRecord.from_trace(_trace(n, [f'i-{n}'])) for n in range(10)])
    assert record_database.purge(engine, 3) == 7
    assert [r.request_id for r in backend.find(RecordQuery(last=100))] == [
        'req-9', 'req-8', 'req-7']
    assert backend.find(RecordQuery(instance_uuid='i-1')) == []
    with engine.connect() as conn:
        assert conn.exec_driver_sql(
            'SELECT count(*) FROM scheduling_record_instances').scalar() == 3
    assert record_database.purge(engine, 3) == 0


def test_retention_is_applied_as_records_are_written(api, monkeypatch):
    _, engine = api
    monkeypatch.setattr(record_database, 'PURGE_EVERY', 5)
    writer = RecordWriter(DatabaseBackend(engine, retention=4), queue_size=100)
    for n in range(12):
        writer.submit(_trace(n, [f'i-{n}']))
    writer.close()
    kept = DatabaseBackend(engine, retention=4).find(RecordQuery(last=100))
    # Purged after every 5 written: never more than retention + 5 rows.
    assert 4 <= len(kept) <= 9
    assert kept[0].request_id == 'req-11'


def _conf(tmp_path, api_url, **scheduler):
    lines = [f'[api_database]\nconnection = {api_url}\n', '[scheduler]\n']
    lines += [f'{k} = {v}\n' for k, v in scheduler.items()]
    path = tmp_path / 'top.conf'
    path.write_text(''.join(lines))
    return str(path)


def _cli_json(capsys, argv):
    capsys.readouterr()
    assert cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize('backend', ['database', 'jsonlines'])
def test_cli_finds_records_by_request_id_in_either_backend(backend, api, tmp_path, capsys):
    url, _ = api
    conf_path = _conf(tmp_path, url, record_backend=backend,
                      records_file=tmp_path / 'records.jsonl')
    conf = cfg.ConfigOpts()
    conf.register_opts([cfg.StrOpt('connection')], group='api_database')
    scheduler_conf.register_opts(conf)
    conf(['--config-file', conf_path])
    writer = RecordWriter(load_backend(conf), queue_size=10)
    for n in range(3):
        writer.submit(_trace(n, [f'i-{n}']))
    writer.close()

    rows = _cli_json(capsys, ['scheduler', 'records', '--request-id', 'req-1',
                              '--config-file', conf_path, '-f', 'json'])
    assert [(r['request_id'], r['instances'], r['outcome']) for r in rows] == [
        ('req-1', 'i-1', 'selected')]
    assert rows[0]['record']['stage_ms'] == {'placement_candidates': 1.5, 'claims': 0.5}
    assert rows[0]['total_ms'] == 2.0
    rows = _cli_json(capsys, ['scheduler', 'records', '--instance', 'i-2',
                              '--config-file', conf_path, '-f', 'json'])
    assert [r['request_id'] for r in rows] == ['req-2']
    rows = _cli_json(capsys, ['scheduler', 'records', '--last', '2',
                              '--config-file', conf_path, '-f', 'json'])
    assert [r['request_id'] for r in rows] == ['req-2', 'req-1']


def test_purge_records_command_keeps_what_it_is_told(api, tmp_path, capsys):
    url, engine = api
    DatabaseBackend(engine, retention=100).write(
        [SchedulingRecord.from_trace(_trace(n, [f'i-{n}'])) for n in range(6)])
    conf_path = _conf(tmp_path, url)
    capsys.readouterr()
    assert manage.main(['scheduler', 'purge-records', '--keep', '2',
                        '--config-file', conf_path, '-f', 'json']) == 0
    assert json.loads(capsys.readouterr().out) == {'kept_at_most': 2, 'deleted': 4}


def test_an_unknown_backend_is_refused_with_the_choices(tmp_path):
    conf = cfg.ConfigOpts()
    scheduler_conf.register_opts(conf)
    conf([])
    conf.set_override('record_backend', 'kafka', group='scheduler')
    with pytest.raises(RecordBackendError, match='jsonlines, database, or none'):
        load_backend(conf)
    conf.set_override('record_backend', 'none', group='scheduler')
    assert load_backend(conf) is None
