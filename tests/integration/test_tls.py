"""TLS on every connection that leaves a process, with a CA the test makes and throws away.

Once per module the test makes its CA (and a rogue one), and starts a
RabbitMQ node and a PostgreSQL server of its own (``tests/support/
private_engines.py``: the shared ones are never reconfigured) that speak
TLS only, with a certificate of its CA: the node has no plain AMQP
listener, the server's ``pg_hba.conf`` only ``hostssl`` lines.

A deployment's real daemons then run over them: every database URL asks
``sslmode=verify-full`` with the CA as ``sslrootcert``, every file
``[oslo_messaging_rabbit] ssl = true`` with the CA as ``ssl_ca_file``,
Placement and the compute API serve HTTPS (``[api] ssl_cert_file``,
``ssl_key_file``) and every client of Placement trusts the CA alone
(``[placement] cafile``). Servers booted over the compute API's HTTPS
become ACTIVE, and the engines say every connection of the deployment was
TLS.

Then each kind of connection meets a server presenting a certificate of
the rogue CA (``tests/support/rogue_tls.py``) and refuses it, saying why:
a daemon's broker, a daemon's database, a daemon's Placement.
"""
from __future__ import annotations

import concurrent.futures
import time

import pytest
import requests
import sqlalchemy as sa

from cellplane.db import engines, migrate
from tests.integration.daemons import (
    UNUSED_PLACEMENT,
    cell_conductor_config,
    compute_config,
)
from tests.support.deployment import EVENTUALLY_SECONDS, ComputePlan, Deployment
from tests.support.private_engines import PrivatePostgres, PrivateRabbit
from tests.support.rogue_tls import RogueTLSServer
from tests.support.throwaway_ca import ThrowawayCA

BOOTED = 3


@pytest.fixture(scope='module')
def pki(tmp_path_factory):
    """The test's CA with a server certificate for 127.0.0.1 and localhost, and a rogue CA's."""
    base = tmp_path_factory.mktemp('pki')
    ca = ThrowawayCA.create(base / 'ca', 'cellplane test CA')
    rogue = ThrowawayCA.create(base / 'rogue', 'rogue CA')
    return {'ca': ca.cert_file, 'server': ca.issue('server'), 'rogue': rogue.issue('server')}


@pytest.fixture(scope='module')
def engines_over_tls(tmp_path_factory, pki):
    """A private RabbitMQ node and PostgreSQL server, TLS only; started side by side."""
    rabbit = PrivateRabbit(tmp_path_factory.mktemp('rabbit'), pki['server'])
    postgres = PrivatePostgres(pki['server'])
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        started = [pool.submit(rabbit.start), pool.submit(postgres.start)]
        errors = [f.exception() for f in started]
    try:
        for error in errors:
            if error is not None:
                raise error
        yield rabbit, postgres
    finally:
        rabbit.stop()
        postgres.stop()


@pytest.fixture(scope='module')
def rabbit_tls(pki):
    """``[oslo_messaging_rabbit]`` of every process: TLS, trusting the test's CA alone."""
    return {'ssl': True, 'ssl_ca_file': pki['ca']}


@pytest.fixture(scope='module')
def deployment(tmp_path_factory, pki, engines_over_tls, rabbit_tls):
    rabbit, postgres = engines_over_tls
    deployment = Deployment(
        tmp_path_factory.mktemp('tls'), rabbit.server(), postgres.server(),
        [ComputePlan('tls-a', 'cell1')], placement_workers=1,
        compute_api=True, https=pki['server'], rabbit_options=rabbit_tls)
    deployment.create()
    try:
        yield deployment
    finally:
        deployment.destroy()


def _api(deployment, pki, method: str, path: str, body=None, *, token: str = 'demo:demo'):
    return requests.request(method, deployment.compute_api_url + path, json=body, timeout=30,
                            verify=str(pki['ca']),
                            headers={'X-Auth-Token': token,
                                     'OpenStack-API-Version': 'compute 2.1'})


def test_servers_boot_with_every_connection_over_tls(deployment, engines_over_tls, pki):
    rabbit, postgres = engines_over_tls
    assert deployment.compute_api_url.startswith('https://')
    assert deployment.placement_url.startswith('https://')

    created = _api(deployment, pki, 'POST', '/v2.1/flavors', {'flavor': {
        'name': 'tiny', 'id': 'tiny', 'ram': 128, 'vcpus': 1, 'disk': 1}}, token='admin:admin')
    assert created.status_code == 200, created.text
    booted = _api(deployment, pki, 'POST', '/v2.1/servers', {'server': {
        'name': 'over-tls', 'flavorRef': 'tiny', 'imageRef': 'cirros',
        'min_count': BOOTED, 'max_count': BOOTED}})
    assert booted.status_code == 202, booted.text
    # The API knows it is served over HTTPS: the links it gives say so.
    assert booted.headers['Location'].startswith(deployment.compute_api_url + '/')

    deadline = time.monotonic() + EVENTUALLY_SECONDS
    while True:
        servers = _api(deployment, pki, 'GET', '/v2.1/servers/detail?name=over-tls').json()
        statuses = sorted(s['status'] for s in servers['servers'])
        if statuses == ['ACTIVE'] * BOOTED:
            break
        assert 'ERROR' not in statuses, servers
        assert time.monotonic() < deadline, f'not all ACTIVE: {statuses}'
        time.sleep(0.3)
    # Each is claimed in Placement, over HTTPS.
    placement = deployment.placement()
    for server in servers['servers']:
        assert placement.get_allocations(server['id']), server['id']

    # Every connection the deployment's daemons hold to PostgreSQL is TLS
    # (the server would refuse another, but the client chose verify-full).
    admin = engines.create_engine(postgres.url())
    try:
        with admin.connect() as conn:
            rows = conn.execute(sa.text(
                'SELECT a.application_name, s.ssl FROM pg_stat_activity a '
                'JOIN pg_stat_ssl s USING (pid) WHERE a.datname LIKE :names'),
                {'names': 'cp_%'}).all()
    finally:
        admin.dispose()
    by_daemon = {name for name, _ in rows}
    assert {'cellplane-placement', 'cellplane-scheduler', 'cellplane-api'} <= by_daemon, rows
    assert all(ssl for _, ssl in rows), rows

    # Every broker connection is TLS too, the top's and the cell's users alike.
    connections = rabbit.connections()
    users = {c['user'] for c in connections}
    assert {deployment.vhosts['top'], deployment.vhosts['cell1']} <= users, connections
    assert all(c['ssl'] == 'true' for c in connections), connections

    # Placement serves HTTPS only: plain HTTP on its port gets no answer.
    with pytest.raises(requests.ConnectionError):
        requests.get(deployment.placement_url.replace('https://', 'http://') + '/',
                     timeout=5)


