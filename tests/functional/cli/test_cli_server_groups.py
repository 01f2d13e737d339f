"""``cellplane server group ...`` and ``server create --group/--hint``: what is written, cast and refused.

The super conductor is the recording stand-in of test_cli_servers.py (the
casts it receives are kept); scheduling itself is tested elsewhere.
"""
from __future__ import annotations

import json

import pytest
import sqlalchemy as sa

from cellplane.db.api.models import server_group_members
from cellplane.objects import server_groups
from cellplane_cli import cli, manage
from tests.functional.cli.test_cli_servers import DEADLINE_SECONDS, top  # noqa: F401


@pytest.fixture
def conf(top):
    path, recorder, engine = top
    with open(path, 'a') as f:
        f.write('[scheduler]\nfailure_domain_levels = rack,row\n')
    assert manage.main(['failure-domain', 'record-levels', '--config-file', path]) == 0
    return path, recorder, engine


def run(capsys, *argv):
    """(exit code, JSON output or None, stderr) of one ``cellplane`` command."""
    capsys.readouterr()
    try:
        code = cli.main([*argv, '--config-file', CONF[0], '-f', 'json']
                        if argv[-1] != '--no-format' else [*argv[:-1], '--config-file', CONF[0]])
    except SystemExit as exited:   # a usage error: argparse exits
        code = exited.code
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and out.strip().startswith(('{', '[')) else out), err


CONF: list[str] = []


@pytest.fixture(autouse=True)
def _conf_path(conf):
    CONF[:] = [conf[0]]


def test_create_list_show_with_level_and_default_host(conf, capsys):
    code, web, _ = run(capsys, 'server', 'group', 'create', 'web', '--policy', 'anti-affinity',
                       '--level', 'rack', '--max-per-domain', '2', '--project', 'p1')
    assert code == 0
    assert (web['name'], web['policy'], web['level'], web['max_per_domain'], web['members']) \
        == ('web', 'anti-affinity', 'rack', 2, [])
    code, db, _ = run(capsys, 'server', 'group', 'create', 'db', '--policy', 'soft-affinity',
                      '--project', 'p1')
    assert code == 0 and db['level'] == 'host' and db['max_per_domain'] is None
    code, listed, _ = run(capsys, 'server', 'group', 'list', '--project', 'p1')
    assert [(g['name'], g['members']) for g in listed] == [('db', 0), ('web', 0)]
    code, shown, _ = run(capsys, 'server', 'group', 'show', 'web', '--project', 'p1')
    assert code == 0 and shown['id'] == web['id']


def test_names_are_unique_per_project_only(conf, capsys):
    assert run(capsys, 'server', 'group', 'create', 'web', '--policy', 'affinity',
               '--project', 'p1')[0] == 0
    code, _, err = run(capsys, 'server', 'group', 'create', 'web', '--policy',
                       'anti-affinity', '--project', 'p1')
    assert code == 1 and 'project p1 already has a server group named' in err
    assert run(capsys, 'server', 'group', 'create', 'web', '--policy', 'affinity',
               '--project', 'p2')[0] == 0


@pytest.mark.parametrize('args, message', [
    (('--policy', 'sideways'), "argument --policy: invalid choice: 'sideways'"),
    (('--policy', 'anti-affinity', '--max-per-domain', '0'), 'argument --max-per-domain: must be 1 or more, not 0'),
    (('--policy', 'anti-affinity', '--max-per-domain', 'two'), "expected a whole number"),
])
def test_bad_arguments_are_one_line_and_exit_2(conf, capsys, args, message):
    code, _, err = run(capsys, 'server', 'group', 'create', 'web', *args)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize('args, message', [
    (('--policy', 'anti-affinity', '--level', 'room'),
     "unknown level 'room': the levels are host and those the scheduler uses "
     "([scheduler] failure_domain_levels: rack, row)"),
    (('--policy', 'affinity', '--max-per-domain', '2'),
     '--max-per-domain is for anti-affinity policies, not affinity'),
])
def test_refusals_name_the_reason_and_exit_1(conf, capsys, args, message):
    code, _, err = run(capsys, 'server', 'group', 'create', 'web', *args)
    assert code == 1 and message in err
    assert server_groups.list_all(conf[2]) == []


