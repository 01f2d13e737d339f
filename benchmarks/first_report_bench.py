#!/usr/bin/env python3
"""A hollow agent's first report against a real Placement daemon: the CPU per new host.

    python benchmarks/first_report_bench.py [--hosts 500] [--agents 1] [--rounds 1]
        [--profile FILE]

Starts ``cellplane-placement`` (two workers, noauth2, as the test
deployments run it) on a fresh PostgreSQL database, then brings ``--hosts``
new hosts of each of ``--agents`` hollow agents (threads of this process,
each with its own client, as separate agents have) in sync with it as an
agent's first report does (``compute_agent/wiring.py`` ``HostReports``: one
list of the agent's providers, then every host's provider, inventory and
traits), with the fake driver's inventory and the hollow trait. The cell
conductor is a stub that only counts the node records it is sent: this is
the Placement part of the start-up that ``boot_bench.py`` reports as "agents
in sync with Placement".

Reported per host: the wall time, the CPU of this process (the agents:
client, HTTP, JSON), of the Placement daemon (its workers) and of the
machine's PostgreSQL (other work on a shared server counts too), and the
requests Placement answered. ``--rounds N`` repeats it on a new database
each time. ``--profile FILE`` writes cProfile's statistics of the client
side of the last round (``python -m pstats FILE``); ``--spy DIR`` records
the Placement daemon (its workers) with py-spy over the report, as
``boot_bench.py --profile`` does, and prints where its samples went.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import cProfile
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import boot_bench  # the sibling benchmarks/boot_bench.py: CPU readers
import daemon_profile  # the sibling benchmarks/daemon_profile.py: py-spy
import machine as machine_facts  # the sibling benchmarks/machine.py

from cellplane.db import engines, migrate
from compute_agent.evacuated import EvacuatedGuests
from compute_agent.hosted_host import HOLLOW_HOST_TRAIT, HostedHost, hosted_host_names
from compute_agent.resource_reporter import ResourceReporter
from compute_agent.virt.fake import FakeDriver, FakeSettings
from compute_agent.wiring import HostReports
from placement.client import PlacementClient
from tests.support import backing_services
from tests.support.deployment import free_port, render

REFRESH_SECONDS = 300


class CountingConductor:
    """The cell conductor's part of a report: counts the node records it is sent."""

    def __init__(self) -> None:
        self.records = 0
        self._lock = threading.Lock()

    def compute_node_updates(self, ctxt, records) -> None:
        with self._lock:
            self.records += len(records)

    def remove_compute_hosts(self, ctxt, hosts) -> None:
        pass


def hollow_agent(name: str, hosts: int, url: str, conductor: CountingConductor) -> HostReports:
    # As a test deployment's agents: noauth2's admin with the service role.
    placement = PlacementClient.over_http(url, roles=['admin', 'service'])
    hosted = {}
    for host in hosted_host_names(name, hosts):
        driver = FakeDriver(FakeSettings())
        reporter = ResourceReporter(host=host, nodename=host, driver=driver,
                                    placement=placement, conductor=conductor,
                                    refresh_interval=REFRESH_SECONDS,
                                    extra_traits=frozenset({HOLLOW_HOST_TRAIT}))
        hosted[host] = HostedHost(name=host, driver=driver, builder=None, reporter=reporter)
    conf = types.SimpleNamespace(compute=types.SimpleNamespace(
        placement_refresh_interval=REFRESH_SECONDS))
    return HostReports(conf, name=name, hosts=hosted, placement=placement,
                       conductor=conductor,
                       evacuated=EvacuatedGuests(conductor=conductor, unclaims=None))


class PlacementDaemon:
    def __init__(self, workdir: Path, database: str, workers: int) -> None:
        self.url = f'http://127.0.0.1:{free_port()}'
        conf = workdir / 'placement.conf'
        conf.write_text(render({
            'placement_database': {'connection': database},
            'api': {'bind_host': '127.0.0.1', 'bind_port': self.url.rsplit(':', 1)[1],
                    'workers': workers, 'auth_strategy': 'noauth2'}}))
        self.log = open(workdir / 'placement.out', 'wb')
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'placement.cmd', '--config-file', str(conf)],
            stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(self.url, timeout=1)
                break
            except requests.ConnectionError:
                assert self.process.poll() is None, 'cellplane-placement exited'
                assert time.monotonic() < deadline, 'cellplane-placement did not answer'
                time.sleep(0.1)

    def cpu(self) -> float:
        return boot_bench.process_tree_cpu(self.process.pid)

    def requests_answered(self) -> int:
        # One request-log line per request (placement.requestlog, INFO).
        text = Path(self.log.name).read_text(errors='replace')
        return text.count('" status: ')

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)
        self.log.close()


