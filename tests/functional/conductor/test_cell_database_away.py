"""A cell conductor whose database goes away for a few seconds loses no build result and logs no traceback.

The cell conductor's endpoint on a real PostgreSQL cell database reached
through a TCP proxy that is stopped (connections dropped, then refused) and
started again a moment later: a database restart, as the conductor sees it.
Issue 27, item 3.
"""
from __future__ import annotations

import logging
import threading
import time
import types
import uuid as uuidlib

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from cellplane.context import RequestContext
from cellplane.db import engines, migrate
from cellplane.db.cell.models import instances as instances_table
from cellplane.objects import instances
from cellplane.rpc.serializer import PayloadSerializer
from cellplane.rpc.server import ShapeCheckingDispatcher
from conductor.cell.manager import CellConductorManager
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.instance_update import InstanceUpdate
from tests.support.tcp_proxy import TcpProxy

# isort: split
import oslo_messaging as messaging


@pytest.fixture
def cell(postgres_url):
    """(proxy, engine): a migrated cell database reached through ``proxy``."""
    real = make_url(postgres_url)
    proxy = TcpProxy(real.host or '127.0.0.1', real.port or 5432).start()
    url = real.set(host='127.0.0.1', port=proxy.port).render_as_string(hide_password=False)
    engine = engines.create_engine(url, pool_size=2, max_overflow=0, connect_timeout=2)
    migrate.sync('cell', engine)
    try:
        yield proxy, engine
    finally:
        engine.dispose()
        proxy.stop()


def _building(engine) -> str:
    uuid = str(uuidlib.uuid4())
    with engine.begin() as conn:
        instances.create_instances(conn, [Instance(
            uuid=uuid, project_id='proj', user_id='alice', display_name='web',
            flavor=Flavor(name='small', vcpus=1, memory_mb=512, root_gb=1),
            host='cmp1', node='cmp1')])
    return uuid


def _vm_state(engine, uuid: str) -> str:
    with engine.connect() as conn:
        return conn.execute(sa.select(instances_table.c.vm_state).where(
            instances_table.c.uuid == uuid)).scalar_one()


def test_a_build_result_sent_while_the_database_is_away_is_written_when_it_is_back(
        cell, caplog):
    proxy, engine = cell
    uuid = _building(engine)
    manager = CellConductorManager(engine=engine, rescheduler=None, compute=None,
                                   database_retry_timeout=30)
    caplog.set_level(logging.INFO)
    proxy.stop()
    back = threading.Timer(1.5, proxy.start)
    back.start()
    began = time.monotonic()
    try:
        manager.instance_update(RequestContext(), InstanceUpdate(
            instance_uuid=uuid, vm_state='active', host='cmp1', node='cmp1'))
    finally:
        back.join()
    assert time.monotonic() - began >= 1.0   # it waited for the database
    assert _vm_state(engine, uuid) == 'active'
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.name for r in loud] == ['cellplane.outage'], [r.getMessage() for r in loud]
    assert not any(r.exc_info for r in caplog.records)


def test_past_the_bound_the_handler_fails_without_a_traceback(cell, caplog):
    proxy, engine = cell
    uuid = _building(engine)
    manager = CellConductorManager(engine=engine, rescheduler=None, compute=None,
                                   database_retry_timeout=0.5)
    dispatcher = ShapeCheckingDispatcher([manager], PayloadSerializer(),
                                         messaging.DefaultRPCAccessPolicy)
    update = InstanceUpdate(instance_uuid=uuid, vm_state='active', host='cmp1', node='cmp1')
    incoming = types.SimpleNamespace(
        ctxt=RequestContext().to_wire(), client_timeout=None, msg_id=None,
        message={'method': 'instance_update', 'namespace': manager.target.namespace,
                 'version': manager.target.version,
                 'args': {'update': PayloadSerializer().serialize_entity(None, update)}})
    proxy.stop()
    try:
        # oslo.messaging logs an ExpectedException at DEBUG, without its traceback.
        with pytest.raises(messaging.ExpectedException) as raised:
            dispatcher.dispatch(incoming)
    finally:
        proxy.start()
    assert isinstance(raised.value.exc_info[1], sa.exc.OperationalError)
    assert _vm_state(engine, uuid) == 'building'
