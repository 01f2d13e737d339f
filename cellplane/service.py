"""The daemon runner every cellplane service uses: serve, heartbeat, reload, stop.

A ``Service`` serves one RPC topic (plus the diagnostics ``ping``) on one
transport, as its host and, where one process hosts several hosts (a
hollow compute agent), as each name in ``also_as`` too; it promises:

- SIGTERM or SIGINT: stop consuming at once, let the messages already being
  handled finish (at most ``[DEFAULT] graceful_shutdown_timeout`` seconds,
  0 = no limit), close the transport, and return exit code 0. If the work
  in flight outlives the timeout, the process ends at once with exit code 1
  (its unfinished calls get no answer).
- SIGHUP: re-read the config files' mutable options (``debug``: the log
  level) and run the reload hooks services register (the list of cells...).
- A heartbeat hook, if given, runs every ``[service] report_interval``;
  other periodic tasks given run beside it. All of them stop before the
  transport closes, so none of them sends on a closed transport.

Each service package has a builder (``scheduler/wiring.py``,
``compute_agent/wiring.py``, ``conductor/*/wiring.py``) that returns its
``Service`` from resolved dependencies; the daemon calls ``run``, the
embedded mode and the tests call ``start`` and ``stop`` (several services
sharing one in-memory bus pass ``owns_transport=False``, and stop in two
halves, ``begin_stop`` for all then ``finish_stop`` for each, so that their
executors wind down together).

Signals are only noted by their handler (through ``signal.set_wakeup_fd``);
the main thread acts on them, so no lock is ever taken inside a handler.
"""
from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
from typing import Callable, Iterable, NoReturn

from oslo_config import cfg

from cellplane import metrics
from cellplane.periodic import PeriodicTask
from cellplane.rpc.diagnostics import DiagnosticsEndpoint
from cellplane.rpc.server import build_server

# isort: split
import oslo_messaging as messaging  # after cellplane.rpc's filter

LOG = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
RELOAD_SIGNALS = (signal.SIGHUP,)

PERIODIC_STOP_SECONDS = 5

EXIT_OK = 0
EXIT_SHUTDOWN_TIMEOUT = 1
EXIT_CONFIG_ERROR = 2   # as the daemons' cmd modules: [metrics] cannot be served


