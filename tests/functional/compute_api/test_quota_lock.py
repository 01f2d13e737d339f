"""Which creates take the project's quota lock: those a limit counts, not those of an unlimited project.

The API database on SQLite, then PostgreSQL (where an uncounted create
without a group writes in one statement outside a transaction), and the
super conductor's RPC API on kombu's memory transport (nobody consumes
the cast here); the lock's contention under concurrent creates is
tests/integration/test_compute_api_daemon.py's.
"""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from cellplane import config
from cellplane.context import RequestContext
from cellplane.db.api.models import build_requests, instance_mappings, quota_locks, request_specs
from cellplane.objects import flavors
from cellplane.rpc import options as rpc_options
from cellplane.rpc.transport import get_transport
from cellplane_api import quotas, servers
from conductor import conf as conductor_conf
from conductor.super.rpcapi import SuperConductorAPI

UNLIMITED = {r: quotas.UNLIMITED for r in quotas.RESOURCES}


@pytest.fixture
def api_engine(either_api_engine):
    flavors.create(either_api_engine, name='small', vcpus=1, memory_mb=512, flavorid='small')
    return either_api_engine


@pytest.fixture
def conductor():
    # The global configuration: oslo.messaging's RPC clients read their tracing options there.
    conf = config.load([], prog='test', setup_logging=False,
                       registrars=[conductor_conf.register_opts, rpc_options.register_opts])
    transport = get_transport('kombu+memory:////', conf)
    yield SuperConductorAPI(transport, conf=conf)
    transport.cleanup()


def _create(api_engine, conductor, driver, project: str, count: int = 1) -> list[str]:
    ctxt = RequestContext(user_id='u', project_id=project)
    return servers.create(api_engine, conductor, ctxt, name='web', flavor='small', count=count,
                          project_id=project, user_id='u', quotas=driver)


def _written(api_engine, uuids) -> set[str]:
    """The uuids of ``uuids`` with a build request, a request spec and a mapping."""
    with api_engine.connect() as conn:
        return set.intersection(*(set(conn.execute(
            sa.select(table.c.instance_uuid).where(table.c.instance_uuid.in_(uuids))).scalars())
            for table in (build_requests, request_specs, instance_mappings)))


def _locked_projects(api_engine) -> set[str]:
    with api_engine.connect() as conn:
        return set(conn.execute(sa.select(quota_locks.c.project_id)).scalars())


def test_an_unlimited_project_creates_without_the_lock_and_a_limited_one_takes_it(
        api_engine, conductor):
    driver = quotas.DatabaseQuotas(api_engine, UNLIMITED, placement=None)
    driver.set_limits('limited', {quotas.INSTANCES: 3})
    free = _create(api_engine, conductor, driver, 'free', count=5)
    assert len(free) == 5 and _written(api_engine, free) == set(free)
    one = _create(api_engine, conductor, driver, 'free')
    assert _written(api_engine, one) == set(one)
    limited = _create(api_engine, conductor, driver, 'limited', count=2)
    assert len(limited) == 2 and _written(api_engine, limited) == set(limited)
    assert _locked_projects(api_engine) == {'limited'}


def test_a_limited_default_counts_every_project(api_engine, conductor):
    driver = quotas.DatabaseQuotas(api_engine, {**UNLIMITED, quotas.INSTANCES: 2},
                                   placement=None)
    first = _create(api_engine, conductor, driver, 'p', count=2)
    with pytest.raises(quotas.QuotaExceeded, match='Quota exceeded for instances'):
        _create(api_engine, conductor, driver, 'p')
    assert _locked_projects(api_engine) == {'p'}
    with api_engine.connect() as conn:     # the refused create wrote nothing
        assert set(conn.execute(sa.select(build_requests.c.instance_uuid)).scalars()) == set(
            first)

