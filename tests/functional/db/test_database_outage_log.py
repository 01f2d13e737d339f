"""A database outage is said once: one WARNING when it stops answering, one INFO when it is back.

The engine every daemon builds (``cellplane.db.engines.create_engine``) on
a real PostgreSQL, reached through a TCP proxy that is stopped (connections
dropped, then refused) and started again. Issue 28, finding 6.
"""
from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from cellplane.db import engines
from tests.support.tcp_proxy import TcpProxy

QUERIES_DURING_THE_OUTAGE = 6


def _select_one(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text('SELECT 1')).scalar_one()


def test_many_failing_queries_log_one_warning_and_one_info(postgres_url, caplog):
    real = make_url(postgres_url)
    proxy = TcpProxy(real.host or '127.0.0.1', real.port or 5432).start()
    through_proxy = real.set(host='127.0.0.1', port=proxy.port)
    engine = engines.create_engine(through_proxy.render_as_string(hide_password=False),
                                   connect_timeout=2)
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    try:
        assert _select_one(engine) == 1
        proxy.stop()
        for _ in range(QUERIES_DURING_THE_OUTAGE):
            with pytest.raises(sa.exc.OperationalError):
                _select_one(engine)
        proxy.start()
        assert _select_one(engine) == 1
        assert _select_one(engine) == 1
    finally:
        engine.dispose()
        proxy.stop()
    said = [(r.levelname, r.getMessage()) for r in caplog.records
            if r.name == 'cellplane.outage']
    assert [level for level, _ in said] == ['WARNING', 'INFO'], said
    shown = through_proxy.render_as_string(hide_password=True)
    assert said[0][1].startswith(f'Database at {shown} is not answering: ')
    assert said[1][1].startswith(f'Database at {shown} answers again, after ')
    if real.password:
        assert real.password not in said[0][1] + said[1][1]
