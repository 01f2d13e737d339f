"""``cellplane server show`` as a table: nested fields as readable lines, not Python reprs."""
from __future__ import annotations

import datetime
import json
import time

from cellplane.context import new_context
from cellplane.objects import flavors
from cellplane_api import servers
from cellplane_cli import cli
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud

DEADLINE_SECONDS = 30


def test_server_show_table_renders_events_and_scheduling_as_fields(tmp_path, capsys):
    with EmbeddedCloud(tmp_path / 'state', CloudPlan.uniform(cells=1, hosts_per_cell=1)) as cloud:
        flavors.create(cloud.api_engine, name='small', vcpus=1, memory_mb=512, root_gb=1)
        [uuid] = servers.create(cloud.api_engine, cloud.conductor_api, new_context(),
                                name='vm', flavor='small', project_id='p', user_id='u')
        deadline = time.monotonic() + DEADLINE_SECONDS
        while servers.show(cloud.api_engine, cloud.cells, uuid).status != servers.ACTIVE:
            assert time.monotonic() < deadline, 'the server never went ACTIVE'
            time.sleep(0.05)
        conf = tmp_path / 'top.conf'
        conf.write_text(f'[api_database]\nconnection = {cloud.conf.api_database.connection}\n')
        capsys.readouterr()
        assert cli.main(['server', 'show', uuid, '--config-file', str(conf)]) == 0
        table = capsys.readouterr().out
        assert cli.main(['server', 'show', uuid, '--config-file', str(conf), '-f', 'json']) == 0
        shown = json.loads(capsys.readouterr().out)
    # Every time in ISO 8601 with its offset (UTC), as the faults say UTC.
    times = [shown['created_at'], shown['scheduling']['created_at'],
             *(e[k] for e in shown['events'] for k in ('start', 'finish'))]
    assert all(t.endswith('+00:00') and datetime.datetime.fromisoformat(t).utcoffset()
               == datetime.timedelta(0) for t in times), times
    assert f"created_at | {shown['created_at']}" in table.replace('  ', ' ').replace('  ', ' ')
    assert "{'" not in table and "[{" not in table
    assert '- event: compute_build_and_run_instance' in table
    assert 'result: ok' in table
    assert 'outcome: selected' in table and 'selected: cell1-host1' in table
