"""A command that found or changed nothing says so in a summary line; its JSON stays data.

Over a running embedded control plane (one cell, two hosts, nothing booted),
with its Placement served over HTTP as an operator's command reaches it.
An empty table printed nothing at all: the command looked as if it had not
run. In ``--format json`` an empty answer is still ``[]``.
"""
from __future__ import annotations

import json
import threading
from wsgiref import simple_server

import pytest

from cellplane_cli import cli, manage
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from placement.wsgi import make_app


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope='module')
def top_conf(tmp_path_factory):
    state = tmp_path_factory.mktemp('quiet')
    with EmbeddedCloud(state / 'state', CloudPlan.uniform(cells=1, hosts_per_cell=2)) as cloud:
        server = simple_server.make_server('127.0.0.1', 0, make_app(cloud.placement_engine),
                                           handler_class=_Quiet)
        thread = threading.Thread(target=server.serve_forever,
                                  kwargs={'poll_interval': 0.05}, daemon=True)
        thread.start()
        conf = state / 'top.conf'
        conf.write_text(f'[api_database]\nconnection = {cloud.conf.api_database.connection}\n'
                        f'[placement]\nendpoint_url = http://127.0.0.1:{server.server_port}\n')
        cloud.refresher.refresh()   # the scheduler maps the hosts it reads
        try:
            yield str(conf)
        finally:
            server.shutdown()
            server.server_close()


def _run(capsys, main, *argv: str) -> str:
    capsys.readouterr()
    assert main([*argv]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize('main, argv, said', [
    (manage.main, ('placement', 'audit', '--grace', '0'),
     '0 orphaned allocations, 0 missing, 0 fixed (2 providers read)\n'),
    (cli.main, ('failure-domain', 'levels'),
     'no failure-domain levels recorded: a scheduler records its [scheduler] '
     'failure_domain_levels when it starts (or run cellplane-manage failure-domain '
     'record-levels); until then only the host level exists\n'),
    (cli.main, ('failure-domain', 'list'), 'no failure domains\n'),
    (manage.main, ('cell', 'discover-hosts'),
     '0 new hosts mapped; 2 compute host(s) found in 1 cell\n'),
    (cli.main, ('server', 'list', '--status', 'DELETED'),
     'no servers with status DELETED\n'),
    (cli.main, ('server', 'list', '--host', 'cell1-host1', '--name', '^web'),
     "no servers with host cell1-host1, name matching '^web'\n"),
    (cli.main, ('flavor', 'list'), 'no flavors\n'),
    (cli.main, ('aggregate', 'list'), 'no aggregates\n'),
    (cli.main, ('server', 'group', 'list'), 'no server groups\n'),
    (cli.main, ('scheduler', 'records'), 'no scheduling records match\n'),
])
def test_a_command_that_found_nothing_says_so_and_its_json_is_an_empty_list(
        top_conf, capsys, main, argv, said):
    assert _run(capsys, main, *argv, '--config-file', top_conf) == said
    assert json.loads(_run(capsys, main, *argv, '--config-file', top_conf, '-f', 'json')) == []
    # A format meant for scripts gets the data only.
    assert _run(capsys, main, *argv, '--config-file', top_conf, '-f', 'value') == ''
