#!/usr/bin/env python3
"""Benchmark any Placement-compatible service over HTTP.

    python benchmarks/placement_bench.py http://127.0.0.1:8778 \
        [--providers 1000,5000] [--token admin] [--json out.json]
    python benchmarks/placement_bench.py REFERENCE_URL CELLPLANE_URL ...

With several URLs (different services) every measurement is taken in
turns, so machine noise falls on all of them alike, and a last table gives
each one's speed-up over the first.

For each provider count N (ascending; the set grows between steps) it
creates compute-node providers (VCPU 16 at allocation_ratio 4.0, MEMORY_MB
65536, DISK_GB 1000; rack and row aggregates; a few traits), then measures:

* GET /allocation_candidates (limit 1000): plain, with member_of (one row
  aggregate), forbidding COMPUTE_STATUS_DISABLED alone (cellplane's
  scheduler always does), with required and forbidden traits: median and
  p95 latency;
* claims: PUT /allocations/{new consumer} with allocation requests taken
  from the candidates, sequentially and from 4 and 8 client threads:
  claims per second (409s counted, not hidden);
* DELETE /allocations/{consumer}: median latency and deletes per second.

Everything it created is removed at the end (also on Ctrl-C). Only the
standard library: it runs unchanged against the reference implementation
or ours. The machine (cores, CPU model, Python) is printed
with the results: compare two services only within one run on one machine.
"""
from __future__ import annotations

import argparse
import http.client
import json
import math
import statistics
import sys
import threading
import time
import urllib.parse
import uuid
from concurrent.futures import ThreadPoolExecutor

import machine as machine_facts  # the sibling benchmarks/machine.py

RESOURCES = 'VCPU:2,MEMORY_MB:4096,DISK_GB:20'
INVENTORY = {
    'VCPU': {'total': 16, 'allocation_ratio': 4.0, 'max_unit': 16},
    'MEMORY_MB': {'total': 65536, 'max_unit': 65536},
    'DISK_GB': {'total': 1000, 'max_unit': 1000},
}
TRAIT_ALL = 'HW_CPU_X86_AVX2'
TRAIT_HALF = 'HW_CPU_X86_AVX512F'          # every 2nd provider
TRAIT_DISABLED = 'COMPUTE_STATUS_DISABLED'  # every 50th provider
TRAIT_CUSTOM = 'CUSTOM_BENCH_GPU'           # every 10th provider
RACK_SIZE, ROW_SIZE = 20, 200
RUN = uuid.uuid4().hex[:8]


def _uuid(kind: str, i: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f'cellplane-bench/{RUN}/{kind}/{i}'))


def machine() -> dict:
    return machine_facts.facts()


def percentile(values, p):
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[rank]


class BenchError(Exception):
    pass


def for_each_in_threads(items, threads: int, handle) -> float:
    """Call ``handle(item)`` for every item, from ``threads`` threads that
    take the next item as they come free; return the wall time in seconds."""
    pending = iter(items)
    lock = threading.Lock()
    done = object()

    def worker():
        while True:
            with lock:
                item = next(pending, done)
            if item is done:
                return
            handle(item)

    start = time.perf_counter()
    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return time.perf_counter() - start


