"""Fixtures for tests that run real daemons: launchers, cell databases, client transports.

Vhosts and databases come from the shared fixtures in tests/conftest.py
(``transport_url_factory``, ``postgres_url_factory``): one of each per test,
removed afterwards, and a skip (or a failure under CI) naming what to set
when RabbitMQ or PostgreSQL is not reachable.
"""
from __future__ import annotations

import pytest

from cellplane import config
from cellplane.db import engines, migrate
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import get_transport
from tests.integration.daemons import DaemonLauncher
from tests.support.rabbit_cluster import RabbitCluster

# Fixtures whose resources daemons use: set up before ``daemons`` so that
# pytest tears them down after it (a daemon whose vhost is deleted under it
# logs a storm of connection errors and is slow to stop).
RESOURCE_FIXTURES = ('transport_url_factory', 'postgres_url_factory', 'cell_db_factory',
                     'sqlite_cell_db')


@pytest.fixture
def daemons(tmp_path, request):
    """Start daemons with ``daemons.conductor(...)``/``daemons.compute(...)``; all stopped after."""
    for name in RESOURCE_FIXTURES:
        if name in request.fixturenames:
            request.getfixturevalue(name)
    launcher = DaemonLauncher(tmp_path)
    yield launcher
    launcher.stop_all()


@pytest.fixture(scope='module')
def own_rabbit(tmp_path_factory):
    """A RabbitMQ node of this module's own, as the harness's ``RabbitServer``.

    For tests that stop and start their broker (``restart_app``): done to
    the broker every test shares, the tests running beside them would feel
    it, so they had to run alone before the others (a minute of CI). A lone
    node of ``tests/support/rabbit_cluster.py`` (its own ports, data and
    cookie), removed after the module.
    """
    cluster = RabbitCluster(tmp_path_factory.mktemp('own-rabbit'), size=1).start()
    try:
        yield cluster.server()
    finally:
        cluster.destroy()


@pytest.fixture
def cell_db_factory(postgres_url_factory):
    """Call it to get the URL of a new PostgreSQL database with the cell schema."""
    def make(purpose: str = 'cell') -> str:
        url = postgres_url_factory(purpose)
        engine = engines.create_engine(url)
        try:
            migrate.sync('cell', engine)
        finally:
            engine.dispose()
        return url
    return make


@pytest.fixture
def sqlite_cell_db(tmp_path):
    """A cell database in a SQLite file, for tests where the DB is not the subject."""
    url = f'sqlite:///{tmp_path}/cell.sqlite'
    engine = engines.create_engine(url)
    try:
        migrate.sync('cell', engine)
    finally:
        engine.dispose()
    return url


@pytest.fixture
def client_transport_factory():
    """Call it with a transport URL to get an RPC transport for this test process.

    The process's global config is loaded without files first: clients read
    ``[upgrade_levels]`` and transports need oslo.messaging's options there.
    """
    config.load([], prog='cellplane-tests', setup_logging=False,
                registrars=[rpc_options.register_opts])
    made = []

    def make(url: str):
        transport = get_transport(url)
        made.append(transport)
        return transport
    yield make
    for transport in made:
        transport.cleanup()
