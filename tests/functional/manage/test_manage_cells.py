"""``cellplane-manage cell ...`` maps cells in the API database (SQLite here)."""
from __future__ import annotations

import json

import pytest

from cellplane_cli import manage


@pytest.fixture
def top_conf(tmp_path):
    conf = tmp_path / 'top.conf'
    conf.write_text(f'[api_database]\nconnection = sqlite:///{tmp_path}/api.sqlite\n')
    assert manage.main(['db', 'sync', '--database', 'api', '--config-file', str(conf)]) == 0
    return str(conf)


def _json(capsys):
    return json.loads(capsys.readouterr().out)


def test_cell_create_then_list_shows_it_with_password_masked(top_conf, capsys):
    capsys.readouterr()
    assert manage.main(['cell', 'create', '--name', 'cell1',
                        '--transport-url', 'rabbit://guest:s3cret@127.0.0.1:5672/cell1',
                        '--database-connection', 'postgresql://cp:pw@db/cell1',
                        '--config-file', top_conf, '-f', 'json']) == 0
    created = _json(capsys)
    assert manage.main(['cell', 'list', '--config-file', top_conf, '-f', 'json']) == 0
    listed = _json(capsys)
    assert [c['name'] for c in listed] == ['cell1']
    assert listed[0]['uuid'] == created['uuid']
    assert listed[0]['transport_url'] == 'rabbit://guest:***@127.0.0.1:5672/cell1'
    assert 's3cret' not in json.dumps(listed) and ':pw@' not in json.dumps(listed)


def test_cell_create_twice_with_same_name_is_refused(top_conf, capsys):
    args = ['cell', 'create', '--name', 'cell1', '--transport-url', 'rabbit://h/c1',
            '--database-connection', 'sqlite:///c1', '--config-file', top_conf]
    assert manage.main(args) == 0
    assert manage.main(args) == 1
    assert "'cell1'" in capsys.readouterr().err


def test_cell_delete_removes_an_empty_cell(top_conf, capsys):
    assert manage.main(['cell', 'create', '--name', 'gone', '--transport-url', 'rabbit://h/g',
                        '--database-connection', 'sqlite:///g', '--config-file', top_conf]) == 0
    assert manage.main(['cell', 'delete', 'gone', '--config-file', top_conf]) == 0
    capsys.readouterr()
    assert manage.main(['cell', 'list', '--config-file', top_conf, '-f', 'json']) == 0
    assert _json(capsys) == []


def test_cell_show_unknown_cell_exits_1_naming_it(top_conf, capsys):
    assert manage.main(['cell', 'show', 'nowhere', '--config-file', top_conf]) == 1
    assert 'nowhere' in capsys.readouterr().err


def test_db_version_reports_up_to_date_after_sync(top_conf, capsys):
    capsys.readouterr()
    assert manage.main(['db', 'version', '--database', 'api', '--config-file', top_conf,
                        '-f', 'json']) == 0
    assert _json(capsys)['up_to_date'] is True


def test_cell_command_without_api_database_exits_2_naming_option(tmp_path, capsys):
    conf = tmp_path / 'cell1.conf'
    conf.write_text('[database]\nconnection = sqlite:///x\n')
    assert manage.main(['cell', 'list', '--config-file', str(conf)]) == 2
    err = capsys.readouterr().err
    assert '[api_database] connection' in err and str(conf) in err
