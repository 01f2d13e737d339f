#!/usr/bin/env python3
"""Candidate window benchmark: Placement's windowed search (randomize, a small limit) at N providers.

    python benchmarks/candidate_window_bench.py [--providers 5000,50000] [--calls 200]
                                                [--allocated 0.8] [--json FILE]

For each provider count it makes a PostgreSQL database of its own (the
local server, or ``CELLPLANE_TEST_DB_URL``), migrates Placement's schema,
inserts the providers by SQL (VCPU, MEMORY_MB and DISK_GB inventories;
half of them with a trait; ``--allocated`` of them holding an allocation;
a tenth of their rows written again, as claims do), analyzes, and times
``find_candidates`` with a window of 10 (``randomize``), the request plain
and with the trait required, in turns: the window in id order (as served)
and unordered (the walk before its order, for comparison). It prints the
median and p95 of each, in ms, and drops the database.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sqlalchemy as sa

from cellplane.db import engines, migrate
from placement.objects import standards
from placement.objects.allocation_candidates import provider_walk, search
from placement.objects.allocation_candidates.request import RequestGroup, RequestWide
from tests.support.backing_services import find_postgres

TRAIT = 'COMPUTE_STATUS_DISABLED'   # any standard trait: half the providers carry it
RESOURCES = {'VCPU': 1, 'MEMORY_MB': 512, 'DISK_GB': 1}
INVENTORY = (('VCPU', 64, 2), ('MEMORY_MB', 262144, 2048), ('DISK_GB', 4000, 20))


def populate(engine, providers: int, allocated: float) -> None:
    every = max(1, round(1 / allocated)) if allocated > 0 else 0
    with engine.begin() as c:
        c.execute(sa.text(
            'INSERT INTO resource_providers (uuid, name, generation, root_provider_id, '
            "created_at) SELECT md5(g::text)::uuid::text, 'h' || g, 0, g, now() "
            'FROM generate_series(1, :n) g'), {'n': providers})
        rcs = dict(c.execute(sa.text(
            'SELECT name, id FROM resource_classes WHERE name IN :names').bindparams(
                sa.bindparam('names', expanding=True)), {'names': [n for n, _, _ in INVENTORY]}).all())
        for name, total, _ in INVENTORY:
            c.execute(sa.text(
                'INSERT INTO inventories (resource_provider_id, resource_class_id, total, '
                'reserved, min_unit, max_unit, step_size, allocation_ratio, created_at) '
                'SELECT id, :rc, :total, 0, 1, :total, 1, 1.0, now() FROM resource_providers'),
                {'rc': rcs[name], 'total': total})
        trait = c.execute(sa.text('SELECT id FROM traits WHERE name = :t'), {'t': TRAIT}).scalar()
        c.execute(sa.text(
            'INSERT INTO resource_provider_traits (trait_id, resource_provider_id, created_at) '
            'SELECT :t, id, now() FROM resource_providers WHERE id % 2 = 0'), {'t': trait})
        if every:
            c.execute(sa.text("INSERT INTO projects (external_id, created_at) VALUES ('p', now())"))
            c.execute(sa.text("INSERT INTO users (external_id, created_at) VALUES ('u', now())"))
            holders = '(SELECT id FROM resource_providers WHERE id % :every = 0)'
            c.execute(sa.text(
                'INSERT INTO consumers (uuid, project_id, user_id, generation, created_at) '
                f"SELECT md5('c' || id)::uuid::text, 1, 1, 1, now() FROM {holders} h"),
                {'every': every})
            for name, _, used in INVENTORY:
                c.execute(sa.text(
                    'INSERT INTO allocations (resource_provider_id, consumer_id, '
                    "resource_class_id, used, created_at) SELECT id, md5('c' || id)::uuid::text, "
                    f':rc, :used, now() FROM {holders} h'),
                    {'every': every, 'rc': rcs[name], 'used': used})
        c.execute(sa.text('UPDATE resource_providers SET generation = generation + 1 '
                          'WHERE id % 10 = 3'))
    with engine.connect() as c:
        c.execute(sa.text('ANALYZE'))
        c.commit()


def time_calls(engine, group: RequestGroup, calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        began = time.perf_counter()
        found = search.find_candidates(engine, {'': group}, RequestWide(limit=10, randomize=True))
        times.append((time.perf_counter() - began) * 1000)
        assert len(found.allocation_requests) == 10, len(found.allocation_requests)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--providers', default='5000,50000',
                        help='provider counts, comma-separated (default 5000,50000)')
    parser.add_argument('--calls', type=int, default=200, help='calls per line (default 200)')
    parser.add_argument('--allocated', type=float, default=0.8,
                        help='share of the providers holding an allocation (default 0.8)')
    parser.add_argument('--json', metavar='FILE', help='also write the results as JSON')
    args = parser.parse_args(argv)
    try:
        counts = [int(n) for n in args.providers.split(',')]
    except ValueError:
        parser.error(f'--providers: not a list of integers: {args.providers!r}')
    if any(n < 10 for n in counts) or args.calls < 1 or not 0 <= args.allocated <= 1:
        parser.error('--providers at least 10 each, --calls at least 1, --allocated in 0..1')
    server, ordered = find_postgres(), provider_walk._windowed
    requests = (('plain', RequestGroup(resources=RESOURCES)),
                ('required trait', RequestGroup(resources=RESOURCES,
                                                required_traits=[{TRAIT}])))
    results = []
    print('| providers | request | window | median ms | p95 ms |\n|---|---|---|---|---|')
    for count in counts:
        url = server.create_database('window_bench')
        engine = engines.create_engine(url)
        try:
            print(f'candidate_window_bench: {count} providers ...', file=sys.stderr)
            migrate.sync('placement', engine)
            standards.sync(engine)
            populate(engine, count, args.allocated)
            for label, group in requests:
                for in_order in (True, False, True, False):
                    provider_walk._windowed = ordered if in_order else (lambda s: False)
                    times = sorted(time_calls(engine, group, args.calls))
                    row = {'providers': count, 'request': label,
                           'window': 'id order' if in_order else 'unordered',
                           'median_ms': round(statistics.median(times), 2),
                           'p95_ms': round(times[int(len(times) * 0.95) - 1], 2)}
                    results.append(row)
                    print(f"| {count} | {label} | {row['window']} | {row['median_ms']} | "
                          f"{row['p95_ms']} |", flush=True)
        finally:
            provider_walk._windowed = ordered
            engine.dispose()
            server.drop_database(url)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
