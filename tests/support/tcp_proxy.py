"""A TCP proxy on 127.0.0.1 that can be stopped and started: a dependency that goes away and comes back.

Stopping closes the listening socket and every connection through it (the
client sees its connections dropped, then refused); starting listens on the
same port again and forwards new connections to the same target.
``swallow(marker)`` makes a black hole of each connection on which a
client sends ``marker`` (a method's name in a message): from that chunk
on, what the client sends there is kept (``swallowed``) rather than
forwarded, and the connection stays open, so that a client waiting for an
answer (a publish confirm) waits; other connections go on. ``stop`` drops
it all.
"""
from __future__ import annotations

import socket
import threading


class TcpProxy:
    def __init__(self, target_host: str, target_port: int, port: int = 0) -> None:
        """``port``: where to listen once started (0: any free port, chosen at the first start)."""
        self.target = (target_host, target_port)
        self.port = port
        self._listener: socket.socket | None = None
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._markers: tuple[bytes, ...] = ()
        self._holes: set[socket.socket] = set()
        self._swallowed = bytearray()

    def swallow(self, *markers: bytes) -> None:
        """Keep, rather than forward, what a client sends from its first chunk holding a marker."""
        with self._lock:
            self._markers = markers

    def swallowed(self) -> bytes:
        """What clients sent since ``swallow`` (never forwarded)."""
        with self._lock:
            return bytes(self._swallowed)

    def start(self) -> 'TcpProxy':
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(('127.0.0.1', self.port))
        listener.listen(16)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def stop(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._open = self._open, []
            self._markers = ()
            self._holes = set()
            self._swallowed = bytearray()
        if listener is not None:
            try:
                # Wakes the accepting thread (close alone leaves it listening).
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return   # stopped
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open += [client, upstream]
            for src, dst, outbound in ((client, upstream, True), (upstream, client, False)):
                threading.Thread(target=self._pump, args=(src, dst, outbound),
                                 daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, outbound: bool) -> None:
        try:
            while data := src.recv(65536):
                with self._lock:
                    if outbound and (src in self._holes
                                     or any(m in data for m in self._markers)):
                        self._holes.add(src)
                        self._swallowed += data
                        continue
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
