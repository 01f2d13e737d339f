"""Failure-domain levels go from the scheduler daemon's config to the API database, and the CLI obeys them.

Real daemons on RabbitMQ and PostgreSQL: the scheduler alone reads
``[scheduler] failure_domain_levels = rack,row`` (``scheduler.conf``); the
CLI reads ``top.conf``, which names no levels. So the levels the CLI accepts
can only come from what the scheduler recorded when it started. A domain
then made of a host is a Placement aggregate of that host's provider, read
back from the real Placement daemon. A scheduler restarted with levels the
domains no longer fit refuses to start. Two operators putting one host in
two racks at once on PostgreSQL: one wins, the other is refused.
"""
from __future__ import annotations

import subprocess
import sys
import threading

import pytest
import sqlalchemy as sa

from cellplane.db import engines, migrate
from cellplane.db.api.models import failure_domain_levels as levels_table
from cellplane.objects import (
    cell_mappings,
    compute_nodes,
    failure_domain_levels,
    failure_domains,
    host_mappings,
)
from tests.support import cli_runner
from tests.support.deployment import ComputePlan, Deployment

HOSTS = ('cell1-fd-1', 'cell1-fd-2')


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    deployment = Deployment(
        tmp_path_factory.mktemp('failure-domains'), rabbit_server, postgres_server,
        [ComputePlan('cell1-fd', 'cell1', hosted_hosts=len(HOSTS))],
        scheduler_only={'scheduler': {'failure_domain_levels': 'rack,row'}}).create()
    try:
        yield deployment
    finally:
        deployment.destroy()


def _cellplane(deployment, *argv: str) -> subprocess.CompletedProcess:
    return cli_runner.run('cellplane_cli.cli',
                          [*argv, '--config-file', str(deployment.config('top.conf'))],
                          timeout=120)


def test_the_scheduler_records_its_levels_and_the_cli_refuses_any_other(deployment):
    assert 'failure_domain_levels' not in deployment.config('top.conf').read_text()
    api = engines.create_engine(deployment.databases['api'])
    try:
        assert failure_domain_levels.levels(api) == ['rack', 'row']
    finally:
        api.dispose()
    assert [lv['level'] for lv in deployment.cli('failure-domain', 'levels')] == \
        ['rack', 'row']

    refused = _cellplane(deployment, 'failure-domain', 'create', 'room', 'east')
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines()[-1] == (
        "unknown failure-domain level 'room'; the scheduler uses rack, row "
        "([scheduler] failure_domain_levels)")
    assert deployment.cli('failure-domain', 'list') == []

    rack = deployment.cli('failure-domain', 'create', 'rack', 'r1', '--host', HOSTS[0])
    row = deployment.cli('failure-domain', 'create', 'row', 'A', '--contains', 'rack:r1')
    assert row['hosts'] == [HOSTS[0]]
    nodes = {n.host: n.uuid for n in
             compute_nodes.list_with_service(deployment.cell_engine('cell1'))}
    placement = deployment.placement()
    assert placement.get_aggregates(nodes[HOSTS[0]])[0] == {rack['id'], row['id']}
    assert placement.get_aggregates(nodes[HOSTS[1]])[0] == frozenset()


def test_a_scheduler_whose_levels_the_domains_do_not_fit_does_not_start(deployment):
    deployment.cli('failure-domain', 'create', 'rack', 'r9')
    run = subprocess.run(
        [sys.executable, '-m', 'scheduler.cmd',
         '--config-file', str(deployment.config('top.conf')),
         '--config-file', str(deployment.config('scheduler.conf')),
         '--config-file', str(_write(deployment, 'scheduler-row-only.conf',
                                      '[scheduler]\nfailure_domain_levels = row\n'))],
        capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert ('cellplane-scheduler: [scheduler] failure_domain_levels: failure-domain '
            'level(s) rack have domains but are not in [scheduler] failure_domain_levels '
            '(row)') in run.stderr
    assert [lv['level'] for lv in deployment.cli('failure-domain', 'levels')] == \
        ['rack', 'row']


def _write(deployment, name: str, text: str):
    path = deployment.config_dir / name
    path.write_text(text)
    return path


def test_two_operators_putting_one_host_in_two_racks_at_once_on_postgresql(postgres_url):
    """Both commands wait on the level rows; one gets the host, the other is refused naming both."""
    api = engines.create_engine(postgres_url)
    try:
        migrate.sync('api', api)
        cell = cell_mappings.create(api, name='cell1', transport_url='memory://cell1',
                                    database_connection='sqlite://')
        with api.begin() as conn:
            host_mappings.map_hosts(conn, cell_mappings.id_of(conn, cell.uuid), ['h1'])
        failure_domains.record_levels(api, ['rack'])
        failure_domains.create(api, 'rack', 'r1')
        failure_domains.create(api, 'rack', 'r2')
        outcomes: dict[str, object] = {}

        def add(rack: str) -> None:
            try:
                outcomes[rack] = failure_domains.add_hosts(api, f'rack:{rack}', ['h1'])
            except failure_domains.FailureDomainError as exc:
                outcomes[rack] = exc

        with api.begin() as holder:
            # Hold the lock every writer takes first, so both wait on it at once.
            holder.execute(sa.select(levels_table).with_for_update())
            writers = [threading.Thread(target=add, args=(r,)) for r in ('r1', 'r2')]
            for writer in writers:
                writer.start()
            writers[0].join(0.5)
            assert not outcomes, 'a writer did not wait for the level rows'
        for writer in writers:
            writer.join(60)

        refused = [o for o in outcomes.values() if isinstance(o, Exception)]
        assert len(refused) == 1 and isinstance(refused[0], failure_domains.HostConflict)
        assert str(refused[0]).startswith('host h1 would be in rack:r1 and in rack:r2')
        assert failure_domains.host_domains(api)['h1'].keys() == {'rack'}
    finally:
        api.dispose()
