"""``cellplane-manage service disable|enable`` over a running embedded control plane.

Placement is the embedded cloud's own (its SQLite database), served over
HTTP on 127.0.0.1 for the command, which reaches it as an operator's would
(``[placement] endpoint_url``). A disabled host is marked in its cell's
database and carries ``COMPUTE_STATUS_DISABLED`` in Placement, which every
scheduler query forbids: boots land elsewhere, and the host's own resource
report does not take the trait away.
"""
from __future__ import annotations

import json
import threading
import time
from wsgiref import simple_server

import pytest

from cellplane.context import new_context
from cellplane.objects import flavors, services
from cellplane_api import servers
from cellplane_cli import manage
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from placement.wsgi import make_app

DEADLINE_SECONDS = 30
DISABLED = 'COMPUTE_STATUS_DISABLED'


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def cloud(tmp_path):
    with EmbeddedCloud(tmp_path / 'state', CloudPlan.uniform(cells=1, hosts_per_cell=2)) as c:
        server = simple_server.make_server('127.0.0.1', 0, make_app(c.placement_engine),
                                           handler_class=_Quiet)
        thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05},
                                  daemon=True)
        thread.start()
        conf = tmp_path / 'top.conf'
        conf.write_text(f'[api_database]\nconnection = {c.conf.api_database.connection}\n'
                        f'[placement]\nendpoint_url = http://127.0.0.1:{server.server_port}\n')
        c.manage_conf = str(conf)
        try:
            yield c
        finally:
            server.shutdown()
            server.server_close()


def _manage(cloud, capsys, *argv) -> tuple[int, dict | str]:
    capsys.readouterr()
    code = manage.main([*argv, '--config-file', cloud.manage_conf, '-f', 'json'])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else err)


def _boot(cloud, count: int) -> list[servers.Server]:
    uuids = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                           name='vm', flavor='small', count=count, project_id='p',
                           user_id='u')
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        found = servers.list_servers(cloud.api_engine, cloud.cells, uuids)
        if all(s.status in servers.FINAL_STATUSES for s in found):
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.05)


def test_a_disabled_host_gets_no_boot_and_keeps_its_trait_until_enabled(cloud, capsys):
    flavors.create(cloud.api_engine, name='small', vcpus=1, memory_mb=512, root_gb=1)
    host1 = cloud.computes['cell1-host1']

    code, shown = _manage(cloud, capsys, 'service', 'disable', 'cell1-host1',
                          '--reason', 'disk swap')

    assert code == 0
    assert (shown['host'], shown['cell'], shown['disabled'], shown['disabled_reason']) == \
        ('cell1-host1', 'cell1', True, 'disk swap')
    assert shown['placement'] == f'{DISABLED} set on 1 provider(s)'
    row = services.get_service(cloud.cell_engines['cell1'], 'cell1-host1',
                               'cellplane-compute')
    assert (row['disabled'], row['disabled_reason']) == (True, 'disk swap')
    assert DISABLED in cloud.placement.get_traits(host1.node_uuid)
    # The host's own report, forced, leaves the operator's trait alone.
    host1.reporter.sync_placement(force=True)
    assert DISABLED in cloud.placement.get_traits(host1.node_uuid)

    booted = _boot(cloud, 4)
    assert {(s.status, s.host) for s in booted} == {('ACTIVE', 'cell1-host2')}

    code, shown = _manage(cloud, capsys, 'service', 'enable', 'cell1-host1')
    assert code == 0
    assert (shown['disabled'], shown['disabled_reason']) == (False, None)
    assert shown['placement'] == f'{DISABLED} removed from 1 provider(s)'
    assert DISABLED not in cloud.placement.get_traits(host1.node_uuid)
    # The scheduler's next refresh of its cell records (every second here)
    # sees the service enabled; run now, it need not be waited for.
    cloud.refresher.refresh()
    assert 'cell1-host1' in {s.host for s in _boot(cloud, 6)}


def test_every_host_disabled_is_a_no_valid_host_that_says_so(cloud, capsys):
    flavors.create(cloud.api_engine, name='small', vcpus=1, memory_mb=512, root_gb=1)
    for host in ('cell1-host1', 'cell1-host2'):
        assert _manage(cloud, capsys, 'service', 'disable', host)[0] == 0

    [server] = _boot(cloud, 1)

    assert server.status == 'ERROR'
    assert f'an enabled compute service (every host is disabled: {DISABLED})' in server.fault


def test_an_unknown_host_is_refused_in_one_line_naming_it(cloud, capsys):
    code, err = _manage(cloud, capsys, 'service', 'disable', 'cell9-host1')
    assert code == 1
    assert ('no compute service on host cell9-host1 in any cell; see '
            '`cellplane-manage service list`') in err


def test_a_forced_down_host_gets_no_boot_until_unset(cloud, capsys):
    flavors.create(cloud.api_engine, name='small', vcpus=1, memory_mb=512, root_gb=1)
    code, shown = _manage(cloud, capsys, 'service', 'force-down', 'cell1-host1')
    assert code == 0
    assert (shown['host'], shown['cell'], shown['forced_down'], shown['state']) == (
        'cell1-host1', 'cell1', True, 'down')
    # Its heartbeats go on; the scheduler takes it as down all the same.
    cloud.refresher.refresh()
    assert {(s.status, s.host) for s in _boot(cloud, 3)} == {('ACTIVE', 'cell1-host2')}
    code, shown = _manage(cloud, capsys, 'service', 'force-down', 'cell1-host1', '--unset')
    assert code == 0 and (shown['forced_down'], shown['state']) == (False, 'up')
    cloud.refresher.refresh()
    assert 'cell1-host1' in {s.host for s in _boot(cloud, 6)}