@pytest.fixture(scope='module')
def cell_db(engines_over_tls):
    """A cell database with its schema on the private server, reached over verified TLS."""
    _, postgres = engines_over_tls
    server = postgres.server()
    url = server.create_database('cell')
    engine = engines.create_engine(url)
    try:
        migrate.sync('cell', engine)
    finally:
        engine.dispose()
    yield url
    server.drop_database(url)


@pytest.fixture
def cell_vhost(engines_over_tls):
    """A vhost (and its user's URL) on the private node."""
    rabbit, _ = engines_over_tls
    server = rabbit.server()
    vhost = server.create_vhost('cell')
    yield server.url_for(vhost)
    server.delete_vhost(vhost)


def test_a_daemon_refuses_a_broker_whose_certificate_its_ca_did_not_sign(
        cell_db, daemons, pki, rabbit_tls):
    with RogueTLSServer(pki['rogue']) as rogue:
        sections = cell_conductor_config(
            f'rabbit://cell:secret@127.0.0.1:{rogue.port}/cell1', cell_db, host='rogue-bus')
        sections['oslo_messaging_rabbit'] = dict(rabbit_tls)
        code, stderr = daemons.conductor('rogue-bus', sections).run_to_exit()
    assert code == 1, stderr
    assert f'cannot use the message bus at rabbit://cell:***@127.0.0.1:{rogue.port}/cell1' \
        in stderr, stderr
    assert f'the broker at 127.0.0.1:{rogue.port} presented a certificate that ' \
        f'[oslo_messaging_rabbit] ssl_ca_file ({pki["ca"]}) does not verify: ' \
        'unable to get local issuer certificate' in stderr, stderr
    assert rogue.handshakes >= 1


def test_a_daemon_refuses_a_database_whose_certificate_its_ca_did_not_sign(
        cell_vhost, daemons, pki, rabbit_tls):
    with RogueTLSServer(pki['rogue'], protocol='postgres') as rogue:
        db_url = (f'postgresql+psycopg2://postgres@127.0.0.1:{rogue.port}/cell'
                  f'?sslmode=verify-full&sslrootcert={pki["ca"]}')
        sections = cell_conductor_config(cell_vhost, db_url, host='rogue-db')
        sections['oslo_messaging_rabbit'] = dict(rabbit_tls)
        conductor = daemons.conductor('rogue-db', sections).start()
        # A database it cannot use is an outage it says once and retries
        # (as for a database that is down), with the cause.
        line = conductor.wait_for_log(r'cellplane\.outage.*Database at')[0]
        assert f'postgres@127.0.0.1:{rogue.port}/cell?sslmode=verify-full' in line, line
        assert 'SSL error: certificate verify failed' in line, line
        assert rogue.handshakes >= 1
        conductor.stop()


def test_a_daemon_refuses_a_placement_whose_certificate_its_ca_did_not_sign(
        cell_db, cell_vhost, daemons, pki, rabbit_tls):
    with RogueTLSServer(pki['rogue']) as rogue:
        rogue_placement = {**UNUSED_PLACEMENT, 'cafile': pki['ca'],
                           'endpoint_url': f'https://127.0.0.1:{rogue.port}'}
        conductor = cell_conductor_config(cell_vhost, cell_db, host='cell-conductor')
        compute = compute_config(cell_vhost, host='rogue-placement')
        for sections in (conductor, compute):
            sections['placement'] = rogue_placement
            sections['oslo_messaging_rabbit'] = dict(rabbit_tls)
        daemons.conductor('cell-conductor', conductor).start().wait_until_serving()
        agent = daemons.compute('rogue-placement', compute).start()
        line = agent.wait_for_log(r'cellplane\.outage.*Placement at')[0]
        assert f'Placement at https://127.0.0.1:{rogue.port} is not answering: ' \
            'certificate verify failed: unable to get local issuer certificate' in line, line
        report = agent.wait_for_log(r'Resource report of rogue-placement failed')[0]
        assert 'TLS certificate verify failed' in report, report
        assert rogue.handshakes >= 1


def test_placement_given_a_key_of_another_certificate_refuses_to_start(daemons, pki):
    daemon = daemons.placement('bad-pair', {
        'placement_database': {'connection': 'sqlite:///unused.sqlite'},
        'api': {'auth_strategy': 'noauth2', 'ssl_cert_file': pki['server'].cert,
                'ssl_key_file': pki['rogue'].key},
    })
    code, stderr = daemon.run_to_exit()
    assert code == 2, stderr
    assert f'[api] ssl_cert_file and ssl_key_file, in {daemon.config_path}: ' \
        f'{pki["server"].cert} and {pki["rogue"].key} are not a PEM certificate and its ' \
        'unencrypted key' in stderr, stderr
