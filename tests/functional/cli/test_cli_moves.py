"""``cellplane server migrate|resize|resize confirm|revert|evacuate`` and ``server migration list|show``.

What the API role writes in the server's cell and what it casts to the
super conductor, which a recorder stands in for on an in-process bus (as in
test_cli_servers.py); the moves themselves are tests/functional/moves and
tests/integration/test_moves.py (real daemons).
"""
from __future__ import annotations

import datetime
import json
import threading
import uuid as uuidlib

import pytest

from cellplane.db import engines, migrate
from cellplane.objects import (
    cell_mappings,
    instance_mappings,
    instances,
    migrations,
    services,
)
from cellplane.rpc.server import build_server
from cellplane.rpc.transport import get_transport
from cellplane_cli import cli, manage
from conductor.super import rpcapi as super_rpcapi

# isort: split
import oslo_messaging as messaging

from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import ACTIVE, Instance
from rpc_schemas.service_status import ServiceStatus

DEADLINE_SECONDS = 30


class SuperConductorRecorder:
    target = messaging.Target(namespace=super_rpcapi.NAMESPACE,
                              version=super_rpcapi.API_VERSION)

    def __init__(self):
        self.casts = []
        self.arrived = threading.Event()

    def _record(self, method, cell_uuid, migration_uuid):
        self.casts.append((method, cell_uuid, migration_uuid))
        self.arrived.set()

    def migrate_server(self, ctxt, cell_uuid, migration_uuid):
        self._record('migrate_server', cell_uuid, migration_uuid)

    def confirm_resize(self, ctxt, cell_uuid, migration_uuid):
        self._record('confirm_resize', cell_uuid, migration_uuid)

    def evacuate_server(self, ctxt, cell_uuid, migration_uuid):
        self._record('evacuate_server', cell_uuid, migration_uuid)

    def revert_resize(self, ctxt, cell_uuid, migration_uuid):
        self._record('revert_resize', cell_uuid, migration_uuid)


@pytest.fixture
def top(tmp_path):
    conf = tmp_path / 'top.conf'
    api_url = f'sqlite:///{tmp_path}/api.sqlite'
    conf.write_text(f'[DEFAULT]\ntransport_url = kombu+memory:////\n'
                    f'[api_database]\nconnection = {api_url}\n')
    assert manage.main(['db', 'sync', '--database', 'api', '--config-file', str(conf)]) == 0
    for name, vcpus, ram in (('small', 1, 512), ('large', 2, 2048)):
        assert cli.main(['flavor', 'create', name, '--vcpus', str(vcpus), '--ram', str(ram),
                         '--id', name, '--config-file', str(conf)]) == 0
    api = engines.create_engine(api_url)
    cell_engine = engines.create_engine(f'sqlite:///{tmp_path}/cell1.sqlite')
    migrate.sync('cell', cell_engine)
    cell = cell_mappings.create(api, name='cell1', transport_url='kombu+memory:////',
                                database_connection=str(cell_engine.url))
    server = Instance(uuid=str(uuidlib.uuid4()), project_id='p', user_id='u',
                      flavor=Flavor(name='small', vcpus=1, memory_mb=512, flavorid='small'),
                      display_name='web', vm_state=ACTIVE, task_state=None, host='h1',
                      node='h1', cell_uuid=cell.uuid)
    with cell_engine.begin() as conn:
        instances.create_instance(conn, server)
    with api.begin() as conn:
        instance_mappings.insert(conn, server)
        instance_mappings.point_many_at_cell(conn, [server.uuid],
                                             cell_mappings.id_of(conn, cell.uuid))
    recorder = SuperConductorRecorder()
    transport = get_transport('kombu+memory:////')
    rpc_server = build_server(transport, topic='conductor', server='super-1',
                              endpoints=[recorder])
    rpc_server.start()
    yield str(conf), recorder, cell_engine, cell.uuid, server.uuid
    rpc_server.stop()
    rpc_server.wait()
    transport.cleanup()
    cell_engine.dispose()
    api.dispose()


def _json(capsys, argv, code=0):
    capsys.readouterr()
    assert cli.main(argv) == code
    return json.loads(capsys.readouterr().out)


