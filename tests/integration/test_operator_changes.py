"""A zone made with the CLI takes a boot at once, on the real daemons with two scheduler workers.

Issue 28, finding 4: ``server create --availability-zone az1`` right after
the zone was made ended in ERROR ("removed by AvailabilityZoneFilter"),
because a scheduler learned of zones only at its next host refresh (10 s
by default, kept here). Each command raises the API database's change
stamp, which every worker reads before a request.
"""
from __future__ import annotations

import pytest

from tests.support.deployment import ComputePlan, Deployment

ROUNDS = 8


@pytest.fixture
def deployment(tmp_path, rabbit_server, postgres_server):
    computes = [ComputePlan('cell1-a', 'cell1', hosted_hosts=2)]
    deployment = Deployment(tmp_path, rabbit_server, postgres_server, computes,
                            default_intervals=True, scheduler_workers=2).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


def test_each_new_zone_takes_the_boot_made_right_after_it(deployment):
    hosts = deployment.computes[0].hosts
    ended = []
    for i in range(ROUNDS):
        host = hosts[i % len(hosts)]
        if i >= len(hosts):
            deployment.cli('aggregate', 'remove-host', f'az{i - len(hosts)}', host)
        deployment.cli('aggregate', 'create', f'az{i}', '--zone', f'az{i}')
        deployment.cli('aggregate', 'add-host', f'az{i}', host)
        [server] = deployment.cli('server', 'create', f'vm{i}', '--flavor', 'small',
                                  '--availability-zone', f'az{i}', '--wait', exit_code=None)
        ended.append((f'az{i}', server['status'], server.get('host')))
    assert ended == [(f'az{i}', 'ACTIVE', hosts[i % len(hosts)]) for i in range(ROUNDS)]
