"""Scheduling records on the reply path: what ``select_destinations`` costs with and without them.

    .venv/bin/python benchmarks/records_bench.py [--runs 2000] [--hosts 100]

One process, no broker: the scheduler's RPC endpoint (``SchedulerManager``)
over a real ``DestinationSelector`` with the default filters and weighers,
and an in-memory Placement stand-in (the unit tests' ``FakePlacement``), so
that only the scheduler's own work is timed. Each mode answers ``--runs``
requests of one instance against ``--hosts`` hosts:

- ``off``: no record (``record_backend = none``);
- ``database``/``jsonlines``: the daemon's way, the trace queued for the
  background writer (API database on SQLite in a temporary directory; a JSON
  lines file);
- ``database, inline``: for contrast, the record built and written before
  replying, which is what the writer thread keeps off the reply.

Reported per mode: reply latency (median, p95, p99) measured around the
endpoint call, records written and dropped, and this process's CPU time.
The writer shares the GIL and the cores with the replies, so its cost shows
in the latency only through that contention. The machine and its load are
printed: it is shared; compare the rows of one run.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import machine as machine_facts  # the sibling benchmarks/machine.py

from cellplane.db import engines, migrate
from scheduler.conf import DEFAULT_FILTERS, DEFAULT_WEIGHERS
from scheduler.destinations import DestinationSelector
from scheduler.host_cache import HostStateCache
from scheduler.manager import SchedulerManager
from scheduler.plugins import load_filters, load_weighers
from scheduler.records.database import DatabaseBackend
from scheduler.records.jsonlines import JsonLinesBackend
from scheduler.records.record import SchedulingRecord
from scheduler.records.writer import RecordWriter
from tests.unit.scheduler.factories import FakePlacement, flavor, record, spec

QUEUE_SIZE = 1000


def machine() -> str:
    return machine_facts.summary()


def _manager(hosts: int, on_trace) -> SchedulerManager:
    names = [f'h{n:04d}' for n in range(hosts)]
    placement = FakePlacement({n: 10 ** 9 for n in names})
    cache = HostStateCache()
    cache.set_records([record(n) for n in names])
    selector = DestinationSelector(
        candidate_source=placement, claimer=placement, cache=cache,
        filters=load_filters(DEFAULT_FILTERS), weighers=_weighers(),
        max_results=1000)
    return SchedulerManager(selector, on_trace=on_trace)


def _weighers():
    from oslo_config import cfg

    from scheduler import conf as scheduler_conf
    conf = cfg.ConfigOpts()
    scheduler_conf.register_opts(conf)
    conf([])
    return load_weighers(DEFAULT_WEIGHERS, conf)


def _measure(name: str, manager: SchedulerManager, runs: int) -> dict:
    request = spec(flavor=flavor(vcpus=0, memory_mb=1, root_gb=0))
    ctxt = types.SimpleNamespace(request_id='req-bench')
    latencies = []
    cpu_before = time.process_time()
    for n in range(runs):
        started = time.perf_counter()
        manager.select_destinations(ctxt, request, [f'i-{name}-{n}'], 2)
        latencies.append(time.perf_counter() - started)
    ordered = sorted(latencies)
    return {'mode': name, 'median_ms': statistics.median(latencies) * 1000,
            'p95_ms': ordered[int(0.95 * (len(ordered) - 1))] * 1000,
            'p99_ms': ordered[int(0.99 * (len(ordered) - 1))] * 1000,
            'cpu_s': time.process_time() - cpu_before}


def _count(engine) -> int:
    with engine.connect() as conn:
        return conn.exec_driver_sql('SELECT count(*) FROM scheduling_records').scalar()


def run(args) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix='cellplane-records-bench-') as workdir:
        rows.append({**_measure('off', _manager(args.hosts, None), args.runs),
                     'written': '-', 'dropped': '-'})
        engine = engines.create_engine(f'sqlite:///{workdir}/api.sqlite')
        migrate.sync('api', engine)
        backends = {
            'database': DatabaseBackend(engine, retention=10 ** 6),
            'jsonlines': JsonLinesBackend(f'{workdir}/records.jsonl',
                                          max_bytes=50 * 1024 * 1024, backups=2),
        }
        for name, backend in backends.items():
            writer = RecordWriter(backend, queue_size=QUEUE_SIZE)
            row = _measure(name, _manager(args.hosts, writer.submit), args.runs)
            # The CPU the writer still needs after the last reply is its own cost.
            cpu_before = time.process_time()
            writer.close(timeout=120)
            row['cpu_s'] += time.process_time() - cpu_before
            rows.append({**row, 'written': writer.written, 'dropped': writer.dropped})
        inline = DatabaseBackend(engine, retention=10 ** 6)
        before = _count(engine)

        def write_now(trace):
            inline.write([SchedulingRecord.from_trace(trace)])
        rows.append({**_measure('database, inline', _manager(args.hosts, write_now),
                                args.runs), 'written': _count(engine) - before,
                     'dropped': 0})
        engine.dispose()
    return rows


def render(rows: list[dict], args, load_before, load_after) -> str:
    lines = [f'Scheduling records on the reply path - {machine()}',
             f'{args.runs} select_destinations of 1 instance (2 alternates) over '
             f'{args.hosts} hosts, default filters and weighers, in-memory Placement; '
             f'writer queue {QUEUE_SIZE}',
             'Load average before: ' + ', '.join(f'{x:.1f}' for x in load_before)
             + '; after: ' + ', '.join(f'{x:.1f}' for x in load_after),
             '',
             '| records | reply ms median | p95 | p99 | CPU s (with writer) | written '
             '| dropped |',
             '|---|---|---|---|---|---|---|']
    for r in rows:
        lines.append(f'| {r["mode"]} | {r["median_ms"]:.2f} | {r["p95_ms"]:.2f} | '
                     f'{r["p99_ms"]:.2f} | {r["cpu_s"]:.1f} | {r["written"]} | '
                     f'{r["dropped"]} |')
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--runs', type=int, default=2000)
    parser.add_argument('--hosts', type=int, default=100)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    rows = run(args)
    print(render(rows, args, load_before, os.getloadavg()))
    return 0


if __name__ == '__main__':
    sys.exit(main())
