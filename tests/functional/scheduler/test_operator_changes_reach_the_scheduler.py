"""An operator's change reaches the scheduler at its next request, not at its next host refresh.

The embedded control plane runs the scheduler the daemon runs, here with a
host refresh of an hour: only the change stamp each operator command raises
(``cellplane/objects/change_stamps.py``) can tell the scheduler in time.
Issue 28, finding 4: ``server create --availability-zone az1`` right after
the zone was made ended in ERROR ("removed by AvailabilityZoneFilter").
"""
from __future__ import annotations

import json
import threading
import time
from wsgiref import simple_server

import pytest

from cellplane.context import new_context
from cellplane.objects import flavors
from cellplane_api import servers
from cellplane_cli import cli, manage
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from placement.wsgi import make_app

DEADLINE_SECONDS = 30
HOSTS = ('cell1-host1', 'cell1-host2', 'cell1-host3')


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def cloud(tmp_path):
    plan = CloudPlan.uniform(cells=1, hosts_per_cell=len(HOSTS), host_refresh_interval=3600)
    with EmbeddedCloud(tmp_path / 'state', plan) as c:
        # Placement over HTTP for cellplane-manage service enable|disable.
        server = simple_server.make_server('127.0.0.1', 0, make_app(c.placement_engine),
                                           handler_class=_Quiet)
        thread = threading.Thread(target=server.serve_forever, kwargs={'poll_interval': 0.05},
                                  daemon=True)
        thread.start()
        conf = tmp_path / 'top.conf'
        conf.write_text(f'[api_database]\nconnection = {c.conf.api_database.connection}\n'
                        f'[placement]\nendpoint_url = http://127.0.0.1:{server.server_port}\n')
        c.operator_conf = str(conf)
        flavors.create(c.api_engine, name='small', vcpus=1, memory_mb=256, root_gb=1)
        try:
            yield c
        finally:
            server.shutdown()
            server.server_close()


def _cellplane(cloud, capsys, main, *argv) -> dict | list:
    capsys.readouterr()
    code = main([*argv, '--config-file', cloud.operator_conf, '-f', 'json'])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out) if out.strip() else {}


def _boot(cloud, **kwargs) -> servers.Server:
    [uuid] = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                            name='vm', flavor='small', count=1, project_id='p',
                            user_id='u', **kwargs)
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        [found] = servers.list_servers(cloud.api_engine, cloud.cells, [uuid])
        if found.status in servers.FINAL_STATUSES:
            return found
        assert time.monotonic() < deadline, found
        time.sleep(0.02)


def test_a_zone_made_through_the_cli_takes_a_boot_at_once_fifty_times(cloud, capsys):
    ended = []
    for i in range(50):
        host = HOSTS[i % len(HOSTS)]
        if i >= len(HOSTS):
            # The host leaves its previous zone, which goes away.
            _cellplane(cloud, capsys, cli.main, 'aggregate', 'remove-host',
                       f'az{i - len(HOSTS)}', host)
            capsys.readouterr()
            assert cli.main(['aggregate', 'delete', f'az{i - len(HOSTS)}',
                             '--config-file', cloud.operator_conf]) == 0
        _cellplane(cloud, capsys, cli.main, 'aggregate', 'create', f'az{i}', '--zone', f'az{i}')
        _cellplane(cloud, capsys, cli.main, 'aggregate', 'add-host', f'az{i}', host)
        server = _boot(cloud, availability_zone=f'az{i}')
        ended.append((f'az{i}', server.status, server.host, server.fault))
    assert ended == [(f'az{i}', 'ACTIVE', HOSTS[i % len(HOSTS)], None) for i in range(50)]


def test_a_host_enabled_again_takes_a_boot_at_once(cloud, capsys):
    _cellplane(cloud, capsys, cli.main, 'aggregate', 'create', 'solo', '--zone', 'solo')
    _cellplane(cloud, capsys, cli.main, 'aggregate', 'add-host', 'solo', 'cell1-host2')
    _cellplane(cloud, capsys, manage.main, 'service', 'disable', 'cell1-host2',
               '--reason', 'disk swap')
    refused = _boot(cloud, availability_zone='solo')
    assert refused.status == 'ERROR' and 'NoValidHost' in refused.fault
    # The periodic refresh ran meanwhile: the cache knows the host disabled.
    cloud.refresher.refresh()

    _cellplane(cloud, capsys, manage.main, 'service', 'enable', 'cell1-host2')
    server = _boot(cloud, availability_zone='solo')
    assert (server.status, server.host, server.fault) == ('ACTIVE', 'cell1-host2', None)
