"""Where a Placement claim's Python time goes, stage by stage, without an HTTP server.

    .venv/bin/python benchmarks/claim_stages.py --config-file placement.conf [--claims 1000]

Builds the Placement WSGI app as a worker does (``placement.wsgi.app_from_conf``
on the configuration's database, which must hold providers with VCPU,
MEMORY_MB and DISK_GB inventory, for example those ``placement_bench.py
--keep`` or the shared ``bench.py --keep`` left), then calls it directly
with ``--claims`` sequential ``PUT /allocations/{new consumer}`` at
microversion 1.39 (the shared benchmark's body), under cProfile timed on
this thread's CPU, and deletes them again. It prints, per claim:

- the CPU of each stage of the request path (request log, auth, policy,
  JSON and schema, names to ids, pool checkout and return, the database
  call's client side, the response); cProfile inflates them all alike,
  so compare stages and runs, not with a claim's latency;
- the Python function calls (the same work gives the same count whatever
  the machine's load: the steadiest figure on a shared machine);
- the statements sent to the database (``cursor.execute`` calls).

The database server's time is not in these figures (see
``placement_bench.py`` and PostgreSQL's ``pg_stat_statements``).
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# (stage, [(file suffix, function)]): the stage's cumulative CPU is theirs.
STAGES = [
    ('whole request (WSGI stack)', [('cellplane/wsgi/stack.py', '__call__')]),
    ('request log', [('cellplane/wsgi/requestlog.py', '_log')]),
    ('auth: noauth2, credentials', [('placement/auth.py', 'noauth2'),
                                    ('placement/auth.py', 'credentials')]),
    ('microversion', [('placement/microversion.py', 'from_environ')]),
    ('routing', [('placement/handler.py', 'match')]),
    ('policy', [('placement/policy.py', 'authorize')]),
    ('JSON decode, schema', [('placement/request.py', 'json_body'),
                             ('placement/schemas/allocation.py', 'certainly_valid_put')]),
    ('body to ConsumerWrite', [('placement/handlers/allocation.py', 'consumer_write')]),
    ('project/user/type ids (cached)', [('placement/objects/allocation.py', 'resolve_names')]),
    ('claim function present? (cached)', [('placement/objects/claim_function.py', 'available')]),
    ('pool checkout', [('sqlalchemy/engine/base.py', 'connect')]),
    ('pool return', [('sqlalchemy/engine/base.py', '__exit__')]),
    ('database call (client side)', [('placement/db/api.py', 'execute_in_autocommit')]),
    ('response', [('placement/response.py', 'no_content')]),
]
_EXECUTE = "<method 'execute' of 'psycopg2.extensions.cursor' objects>"
PROJECT = '7e6a5e2b-0d44-4a63-a5a4-5c6b1f0e0a11'
USER = '1f0e0a11-7e6a-4a63-a5a4-5c6b0d445e2b'


def _environ(method: str, path: str, body: dict | None) -> dict:
    data = json.dumps(body).encode() if body is not None else b''
    environ = {
        'REQUEST_METHOD': method, 'PATH_INFO': path, 'SCRIPT_NAME': '',
        'QUERY_STRING': '', 'SERVER_NAME': '127.0.0.1', 'SERVER_PORT': '8778',
        'SERVER_PROTOCOL': 'HTTP/1.1', 'REMOTE_ADDR': '127.0.0.1',
        'wsgi.url_scheme': 'http', 'wsgi.input': io.BytesIO(data),
        'HTTP_X_AUTH_TOKEN': 'admin', 'HTTP_ACCEPT': 'application/json',
        'HTTP_OPENSTACK_API_VERSION': 'placement 1.39',
    }
    if body is not None:
        environ['CONTENT_TYPE'] = 'application/json'
        environ['CONTENT_LENGTH'] = str(len(data))
    return environ


def _call(app, method: str, path: str, body: dict | None = None) -> str:
    seen = {}

    def start_response(status, headers, exc_info=None):
        seen['status'] = status
    b''.join(app(_environ(method, path, body), start_response))
    return seen['status']


def _claim_body(provider: str) -> dict:
    return {'allocations': {provider: {'resources': {
                'VCPU': 2, 'MEMORY_MB': 4096, 'DISK_GB': 20}}},
            'project_id': PROJECT, 'user_id': USER,
            'consumer_generation': None, 'consumer_type': 'INSTANCE'}


def _providers(engine, limit: int) -> list[str]:
    import sqlalchemy as sa
    with engine.connect() as conn:
        return list(conn.execute(sa.text(
            'SELECT rp.uuid FROM resource_providers rp WHERE '
            '(SELECT count(*) FROM inventories i JOIN resource_classes rc '
            '  ON rc.id = i.resource_class_id WHERE i.resource_provider_id = rp.id '
            "  AND rc.name IN ('VCPU', 'MEMORY_MB', 'DISK_GB')) = 3 "
            'ORDER BY rp.id LIMIT :limit'), {'limit': limit}).scalars())


def _cumulative(stats: dict, suffix: str, function: str) -> float:
    return sum(ct for (path, _line, name), (_cc, _nc, _tt, ct, _callers) in stats.items()
               if name == function and path.endswith(suffix))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--config-file', required=True,
                        help="placement.conf naming the database ([placement_database])")
    parser.add_argument('--claims', type=int, default=1000)
    args = parser.parse_args(argv)
    if args.claims < 1:
        parser.error('--claims must be at least 1')

    import logging

    from oslo_config import cfg

    from cellplane import config
    from placement import conf as placement_conf
    from placement import wsgi
    conf = config.load(['--config-file', args.config_file], prog='claim_stages',
                       conf=cfg.ConfigOpts(), registrars=[placement_conf.register_opts])
    app = wsgi.app_from_conf(conf, sync_standards=False)
    # The request log's line is written as the daemon writes it, but not to
    # this terminal.
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.stream = open(os.devnull, 'w')
    providers = _providers(app.placement.engine, min(args.claims, 5000))
    if not providers:
        print('no provider with VCPU, MEMORY_MB and DISK_GB inventory in that '
              'database: run placement_bench.py --keep first', file=sys.stderr)
        return 2
    consumers = [str(uuid.uuid4()) for _ in range(args.claims)]
    bodies = [_claim_body(providers[i % len(providers)]) for i in range(args.claims)]
    # One claim first: the pool's connection and the function's plans are warm.
    warm = str(uuid.uuid4())
    _call(app, 'PUT', f'/allocations/{warm}', _claim_body(providers[0]))
    _call(app, 'DELETE', f'/allocations/{warm}')

    profile = cProfile.Profile(time.thread_time)
    refused = 0
    try:
        profile.enable()
        for consumer, body in zip(consumers, bodies, strict=True):
            if not _call(app, 'PUT', f'/allocations/{consumer}', body).startswith('204'):
                refused += 1
        profile.disable()
    finally:
        for consumer in consumers:
            _call(app, 'DELETE', f'/allocations/{consumer}')
    stats = pstats.Stats(profile).stats
    n = args.claims
    print(f'{n} claims at {len(providers)} providers ({refused} refused); '
          f'load average {os.getloadavg()[0]:.1f}; CPU in ms per claim, under cProfile')
    print('| stage | ms per claim |')
    print('|---|---|')
    for stage, functions in STAGES:
        spent = sum(_cumulative(stats, suffix, name) for suffix, name in functions)
        print(f'| {stage} | {1000 * spent / n:.3f} |')
    calls = sum(nc for (_cc, nc, _tt, _ct, _callers) in stats.values())
    executes = sum(nc for (path, _line, name), (_cc, nc, _tt, _ct, _callers) in stats.items()
                   if name == _EXECUTE)
    print(f'| Python function calls per claim | {calls / n:.0f} |')
    print(f'| statements sent to the database per claim | {executes / n:.2f} |')
    return 0 if refused == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
