"""A Placement outage is said once in the client's log: one WARNING when it goes, one INFO when it is back.

A real Placement app served on 127.0.0.1, stopped and started again on the
same port; the client is the one every daemon builds (``PlacementClient``
over HTTP). Issue 28, finding 6: during a 13 s Placement outage no daemon
logged a WARNING.
"""
from __future__ import annotations

import logging
import socket
import threading
from wsgiref import simple_server

import pytest

from placement.client import PlacementClient, PlacementUnreachable
from placement.wsgi import make_app

CALLS_DURING_THE_OUTAGE = 12


class _Quiet(simple_server.WSGIRequestHandler):
    def log_message(self, *args):
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class _Placement:
    """Placement's WSGI app on a fixed port, which can be stopped and started."""

    def __init__(self, engine, port: int) -> None:
        self.app = make_app(engine, auth_strategy='noauth2')
        self.port = port
        self.server = None

    def start(self) -> None:
        self.server = simple_server.make_server('127.0.0.1', self.port, self.app,
                                                handler_class=_Quiet)
        threading.Thread(target=self.server.serve_forever,
                         kwargs={'poll_interval': 0.02}, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _outage_lines(caplog) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records
            if r.name == 'cellplane.outage']


def test_many_failing_calls_log_one_warning_and_one_info(engine, caplog):
    port = _free_port()
    url = f'http://127.0.0.1:{port}'
    placement = _Placement(engine, port)
    placement.start()
    client = PlacementClient.over_http(url, attempts=2, max_wait=0.01)
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    try:
        assert client.list_providers() == []
        placement.stop()
        for _ in range(CALLS_DURING_THE_OUTAGE):
            with pytest.raises(PlacementUnreachable):
                client.list_providers()
        [(level, said)] = _outage_lines(caplog)
        assert level == 'WARNING'
        assert said.startswith(f'Placement at {url} is not answering: Connection refused')

        placement.start()
        assert client.list_providers() == []
        assert client.list_providers() == []
    finally:
        placement.stop()
    lines = _outage_lines(caplog)
    assert [level for level, _ in lines] == ['WARNING', 'INFO']
    back = lines[1][1]
    assert back.startswith(f'Placement at {url} answers again, after ')
    assert f'({2 * CALLS_DURING_THE_OUTAGE} attempt(s) failed meanwhile)' in back