class Api:
    """Thread-safe HTTP calls: one kept-alive ``http.client`` connection per
    thread.

    The standard library's client, not ``requests``: on a small machine the
    benchmark shares the CPU with the service it measures, and ``requests``
    spends about five times the CPU per call (measured on 2 cores: 0.9 to
    1.2 ms against 0.2 ms per claim), which is taken from the service under
    test. A service that needs 37 ms per claim hardly notices; one that
    needs 2 ms loses a third of its throughput to the client.
    """

    def __init__(self, base: str, token: str, version: str):
        parsed = urllib.parse.urlsplit(base.rstrip('/'))
        if parsed.scheme not in ('http', 'https'):
            raise BenchError(f'not an http(s) URL: {base}')
        self.scheme = parsed.scheme
        self.netloc = parsed.netloc
        self.prefix = parsed.path
        self.headers = {'x-auth-token': token, 'accept': 'application/json',
                        'openstack-api-version': f'placement {version}'}
        self._local = threading.local()

    def _connection(self, fresh: bool = False) -> http.client.HTTPConnection:
        conn = getattr(self._local, 'conn', None)
        if conn is None or fresh:
            if conn is not None:
                conn.close()
            cls = (http.client.HTTPSConnection if self.scheme == 'https'
                   else http.client.HTTPConnection)
            conn = self._local.conn = cls(self.netloc, timeout=120)
        return conn

    def call(self, method, path, body=None, params=None):
        headers = dict(self.headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers['content-type'] = 'application/json'
        url = self.prefix + path
        if params:
            url += '?' + urllib.parse.urlencode(params)
        start = time.perf_counter()
        for attempt in (1, 2):
            conn = self._connection(fresh=attempt == 2)
            try:
                conn.request(method, url, body=data, headers=headers)
                resp = conn.getresponse()
                content = resp.read()
                break
            except (http.client.HTTPException, ConnectionError):
                # The server closed a kept-alive connection: reconnect once.
                # A connection that failed half-way is never used again.
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
                start = time.perf_counter()
        elapsed = time.perf_counter() - start
        payload = json.loads(content) if content else None
        return resp.status, payload, elapsed

    def ok(self, method, path, body=None, params=None, expect=(200, 201, 204)):
        status, payload, _ = self.call(method, path, body, params)
        if status not in expect:
            raise BenchError(f'{method} {path} -> {status}: {str(payload)[:300]}')
        return payload


class Bench:
    def __init__(self, api: Api, args):
        self.api = api
        self.args = args
        self.providers: list[str] = []
        self.consumers: set[str] = set()
        self.lock = threading.Lock()

    # ------------------------------------------------------------ set-up
    def _provider(self, i: int) -> str:
        rp = _uuid('rp', i)
        made = self.api.ok('POST', '/resource_providers',
                           {'name': f'bench-{RUN}-{i}', 'uuid': rp})
        generation = made['generation'] if made else 0
        with self.lock:
            self.providers.append(rp)
        generation = self.api.ok('PUT', f'/resource_providers/{rp}/inventories', {
            'resource_provider_generation': generation,
            'inventories': INVENTORY})['resource_provider_generation']
        traits = [TRAIT_ALL]
        if i % 2 == 0:
            traits.append(TRAIT_HALF)
        if i % 50 == 0:
            traits.append(TRAIT_DISABLED)
        if i % 10 == 0:
            traits.append(TRAIT_CUSTOM)
        generation = self.api.ok('PUT', f'/resource_providers/{rp}/traits', {
            'resource_provider_generation': generation,
            'traits': traits})['resource_provider_generation']
        self.api.ok('PUT', f'/resource_providers/{rp}/aggregates', {
            'resource_provider_generation': generation,
            'aggregates': [_uuid('rack', i // RACK_SIZE), _uuid('row', i // ROW_SIZE)]})
        return rp

    def grow_to(self, n: int) -> float:
        self.api.ok('PUT', f'/traits/{TRAIT_CUSTOM}', expect=(201, 204))
        start = time.perf_counter()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(self._provider, range(len(self.providers), n)))
        return time.perf_counter() - start

    # -------------------------------------------------------- candidates
    def variants(self) -> dict:
        limit = self.args.limit
        return {
            'plain': {'resources': RESOURCES, 'limit': limit},
            'member_of (row)': {'resources': RESOURCES, 'limit': limit,
                                'member_of': _uuid('row', 0)},
            # What cellplane's scheduler asks on every boot: disabled hosts out.
            'forbidden disabled': {'resources': RESOURCES, 'limit': limit,
                                   'required': f'!{TRAIT_DISABLED}'},
            'required+forbidden': {'resources': RESOURCES, 'limit': limit,
                                   'required': f'{TRAIT_HALF},!{TRAIT_DISABLED}'},
        }

    # ------------------------------------------------------------ claims
    def _claim_body(self, allocations) -> dict:
        return {'allocations': allocations, 'project_id': f'bench-{RUN}',
                'user_id': f'bench-{RUN}', 'consumer_generation': None,
                'consumer_type': 'INSTANCE'}

    def claims(self, pool: list, count: int, threads: int) -> dict:
        consumers = [str(uuid.uuid4()) for _ in range(count)]
        results = {'ok': 0, 'conflict': 0, 'other': 0}
        latencies = []
        lock = threading.Lock()

        def claim(k):
            status, body, elapsed = self.api.call(
                'PUT', f'/allocations/{consumers[k]}',
                self._claim_body(pool[k % len(pool)]))
            with lock:
                if status == 204:
                    results['ok'] += 1
                    latencies.append(elapsed * 1000)
                    self.consumers.add(consumers[k])
                elif status == 409:
                    results['conflict'] += 1
                else:
                    results['other'] += 1
                    if results['other'] == 1:
                        print(f'  unexpected claim answer {status}: {str(body)[:200]}',
                              file=sys.stderr)

        wall = for_each_in_threads(range(count), threads, claim)
        return dict(results, threads=threads, wall_s=wall, latencies=latencies)

    def deletes(self, threads: int = 1) -> dict:
        latencies = []
        errors = []
        lock = threading.Lock()

        def delete(c):
            status, _, elapsed = self.api.call('DELETE', f'/allocations/{c}')
            with lock:
                (latencies.append(elapsed * 1000) if status == 204
                 else errors.append(status))
                self.consumers.discard(c)

        wall = for_each_in_threads(list(self.consumers), threads, delete)
        return {'n': len(latencies), 'errors': len(errors),
                'median_ms': statistics.median(latencies) if latencies else None,
                'per_s': len(latencies) / wall if wall else None}

    def claim_pool(self) -> list:
        body = self.api.ok('GET', '/allocation_candidates',
                           params={'resources': RESOURCES, 'limit': self.args.limit})
        pool = [ar['allocations'] for ar in body['allocation_requests']]
        if not pool:
            raise BenchError('no candidates to claim')
        return pool

    # ----------------------------------------------------------- cleanup
    def cleanup(self) -> None:
        self.deletes(4)

        def remove(rp):
            self.api.call('DELETE', f'/resource_providers/{rp}')
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(remove, self.providers))
        self.api.call('DELETE', f'/traits/{TRAIT_CUSTOM}')


# Several services are measured in turns, request by request for candidates
# and in alternating halves for claims, so that a slow minute of a noisy
# machine falls on all of them alike.

def measure_candidates(benches: list[Bench], args) -> list[dict]:
    outs = [{} for _ in benches]
    variants = [bench.variants() for bench in benches]
    for name in variants[0]:
        samples = [[] for _ in benches]
        counts = [None] * len(benches)
        for i in range(args.warmup + args.repeat):
            for k, bench in enumerate(benches):
                params = variants[k][name]
                status, body, elapsed = bench.api.call(
                    'GET', '/allocation_candidates', params=params)
                if status != 200:
                    raise BenchError(f'{bench.api.netloc} candidates {params}: '
                                     f'{status} {str(body)[:300]}')
                counts[k] = len(body['allocation_requests'])
                if i >= args.warmup:
                    samples[k].append(elapsed * 1000)
        for k in range(len(benches)):
            outs[k][name] = {'median_ms': statistics.median(samples[k]),
                             'p95_ms': percentile(samples[k], 95),
                             'candidates': counts[k], 'n': len(samples[k])}
    return outs


def measure_claims(benches: list[Bench], args, halves: int = 2) -> list[dict]:
    pools = [bench.claim_pool() for bench in benches]
    outs = [{} for _ in benches]
    for threads in [1] + args.threads:
        merged = [{'ok': 0, 'conflict': 0, 'other': 0, 'wall_s': 0.0, 'latencies': []}
                  for _ in benches]
        for half in range(halves):
            count = args.claims // halves + (args.claims % halves if half == 0 else 0)
            for k, bench in enumerate(benches):
                result = bench.claims(pools[k], count, threads)
                for key in ('ok', 'conflict', 'other', 'wall_s', 'latencies'):
                    merged[k][key] += result[key]
        for k, bench in enumerate(benches):
            m = merged[k]
            latencies = m.pop('latencies')
            m.update(threads=threads, per_s=m['ok'] / m['wall_s'],
                     median_ms=statistics.median(latencies) if latencies else None)
            outs[k][f'claims x{threads}'] = m
            outs[k][f'deletes after x{threads}'] = bench.deletes(1)
    return outs


def print_ratios(bases: list[str], results: list[list[dict]]) -> None:
    """How many times faster each service is than the first one (the
    baseline): its latency divided into the baseline's, or its rate
    divided by the baseline's."""
    baseline = results[0]
    for other_base, other in zip(bases[1:], results[1:], strict=True):
        print(f'\n== {other_base} against {bases[0]}, same run (x = times faster) ==')
        for b_step, o_step in zip(baseline, other, strict=True):
            print(f"-- {b_step['providers']} providers")
            for name, b in b_step['candidates'].items():
                o = o_step['candidates'][name]
                print(f"  candidates {name:24} {b['median_ms']:9.1f} ms {o['median_ms']:9.1f} ms "
                      f"{b['median_ms'] / o['median_ms']:7.1f}x")
            for name, b in b_step['claims'].items():
                o = o_step['claims'][name]
                if b.get('per_s') and o.get('per_s'):
                    print(f"  {name:35} {b['per_s']:9.1f}/s  {o['per_s']:9.1f}/s  "
                          f"{o['per_s'] / b['per_s']:7.1f}x")


def print_report(base: str, results: list[dict]) -> None:
    m = machine()
    print(f'\nPlacement benchmark of {base}')
    print(f"machine: {m['cores']} cores, {m['cpu']}, Python {m['python']}, {m['system']}")
    for step in results:
        print(f"\n== {step['providers']} providers (created in {step['setup_s']:.1f} s) ==")
        print(f"{'GET /allocation_candidates':34} {'median ms':>10} {'p95 ms':>10} {'cands':>7}")
        for name, r in step['candidates'].items():
            print(f"  {name:32} {r['median_ms']:10.1f} {r['p95_ms']:10.1f} {r['candidates']:7}")
        print(f"{'claims / deletes':34} {'per s':>10} {'median ms':>10} {'ok':>7} {'409':>5} {'other':>5}")
        for name, r in step['claims'].items():
            median = f"{r['median_ms']:10.2f}" if r['median_ms'] is not None else f"{'-':>10}"
            per_s = f"{r['per_s']:10.1f}" if r['per_s'] is not None else f"{'-':>10}"
            ok = r.get('ok', r.get('n'))
            print(f"  {name:32} {per_s} {median} {ok:7} "
                  f"{r.get('conflict', 0):5} {r.get('other', r.get('errors', 0)):5}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('base_url', nargs='+',
                        help='one Placement URL, or several different services '
                             'to measure in turns (the first is the baseline '
                             'of the ratio table)')
    parser.add_argument('--providers', default='1000,5000')
    parser.add_argument('--token', default='admin')
    parser.add_argument('--microversion', default='1.39')
    parser.add_argument('--limit', type=int, default=1000)
    parser.add_argument('--repeat', type=int, default=20)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--claims', type=int, default=500)
    parser.add_argument('--threads', default='4,8')
    parser.add_argument('--json', help='also write the results to this file')
    args = parser.parse_args(argv)
    args.threads = [int(t) for t in args.threads.split(',') if t]
    if len(set(args.base_url)) != len(args.base_url):
        parser.error('each base URL must be a different service')
    benches = [Bench(Api(url, args.token, args.microversion), args)
               for url in args.base_url]
    results: list[list[dict]] = [[] for _ in benches]
    try:
        for n in sorted(int(x) for x in args.providers.split(',')):
            setups = []
            for bench in benches:
                print(f'{bench.api.netloc}: growing to {n} providers...', file=sys.stderr)
                setups.append(bench.grow_to(n))
            print('measuring candidates...', file=sys.stderr)
            cands = measure_candidates(benches, args)
            print('measuring claims...', file=sys.stderr)
            claims = measure_claims(benches, args)
            for k in range(len(benches)):
                results[k].append({'providers': n, 'setup_s': setups[k],
                                   'candidates': cands[k], 'claims': claims[k]})
    finally:
        print('cleaning up...', file=sys.stderr)
        for bench in benches:
            bench.cleanup()
    for base, result in zip(args.base_url, results, strict=True):
        print_report(base, result)
    if len(benches) > 1:
        print_ratios(args.base_url, results)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'base_urls': args.base_url, 'machine': machine(),
                       'results': dict(zip(args.base_url, results, strict=True))}, f, indent=2)
    return 0


if __name__ == '__main__':
    sys.exit(main())
