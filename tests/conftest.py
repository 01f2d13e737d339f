"""Fixtures every test layer may use: a real PostgreSQL and RabbitMQ, carved per test, and a real Keystone.

See tests/support/backing_services.py for where they come from, and
tests/support/keystone.py for Keystone.
"""
from __future__ import annotations

import logging

import pytest

from cellplane.db import engines, migrate
from tests.support import backing_services as services

# The session's real Keystone, started by the first test that asks for it.
from tests.support.keystone import keystone  # noqa: F401


@pytest.fixture(scope='session')
def postgres_server():
    server = services.find_postgres()
    if not server.reachable():
        services.unavailable(
            f'PostgreSQL at {server.admin_url}',
            'set CELLPLANE_TEST_DB_URL to an admin URL (one that may CREATE '
            'DATABASE), run a Docker engine for testcontainers, or start the '
            'local PostgreSQL')
    yield server
    for name in list(server.created):
        server.drop_database(name)


@pytest.fixture
def postgres_url_factory(postgres_server):
    """Call it to get the URL of a new, empty database; all are dropped after the test."""
    made = []

    def make(purpose: str = 'test') -> str:
        url = postgres_server.create_database(purpose)
        made.append(url)
        return url
    yield make
    for url in made:
        postgres_server.drop_database(url)


@pytest.fixture
def postgres_url(postgres_url_factory):
    return postgres_url_factory()


def _either_engine(request, tmp_path, database: str):
    url = (f'sqlite:///{tmp_path}/{database}.sqlite' if request.param == 'sqlite'
           else request.getfixturevalue('postgres_url'))
    engine = engines.create_engine(url)
    migrate.sync(database, engine)
    yield engine
    engine.dispose()


@pytest.fixture(params=['sqlite', 'postgresql'])
def either_cell_engine(request, tmp_path):
    """A migrated cell database on SQLite, then on PostgreSQL (for SQL that differs by dialect)."""
    yield from _either_engine(request, tmp_path, 'cell')


@pytest.fixture(params=['sqlite', 'postgresql'])
def either_api_engine(request, tmp_path):
    """A migrated API database on SQLite, then on PostgreSQL."""
    yield from _either_engine(request, tmp_path, 'api')


@pytest.fixture(scope='session')
def rabbit_server():
    server = services.find_rabbit()
    if not server.reachable():
        services.unavailable(
            f'RabbitMQ at {server.base_url}',
            'set CELLPLANE_TEST_TRANSPORT_URL (and CELLPLANE_TEST_RABBITMQ_API '
            'for a remote broker\'s management API), run a Docker engine for '
            'testcontainers, or start the local RabbitMQ')
    return server


@pytest.fixture
def transport_url_factory(rabbit_server):
    """Call it to get a transport URL on a new vhost; all are deleted after the test."""
    made = []

    def make(purpose: str = 'test') -> str:
        vhost = rabbit_server.create_vhost(purpose)
        made.append(vhost)
        return rabbit_server.url_for(vhost)
    yield make
    for vhost in made:
        rabbit_server.delete_vhost(vhost)


@pytest.fixture(autouse=True)
def _logging_handlers_left_by_the_test():
    """Take back the root logger's handlers a test added, and drop any handler writing to a closed stream.

    A daemon's ``main`` run in-process sets up oslo.log, which puts a
    StreamHandler on the root logger over the ``sys.stderr`` of that moment:
    a test's capture that is closed when the test ends. Every record logged
    after that (by threads of a deployment shared by later tests) printed a
    "--- Logging error ---" traceback, thousands per run.
    """
    root = logging.getLogger()
    before = list(root.handlers)
    level = root.level
    yield
    for handler in [h for h in root.handlers if h not in before]:
        root.removeHandler(handler)
    root.setLevel(level)
    loggers = [root] + [logger for logger in logging.root.manager.loggerDict.values()
                        if isinstance(logger, logging.Logger)]
    for logger in loggers:
        for handler in list(logger.handlers):
            stream = getattr(handler, 'stream', None)
            if isinstance(handler, logging.StreamHandler) and getattr(stream, 'closed', False):
                logger.removeHandler(handler)


def pytest_sessionfinish(session, exitstatus):
    services.stop_containers()


# The order pytest-xdist hands out files (Makefile: --dist loadfile
# --no-loadscope-reorder): the integration files, which hold most of the
# suite's time in a few files of slow tests, first; the many quick files of
# the other layers last, where they fill the workers' ends. A worker that
# takes a slow file near the end would otherwise hold the whole run up.
LAYER_ORDER = ('tests/integration/', 'tests/functional/', 'tests/unit/')


def _layer(item) -> int:
    path = item.nodeid
    return next((i for i, prefix in enumerate(LAYER_ORDER) if path.startswith(prefix)),
                len(LAYER_ORDER))


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=_layer)   # stable: files and tests keep their order within a layer
