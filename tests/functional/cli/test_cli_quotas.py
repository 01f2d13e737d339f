"""``cellplane quota show|set|delete`` and ``server create`` refused over quota, through the real command.

The super conductor is a recorder on the in-process bus (as in
test_cli_servers.py); cores and RAM are unlimited here so that no Placement
is needed, and the instances quota is what is checked.
"""
from __future__ import annotations

import json

import pytest

from cellplane.db import engines
from cellplane.objects import instance_mappings, server_groups
from cellplane.rpc.server import build_server
from cellplane.rpc.transport import get_transport
from cellplane_cli import cli, manage
from tests.functional.cli.test_cli_servers import SuperConductorRecorder


@pytest.fixture
def top(tmp_path):
    conf = tmp_path / 'top.conf'
    api_url = f'sqlite:///{tmp_path}/api.sqlite'
    conf.write_text(f'[DEFAULT]\ntransport_url = kombu+memory:////\n'
                    f'[api_database]\nconnection = {api_url}\n'
                    f'[quota]\ninstances = 3\ncores = -1\nram = -1\n')
    assert manage.main(['db', 'sync', '--database', 'api', '--config-file', str(conf)]) == 0
    assert cli.main(['flavor', 'create', 'small', '--vcpus', '1', '--ram', '512',
                     '--config-file', str(conf)]) == 0
    recorder = SuperConductorRecorder()
    transport = get_transport('kombu+memory:////')
    server = build_server(transport, topic='conductor', server='super-1', endpoints=[recorder])
    server.start()
    engine = engines.create_engine(api_url)
    recorder.api_engine = engine
    yield str(conf), recorder, engine
    server.stop()
    server.wait()
    transport.cleanup()
    engine.dispose()


def _json(capsys, argv):
    capsys.readouterr()
    assert cli.main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _limits(capsys, conf, *extra):
    rows = _json(capsys, ['quota', 'show', '--project', 'p1', '--config-file', conf,
                          '-f', 'json', *extra])
    return {row['resource']: row['limit'] for row in rows}


def test_show_set_and_delete_a_projects_quota(top, capsys):
    conf, _, _ = top
    assert _limits(capsys, conf) == {'instances': 3, 'cores': -1, 'ram': -1,
                                     'server_groups': 10, 'server_group_members': 10,
                                     'metadata_items': 128, 'key_pairs': 100}
    rows = _json(capsys, ['quota', 'set', '--project', 'p1', '--instances', '5',
                          '--server-groups', '-1', '--config-file', conf, '-f', 'json'])
    assert {r['resource']: r['limit'] for r in rows}['instances'] == 5
    assert _limits(capsys, conf)['server_groups'] == -1
    # Another project keeps the defaults.
    assert _json(capsys, ['quota', 'show', '--project', 'p2', '--config-file', conf,
                          '-f', 'json'])[0] == {'resource': 'instances', 'limit': 3}
    assert _limits(capsys, conf, '--defaults')['instances'] == 3
    assert cli.main(['quota', 'delete', '--project', 'p1', '--config-file', conf]) == 0
    assert _limits(capsys, conf)['instances'] == 3


def test_server_create_over_quota_is_refused_with_novas_message_and_writes_nothing(
        top, capsys):
    conf, recorder, engine = top
    assert cli.main(['server', 'create', 'web', '--flavor', 'small', '--count', '2',
                     '--project', 'p1', '--config-file', conf]) == 0
    capsys.readouterr()
    assert cli.main(['server', 'create', 'more', '--flavor', 'small', '--count', '2',
                     '--project', 'p1', '--config-file', conf]) == 1
    assert ('Quota exceeded for instances: Requested 2, but already used 2 of 3 instances'
            in capsys.readouterr().err)
    with engine.connect() as conn:
        assert instance_mappings.count_of_project(conn, 'p1') == 2
    assert len(recorder.casts) == 1


def test_server_group_create_over_quota_is_refused_and_writes_nothing(top, capsys):
    """``server group create`` hands the [quota] driver to the groups' quota seam."""
    conf, _, engine = top
    assert cli.main(['quota', 'set', '--project', 'p1', '--server-groups', '1',
                     '--config-file', conf]) == 0
    assert cli.main(['server', 'group', 'create', 'one', '--policy', 'affinity',
                     '--project', 'p1', '--config-file', conf]) == 0
    capsys.readouterr()
    assert cli.main(['server', 'group', 'create', 'two', '--policy', 'affinity',
                     '--project', 'p1', '--config-file', conf]) == 1
    assert 'Quota exceeded, too many server groups.' in capsys.readouterr().err
    assert [g.name for g in server_groups.list_all(engine, project_id='p1')] == ['one']


@pytest.mark.parametrize('argv, message', [
    (['quota', 'set', '--project', 'p1', '--instances', '-2'],
     'argument --instances: must be -1 or more, not -2'),
    (['quota', 'set', '--project', 'p1', '--cores', 'many'],
     "argument --cores: expected a whole number, got 'many'"),
])
def test_bad_numbers_are_one_line_naming_the_option_and_exit_2(top, capsys, argv, message):
    conf, _, _ = top
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        cli.main([*argv, '--config-file', conf])
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2 and err.splitlines() == [err] and message in err


def test_set_without_a_limit_exits_2_saying_what_to_give(top, capsys):
    conf, _, _ = top
    capsys.readouterr()
    assert cli.main(['quota', 'set', '--project', 'p1', '--config-file', conf]) == 2
    assert 'give at least one limit, e.g. --instances 20' in capsys.readouterr().err
