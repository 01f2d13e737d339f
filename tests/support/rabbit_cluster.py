"""A three-node RabbitMQ cluster of a test module's own, on this machine, torn down after.

Three nodes ``cp-c1-<tag>@localhost`` .. ``cp-c3-<tag>@localhost``
(``tests/support/private_engines.py``'s ``PrivateRabbit`` with a plain AMQP
listener): each its own AMQP and distribution ports (free ones, never the
shared broker's 5672 and 25672), data and log directories under the
cluster's directory, one Erlang scheduler, no plugin; one Erlang cookie for
the three. Nodes 2 and 3 join node 1 (``stop_app``, ``join_cluster``,
``start_app``):

    cluster = RabbitCluster(workdir).start()
    Deployment(..., rabbit=cluster.server(), ...)  # transport URLs list all three nodes
    cluster.kill(node); cluster.restart(node)      # kill -9, then the node again
    cluster.stop_app(node); cluster.start_app(node)
    cluster.leaders(vhosts)                        # node of each quorum queue's leader
    cluster.holding(vhost)                         # the same, of the queues holding messages
    cluster.destroy()                              # every beam process killed, directories removed

Starting costs three Erlang VMs and a few ``rabbitmqctl`` runs (each a VM
too): a test module starts one cluster for all its tests.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import shutil
import time
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit

from tests.support import backing_services
from tests.support.backing_services import RabbitServer
from tests.support.private_engines import ERL_ARGS, START_SECONDS, PrivateRabbit

SIZE = 3


@dataclasses.dataclass
class ClusterRabbitServer(RabbitServer):
    """The cluster as the harness's ``RabbitServer``: each vhost's URL names every node."""
    ports: tuple[int, ...] = ()

    def reachable(self) -> bool:
        return any(backing_services._port_open('127.0.0.1', port) for port in self.ports)

    def url_for(self, vhost: str) -> str:
        user, password = self.users.get(vhost, ('guest', 'guest'))
        credentials = f'{quote(user, safe="")}:{quote(password, safe="")}'
        hosts = ','.join(f'{credentials}@127.0.0.1:{port}' for port in self.ports)
        return f'{urlsplit(self.base_url).scheme}://{hosts}/{quote(vhost, safe="")}'


class RabbitCluster:
    """Three ``PrivateRabbit`` nodes joined into one cluster."""

    def __init__(self, workdir: Path, size: int = SIZE, *, erl_args: str = ERL_ARGS,
                 advanced_config: str = '[].') -> None:
        self.workdir = Path(workdir)
        tag = uuid.uuid4().hex[:6]
        cookie = uuid.uuid4().hex.upper()
        # size=1: a lone node set up as each of a cluster's (a benchmark's baseline).
        self.nodes = [PrivateRabbit(self.workdir / f'c{n}', None, name=f'cp-c{n}-{tag}',
                                    cookie=cookie, erl_args=erl_args,
                                    advanced_config=advanced_config)
                      for n in range(1, size + 1)]

    def node(self, name: str) -> PrivateRabbit:
        return next(n for n in self.nodes if n.node == name)

    def start(self) -> RabbitCluster:
        try:
            self.each(lambda node: node.start(), self.nodes)
            first = self.nodes[0].node

            def join(node: PrivateRabbit) -> None:
                # rabbitmqctl stop_app, join_cluster, start_app; without a VM per step.
                self.stop_app(node)
                joined = node.eval(f"rabbit_mnesia:join_cluster('{first}', disc)")
                if joined != 'ok':
                    raise RuntimeError(f'{node.node} could not join {first}: {joined}')
                self.start_app(node)
            # One at a time: two nodes joining at once can fail mnesia's start
            # on one of them ({badmatch,{error,{normal,{mnesia_app,start,...}}}}
            # on the third node, seen in a CI run).
            for node in self.nodes[1:]:
                join(node)
            self.wait_running()
        except BaseException:
            self.destroy()
            raise
        return self

    @staticmethod
    def each(action, nodes: list[PrivateRabbit]) -> None:
        """``action(node)`` for each of ``nodes``, side by side; the first error raised."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(nodes)) as pool:
            for done in [pool.submit(action, node) for node in nodes]:
                done.result()

    def running(self) -> list[PrivateRabbit]:
        """The nodes whose AMQP listener answers."""
        return [n for n in self.nodes
                if n.process is not None and backing_services._port_open('127.0.0.1', n.port)]

    def wait_running(self) -> None:
        """Until every node's AMQP listener answers.

        Enough after ``start`` (its ``start_app`` returns once the node runs
        in the cluster) and after ``restart`` (the node logged its start-up,
        which follows its rejoining): no ``rabbitmqctl`` run, each a VM's boot.
        """
        deadline = time.monotonic() + START_SECONDS
        while len(self.running()) < len(self.nodes):
            if time.monotonic() > deadline:
                raise RuntimeError(f'RabbitMQ nodes never all answered: '
                                   f'{[n.node for n in self.running()]} do')
            time.sleep(0.2)

    def server(self) -> ClusterRabbitServer:
        """Vhosts and users made through node 1 (the cluster shares them); URLs to all three.

        Its ``ctl`` asks a running node, or node 1 when none runs (a lone
        node whose application is stopped, between ``restart_app``'s halves).
        """
        first = self.nodes[0]
        add, _ = backing_services._rabbitmqctl_admin(first.ctl, first._import_definitions)
        return ClusterRabbitServer(
            'rabbit://guest:guest@127.0.0.1/', add, lambda vhost, user: None,
            lambda args: (self.running() or self.nodes)[0].ctl(args),
            ports=tuple(n.port for n in self.nodes))

    def leaders(self, vhosts: list[str]) -> dict[str, str]:
        """The node holding the leader of each quorum queue of ``vhosts``: {queue: node}."""
        asked = self.running()[0]
        found = {}
        for vhost in vhosts:
            out = asked.ctl(['list_queues', '-p', vhost, '--no-table-headers', 'name', 'type',
                             'leader'])
            for line in out.splitlines():
                name, kind, leader = (line.split('\t') + ['', ''])[:3]
                if kind == 'quorum':
                    found[f'{vhost}/{name}'] = leader
        return found

    def holding(self, vhost: str) -> dict[str, str]:
        """The node leading each quorum queue of ``vhost`` that holds messages: {queue: node}."""
        out = self.running()[0].ctl(['list_queues', '-p', vhost, '--no-table-headers', 'name',
                                     'type', 'leader', 'messages'])
        rows = [line.split('\t') for line in out.splitlines() if line.strip()]
        return {name: leader for name, kind, leader, messages in rows
                if kind == 'quorum' and int(messages or 0) > 0}

    def kill(self, node: PrivateRabbit) -> None:
        """kill -9 of the node's every process."""
        node.kill()

    def restart(self, node: PrivateRabbit) -> None:
        """The node's VM again (its data kept: it rejoins the cluster by itself)."""
        node.start()

    def stop_app(self, node: PrivateRabbit) -> None:
        """``rabbitmqctl stop_app``: RabbitMQ stops, its Erlang VM stays."""
        node.eval('rabbit:stop()')

    def start_app(self, node: PrivateRabbit) -> None:
        """``rabbitmqctl start_app``: returns once the node runs again."""
        started = node.eval('rabbit:start()')
        if started != 'ok':
            raise RuntimeError(f'{node.node} did not start: {started}')

    def destroy(self) -> None:
        for node in self.nodes:
            node.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)