class Service:
    """One daemon: an RPC server on ``topic``/``host``, a heartbeat, reload hooks."""

    def __init__(self, conf: cfg.ConfigOpts, *, binary: str, topic: str,
                 transport: messaging.Transport, endpoints: Iterable[object],
                 heartbeat: Callable[[], None] | None = None,
                 periodic_tasks: Iterable[PeriodicTask] = (),
                 host: str | None = None, owns_transport: bool = True,
                 also_as: Iterable[str] = (),
                 in_flight: Iterable[Callable[[], object]] = ()) -> None:
        self.conf = conf
        self.binary = binary
        self.topic = topic
        self.host = host or conf.host
        self._transport = transport
        self._owns_transport = owns_transport
        endpoints = list(endpoints) + [DiagnosticsEndpoint(host=self.host, binary=binary)]
        self._server = build_server(transport, topic=topic, server=self.host,
                                    endpoints=endpoints, also_as=list(also_as))
        self._periodic = list(periodic_tasks)
        if heartbeat:
            self._periodic.insert(0, PeriodicTask(
                f'{binary}-heartbeat', conf.service.report_interval, heartbeat))
        self._reload_hooks: list[tuple[str, Callable[[], None]]] = []
        # More work in flight a stop waits for after the handlers' (a compute
        # agent's copies, which run on threads of their own).
        self._in_flight = list(in_flight)

    def add_reload_hook(self, name: str, hook: Callable[[], None]) -> None:
        """Run ``hook`` on SIGHUP (after the config files are re-read)."""
        self._reload_hooks.append((name, hook))

    def start(self) -> None:
        self._server.start(override_pool_size=self.conf.rpc_handler_threads)
        for task in self._periodic:
            task.start()
        LOG.info('%s serving topic %s as %s with %d handler threads',
                 self.binary, self.topic, self.host, self.conf.rpc_handler_threads)

    def reload(self) -> None:
        LOG.info('%s reloading its configuration', self.binary)
        try:
            self.conf.mutate_config_files()
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - oslo.config exits on some parse errors
            reason = f'{type(exc).__name__}: {exc}'
        else:
            reason = None
        if reason:
            # Logged outside the except block so oslo.log does not repeat it.
            LOG.error('%s could not reload its configuration files (%s); keeping '
                      'the configuration in force. Fix the files and send SIGHUP again.',
                      self.binary, reason)
            return
        for name, hook in self._reload_hooks:
            try:
                hook()
            except Exception:  # a failed reload must not kill the daemon
                LOG.exception('Reload hook %s failed; keeping the previous state', name)
        LOG.info('%s reloaded its configuration', self.binary)

    def stop(self) -> bool:
        """Stop consuming, wait for in-flight work; False if it outlived the timeout."""
        self.begin_stop()
        return self.finish_stop()

    def begin_stop(self) -> None:
        """Stop the periodic tasks and stop consuming; work in flight goes on."""
        timeout = self.conf.graceful_shutdown_timeout or None
        LOG.info('%s stopping: no new messages; waiting up to %s s for work in flight',
                 self.binary, timeout if timeout else 'unlimited')
        for task in self._periodic:
            # Their threads are daemon threads: a task blocked on a broker
            # that is down must not hold the shutdown; a short wait lets a
            # report being sent finish.
            task.stop(timeout=PERIODIC_STOP_SECONDS)
        self._server.stop()

    def finish_stop(self) -> bool:
        """Wait for the work in flight (bounded); close the transport if it is ours."""
        timeout = self.conf.graceful_shutdown_timeout or None
        waiter = threading.Thread(target=self._wait_in_flight, name='shutdown-wait',
                                  daemon=True)
        waiter.start()
        waiter.join(timeout)
        if waiter.is_alive():
            LOG.error('%s: work in flight still running after graceful_shutdown_timeout '
                      '= %s s; exiting without it', self.binary, timeout)
            return False
        if self._owns_transport:
            self._transport.cleanup()
        LOG.info('%s stopped cleanly', self.binary)
        return True

    def _wait_in_flight(self) -> None:
        self._server.wait()
        for wait in self._in_flight:
            wait()

    def run(self) -> int:
        """Serve /metrics if asked, start, then act on signals until told to stop; the exit code."""
        try:
            metrics_server = metrics.serve(self.conf)
        except metrics.MetricsEndpointError as exc:
            LOG.error('%s', exc)
            print(f'{self.binary}: {exc}', file=sys.stderr)
            return EXIT_CONFIG_ERROR
        try:
            return self._serve_until_stopped()
        finally:
            if metrics_server is not None:
                metrics_server.shutdown()

    def _serve_until_stopped(self) -> int:
        with _SignalPipe(STOP_SIGNALS + RELOAD_SIGNALS) as signals:
            self.start()
            while True:
                signum = signals.next()
                if signum in RELOAD_SIGNALS:
                    self.reload()
                elif signum in STOP_SIGNALS:
                    LOG.info('%s received %s', self.binary, signal.Signals(signum).name)
                    if self.stop():
                        return EXIT_OK
                    # The handler threads still running are not daemon threads:
                    # returning would let the interpreter wait for them at exit,
                    # and the bound would mean nothing.
                    exit_process(EXIT_SHUTDOWN_TIMEOUT)


def exit_process(code: int) -> NoReturn:
    """End this daemon's process with ``code`` now, its logs and standard streams flushed.

    A daemon's console script ends here once ``main`` has returned (the
    service stopped, its connections closed). What the interpreter's own
    teardown would do next is free the heap object by object: py-spy showed
    an idle compute agent's main thread busy with no Python frame for 0.8 s
    at load 3, and 1.6-2 s at load 7, after its "stopped cleanly" line, so
    SIGTERM took 2.3-3.2 s to end the process. cellplane registers no
    atexit work; the libraries' (thread pools already stopped) have none
    left to do.
    """
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # closed or gone: nothing to keep
            pass
    os._exit(code)


class _SignalPipe:
    """Signals delivered as bytes on a socket the main thread reads."""

    def __init__(self, signums: Iterable[int]) -> None:
        self._signums = tuple(signums)
        self._previous: dict[int, object] = {}
        self._previous_fd = -1
        self._reader, self._writer = socket.socketpair()
        self._pending: list[int] = []

    def __enter__(self) -> '_SignalPipe':
        self._writer.setblocking(False)
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno())
        for signum in self._signums:
            self._previous[signum] = signal.signal(signum, _note_only)
        return self

    def next(self) -> int:
        while not self._pending:
            self._pending.extend(b for b in self._reader.recv(64) if b in self._signums)
        return self._pending.pop(0)

    def __exit__(self, *exc_info) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        signal.set_wakeup_fd(self._previous_fd)
        self._reader.close()
        self._writer.close()


def _note_only(signum, frame) -> None:
    """The wakeup fd already carries the signal number; nothing else to do here."""
