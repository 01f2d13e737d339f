"""The real ``cellplane-placement`` daemon on a fresh PostgreSQL database:
it starts, serves over HTTP, and stops cleanly on SIGTERM."""
from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from cellplane.db import engines, migrate

EVENTUALLY_SECONDS = 60


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _command(config_path) -> list[str]:
    """The installed console script of this interpreter's environment."""
    script = os.path.join(os.path.dirname(sys.executable), 'cellplane-placement')
    if not os.path.exists(script):
        script = shutil.which('cellplane-placement')
    if script:
        return [script, '--config-file', str(config_path)]
    return [sys.executable, '-m', 'placement.cmd', '--config-file', str(config_path)]


def _call(base: str, method: str, path: str, body=None, token: str | None = 'admin',
          roles: str | None = None):
    """(status, parsed JSON body or None). noauth2: ``roles`` is sent as X-Roles."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header('OpenStack-API-Version', 'placement latest')
    req.add_header('Accept', 'application/json')
    if token:
        req.add_header('X-Auth-Token', token)
    if roles is not None:
        req.add_header('X-Roles', roles)
    if data is not None:
        req.add_header('Content-Type', 'application/json')
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read()
            return resp.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, json.loads(raw) if raw else None


@pytest.fixture
def daemon_config(tmp_path, postgres_url_factory):
    url = postgres_url_factory('placement_daemon')
    engine = engines.create_engine(url)
    try:
        migrate.sync('placement', engine)
    finally:
        engine.dispose()
    port = _free_port()
    config = tmp_path / 'placement.conf'
    config.write_text(
        f'[placement_database]\nconnection = {url}\n'
        f'[api]\nauth_strategy = noauth2\n'
        f'bind_host = 127.0.0.1\nbind_port = {port}\nworkers = 2\n')
    return config, f'http://127.0.0.1:{port}'


def _wait_until_serving(proc, base: str, log_path) -> dict:
    """Poll GET / until the daemon answers 200; its body. Fails with the
    daemon's log if it exits first, or when it takes too long."""
    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        try:
            status, body = _call(base, 'GET', '/', token=None)
            if status == 200:
                return body
        except (urllib.error.URLError, ConnectionError, OSError):
            pass
        assert proc.poll() is None, log_path.read_text()
        assert time.monotonic() < deadline, 'daemon did not serve GET / in time'
        time.sleep(0.2)


@contextlib.contextmanager
def _serving(config, base: str, tmp_path):
    """The daemon started on ``config`` and serving ``base``: (its process, the body of GET /).

    Killed at the end if the test left it running; its log is ``daemon.log``.
    """
    log_path = tmp_path / 'daemon.log'
    with open(log_path, 'wb') as log:
        proc = subprocess.Popen(_command(config), stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT,
                                env={**os.environ, 'PYTHONUNBUFFERED': '1'})
        try:
            yield proc, _wait_until_serving(proc, base, log_path)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_daemon_serves_placement_and_stops_on_sigterm(daemon_config, tmp_path):
    config, base = daemon_config
    with _serving(config, base, tmp_path) as (proc, body):
        assert body['versions'][0]['max_version'] == '1.39'

        rp = str(uuid.uuid4())
        status, body = _call(base, 'POST', '/resource_providers', {'name': 'cn1', 'uuid': rp})
        assert status == 200, body
        status, body = _call(base, 'PUT', f'/resource_providers/{rp}/inventories', {
            'resource_provider_generation': 0,
            'inventories': {'VCPU': {'total': 16, 'allocation_ratio': 4.0},
                            'MEMORY_MB': {'total': 65536}}})
        assert status == 200, body
        assert body['resource_provider_generation'] == 1
        status, body = _call(base, 'GET', f'/resource_providers/{rp}/inventories',
                             token='nova', roles='service')
        assert status == 200
        assert body['inventories']['VCPU']['allocation_ratio'] == 4.0
        assert _call(base, 'GET', '/resource_providers', token=None)[0] == 401
        assert _call(base, 'GET', '/resource_providers', token='user',
                     roles='member,reader')[0] == 403
        with urllib.request.urlopen(base + '/healthcheck', timeout=10) as resp:
            assert resp.status == 200
        status, body = _call(base, 'GET', '/resource_providers?resources=VCPU:64')
        assert [p['uuid'] for p in body['resource_providers']] == [rp]

        # A request that is not valid HTTP is refused by the HTTP server
        # itself: a 400 and the connection closed, no JSON (see
        # placement/README.md). The daemon goes on serving.
        host, port = base.rsplit('/', 1)[1].split(':')
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b'POST /resource_providers HTTP/1.1\r\nHost: x\r\n'
                         b'Content-Type: application/json\r\nContent-Length: hi mom\r\n\r\n{}')
            raw = b''
            while chunk := sock.recv(4096):
                raw += chunk
        assert raw.startswith(b'HTTP/1.1 400')
        assert _call(base, 'GET', f'/resource_providers/{rp}')[0] == 200

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=EVENTUALLY_SECONDS) == 0


