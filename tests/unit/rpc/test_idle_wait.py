"""How a long wait of cellplane.rpc.idle_wait ends: on data, on a stop, or on its timeout.

A stand-in for the driver's connection whose broker socket is one end of a
real socketpair, and a recorder in place of the driver's own ``consume``:
what is checked is the wait before the driver's read and what it hands over.
"""
from __future__ import annotations

import socket
import threading
import time
from types import SimpleNamespace

import pytest

from cellplane.rpc import idle_wait

DEADLINE_SECONDS = 30


class Connection:
    """The attributes of impl_rabbit.Connection that idle_wait reads."""

    def __init__(self, sock, poll_timeout: float = 300.0) -> None:
        transport = SimpleNamespace(sock=sock, _read_buffer=b'')
        self.connection = SimpleNamespace(_connection=SimpleNamespace(transport=transport))
        self._poll_timeout = poll_timeout
        self._new_tags: set = set()
        self._consume_loop_stopped = False

    def stop_consuming(self):
        self._consume_loop_stopped = True


@pytest.fixture
def broker_socket():
    ours, broker = socket.socketpair()
    yield ours, broker
    ours.close()
    broker.close()


@pytest.fixture
def handed_over(monkeypatch):
    """The timeouts the driver's consume was called with, in order."""
    calls: list[float | None] = []
    monkeypatch.setattr(idle_wait, '_original_consume',
                        lambda conn, timeout=None: calls.append(timeout))
    monkeypatch.setattr(idle_wait, '_original_stop_consuming', Connection.stop_consuming)
    return calls


def _consume_in_background(conn, timeout: float) -> threading.Thread:
    thread = threading.Thread(target=idle_wait.consume, args=(conn,),
                              kwargs={'timeout': timeout}, daemon=True)
    thread.start()
    return thread


def test_data_on_the_socket_ends_the_wait_and_the_driver_reads_with_the_whole_timeout(
        broker_socket, handed_over):
    ours, broker = broker_socket
    conn = Connection(ours)
    waiting = _consume_in_background(conn, 300)
    time.sleep(0.2)
    assert waiting.is_alive() and handed_over == []
    broker.send(b'frame')
    waiting.join(DEADLINE_SECONDS)
    assert not waiting.is_alive()
    assert handed_over == [300]


def test_a_stop_ends_the_wait_and_the_driver_sees_the_flag(broker_socket, handed_over):
    ours, _ = broker_socket
    conn = Connection(ours)
    waiting = _consume_in_background(conn, 300)
    time.sleep(0.2)
    assert waiting.is_alive()
    idle_wait.stop_consuming(conn)
    waiting.join(DEADLINE_SECONDS)
    assert not waiting.is_alive()
    assert conn._consume_loop_stopped
    # Handed over as it was: the driver returns at once on the flag.
    assert handed_over == [300]


def test_a_stop_before_the_wait_is_seen_without_waiting(broker_socket, handed_over):
    ours, _ = broker_socket
    conn = Connection(ours)
    idle_wait.stop_consuming(conn)
    waiting = _consume_in_background(conn, 300)
    waiting.join(DEADLINE_SECONDS)
    assert not waiting.is_alive() and handed_over == [300]


def test_a_wait_that_passes_with_nothing_leaves_the_driver_a_moment(broker_socket, handed_over):
    ours, _ = broker_socket
    idle_wait.consume(Connection(ours), timeout=idle_wait.POLL_FROM_SECONDS)
    assert handed_over == [idle_wait._MOMENT_SECONDS]


def test_poll_never_waits_past_the_drivers_longest_read(broker_socket, handed_over):
    ours, _ = broker_socket
    started = time.monotonic()
    idle_wait.consume(Connection(ours, poll_timeout=0.4), timeout=300)
    # Ended by the 0.4 s cap (the deadline is liveness: far below 300 s).
    assert time.monotonic() - started < DEADLINE_SECONDS
    assert handed_over == [idle_wait._MOMENT_SECONDS]


def test_consumers_to_declare_are_left_to_the_driver_with_a_short_read(
        broker_socket, handed_over):
    ours, _ = broker_socket
    conn = Connection(ours)
    conn._new_tags = {'tag'}
    idle_wait.consume(conn, timeout=300)
    assert handed_over == [idle_wait.DECLARE_SECONDS]


@pytest.mark.parametrize('why', ['short wait', 'bytes buffered', 'no connection'])
def test_the_wait_is_the_drivers_alone_when_the_socket_is_not_the_whole_story(
        broker_socket, handed_over, why):
    ours, _ = broker_socket
    conn = Connection(ours)
    timeout = 300
    if why == 'short wait':
        timeout = 0.2
    elif why == 'bytes buffered':
        conn.connection._connection.transport._read_buffer = b'partial frame'
    else:
        conn.connection = None
    started = time.monotonic()
    idle_wait.consume(conn, timeout=timeout)
    assert time.monotonic() - started < DEADLINE_SECONDS
    assert handed_over == [timeout]


def test_a_second_stop_on_a_woken_pipe_does_not_block(broker_socket, handed_over):
    ours, _ = broker_socket
    conn = Connection(ours)
    idle_wait._wake_pipe(conn)
    for _ in range(100_000):   # more than a pipe holds
        idle_wait.stop_consuming(conn)
    assert conn._consume_loop_stopped


def test_it_is_installed_over_this_oslo_messaging():
    from cellplane.rpc import transport  # noqa: F401 - installs it, as every daemon does
    assert idle_wait.installed()
    assert not idle_wait.replaceable(lambda self, timeout=None: None)


def test_a_socket_closed_under_the_wait_is_left_to_the_driver_to_find(handed_over):
    ours, broker = socket.socketpair()
    broker.close()
    ours.close()
    started = time.monotonic()
    idle_wait.consume(Connection(ours), timeout=300)
    assert time.monotonic() - started < DEADLINE_SECONDS
    # The driver's read meets the closed connection and reconnects.
    assert handed_over == [300]


def test_the_broker_closing_its_end_ends_the_wait(broker_socket, handed_over):
    ours, broker = broker_socket
    waiting = _consume_in_background(Connection(ours), 300)
    time.sleep(0.2)
    broker.close()
    waiting.join(DEADLINE_SECONDS)
    assert not waiting.is_alive()
    assert handed_over == [300]
