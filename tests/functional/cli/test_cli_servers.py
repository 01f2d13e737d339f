"""``cellplane server ...``: what the API role writes, what it casts, and what it shows.

The super conductor is stood in for by an RPC server on the same in-process
bus (kombu's memory transport: with ``fake://`` the CLI's transport cleanup
would drop the queued cast) that records the ``schedule_and_build_instances`` casts it receives;
the end-to-end boot through real daemons is tests/integration/test_top_boot_path.py.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from cellplane.db import engines
from cellplane.objects import build_requests, cell_mappings
from cellplane.rpc.server import build_server
from cellplane.rpc.transport import get_transport
from cellplane_cli import cli, manage
from conductor.super import rpcapi as super_rpcapi

# isort: split
import oslo_messaging as messaging

from rpc_schemas.request_spec import RequestSpec

DEADLINE_SECONDS = 30


class SuperConductorRecorder:
    target = messaging.Target(namespace=super_rpcapi.NAMESPACE, version=super_rpcapi.API_VERSION)

    def __init__(self):
        self.casts = []
        self.arrived = threading.Event()
        # Set by a test: the outcome this stand-in gives every request.
        self.fail_with = None
        self.api_engine = None

    def schedule_and_build_instances(self, ctxt, request_spec, instance_uuids):
        self.casts.append((request_spec, instance_uuids))
        if self.fail_with:
            build_requests.fail(self.api_engine, instance_uuids, self.fail_with)
        self.arrived.set()


@pytest.fixture
def top(tmp_path):
    conf = tmp_path / 'top.conf'
    api_url = f'sqlite:///{tmp_path}/api.sqlite'
    # No Placement here: cores and RAM unlimited, so quota counts only instances
    # (tests/functional/cli/test_cli_quotas.py checks the refusals).
    conf.write_text(f'[DEFAULT]\ntransport_url = kombu+memory:////\n'
                    f'[api_database]\nconnection = {api_url}\n'
                    f'[quota]\ncores = -1\nram = -1\n')
    assert manage.main(['db', 'sync', '--database', 'api', '--config-file', str(conf)]) == 0
    assert cli.main(['flavor', 'create', 'small', '--vcpus', '1', '--ram', '512',
                     '--disk', '10', '--config-file', str(conf)]) == 0
    recorder = SuperConductorRecorder()
    transport = get_transport('kombu+memory:////')
    server = build_server(transport, topic='conductor', server='super-1',
                          endpoints=[recorder])
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
    assert cli.main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_create_records_each_instance_and_casts_one_schedule_for_the_request(top, capsys):
    conf, recorder, engine = top
    assert cli.main(['aggregate', 'create', 'rack-a', '--zone', 'az1',
                     '--config-file', conf]) == 0
    created = _json(capsys, ['server', 'create', 'web', '--flavor', 'small', '--count', '3',
                             '--image-property', 'hw_architecture=x86_64',
                             '--availability-zone', 'az1', '--project', 'p1',
                             '--user', 'u1', '--config-file', conf, '-f', 'json'])
    assert [s['name'] for s in created] == ['web-1', 'web-2', 'web-3']
    assert {s['status'] for s in created} == {'BUILD'}
    assert recorder.arrived.wait(DEADLINE_SECONDS)
    [(spec, uuids)] = recorder.casts
    assert isinstance(spec, RequestSpec)
    assert uuids == [s['id'] for s in created]
    assert (spec.num_instances, spec.project_id, spec.user_id, spec.availability_zone) == \
        (3, 'p1', 'u1', 'az1')
    assert spec.image_properties == {'hw_architecture': 'x86_64'}
    assert (spec.flavor.name, spec.flavor.vcpus, spec.flavor.memory_mb) == ('small', 1, 512)
    stored = build_requests.get_many(engine, uuids)
    assert sorted(r.instance.display_name for r in stored.values()) == \
        ['web-1', 'web-2', 'web-3']
    assert build_requests.request_spec(engine, uuids[0]) == spec


def test_list_and_show_a_request_that_failed_before_reaching_a_cell(top, capsys):
    conf, recorder, engine = top
    [created] = _json(capsys, ['server', 'create', 'db', '--flavor', 'small',
                               '--config-file', conf, '-f', 'json'])
    build_requests.fail(engine, [created['id']], 'NoValidHost: 0 hosts had room')
    [listed] = _json(capsys, ['server', 'list', '--config-file', conf, '-f', 'json'])
    assert (listed['id'], listed['status'], listed['cell']) == (created['id'], 'ERROR', None)
    shown = _json(capsys, ['server', 'show', created['id'], '--config-file', conf,
                           '-f', 'json'])
    assert shown['fault'] == 'NoValidHost: 0 hosts had room'
    assert shown['events'] == []


def test_delete_of_a_request_without_a_cell_removes_it(top, capsys):
    conf, recorder, engine = top
    [created] = _json(capsys, ['server', 'create', 'tmp', '--flavor', 'small',
                               '--config-file', conf, '-f', 'json'])
    assert cli.main(['server', 'delete', created['id'], '--config-file', conf]) == 0
    assert 'had not reached a cell' in capsys.readouterr().out
    assert _json(capsys, ['server', 'list', '--config-file', conf, '-f', 'json']) == []
    assert cli.main(['server', 'show', created['id'], '--config-file', conf]) == 1


def test_create_with_an_unknown_flavor_records_nothing(top, capsys):
    conf, recorder, engine = top
    assert cli.main(['server', 'create', 'x', '--flavor', 'nope', '--config-file', conf]) == 1
    assert "no flavor named or with id 'nope'" in capsys.readouterr().err
    assert build_requests.list_all(engine) == []
    assert recorder.casts == []


def test_create_wait_returns_once_every_server_reached_a_final_state(top, capsys):
    conf, recorder, engine = top
    recorder.fail_with = 'NoValidHost: nothing fits'
    capsys.readouterr()
    # Every server ended in ERROR: the table lists them, the exit code says so.
    assert cli.main(['server', 'create', 'w', '--flavor', 'small', '--count', '2',
                     '--wait', '--config-file', conf, '-f', 'json']) == 1
    out, err = capsys.readouterr()
    created = json.loads(out)
    assert [(s['status'], s['cell']) for s in created] == [('ERROR', None)] * 2
    assert '2 server(s) ended in ERROR: ' in err
    for server in created:
        assert f"{server['name']} ({server['id']})" in err


def test_create_wait_gives_up_after_the_timeout_with_exit_code_1(top, capsys):
    conf, recorder, engine = top
    assert cli.main(['server', 'create', 'w', '--flavor', 'small', '--wait',
                     '--timeout', '1', '--config-file', conf]) == 1
    assert '1 of 1 server(s) still not ACTIVE or ERROR after 1 s' in capsys.readouterr().err
    # The request itself was made: it is still being scheduled.
    [request] = build_requests.list_all(engine)
    assert not request.failed


def test_a_request_the_bus_refuses_is_left_in_error_not_building(top, capsys):
    conf, recorder, engine = top
    capped = conf + '.capped'
    with open(conf) as src, open(capped, 'w') as out:
        # An upgrade cap below 1.2 forbids the cast before anything is sent.
        out.write(src.read() + '[upgrade_levels]\nconductor = 1.1\n')
    assert cli.main(['server', 'create', 'x', '--flavor', 'small',
                     '--config-file', capped]) == 1
    assert 'schedule_and_build_instances' in capsys.readouterr().err
    [request] = build_requests.list_all(engine)
    assert request.failed
    assert 'could not be sent to the super conductor' in request.fault_message


def _subprocess(conf, *argv):
    return subprocess.run([sys.executable, '-m', 'cellplane_cli.cli', *argv,
                           '--config-file', conf], capture_output=True, text=True,
                          timeout=120)


def test_a_blank_server_name_is_refused_and_nothing_is_recorded(top):
    conf, recorder, engine = top
    proc = _subprocess(conf, 'server', 'create', '  ', '--flavor', 'small')
    assert proc.returncode == 1
    assert proc.stderr.strip() == 'a server name must not be empty or blank'
    assert recorder.casts == []
    assert build_requests.list_all(engine) == []


def test_commands_do_not_announce_the_cell_mappings_they_read(top, tmp_path):
    conf, _, engine = top
    cell_mappings.create(engine, name='cell1', transport_url='memory://cell1',
                         database_connection=f'sqlite:///{tmp_path}/cell1.sqlite')
    proc = _subprocess(conf, 'server', 'list', '-f', 'json')
    assert proc.returncode == 0, proc.stderr
    assert 'Cell mappings' not in proc.stderr


def test_create_in_a_zone_no_host_is_in_is_refused_and_records_nothing(top, capsys):
    conf, recorder, engine = top
    assert cli.main(['aggregate', 'create', 'rack-a', '--zone', 'az1',
                     '--config-file', conf]) == 0
    capsys.readouterr()

    assert cli.main(['server', 'create', 'x', '--flavor', 'small', '--availability-zone',
                     'nowhere', '--config-file', conf]) == 1

    err = capsys.readouterr().err
    assert "availability zone 'nowhere' does not exist: no host of any cell is in it " \
           "(zones: az1)" in err
    assert build_requests.list_all(engine) == []
    assert recorder.casts == []


def _create(capsys, conf, name, count=1):
    return _json(capsys, ['server', 'create', name, '--flavor', 'small', '--count',
                          str(count), '--config-file', conf, '-f', 'json'])


def test_show_and_events_take_a_name_and_refuse_one_several_servers_have(top, capsys):
    conf, recorder, engine = top
    [db] = _create(capsys, conf, 'db')
    twins = _create(capsys, conf, 'twin') + _create(capsys, conf, 'twin')

    shown = _json(capsys, ['server', 'show', 'db', '--config-file', conf, '-f', 'json'])
    assert shown['id'] == db['id']
    assert _json(capsys, ['server', 'events', 'db', '--config-file', conf,
                          '-f', 'json']) == []
    assert cli.main(['server', 'show', 'twin', '--config-file', conf]) == 1
    err = capsys.readouterr().err
    assert "2 servers are named 'twin' (" in err and 'give an id' in err
    assert all(t['id'] in err for t in twins)
    assert cli.main(['server', 'show', 'nobody', '--config-file', conf]) == 1
    assert "no server with id or name 'nobody'" in capsys.readouterr().err


def test_delete_takes_several_names_or_ids_and_names_each_it_could_not_delete(top, capsys):
    conf, recorder, engine = top
    [db] = _create(capsys, conf, 'db')
    [web] = _create(capsys, conf, 'web')
    [kept] = _create(capsys, conf, 'kept')
    capsys.readouterr()

    assert cli.main(['server', 'delete', 'db', web['id'], 'nope',
                     '--config-file', conf]) == 1

    out, err = capsys.readouterr()
    assert f"{db['id']}: deleted" in out and f"{web['id']}: deleted" in out
    assert "Could not delete server nope: no server with id or name 'nope'" in err
    assert '1 of 3 server(s) could not be deleted' in err
    listed = _json(capsys, ['server', 'list', '--config-file', conf, '-f', 'json'])
    assert [s['id'] for s in listed] == [kept['id']]


def test_list_filters_by_status_and_name_and_refuses_a_bad_filter_in_one_line(top, capsys):
    conf, recorder, engine = top
    web = _create(capsys, conf, 'web', count=2)
    [db] = _create(capsys, conf, 'db')
    build_requests.fail(engine, [web[0]['id']], 'NoValidHost: full')

    def listed(*filters):
        return [s['id'] for s in _json(capsys, ['server', 'list', *filters,
                                                '--config-file', conf, '-f', 'json'])]
    assert listed('--status', 'error') == [web[0]['id']]
    assert listed('--status', 'BUILD') == [web[1]['id'], db['id']]
    assert listed('--name', '^web-') == [web[0]['id'], web[1]['id']]
    assert listed('--name', 'b', '--status', 'BUILD') == [web[1]['id'], db['id']]
    assert listed('--cell', 'cell1') == []
    assert listed('--host', 'h1') == []
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        cli.main(['server', 'list', '--status', 'running', '--config-file', conf])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("cellplane server list: error: argument --status: unknown "
                          "status 'running' (one of BUILD, ACTIVE")
    assert err.count('\n') == 1     # one line, not the whole usage first