def one_round(args, postgres) -> dict:
    database = postgres.create_database('firstreport')
    engine = engines.create_engine(database)
    try:
        migrate.sync('placement', engine)
    finally:
        engine.dispose()
    with tempfile.TemporaryDirectory(prefix='first-report-') as workdir:
        daemon = PlacementDaemon(Path(workdir), database, args.workers)
        try:
            conductor = CountingConductor()
            agents = [hollow_agent(f'agent{a}', args.hosts, daemon.url, conductor)
                      for a in range(1, args.agents + 1)]
            requests_before = daemon.requests_answered()
            profile = cProfile.Profile() if args.profile else None
            spy = None
            if args.spy:
                Path(args.spy).mkdir(parents=True, exist_ok=True)
                spy = subprocess.Popen(
                    [str(daemon_profile.py_spy()), 'record', '--pid', str(daemon.process.pid),
                     '--format', 'raw', '--rate', str(daemon_profile.RATE), '--nonblocking',
                     '--subprocesses', '--gil',
                     '--output', str(Path(args.spy) / 'placement-first-report.txt')],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1.0)   # attached before the first request
            cpu_before, server_before = time.process_time(), daemon.cpu()
            database_before = boot_bench.database_cpu()
            began = time.perf_counter()
            if profile is not None:
                # cProfile sees the thread it is enabled on: one agent, here.
                if args.agents != 1:
                    raise SystemExit('--profile needs --agents 1')
                profile.enable()
                agents[0].report()
                profile.disable()
            else:
                with concurrent.futures.ThreadPoolExecutor(len(agents)) as pool:
                    list(pool.map(lambda agent: agent.report(), agents))
            wall = time.perf_counter() - began
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(timeout=60)
            client = time.process_time() - cpu_before
            server = daemon.cpu() - server_before
            database_after = boot_bench.database_cpu()
            if profile is not None:
                profile.dump_stats(args.profile)
            time.sleep(0.5)   # the last request-log lines
            answered = daemon.requests_answered() - requests_before
        finally:
            daemon.stop()
    postgres.drop_database(database)
    hosts = args.hosts * args.agents
    assert conductor.records == hosts, f'{conductor.records} node records for {hosts} hosts'
    return {'hosts': hosts, 'wall_seconds': wall,
            'client_ms_per_host': 1000 * client / hosts,
            'placement_ms_per_host': 1000 * server / hosts,
            'postgres_ms_per_host': (None if database_before is None
                                     else 1000 * (database_after - database_before) / hosts),
            'requests_per_host': answered / hosts}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--hosts', type=int, default=500, help='hosts per agent (500)')
    parser.add_argument('--agents', type=int, default=1, help='agents at once (1)')
    parser.add_argument('--workers', type=int, default=2, help="Placement's workers (2)")
    parser.add_argument('--rounds', type=int, default=1)
    parser.add_argument('--profile', metavar='FILE')
    parser.add_argument('--spy', metavar='DIR')
    parser.add_argument('--json', metavar='FILE')
    args = parser.parse_args(argv)
    postgres = backing_services.find_postgres()
    load_before = os.getloadavg()
    rounds = [one_round(args, postgres) for _ in range(args.rounds)]
    report = {'machine': machine_facts.summary(), 'load_before': load_before,
              'load_after': os.getloadavg(), 'rounds': rounds}
    print(f'First report of {args.agents} hollow agent(s) x {args.hosts} new hosts, '
          f'Placement with {args.workers} workers - {report["machine"]}')
    print('load average before ' + ', '.join(f'{x:.1f}' for x in load_before)
          + '; after ' + ', '.join(f'{x:.1f}' for x in report['load_after']))
    print('| round | wall s | requests/host | agent CPU ms/host | Placement CPU ms/host '
          '| PostgreSQL CPU ms/host |')
    print('|---|---|---|---|---|---|')
    for n, r in enumerate(rounds, 1):
        pg = '-' if r['postgres_ms_per_host'] is None else f'{r["postgres_ms_per_host"]:.2f}'
        print(f'| {n} | {r["wall_seconds"]:.1f} | {r["requests_per_host"]:.2f} | '
              f'{r["client_ms_per_host"]:.2f} | {r["placement_ms_per_host"]:.2f} | {pg} |')
    if len(rounds) > 1:
        print('median agent + Placement CPU ms/host: '
              f'{statistics.median(r["client_ms_per_host"] + r["placement_ms_per_host"] for r in rounds):.2f}')
    if args.spy:
        print(daemon_profile.summary(Path(args.spy), top=25))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