def test_resize_records_a_queued_migration_and_casts_it_then_confirm_casts_its_end(
        top, capsys):
    conf, recorder, cell_engine, cell_uuid, server = top
    shown = _json(capsys, ['server', 'resize', 'web', '--flavor', 'large',
                           '--config-file', conf, '-f', 'json'])
    assert (shown['server'], shown['type'], shown['status'], shown['source_host'],
            shown['old_flavor'], shown['new_flavor'], shown['cell']) == (
        server, 'resize', 'queued', 'h1', 'small', 'large', 'cell1')
    assert recorder.arrived.wait(DEADLINE_SECONDS)
    assert recorder.casts == [('migrate_server', cell_uuid, shown['id'])]
    with cell_engine.connect() as conn:
        assert instances.get_instance(conn, server)['task_state'] == instances.RESIZE_PREP

    # A second move while this one is asked is refused; nothing is written.
    assert cli.main(['server', 'migrate', server, '--config-file', conf]) == 1
    assert 'only an ACTIVE server doing nothing else can be moved' in \
        capsys.readouterr().err
    # Nothing to confirm before the move finished.
    assert cli.main(['server', 'resize', 'confirm', server, '--config-file', conf]) == 1
    assert 'no move waiting to be confirmed or reverted' in capsys.readouterr().err

    with cell_engine.begin() as conn:   # as the cell conductor ends it
        for status in (migrations.PRE_MIGRATING, migrations.MIGRATING, migrations.FINISHED):
            migrations.advance(conn, shown['id'], status, dest_host='h2', dest_node='h2')
        instances.place_after_move(conn, server, host='h2', node='h2',
                                   flavor=Flavor(name='large', vcpus=2, memory_mb=2048),
                                   vm_state=instances.RESIZED)
    listed = _json(capsys, ['server', 'migration', 'list', '--server', 'web',
                            '--config-file', conf, '-f', 'json'])
    assert [(m['id'], m['status'], m['dest_host']) for m in listed] == [
        (shown['id'], 'finished', 'h2')]
    assert cli.main(['server', 'list', '--config-file', conf, '-f', 'json']) == 0
    assert json.loads(capsys.readouterr().out)[0]['status'] == 'VERIFY_RESIZE'

    recorder.arrived.clear()
    confirmed = _json(capsys, ['server', 'resize', 'confirm', 'web', '--config-file', conf,
                               '-f', 'json'])
    assert confirmed['id'] == shown['id']
    assert recorder.arrived.wait(DEADLINE_SECONDS)
    assert recorder.casts[-1] == ('confirm_resize', cell_uuid, shown['id'])


def test_migration_list_show_and_the_errors_a_new_operator_meets(top, capsys):
    conf, recorder, cell_engine, _, server = top
    assert _json(capsys, ['server', 'migration', 'list', '--config-file', conf,
                          '-f', 'json']) == []
    assert cli.main(['server', 'migration', 'list', '--config-file', conf]) == 0
    assert capsys.readouterr().out == 'no migrations\n'
    # An unknown flavor: one line, nothing recorded, nothing cast.
    assert cli.main(['server', 'resize', server, '--flavor', 'nope',
                     '--config-file', conf]) == 1
    assert "no flavor named or with id 'nope'" in capsys.readouterr().err
    with cell_engine.connect() as conn:
        assert migrations.find(conn) == []
    assert recorder.casts == []
    # A bad argument: one line, exit 2.
    with pytest.raises(SystemExit) as bad:
        cli.main(['server', 'migration', 'list', '--status', 'paused', '--config-file', conf])
    assert bad.value.code == 2
    assert "unknown migration status 'paused'" in capsys.readouterr().err
    assert cli.main(['server', 'migration', 'show', str(uuidlib.uuid4()),
                     '--config-file', conf]) == 1
    assert 'in any cell' in capsys.readouterr().err

    migrated = _json(capsys, ['server', 'migrate', server, '--config-file', conf,
                              '-f', 'json'])
    with cell_engine.begin() as conn:   # as the super conductor ends one without a host
        migrations.advance(conn, migrated['id'], migrations.ERROR,
                           error='NoValidHost: no other host has room')
        instances.set_task_state(conn, server, None)
    shown = _json(capsys, ['server', 'migration', 'show', migrated['id'],
                           '--config-file', conf, '-f', 'json'])
    assert (shown['type'], shown['status'], shown['error']) == (
        'migration', 'error', 'NoValidHost: no other host has room')


