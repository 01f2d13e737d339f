"""``cellplane-manage host drain|undrain`` over a running embedded control plane: output and exit status.

The command reaches the embedded cloud as an operator's would reach a
deployment: its API database, Placement over HTTP on 127.0.0.1, and the
top-level bus (oslo.messaging's ``fake://`` on the embedded bus's own
exchange, ``[DEFAULT] control_exchange``). What the drain does to the
servers is tests/functional/moves/test_host_drain.py; here, what the
command says and how it exits.
"""
from __future__ import annotations

import json
import threading
import time
from wsgiref import simple_server

import pytest

from cellplane.context import new_context
from cellplane.objects import flavors
from cellplane_api import compute_services, servers
from cellplane_cli import manage
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from placement.wsgi import make_app

DEADLINE_SECONDS = 30
HOST = 'cell1-host1'


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def cloud(tmp_path):
    with EmbeddedCloud(tmp_path / 'state', CloudPlan.uniform(cells=1, hosts_per_cell=3)) as c:
        server = simple_server.make_server('127.0.0.1', 0, make_app(c.placement_engine),
                                           handler_class=_Quiet)
        thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05},
                                  daemon=True)
        thread.start()
        conf = tmp_path / 'top.conf'
        conf.write_text(f'[DEFAULT]\ntransport_url = fake://\n'
                        f'control_exchange = {c.top_bus.exchange}\n'
                        f'[api_database]\nconnection = {c.conf.api_database.connection}\n'
                        f'[placement]\nendpoint_url = http://127.0.0.1:{server.server_port}\n')
        c.manage_conf = str(conf)
        flavors.create(c.api_engine, name='small', vcpus=1, memory_mb=512, root_gb=1)
        try:
            yield c
        finally:
            server.shutdown()
            server.server_close()


def _manage(cloud, capsys, *argv, json_output=True) -> tuple[int, object, str]:
    capsys.readouterr()
    code = manage.main([*argv, '--config-file', cloud.manage_conf,
                        *(['-f', 'json'] if json_output else [])])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if json_output and out.strip() else out), err


def _located(cloud, host):
    found = compute_services.locate(cloud.api_engine, cloud.cells, 5, top_level=False)
    [one] = [s for s in found.services if s.row['host'] == host
             and s.row['binary'] == compute_services.COMPUTE_BINARY]
    return one


def _boot_on_host1(cloud, count: int) -> list[str]:
    others = [f'cell1-host{n}' for n in (2, 3)]
    for host in others:
        compute_services.set_disabled(cloud.api_engine, _located(cloud, host), disabled=True,
                                      placement=cloud.placement)
    try:
        uuids = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                               name='vm', flavor='small', count=count, project_id='p',
                               user_id='u')
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not all(s.status == servers.ACTIVE for s in
                      servers.list_servers(cloud.api_engine, cloud.cells, uuids)):
            assert time.monotonic() < deadline, 'servers never ACTIVE'
            time.sleep(0.05)
    finally:
        for host in others:
            compute_services.set_disabled(cloud.api_engine, _located(cloud, host),
                                          disabled=False, placement=cloud.placement)
    assert {s.host for s in servers.list_servers(cloud.api_engine, cloud.cells, uuids)} \
        == {HOST}
    return uuids


def test_drain_lists_each_server_and_exits_1_while_something_is_left_then_0(cloud, capsys):
    uuids = _boot_on_host1(cloud, 2)

    # A deadline already passed: nothing moves, both are named, exit 1.
    code, rows, err = _manage(cloud, capsys, 'host', 'drain', HOST, '--deadline', '0')
    assert code == 1
    assert sorted(r['server'] for r in rows) == sorted(uuids)
    assert {r['result'] for r in rows} == {'not started'}
    assert all('the deadline (0 s) passed' in r['reason'] for r in rows)
    assert err.strip().splitlines()[-1].startswith(f'host {HOST} is not empty: vm-')
    one = _located(cloud, HOST)
    assert (one.row['disabled'], one.row['disabled_reason']) == (True, 'draining')

    code, rows, err = _manage(cloud, capsys, 'host', 'drain', HOST, '--cold',
                              '--parallel', '2')
    assert code == 0, err
    assert set(rows[0]) == {'server', 'name', 'result', 'dest_host', 'seconds',
                            'migration', 'reason'}
    assert {r['result'] for r in rows} == {'moved'}
    for row in rows:
        shown = servers.show(cloud.api_engine, cloud.cells, row['server'])
        assert (shown.status, shown.host) == (servers.ACTIVE, row['dest_host'])
        assert row['dest_host'] != HOST and row['reason'] is None

    # The table ends saying what happened; an empty host drains to nothing.
    code, out, _ = _manage(cloud, capsys, 'host', 'drain', HOST, json_output=False)
    assert code == 0
    assert (f'host {HOST} (cell1) drained (live) in' in out
            and 'no instance; the host is empty' in out)

    code, shown, _ = _manage(cloud, capsys, 'host', 'undrain', HOST)
    assert code == 0
    assert (shown['host'], shown['disabled'], shown['disabled_reason']) == (HOST, False, None)


@pytest.mark.parametrize('argv, said', [
    (['--parallel', '0'], 'argument --parallel: must be from 1 to 100, not 0'),
    (['--live', '--cold'], 'argument --cold: not allowed with argument --live'),
    (['--deadline', 'soon'], "argument --deadline: expected a number, got 'soon'"),
    (['--deadline', '-5'], 'argument --deadline: must be 0 or more, not -5'),
])
def test_a_bad_argument_exits_2_in_one_line(argv, said, capsys):
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        manage.main(['host', 'drain', HOST, *argv])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and said in err


def test_a_host_no_cell_has_exits_2_in_one_line(cloud, capsys):
    code, _, err = _manage(cloud, capsys, 'host', 'drain', 'nowhere', json_output=False)
    assert code == 2
    assert err.strip().splitlines() == [
        'no compute service on host nowhere in any cell; see `cellplane-manage service list`']
