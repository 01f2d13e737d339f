"""A server presenting a certificate of another CA: what a client that checks certificates must refuse.

    with RogueTLSServer(rogue_cert, protocol='postgres') as rogue:
        url = f'...@127.0.0.1:{rogue.port}/...'

It completes TCP, and for ``postgres`` the protocol's ``SSLRequest``
(answered ``S``), then offers the TLS handshake with its certificate and
nothing more: a client that trusts only its own CA ends there, so the
server never needs to speak AMQP, PostgreSQL or HTTP. ``handshakes``
counts the clients that came, so a test knows its client did reach it.
"""
from __future__ import annotations

import socket
import ssl
import threading

from tests.support.throwaway_ca import Issued

POSTGRES_SSL_REQUEST = bytes.fromhex('0000000804d2162f')


class RogueTLSServer:
    def __init__(self, cert: Issued, *, protocol: str = 'tls') -> None:
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert.cert, cert.key)
        self.protocol = protocol
        self.listener = socket.create_server(('127.0.0.1', 0))
        self.listener.settimeout(0.2)   # so that __exit__ is seen promptly
        self.port = self.listener.getsockname()[1]
        self.handshakes = 0
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True,
                                        name=f'rogue-{protocol}-{self.port}')

    def __enter__(self) -> RogueTLSServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._closing.set()
        self._thread.join(timeout=5)
        self.listener.close()

    def _serve(self) -> None:
        while not self._closing.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            threading.Thread(target=self._greet, args=(conn,), daemon=True).start()

    def _greet(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            try:
                if self.protocol == 'postgres':
                    if conn.recv(8) != POSTGRES_SSL_REQUEST:
                        return
                    conn.sendall(b'S')
                self.handshakes += 1
                with self.context.wrap_socket(conn, server_side=True):
                    pass
            except (OSError, ssl.SSLError):
                pass   # the client refused our certificate: what the test wants