def test_server_create_group_makes_members_and_the_spec_carries_the_policy(conf, capsys):
    _, recorder, engine = conf
    _, group, _ = run(capsys, 'server', 'group', 'create', 'web', '--policy',
                      'soft-anti-affinity', '--level', 'row', '--project', 'p1')
    code, created, _ = run(capsys, 'server', 'create', 'w', '--flavor', 'small', '--count',
                           '2', '--group', 'web', '--project', 'p1')
    assert code == 0
    assert recorder.arrived.wait(DEADLINE_SECONDS)
    [(spec, uuids)] = recorder.casts
    ig = spec.instance_group
    assert (ig.uuid, ig.name, ig.policy, ig.soft, ig.level) == \
        (group['id'], 'web', 'anti-affinity', True, 'row')
    assert server_groups.get(engine, 'web', project_id='p1').members == tuple(uuids)
    _, shown, _ = run(capsys, 'server', 'group', 'show', group['id'])
    assert [(m['id'], m['status'], m['row']) for m in shown['members']] == \
        [(u, 'BUILD', None) for u in uuids]
    code, table, _ = run(capsys, 'server', 'group', 'show', group['id'], '--no-format')
    assert code == 0 and f'{uuids[0]} w-1 BUILD - row=-' in table

    # As in Nova, a group with members may be deleted: they leave it and stay.
    code, said, _ = run(capsys, 'server', 'group', 'delete', 'web', '--project', 'p1',
                        '--no-format')
    assert code == 0
    assert said == f'{group["id"]}: deleted; its 2 member(s) left it\n'
    assert server_groups.list_all(engine) == []
    with engine.connect() as db:   # no member row is left behind
        assert db.execute(sa.select(server_group_members)).all() == []
    _, listed, _ = run(capsys, 'server', 'list')
    assert sorted(s['id'] for s in listed) == sorted(uuids)
    # The name is free again.
    assert run(capsys, 'server', 'group', 'create', 'web', '--policy', 'affinity',
               '--project', 'p1')[0] == 0


def test_a_group_of_another_project_or_none_is_refused(conf, capsys):
    run(capsys, 'server', 'group', 'create', 'web', '--policy', 'affinity', '--project', 'p1')
    code, _, err = run(capsys, 'server', 'create', 'w', '--flavor', 'small', '--group',
                       'web', '--project', 'p2')
    assert code == 1 and "no server group with id or name 'web' in project p2" in err
    web = server_groups.get(conf[2], 'web')
    code, _, err = run(capsys, 'server', 'create', 'w', '--flavor', 'small', '--group',
                       web.uuid, '--project', 'p2')
    assert code == 1 and f'server group {web.uuid} belongs to project p1, not p2' in err


def test_hints_resolve_instances_and_levels(conf, capsys):
    _, recorder, _ = conf
    _, [x], _ = run(capsys, 'server', 'create', 'x', '--flavor', 'small')
    assert recorder.arrived.wait(DEADLINE_SECONDS)
    recorder.arrived.clear()
    code, _, _ = run(capsys, 'server', 'create', 'y', '--flavor', 'small',
                     '--hint', 'different_domain=row:x', '--hint', 'same_host=x')
    assert code == 0 and recorder.arrived.wait(DEADLINE_SECONDS)
    spec = recorder.casts[-1][0]
    assert spec.scheduler_hints == {'different_domain': [f'row:{x["id"]}'],
                                    'same_host': [x['id']]}
    # At the host level a domain hint is the host hint.
    recorder.arrived.clear()
    assert run(capsys, 'server', 'create', 'z', '--flavor', 'small',
               '--hint', 'different_domain=host:x')[0] == 0
    assert recorder.arrived.wait(DEADLINE_SECONDS)
    assert recorder.casts[-1][0].scheduler_hints == {'different_host': [x['id']]}


@pytest.mark.parametrize('hint, code, message', [
    ('different_domain=x', 2, 'different_domain expects LEVEL:INSTANCE'),
    ('near=x', 2, "unknown hint 'near'"),
    ('different_domain=room:x', 1, "different_domain: unknown level 'room'"),
    ('same_host=nobody', 1, "no server with id or name 'nobody'"),
])
def test_bad_hints_are_refused(conf, capsys, hint, code, message):
    run(capsys, 'server', 'create', 'x', '--flavor', 'small')
    got, _, err = run(capsys, 'server', 'create', 'y', '--flavor', 'small', '--hint', hint)
    assert got == code and message in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1
