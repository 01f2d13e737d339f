"""The broker as large operators run it: queues a cluster keeps, a broker user per cell.

One deployment of two cells (one compute agent each) on real RabbitMQ and
PostgreSQL, made by the test harness as ``deploy/two-cell`` is: a vhost and a
broker user per level (top, cell1, cell2), each user allowed on its own vhost
only, and the example's queue settings (``[oslo_messaging_rabbit]``: quorum
queues, transient quorum queues for replies, stable reply names, stream
fanouts). Four servers are booted across both cells first, so every kind of
queue the daemons declare (topic, per-host, fanout, reply) exists.

- Every queue on the deployment's vhosts, as ``rabbitmqctl list_queues``
  shows it, is durable or exclusive: none is the transient non-exclusive kind
  RabbitMQ 4.x refuses; each is quorum, or a stream for a fanout.
  Reply queues have stable names (``use_queue_manager``), which a restarted
  daemon declares again instead of leaving its old one to expire.
- Cell 1's compute credentials cannot declare, publish or consume on cell 2's
  vhost or the top's (kombu, directly): the broker refuses each, while the
  same credentials can on cell 1's vhost.
"""
from __future__ import annotations

import subprocess
import uuid
from urllib.parse import unquote, urlsplit, urlunsplit

import amqp.exceptions
import kombu
import pytest

from cellplane_cli.launcher import option
from tests.support.deployment import ComputePlan, Deployment

LEVELS = ('top', 'cell1', 'cell2')


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, rabbit_server, postgres_server):
    deployment = Deployment(tmp_path_factory.mktemp('broker'), rabbit_server, postgres_server,
                            [ComputePlan('cell1-a', 'cell1'), ComputePlan('cell2-a', 'cell2')],
                            ).create()
    try:
        deployment.cli('flavor', 'create', 'small', '--vcpus', '1', '--ram', '256',
                       '--disk', '1')
        yield deployment
    finally:
        deployment.destroy()


@pytest.fixture(scope='module')
def booted(deployment):
    """Four servers, waited for ACTIVE: the boot path has declared its queues."""
    servers = deployment.cli('server', 'create', 'q', '--flavor', 'small', '--count', '4',
                             '--wait')
    assert {s['status'] for s in servers} == {'ACTIVE'}, servers
    return servers


def list_queues(vhost: str) -> list[dict]:
    """``rabbitmqctl list_queues`` of ``vhost``: name, durable, auto_delete, exclusive, type."""
    out = subprocess.run(
        ['rabbitmqctl', '-q', 'list_queues', '-p', vhost, '--no-table-headers',
         'name', 'durable', 'auto_delete', 'exclusive', 'type'],
        check=True, capture_output=True, text=True, timeout=60).stdout
    rows = []
    for line in out.splitlines():
        name, durable, auto_delete, exclusive, kind = line.split('\t')
        rows.append({'name': name, 'durable': durable == 'true',
                     'auto_delete': auto_delete == 'true', 'exclusive': exclusive == 'true',
                     'type': kind})
    return rows


def test_no_queue_of_a_running_deployment_is_transient_and_not_exclusive(deployment, booted):
    queues = {level: list_queues(deployment.vhosts[level]) for level in LEVELS}

    refused_by_rabbitmq_4 = [(level, q['name']) for level, rows in queues.items()
                             for q in rows if not q['durable'] and not q['exclusive']]
    assert refused_by_rabbitmq_4 == []
    names = {level: {q['name']: q['type'] for q in rows} for level, rows in queues.items()}
    # Each kind was declared and listed: the check above saw them all.
    assert names['top']['scheduler'] == 'quorum'
    assert names['top']['conductor_fanout'] == 'stream'
    assert names['cell1']['compute.cell1-a'] == 'quorum'
    assert names['cell2']['compute.cell2-a'] == 'quorum'
    replies = [name for name in names['top'] if name.startswith('reply_')]
    assert replies, names['top']
    assert {names['top'][name] for name in replies} == {'quorum'}
    # Stable names (use_queue_manager): what a restarted daemon declares again.
    assert f'reply_top@{deployment.tag}:cellplane-conductor-super:1' in replies
    assert f'reply_cell1-a@{deployment.tag}:cellplane-compute:1' in names['cell1']
    assert {kind for rows in names.values() for kind in rows.values()} <= {'quorum', 'stream'}


def compute_url(deployment: Deployment, vhost: str | None = None) -> str:
    """Cell 1's compute agent's transport URL as its config file has it (on ``vhost`` if given)."""
    url = option(deployment.config('compute-cell1-a.conf'), 'DEFAULT', 'transport_url')
    if vhost is None:
        return url
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, '/' + vhost, '', ''))


def declare(channel) -> None:
    kombu.Queue(f'intruder-{uuid.uuid4().hex[:6]}', channel=channel, durable=True,
                queue_arguments={'x-queue-type': 'quorum'}).declare()


def publish(channel) -> None:
    kombu.Producer(channel).publish({'method': 'ping'}, routing_key='compute.cell2-a',
                                    exchange='nova')


def consume(channel) -> None:
    channel.basic_consume('scheduler', callback=lambda message: None)


def attempt(url: str, action) -> None:
    with kombu.Connection(url.replace('rabbit://', 'amqp://', 1), connect_timeout=10) as conn:
        conn.connect()
        action(conn.default_channel)


def test_every_level_has_a_broker_user_of_its_own(deployment):
    users = {}
    for name in ('top.conf', 'cell1.conf', 'cell2.conf', 'compute-cell1-a.conf',
                 'compute-cell2-a.conf'):
        url = option(deployment.config(name), 'DEFAULT', 'transport_url')
        users[name] = unquote(urlsplit(url).username)
    assert users['cell1.conf'] == users['compute-cell1-a.conf']
    assert users['cell2.conf'] == users['compute-cell2-a.conf']
    assert len({users['top.conf'], users['cell1.conf'], users['cell2.conf']}) == 3
    assert 'guest' not in users.values()


@pytest.mark.parametrize('action', [declare, publish, consume])
def test_a_cells_compute_credentials_open_no_other_vhost(deployment, booted, action):
    for level in ('cell2', 'top'):
        vhost = deployment.vhosts[level]
        with pytest.raises(amqp.exceptions.NotAllowed) as refused:
            attempt(compute_url(deployment, vhost), action)
        assert f"access to vhost '{vhost}' refused" in str(refused.value)


def test_the_same_credentials_work_on_their_own_vhost(deployment, booted):
    url = compute_url(deployment)
    own = deployment.vhosts['cell1']
    name = f'probe-{uuid.uuid4().hex[:6]}'
    with kombu.Connection(url.replace('rabbit://', 'amqp://', 1), connect_timeout=10) as conn:
        channel = conn.default_channel
        queue = kombu.Queue(name, channel=channel, durable=True,
                            queue_arguments={'x-queue-type': 'quorum'})
        queue.declare()
        try:
            kombu.Producer(channel).publish({'probe': 1}, routing_key=name, exchange='')
            channel.basic_consume(name, callback=lambda message: None)
        finally:
            queue.delete()
    assert urlsplit(url).path == '/' + own
