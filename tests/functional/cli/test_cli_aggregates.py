"""``cellplane aggregate ...`` keeps host aggregates in a migrated (SQLite) API database."""
from __future__ import annotations

import json

import pytest

from cellplane.db import engines
from cellplane.objects import cell_mappings, host_mappings
from cellplane_cli import cli, manage

HOSTS = ('h1', 'h2', 'h3')


@pytest.fixture
def top_conf(tmp_path):
    conf = tmp_path / 'top.conf'
    url = f'sqlite:///{tmp_path}/api.sqlite'
    conf.write_text(f'[api_database]\nconnection = {url}\n')
    assert manage.main(['db', 'sync', '--database', 'api', '--config-file', str(conf)]) == 0
    # The hosts a scheduler's refresh would have mapped to their cell.
    engine = engines.create_engine(url)
    try:
        cell = cell_mappings.create(engine, name='cell1', transport_url='memory://cell1',
                                    database_connection='sqlite://')
        with engine.begin() as conn:
            host_mappings.map_hosts(conn, cell_mappings.id_of(conn, cell.uuid), HOSTS)
    finally:
        engine.dispose()
    return str(conf)


@pytest.fixture
def run(top_conf, capsys):
    """Run one ``cellplane aggregate`` command: (exit code, parsed JSON or None, stderr)."""
    def _run(*args: str, as_json: bool = True):
        capsys.readouterr()
        argv = ['aggregate', *args, '--config-file', top_conf]
        code = cli.main(argv + (['-f', 'json'] if as_json else []))
        out, err = capsys.readouterr()
        return code, (json.loads(out) if code == 0 and as_json else None), err
    return _run


def test_create_with_zone_and_properties_then_list_and_show(run):
    code, created, _ = run('create', 'fast', '--zone', 'az2', '--property', 'ssd=true',
                           '--property', 'net=25g')
    assert code == 0
    assert created['name'] == 'fast'
    assert created['availability_zone'] == 'az2'
    assert created['properties'] == {'ssd': 'true', 'net': '25g', 'availability_zone': 'az2'}
    assert created['hosts'] == []
    code, listed, _ = run('list')
    assert [(a['name'], a['id']) for a in listed] == [('fast', created['id'])]
    code, shown, _ = run('show', created['id'])
    assert shown == created


def test_set_and_unset_metadata(run):
    run('create', 'fast', '--property', 'ssd=true')
    code, shown, _ = run('set', 'fast', '--property', 'ssd=false', '--zone', 'az1')
    assert code == 0
    assert shown['properties'] == {'ssd': 'false', 'availability_zone': 'az1'}
    code, shown, _ = run('unset', 'fast', '--property', 'availability_zone')
    assert code == 0
    assert (shown['availability_zone'], shown['properties']) == (None, {'ssd': 'false'})
    code, _, err = run('unset', 'fast', '--property', 'gpu')
    assert code == 1 and 'gpu' in err


def test_add_and_remove_hosts(run):
    run('create', 'fast')
    run('add-host', 'fast', 'h2')
    code, shown, _ = run('add-host', 'fast', 'h1')
    assert code == 0 and shown['hosts'] == ['h1', 'h2']
    code, _, err = run('add-host', 'fast', 'h1')
    assert code == 1 and 'already in aggregate fast' in err
    code, shown, _ = run('remove-host', 'fast', 'h2')
    assert code == 0 and shown['hosts'] == ['h1']
    code, _, err = run('remove-host', 'fast', 'h2')
    assert code == 1 and 'not in aggregate fast' in err


def test_a_host_cannot_be_in_two_zones(run):
    run('create', 'rack1', '--zone', 'az1')
    run('create', 'rack2', '--zone', 'az2')
    run('create', 'ssd', '--property', 'ssd=true')
    assert run('add-host', 'rack1', 'h1')[0] == 0
    assert run('add-host', 'ssd', 'h1')[0] == 0  # no zone: no conflict

    code, _, err = run('add-host', 'rack2', 'h1')
    assert code == 1
    assert 'rack1' in err and 'rack2' in err and 'h1' in err
    # Giving the zoneless aggregate a different zone is refused the same way.
    code, _, err = run('set', 'ssd', '--zone', 'az2')
    assert code == 1 and 'rack1' in err and 'ssd' in err
    # The same zone is no conflict.
    assert run('set', 'ssd', '--zone', 'az1')[0] == 0
    assert run('show', 'rack2')[1]['hosts'] == []


def test_delete_is_refused_while_the_aggregate_has_hosts(run):
    run('create', 'fast')
    run('add-host', 'fast', 'h1')
    code, _, err = run('delete', 'fast', as_json=False)
    assert code == 1 and 'h1' in err and 'remove-host' in err
    run('remove-host', 'fast', 'h1')
    assert run('delete', 'fast', as_json=False)[0] == 0
    code, _, err = run('show', 'fast')
    assert code == 1 and "no aggregate named or with uuid 'fast'" in err


@pytest.mark.parametrize('args, named', [
    (('create', 'dup'), 'exists'),
    (('create', 'x', '--zone', 'az1', '--property', 'availability_zone=az2'), 'disagree'),
    (('set', 'dup'), 'nothing to set'),
    (('show', 'nope'), 'nope'),
])
def test_bad_requests_are_refused_with_a_reason(run, args, named):
    run('create', 'dup')
    code, _, err = run(*args)
    assert code != 0 and named in err
    assert [a['name'] for a in run('list')[1]] == ['dup']


def test_a_property_without_a_key_is_a_usage_error(run, capsys):
    with pytest.raises(SystemExit) as exited:
        run('create', 'x', '--property', '=v')
    assert exited.value.code == 2
    assert "expected KEY=VALUE, got '=v'" in capsys.readouterr().err


def test_flavor_accepts_aggregate_instance_extra_specs(top_conf, capsys):
    assert cli.main(['flavor', 'create', 'fast', '--vcpus', '1', '--ram', '512',
                     '--property', 'aggregate_instance_extra_specs:ssd=true',
                     '--config-file', top_conf, '-f', 'json']) == 0
    assert json.loads(capsys.readouterr().out)['extra_specs'] == {
        'aggregate_instance_extra_specs:ssd': 'true'}


def test_a_host_no_cell_has_reported_is_refused_unless_allowed(run):
    run('create', 'fast')
    code, _, err = run('add-host', 'fast', 'nosuchhost')
    assert code == 1
    assert "no compute host 'nosuchhost' is mapped to a cell" in err
    assert run('show', 'fast')[1]['hosts'] == []
    code, shown, _ = run('add-host', 'fast', 'nosuchhost', '--allow-unmapped')
    assert code == 0 and shown['hosts'] == ['nosuchhost']
