"""The compute API's CPU per request, in-process, with cProfile's breakdown; two code trees compared in one run.

    CELLPLANE_KEYSTONE_VENV=/path/.venv-keystone .venv/bin/python benchmarks/api_profile.py \
        [--trees OLD,NEW] [--rounds 2] [--posts 100] [--list-servers 1000] [--list-calls 10] \
        [--profile DIR]

Starts a deployment as ``boot_bench.py`` does (2 cells x 50 hollow hosts,
``tests/support/deployment.py``; a Keystone of the run's own when
``CELLPLANE_KEYSTONE_VENV`` is set, else noauth2), boots ``--list-servers``
servers of one project through the API role, then runs, for each round and
each tree in turn, a child process that builds the WSGI app of
``cellplane-api`` from the deployment's ``api.conf`` with that tree's code
first on ``sys.path`` (``cellplane_api.cmd.app_from_conf``: the middleware,
keystonemiddleware and oslo.policy of a worker) and sends it, without HTTP:

- ``GET /servers/detail?limit=1000`` (``--list-calls`` times),
- the boot watchers' poll (``changes-since`` and ``status=BUILD&status=ERROR``),
- ``POST /servers`` of one server (``--posts`` times; they boot meanwhile).

It prints the median CPU (``time.process_time``: the child, all its threads)
and wall time of each kind of request per tree, and the load average. With
``--http-posts N`` the parent then sends N ``POST /servers`` one after the
other over HTTP to the deployment's ``cellplane-api`` daemon (this tree's
code, one worker, as ``boot_bench.py --via api`` posts them) and gives the
daemon's CPU per POST (its processes, from ``/proc``), beside its idle CPU
over as long a time after them (what the daemon costs in that time while it
serves nothing, per POST). With
``--profile DIR`` each child profiles its requests afterwards with cProfile
(``DIR/<tree>-<kind>.prof``) and prints the cumulative time of the stages of
a request (middleware, token check, policy, database, JSON...). What HTTP
and granian cost is not here: ``boot_bench.py --via api`` measures the daemon.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()
TREE = HERE.parents[1]
FLAVOR = ('bench.small', 1, 256, 1)
# What each stage of a request is, by the function its time is found under (cumulative).
STAGES = [
    ('whole request', 'cellplane/wsgi/stack.py', '__call__'),
    ('keystonemiddleware auth_token', 'keystonemiddleware/auth_token/__init__.py',
     '__call__'),
    ('  token validation (cache)', 'keystonemiddleware/auth_token/__init__.py',
     'fetch_token'),
    ('the compute app', 'cellplane_api/wsgi.py', '_answer'),
    ('  oslo.policy enforce', 'oslo_policy/policy.py', 'enforce'),
    ('    load_rules (file checks)', 'oslo_policy/policy.py', 'load_rules'),
    ('  json_body', 'cellplane_api/request.py', 'json_body'),
    ('  validate', 'cellplane_api/schemas/__init__.py', 'validate'),
    ('  flavors.visible', 'cellplane_api/handlers/flavors.py', 'visible'),
    ('  scheduler_hints.resolve', 'cellplane_api/scheduler_hints.py', 'resolve'),
    ('  servers.create', 'cellplane_api/servers.py', 'create'),
    ('    quota prepare', 'cellplane_api/quotas.py', 'prepare'),
    ('    quota lock', 'cellplane/objects/quota_locks.py', 'hold'),
    ('    quota check_servers', 'cellplane_api/quotas.py', 'check_servers'),
    ('    quota recheck', 'cellplane_api/quotas.py', 'recheck_servers'),
    ('    build_requests.record_in', 'cellplane/objects/build_requests.py', 'record_in'),
    ('    cast to the super conductor', 'conductor/super/rpcapi.py',
     'schedule_and_build_instances'),
    ('  server_lists.listed', 'cellplane_api/server_lists.py', 'listed'),
    ('    servers.list_servers', 'cellplane_api/servers.py', 'list_servers'),
    ('      instance_mappings.mapped_at', 'cellplane/objects/instance_mappings.py',
     'mapped_at'),
    ('      instance_mappings.mapped_in_cells', 'cellplane/objects/instance_mappings.py',
     'mapped_in_cells'),
    ('      _read_cell', 'cellplane_api/servers.py', '_read_cell'),
    ('      build_requests.get_many', 'cellplane/objects/build_requests.py', 'get_many'),
    ('  views.detail', 'cellplane_api/views/servers.py', 'detail'),
    ('  views.details', 'cellplane_api/views/servers.py', 'details'),
    ('  json_response', 'cellplane_api/request.py', 'json_response'),
    ('sqlalchemy execute', 'sqlalchemy/engine/base.py', '_execute_context'),
    ('psycopg execute', 'psycopg/cursor.py', 'execute'),
]


# -- the child: one tree's app, measured ------------------------------------------------------

def _environ(method: str, path: str, token: str, body: bytes | None = None) -> dict:
    import webob
    req = webob.Request.blank(path, method=method)
    req.headers['X-Auth-Token'] = token
    req.headers['Accept'] = 'application/json'
    req.headers['OpenStack-API-Version'] = 'compute 2.69'
    if body is not None:
        req.body = body
        req.content_type = 'application/json'
    return req.environ


def _call(app, method: str, path: str, token: str, body: bytes | None = None) -> bytes:
    environ = _environ(method, path, token, body)
    answered = []
    chunks = app(environ, lambda status, headers, exc_info=None: answered.append(status))
    data = b''.join(chunks)
    if not answered or not answered[0].startswith('2'):
        raise RuntimeError(f'{method} {path}: {answered} {data[:300]!r}')
    return data


def _measure(send, times: int) -> dict:
    cpu, wall = [], []
    for _ in range(times):
        c0, w0 = time.process_time(), time.perf_counter()
        send()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return {'cpu_ms': 1000 * statistics.median(cpu), 'cpu_ms_mean': 1000 * statistics.mean(cpu),
            'wall_ms': 1000 * statistics.median(wall), 'n': times}


def child(args) -> None:
    sys.path.insert(0, args.tree)
    from cellplane import config
    from cellplane.wsgi import server
    from cellplane_api import cmd, service_conf
    files = [arg for path in args.config.split(',') for arg in ('--config-file', path)]
    conf = config.load(files, prog='cellplane-api',
                       registrars=[service_conf.register_opts], setup_logging=False)
    app = cmd.app_from_conf(conf)
    # The heap as the worker leaves it (a tree before ``settle_heap``: only frozen).
    getattr(cmd, 'settle_heap', server.freeze_heap)()
    token = args.token
    detail = '/v2.1/servers/detail?limit=1000'
    since = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(time.time() - 60))
    poll = f'/v2.1/servers/detail?changes-since={since}&status=BUILD&status=ERROR'
    counter = iter(range(10 ** 9))

    def post():
        body = json.dumps({'server': {'name': f'prof-{next(counter)}', 'flavorRef': FLAVOR[0],
                                      'imageRef': 'bench', 'networks': 'none'}}).encode()
        _call(app, 'POST', '/v2.1/servers', token, body)

    kinds = {'list': (lambda: _call(app, 'GET', detail, token), args.list_calls),
             'poll': (lambda: _call(app, 'GET', poll, token), args.list_calls),
             'post': (post, args.posts)}
    if args.only:
        kinds = {args.only: kinds[args.only]}
    for send, _ in kinds.values():   # warm: connections, the token cache, lazy imports
        send()
        send()
    results = {kind: _measure(send, times) for kind, (send, times) in kinds.items()}
    results['listed'] = len(json.loads(_call(app, 'GET', detail, token))['servers'])
    if args.profile:
        import cProfile
        import pstats
        for kind, (send, times) in kinds.items():
            # CPU, not wall time: the machine is shared.
            profiler = cProfile.Profile(time.process_time)
            profiler.enable()
            for _ in range(times):
                send()
            profiler.disable()
            out = Path(args.profile) / f'{args.label}-{kind}.prof'
            profiler.dump_stats(out)
            results[f'stages_{kind}'] = stages(pstats.Stats(str(out)), times)
    print('RESULT ' + json.dumps(results), flush=True)


def stages(stats, times: int) -> list[tuple[str, float]]:
    """(stage, cumulative ms per request) of the ``STAGES`` found in ``stats``."""
    found = []
    for name, file_end, function in STAGES:
        total = 0.0
        for (filename, _line, func), (_cc, _nc, _tt, ct, callers) in stats.stats.items():
            if func != function.split('.')[-1] or not filename.endswith(file_end):
                continue
            # Recursion or nesting counted once: only calls from outside the same function.
            total += sum(v[3] for k, v in callers.items() if k[2] != func) if callers else ct
        if total:
            found.append((name, 1000 * total / times))
    return found


# -- the parent: the deployment, the rounds, the table ----------------------------------------

def parent(args) -> int:
    sys.path.insert(0, str(TREE))
    sys.path.insert(0, str(HERE.parent))
    import boot_bench
    import progress

    from cellplane import config
    from cellplane.db import engines
    from cellplane.objects import flavors as api_flavors
    from cellplane.rpc import options as rpc_options
    from cellplane.rpc.transport import get_transport
    from conductor.super.rpcapi import SuperConductorAPI
    from tests.support import backing_services
    from tests.support.deployment import ComputePlan, Deployment

    # SIGTERM (a held run stopped) removes the deployment as an error does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    trees = [str(Path(t).resolve()) for t in (args.trees or str(TREE)).split(',')]
    labels = [Path(t).name for t in trees]
    if len(set(labels)) != len(labels):
        labels = [f'{i}-{label}' for i, label in enumerate(labels)]
    rabbit, postgres = backing_services.find_rabbit(), backing_services.find_postgres()
    config.load([], prog='api-profile', setup_logging=False,
                registrars=[rpc_options.register_opts])
    bench_args = argparse.Namespace(via='direct,api', keystone=False)
    load_before = os.getloadavg()
    rows: dict[str, list[dict]] = {label: [] for label in labels}
    with tempfile.TemporaryDirectory(prefix='cellplane-api-profile-') as workdir, \
            boot_bench.keystone_of(bench_args, Path(workdir)) as keystone:
        computes = [ComputePlan(f'cell{c}-hollow', f'cell{c}', hosted_hosts=args.hosts_per_cell)
                    for c in range(1, args.cells + 1)]
        deployment = Deployment(Path(workdir), rabbit, postgres, computes,
                                default_intervals=True, compute_api=True, keystone=keystone,
                                api_workers=1)
        transport = api_engine = None
        try:
            deployment.create()
            api_engine = engines.create_engine(deployment.databases['api'])
            api_flavors.create(api_engine, name=FLAVOR[0], vcpus=FLAVOR[1],
                               memory_mb=FLAVOR[2], root_gb=FLAVOR[3], flavorid=FLAVOR[0])
            transport = get_transport(deployment.transport_url('top'))
            token, project = boot_bench.api_caller(keystone)
            direct = boot_bench.DirectPath(deployment, api_engine, SuperConductorAPI(transport),
                                           project=project)
            if args.list_servers:
                sizes = [100] * (args.list_servers // 100) + (
                    [args.list_servers % 100] if args.list_servers % 100 else [])
                uuids = direct.submit('fill', sizes)
                direct.wait(uuids, progress.Progress(len(uuids), stall_seconds=60))
            for _ in range(args.rounds):
                for tree, label in zip(trees, labels, strict=True):
                    rows[label].append(_run_child(args, tree, label, deployment, token))
            if args.http_posts:
                http = http_posts(deployment, token, args.http_posts)
            if args.hold:
                print('held for', args.hold, 's; a child by hand:', ' '.join(
                    _child_argv(args, str(TREE), 'held', deployment, token)), flush=True)
                time.sleep(args.hold)
        finally:
            if transport is not None:
                transport.cleanup()
            if api_engine is not None:
                api_engine.dispose()
            deployment.destroy()
    print(render(rows, args, load_before, os.getloadavg(), keystone is not None))
    if args.http_posts:
        print(f'\nPOST /servers over HTTP to cellplane-api ({TREE.name}, 1 worker), '
              f'{http["posts"]} one after the other in {http["seconds"]:.1f} s: the daemon\'s '
              f'CPU {http["cpu_ms"]:.2f} ms per POST; idle over as long after: '
              f'{http["idle_cpu_ms"]:.2f} ms per POST; client wall {http["wall_ms"]:.1f} ms '
              f'median')
    return 0


def http_posts(deployment, token: str, posts: int) -> dict:
    """``posts`` single-server POSTs to the daemon, one after another; its CPU per POST."""
    import boot_bench
    import compute_api_client
    client = compute_api_client.ComputeClient(deployment.compute_api_url, token)
    pid = deployment.pid('api')
    for i in range(3):      # warm: the connection, the token cache
        client.create(f'http-warm-{i}', FLAVOR[0])
    walls = []
    cpu0, t0 = boot_bench.process_tree_cpu(pid), time.perf_counter()
    for i in range(posts):
        w0 = time.perf_counter()
        client.create(f'http-{i}', FLAVOR[0])
        walls.append(time.perf_counter() - w0)
    seconds = time.perf_counter() - t0
    cpu = boot_bench.process_tree_cpu(pid) - cpu0
    # The same time again with nothing sent (the boots cast above are still landing).
    time.sleep(5)
    idle0 = boot_bench.process_tree_cpu(pid)
    time.sleep(seconds)
    idle = boot_bench.process_tree_cpu(pid) - idle0
    return {'posts': posts, 'seconds': seconds, 'cpu_ms': 1000 * cpu / posts,
            'idle_cpu_ms': 1000 * idle / posts, 'wall_ms': 1000 * statistics.median(walls)}


def _child_argv(args, tree: str, label: str, deployment, token: str) -> list[str]:
    return [sys.executable, str(HERE), '--child', '--tree', tree, '--label', label,
            '--config', f"{deployment.config('top.conf')},{deployment.config('api.conf')}", '--token', token,
            '--posts', str(args.posts), '--list-calls', str(args.list_calls)]


def _run_child(args, tree: str, label: str, deployment, token: str) -> dict:
    argv = _child_argv(args, tree, label, deployment, token)
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
        argv += ['--profile', str(Path(args.profile).resolve())]
    env = dict(os.environ, PYTHONPATH=tree)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    for line in done.stdout.splitlines():
        if line.startswith('RESULT '):
            return json.loads(line[len('RESULT '):])
    raise RuntimeError(f'the child of {tree} failed:\n{done.stdout[-3000:]}\n'
                       f'{done.stderr[-3000:]}')


def render(rows: dict[str, list[dict]], args, load_before, load_after, keystone: bool) -> str:
    lines = [f'compute API in-process, {args.cells} cells x {args.hosts_per_cell} hosts, '
             f'{"Keystone tokens" if keystone else "noauth2"}; load average (1 min) '
             f'{load_before[0]:.1f} before, {load_after[0]:.1f} after; medians per request, '
             f'each round\'s figures apart', '',
             '| tree | POST /servers CPU ms | wall ms | detail?limit=1000 CPU ms | wall ms '
             '| poll CPU ms | wall ms | listed |', '|---|---|---|---|---|---|---|---|']
    for label, runs in rows.items():
        def fig(kind, key, runs=runs):
            return ' / '.join(f'{r[kind][key]:.2f}' if r[kind][key] < 10 else
                              f'{r[kind][key]:.0f}' for r in runs)
        lines.append(f'| {label} | {fig("post", "cpu_ms")} | {fig("post", "wall_ms")} | '
                     f'{fig("list", "cpu_ms")} | {fig("list", "wall_ms")} | '
                     f'{fig("poll", "cpu_ms")} | {fig("poll", "wall_ms")} | '
                     f'{runs[0]["listed"]} |')
    for label, runs in rows.items():
        for kind in ('post', 'list', 'poll'):
            found = runs[-1].get(f'stages_{kind}')
            if found:
                lines += ['', f'{label}, {kind}: cProfile cumulative ms per request '
                              f'(profiled, so slower than above)']
                lines += [f'    {name:<40} {ms:8.2f}' for name, ms in found]
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--trees', help='source trees to compare, comma-separated '
                                        '(default: this one)')
    parser.add_argument('--rounds', type=int, default=2)
    parser.add_argument('--posts', type=int, default=100)
    parser.add_argument('--list-servers', type=int, default=1000)
    parser.add_argument('--list-calls', type=int, default=10)
    parser.add_argument('--cells', type=int, default=2)
    parser.add_argument('--hosts-per-cell', type=int, default=50)
    parser.add_argument('--profile', metavar='DIR')
    parser.add_argument('--hold', type=float, default=0,
                        help='keep the deployment this many seconds after the rounds, '
                             'printing a child\'s command line (to profile by hand)')
    parser.add_argument('--only', choices=('list', 'poll', 'post'),
                        help='a child sends only this kind of request (py-spy on it)')
    parser.add_argument('--http-posts', type=int, default=0, metavar='N',
                        help='then N POST /servers over HTTP to the daemon: its CPU per POST')
    parser.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--tree', help=argparse.SUPPRESS)
    parser.add_argument('--label', help=argparse.SUPPRESS)
    parser.add_argument('--config', help=argparse.SUPPRESS)
    parser.add_argument('--token', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0
    return parent(args)


if __name__ == '__main__':
    sys.exit(main())