def test_keystone_daemon_serves_the_open_paths_and_asks_for_a_token(daemon_config, tmp_path):
    """auth_strategy = keystone as the samples have it, with the options
    the harness passes and an older placement.conf's enforce_scope (which
    oslo.policy 6 no longer has: accepted and ignored, as by the
    reference): / and /healthcheck open, the API 401 with where to get a
    token. (Validating a token needs a Keystone: test_keystone_auth.py
    runs the daemon with a real one, the functional tests with
    keystonemiddleware's fixture.)"""
    config, base = daemon_config
    text = config.read_text().replace('auth_strategy = noauth2', 'auth_strategy = keystone')
    config.write_text(
        text + '[keystone_authtoken]\nwww_authenticate_uri = http://keystone.invalid/v3\n'
        'auth_type = password\nauth_url = http://keystone.invalid/v3\nusername = placement\n'
        'password = secret\nproject_name = service\n'
        '[oslo_policy]\nenforce_new_defaults = true\nenforce_scope = true\n'
        '[cors]\nallowed_origin = http://valid.example.com\n'
        'allow_headers = openstack-api-version\n')
    with _serving(config, base, tmp_path) as (proc, body):
        assert body['versions'][0]['id'] == 'v1.0'
        with urllib.request.urlopen(base + '/healthcheck', timeout=10) as resp:
            assert resp.status == 200
        req = urllib.request.Request(base + '/resource_providers')
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=10)
        assert refused.value.code == 401
        assert refused.value.headers['WWW-Authenticate'] == \
            'Keystone uri="http://keystone.invalid/v3"'
        preflight = urllib.request.Request(base + '/resource_providers', method='OPTIONS', headers={
            'Origin': 'http://valid.example.com', 'Access-Control-Request-Method': 'GET'})
        with urllib.request.urlopen(preflight, timeout=10) as resp:
            assert resp.headers['Access-Control-Allow-Origin'] == 'http://valid.example.com'
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=EVENTUALLY_SECONDS) == 0


def _children(pid: int) -> list[int]:
    try:
        with open(f'/proc/{pid}/task/{pid}/children') as f:
            return [int(p) for p in f.read().split()]
    except FileNotFoundError:
        return []


def _alive(pid: int) -> bool:
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='PR_SET_PDEATHSIG is Linux only')
def test_workers_die_with_a_killed_main_process(daemon_config, tmp_path):
    # SIGKILL leaves no chance to stop the workers; they must not go on
    # serving the port beside the next daemon.
    config, base = daemon_config
    workers = []
    with _serving(config, base, tmp_path) as (proc, _):
        try:
            workers = _children(proc.pid)
            assert len(workers) == 2
            proc.kill()
            proc.wait()
            deadline = time.monotonic() + EVENTUALLY_SECONDS
            while any(_alive(w) for w in workers):
                assert time.monotonic() < deadline, 'workers outlived their main process'
                time.sleep(0.1)
        finally:
            for w in workers:
                if _alive(w):
                    os.kill(w, signal.SIGKILL)


def test_bad_configuration_exits_2_with_a_message(tmp_path):
    config = tmp_path / 'placement.conf'
    config.write_text('[placement_database]\nconnection = sqlite:////nonexistent/x.db\n'
                      '[api]\nauth_strategy = tokens\n')
    proc = subprocess.run(_command(config), capture_output=True, text=True,
                          timeout=EVENTUALLY_SECONDS)
    assert proc.returncode == 2
    assert f'[api] auth_strategy (in {config})' in proc.stderr
    assert "'tokens' (the static token file) was removed" in proc.stderr
    # keystone (the default) with no [keystone_authtoken] to validate tokens with.
    config.write_text('[placement_database]\nconnection = sqlite:////nonexistent/x.db\n')
    proc = subprocess.run(_command(config), capture_output=True, text=True,
                          timeout=EVENTUALLY_SECONDS)
    assert proc.returncode == 2
    assert '[keystone_authtoken] www_authenticate_uri' in proc.stderr
    config.write_text('[api]\nauth_strategy = kerberos\n')
    proc = subprocess.run(_command(config), capture_output=True, text=True,
                          timeout=EVENTUALLY_SECONDS)
    assert proc.returncode == 2
    assert 'auth_strategy' in proc.stderr


def _metrics(port: int) -> dict[tuple, float]:
    from prometheus_client.parser import text_string_to_metric_families
    with urllib.request.urlopen(f'http://127.0.0.1:{port}/metrics', timeout=10) as resp:
        text = resp.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_the_main_process_serves_the_request_counts_of_every_worker(daemon_config, tmp_path):
    config, base = daemon_config
    metrics_port = _free_port()
    config.write_text(config.read_text() + f'[metrics]\nbind_port = {metrics_port}\n')
    with _serving(config, base, tmp_path) as (proc, _):
        workers = _children(proc.pid)
        assert len(workers) == 2
        before = _metrics(metrics_port)

        def counter_files():
            return {os.path.basename(p) for p in glob.glob(os.path.join(
                tempfile.gettempdir(), 'cellplane-placement-metrics-*', 'counter_*.db'))}
        expected_files = {f'counter_{w}.db' for w in workers}
        # Eight at a time, each on its own connection. The kernel decides which
        # worker accepts each connection, so one worker may take a whole round:
        # send rounds of 40 until both have served some (a worker writes its
        # counter file on its first request), and count every request sent.
        sent = 0
        with ThreadPoolExecutor(8) as pool:
            for _ in range(25):
                statuses = list(pool.map(
                    lambda _: _call(base, 'GET', f'/resource_providers/{uuid.uuid4()}')[0],
                    range(40)))
                assert statuses == [404] * 40
                sent += 40
                if expected_files <= counter_files():
                    break
        assert _call(base, 'GET', '/no/such/route')[0] == 404

        after = _metrics(metrics_port)

        def count(samples, **labels):
            return samples.get(('cellplane_placement_requests_total',
                                tuple(sorted(labels.items()))), 0.0)
        route = {'method': 'GET', 'route': '/resource_providers/{uuid}', 'status': '404'}
        assert count(after, **route) - count(before, **route) == sent
        assert count(after, method='GET', route='unmatched', status='404') == 1
        # Each worker wrote its counts to the main process's directory.
        assert expected_files <= counter_files()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=EVENTUALLY_SECONDS) == 0

