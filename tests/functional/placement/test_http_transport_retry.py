"""HttpTransport against real sockets on 127.0.0.1: a refused port, a Placement back within the bound."""
from __future__ import annotations

import http.server
import socket
import threading
import time

import pytest

from placement.client import HttpTransport, PlacementUnreachable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def test_the_error_after_the_retry_bound_is_one_line_naming_placement_and_why():
    port = _free_port()
    t = HttpTransport(f'http://127.0.0.1:{port}', attempts=None, retry_timeout=0.3,
                      max_wait=0.05)
    with pytest.raises(PlacementUnreachable) as err:
        t.request('GET', '/allocation_candidates?resources=VCPU:1')
    message = str(err.value)
    assert message.startswith(f'placement at http://127.0.0.1:{port} unreachable after ')
    assert message.endswith(': Connection refused')
    assert 'HTTPConnectionPool' not in message and '\n' not in message


def test_placement_back_within_the_retry_bound_fails_nothing():
    port = _free_port()

    class Ok(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', '2')
            self.end_headers()
            self.wfile.write(b'{}')

        def log_message(self, *args):
            pass

    servers = []

    def start_late():
        time.sleep(0.5)
        server = http.server.HTTPServer(('127.0.0.1', port), Ok)
        servers.append(server)
        server.serve_forever(poll_interval=0.05)

    threading.Thread(target=start_late, daemon=True).start()
    try:
        t = HttpTransport(f'http://127.0.0.1:{port}', attempts=None, retry_timeout=10,
                          max_wait=0.1)
        assert t.request('GET', '/').status == 200
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
