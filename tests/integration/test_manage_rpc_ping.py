"""``cellplane-manage rpc ping`` reaches a real daemon over RabbitMQ, and says when none answers."""
from __future__ import annotations

import json

from cellplane_cli import manage
from tests.integration.daemons import cell_conductor_config


def test_rpc_ping_gets_an_answer_from_the_cell_conductor(
        daemons, transport_url_factory, sqlite_cell_db, tmp_path, capsys):
    url = transport_url_factory('rpcping')
    daemons.conductor('cond1', cell_conductor_config(url, sqlite_cell_db)).start() \
        .wait_until_serving()
    conf = tmp_path / 'bus.conf'
    conf.write_text(f'[DEFAULT]\ntransport_url = {url}\n')
    capsys.readouterr()

    assert manage.main(['rpc', 'ping', '--topic', 'conductor', '--count', '2',
                        '--config-file', str(conf), '-f', 'json']) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r['result'] for r in rows] == ['ok', 'ok']
    assert {r['host'] for r in rows} == {'cond1'}
    assert all(r['round_trip_ms'] > 0 for r in rows)

    assert manage.main(['rpc', 'ping', '--topic', 'conductor', '--server', 'nobody',
                        '--timeout', '2', '--config-file', str(conf), '-f', 'json']) == 1
    out = capsys.readouterr()
    assert json.loads(out.out)[0]['result'].startswith('no answer')
    assert "no answer from topic 'conductor' server nobody" in out.err