def test_evacuate_is_refused_while_the_host_is_up_and_cast_once_it_is_forced_down(
        top, capsys):
    conf, recorder, cell_engine, cell_uuid, server = top
    # No compute service row: whether h1 is down cannot be told.
    assert cli.main(['server', 'evacuate', 'web', '--config-file', conf]) == 1
    assert 'has no compute service' in capsys.readouterr().err
    services.record_heartbeat(cell_engine, ServiceStatus(
        host='h1', binary='cellplane-compute', topic='compute', version='1',
        report_time=datetime.datetime.now(datetime.timezone.utc)))
    # Its heartbeat is fresh: refused in one line, exit 1, nothing written or cast.
    assert cli.main(['server', 'evacuate', 'web', '--config-file', conf]) == 1
    assert 'Compute service of h1 is still in use' in capsys.readouterr().err
    with cell_engine.connect() as conn:
        assert migrations.find(conn) == []
    assert recorder.casts == []

    assert services.set_forced_down(cell_engine, 'h1', 'cellplane-compute',
                                    forced_down=True) is not None
    # The host it runs on is no destination.
    assert cli.main(['server', 'evacuate', 'web', '--host', 'h1', '--config-file', conf]) == 1
    assert "can't be the same one" in capsys.readouterr().err
    shown = _json(capsys, ['server', 'evacuate', 'web', '--config-file', conf, '-f', 'json'])
    assert (shown['server'], shown['type'], shown['status'], shown['source_host']) == (
        server, 'evacuation', 'queued', 'h1')
    assert recorder.arrived.wait(DEADLINE_SECONDS)
    assert recorder.casts == [('evacuate_server', cell_uuid, shown['id'])]
    with cell_engine.connect() as conn:
        assert instances.get_instance(conn, server)['task_state'] == instances.REBUILDING
    assert cli.main(['server', 'list', '--config-file', conf, '-f', 'json']) == 0
    assert json.loads(capsys.readouterr().out)[0]['status'] == 'REBUILD'
    # A second one while it is asked is refused.
    assert cli.main(['server', 'evacuate', 'web', '--config-file', conf]) == 1
    assert 'only an ACTIVE or ERROR server doing nothing else' in capsys.readouterr().err


class ComputeRecorder:
    target = messaging.Target(version='1.6')

    def __init__(self):
        self.casts = []
        self.arrived = threading.Event()

    def live_migration_abort(self, ctxt, instance_uuid, migration_uuid, host):
        self.casts.append(('live_migration_abort', instance_uuid, migration_uuid, host))
        self.arrived.set()


def test_live_migration_abort_cancels_a_queued_one_and_asks_the_source_to_stop_a_copy(
        top, capsys):
    conf, recorder, cell_engine, _, server = top
    queued = _json(capsys, ['server', 'live-migrate', server, '--config-file', conf,
                            '-f', 'json'])
    assert cli.main(['server', 'live-migration', 'abort', server, str(uuidlib.uuid4()),
                     '--config-file', conf]) == 1
    assert 'not found for instance' in capsys.readouterr().err
    # Queued: cancelled at once, the server doing nothing again.
    aborted = _json(capsys, ['server', 'live-migration', 'abort', 'web', '--wait',
                             '--config-file', conf, '-f', 'json'])
    assert (aborted['id'], aborted['status']) == (queued['id'], migrations.CANCELLED)
    with cell_engine.connect() as conn:
        assert instances.get_instance(conn, server)['task_state'] is None
    assert cli.main(['server', 'live-migration', 'abort', server, queued['id'],
                     '--config-file', conf]) == 1
    assert 'is in task_state None' in capsys.readouterr().err

    # Copying (as the cell conductor records it): the abort is cast to the source.
    again = _json(capsys, ['server', 'live-migrate', server, '--config-file', conf,
                           '-f', 'json'])
    with cell_engine.begin() as conn:
        migrations.advance(conn, again['id'], migrations.PRE_MIGRATING, dest_host='h2',
                           dest_node='h2')
        migrations.advance(conn, again['id'], migrations.MIGRATING)
    compute = ComputeRecorder()
    transport = get_transport('kombu+memory:////')
    rpc_server = build_server(transport, topic='compute', server='h1', endpoints=[compute])
    rpc_server.start()
    try:
        asked = _json(capsys, ['server', 'live-migration', 'abort', server,
                               '--config-file', conf, '-f', 'json'])
        assert (asked['id'], asked['status']) == (again['id'], migrations.MIGRATING)
        assert compute.arrived.wait(DEADLINE_SECONDS)
        assert compute.casts == [('live_migration_abort', server, again['id'], 'h1')]
    finally:
        rpc_server.stop()
        rpc_server.wait()
        transport.cleanup()
