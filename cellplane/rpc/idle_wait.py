"""An idle consumer waits up to 5 s between wakes, and a stop wakes it at once.

oslo.messaging (18.x) waits on an idle queue with a timeout that doubles up
to ``amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX`` (5 s), sitting in a blocking
socket read, and ``Connection.stop_consuming`` only sets a flag read between
two waits: a daemon told to stop waited up to 5 s for its listener and 5 s
more for its reply waiter (issue 28: an idle compute agent took 9-12 s to
stop). cellplane first capped the wait at 0.5 s. Each wake that times out
runs kombu's and the driver's retry wrappers and raises a timeout through
them, and a daemon has a listener and a reply waiter per bus: at 10 cells x
500 hosts, these wakes were half of all the daemons' py-spy samples (33 of 65)
while nothing happened. With this module, the same deployment idled at
2.2-2.4 % of a core against 3.9-4.1 % (``boot_bench.py``, in turns), and an
idle compute agent stops 0.02-0.03 s after SIGTERM against 0.67-0.72 s.

With ``install()``, a long wait (from ``POLL_FROM_SECONDS``) first waits in
``poll()`` on the broker socket and on a pipe of the connection's own, then
hands over to the driver's wait: at once when the socket has data (a message
is read as soon as it comes, as before), with a timeout of a moment when the
wait passed with nothing (the driver then sends its heartbeat and raises its
timeout, as before, once per wait). ``stop_consuming`` writes to the pipe, so
a stopped consumer returns at once however long its wait. A poll() is never
longer than the driver's own longest read (``_poll_timeout``, what its
heartbeats allow). The wait is left to the driver as it is whenever the
socket cannot be waited on alone: no connection yet, consumers not yet
declared (the driver then declares them and reads for ``DECLARE_SECONDS``
only), bytes of a frame already read, TLS bytes already decrypted.

It installs only over the driver's methods it was written from (the SHA-256
of oslo.messaging 18.3's ``Connection.consume``); with another, the idle wait
is capped at ``FALLBACK_IDLE_SECONDS`` instead, as before.
"""
from __future__ import annotations

import os
import select
import ssl
import threading
import weakref

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.rpc import known_source

# isort: split
from oslo_messaging._drivers import amqpdriver, impl_rabbit

# sha256 of inspect.getsource(impl_rabbit.Connection.consume) in oslo.messaging 18.3.1.
KNOWN_CONSUME_SOURCE = 'a29963678e663a75db0a349806d68b5e3c82976fc88a7858f8b6b1ec35820c16'
# Waits this long or longer go through poll(); shorter ones (the ramp after
# a message: 50, 100, 200 ms) are left to the driver.
POLL_FROM_SECONDS = 0.35
# The idle cap when the driver's methods are not the ones this module knows.
FALLBACK_IDLE_SECONDS = 0.5
# The driver's read when it has consumers to declare (after a connection or
# a reconnection) before a long wait.
DECLARE_SECONDS = 0.05
# What is left to the driver's read after a poll() that saw nothing.
_MOMENT_SECONDS = 0.001

_original_consume = impl_rabbit.Connection.consume
_original_stop_consuming = impl_rabbit.Connection.stop_consuming
_pipes_lock = threading.Lock()
_PIPE_ATTRIBUTE = '_cellplane_wake_pipe'


class WakePipe:
    """A pipe a stopping thread writes to, so a thread in poll() on it returns."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self.write_fd, False)
        # Closed with the connection that holds it.
        weakref.finalize(self, _close_fds, self.read_fd, self.write_fd)

    def wake(self) -> None:
        try:
            os.write(self.write_fd, b'x')
        except (BlockingIOError, OSError):   # full (already woken) or closed: nothing to do
            pass

    def drain(self) -> None:
        try:
            while os.read(self.read_fd, 512):
                pass
        except (BlockingIOError, OSError):
            pass


def _close_fds(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def _wake_pipe(connection) -> WakePipe:
    with _pipes_lock:
        pipe = connection.__dict__.get(_PIPE_ATTRIBUTE)
        if pipe is None:
            pipe = WakePipe()
            setattr(connection, _PIPE_ATTRIBUTE, pipe)
        return pipe


def _socket_alone(connection):
    """The broker socket when waiting on it alone is a complete wait; None otherwise."""
    kombu_connection = connection.connection
    if kombu_connection is None:
        return None
    amqp_connection = getattr(kombu_connection, '_connection', None)
    transport = getattr(amqp_connection, 'transport', None)
    sock = getattr(transport, 'sock', None)
    if sock is None or getattr(transport, '_read_buffer', b''):
        return None
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return None
    return sock


def _wait(sock, pipe: WakePipe, seconds: float) -> tuple[bool, bool]:
    """Wait for the pipe or the socket: (the pipe was written to, the socket has data).

    ``poll()``, not ``select()``: a process with more than 1,024 open files
    has descriptors ``select()`` refuses. A socket closed meanwhile counts as
    data: the driver's read then meets the error and reconnects.
    """
    poller = select.poll()
    try:
        poller.register(sock, select.POLLIN)
        poller.register(pipe.read_fd, select.POLLIN)
        events = poller.poll(seconds * 1000)
    except (OSError, ValueError):
        return False, True
    fds = {fd for fd, _ in events}
    return pipe.read_fd in fds, bool(fds - {pipe.read_fd})


def consume(self, timeout=None):
    """The driver's ``consume``; a long wait in poll(), ended by data or by a stop."""
    if timeout is not None and timeout >= POLL_FROM_SECONDS:
        if self.connection is not None and self._new_tags:
            # The driver declares the consumers first; its read is then kept
            # short, so that the next wait is one a stop can end.
            return _original_consume(self, timeout=min(timeout, DECLARE_SECONDS))
        sock = _socket_alone(self)
        if sock is not None:
            pipe = _wake_pipe(self)
            # The pipe exists before the flag is read: a stop from now on wakes it.
            if not self._consume_loop_stopped:
                woken, data = _wait(sock, pipe, min(timeout, self._poll_timeout))
                if woken:
                    pipe.drain()
                if not data and not self._consume_loop_stopped:
                    timeout = _MOMENT_SECONDS
    return _original_consume(self, timeout=timeout)


def stop_consuming(self):
    """The driver's ``stop_consuming``, and a consumer waiting in poll() woken."""
    _original_stop_consuming(self)
    with _pipes_lock:
        pipe = self.__dict__.get(_PIPE_ATTRIBUTE)
    if pipe is not None:
        pipe.wake()


def replaceable(method=None) -> bool:
    """Whether ``method`` (the driver's ``consume``) is the one this module wraps."""
    return known_source.matches(_original_consume if method is None else method,
                                KNOWN_CONSUME_SOURCE)


def installed() -> bool:
    return impl_rabbit.Connection.consume is consume


def install() -> bool:
    """Wrap the driver's waits (idempotent); False, the idle wait capped instead, where unknown."""
    if not replaceable():
        amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX = min(amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX,
                                                       FALLBACK_IDLE_SECONDS)
        return False
    impl_rabbit.Connection.consume = consume
    impl_rabbit.Connection.stop_consuming = stop_consuming
    return True
