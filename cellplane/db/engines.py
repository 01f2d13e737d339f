"""SQLAlchemy engines that give the same guarantees on SQLite and PostgreSQL.

PostgreSQL runs at READ COMMITTED with a sized pool. SQLite is used by the
embedded mode and the fast functional tests; there every transaction starts
with ``BEGIN IMMEDIATE`` so that concurrent writers queue on the database
lock instead of failing half-way (with SQLite's default deferred BEGIN a
read-then-write transaction cannot upgrade its lock and loses the race).

A PostgreSQL engine reports to ``cellplane.outage``: a connection that
cannot be made, or that the server dropped, is a failure; a new connection
made is an answer. So a database outage is one WARNING per database and
process, and its end one INFO with how long it lasted.

A PostgreSQL engine's pool is bounded (``pool_size`` kept, ``max_overflow``
more while threads wait): a thread that finds it full for ``pool_timeout``
seconds gets ``PoolExhausted``, one line naming the options that size it
(``pool_options``). A thread that finds ``pool_size`` busy first waits
``OVERFLOW_GRACE_SECONDS`` for one given back before it opens another.
Of the connections opened beyond ``pool_size``, a
process keeps ``IDLE_OVERFLOW_PER_PROCESS`` idle (or what its role sets
with ``keep_idle_overflow``), its pools together, for
``OVERFLOW_IDLE_SECONDS`` after their last use (``_IdleReaper`` closes
them then); the rest are closed as they are given back. So a burst does
not open and close a PostgreSQL backend for each transaction beyond
``pool_size`` (about 4 ms of the server's CPU each here; a boot opened
about one before), and at rest the pool is back to ``pool_size``. Each
connection carries this process's ``application_name``
(``name_process``), so ``pg_stat_activity`` says who holds what.
"""
from __future__ import annotations

import logging
import math
import os
import sys
import threading
import time
import weakref

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.pool import QueuePool
from sqlalchemy.util import queue as sqla_queue

from cellplane import outage
from cellplane.db import liveness

LOG = logging.getLogger(__name__)

#: PostgreSQL keeps the first 63 bytes of an application_name.
APPLICATION_NAME_MAX = 63

_process_name = os.path.basename(sys.argv[0] or 'python')[:APPLICATION_NAME_MAX]


class DatabaseNotConfigured(Exception):
    """A service needs a database connection that its config does not give."""


class PoolExhausted(sa.exc.TimeoutError):
    """Every connection this process may hold to a database is in use, and stayed so."""


def name_process(name: str) -> None:
    """Name the PostgreSQL connections made from now on (``application_name``)."""
    global _process_name
    _process_name = name[:APPLICATION_NAME_MAX]


def process_name() -> str:
    return _process_name


#: Seconds a connection opened beyond ``pool_size`` stays open after its last use.
OVERFLOW_IDLE_SECONDS = 10.0
#: Seconds a thread waits for one of the ``pool_size`` connections to come back
#: before it opens one beyond them (PgBouncer's ``reserve_pool_timeout``, in
#: spirit). A transaction here holds its connection for a few milliseconds; a
#: backend opened and closed costs PostgreSQL about 4 ms of CPU and the opener
#: a round trip per step of the handshake, so under load waiting is cheaper.
OVERFLOW_GRACE_SECONDS = 0.05
#: Connections beyond their pools' ``pool_size`` one process keeps idle, its pools
#: together: every process counts against the server's max_connections (at ten
#: cells, 4 per process took the connection budget's run to 100 of 100; 1, 78).
IDLE_OVERFLOW_PER_PROCESS = 1
_RETURNED_AT = 'cellplane.returned_at'
# This process's own bound, when its role sets one (``keep_idle_overflow``).
_idle_overflow_bound: int | None = None


def keep_idle_overflow(connections: int) -> None:
    """Let this process keep up to ``connections`` idle beyond its pools' sizes.

    For a process that is one of its kind in a deployment and whose every
    thread goes from one database to another (the super conductor: the API
    database, then a cell's, then the API's again). With the default one,
    each of its transactions beyond ``pool_size`` opened a PostgreSQL backend
    and closed it (``move_bench.py``: 363 connections opened in one run);
    that bound stays for the processes that grow in number with the cells.
    """
    global _idle_overflow_bound
    if connections < 0:
        raise ValueError(f'idle connections to keep must be 0 or more, not {connections}')
    _idle_overflow_bound = connections


def idle_overflow_bound() -> int:
    """How many idle connections beyond its pools' sizes this process keeps, its pools together."""
    return IDLE_OVERFLOW_PER_PROCESS if _idle_overflow_bound is None else _idle_overflow_bound


class _BoundedPool(QueuePool):
    """A QueuePool whose exhaustion says which options size it, in one line; its overflow closed once idle.

    Built with room for ``pool_size + max_overflow`` connections kept (and
    no overflow of SQLAlchemy's own), handed out last returned first, so
    that the connections a burst opened beyond ``keep`` (the configured
    ``pool_size``) go idle at the bottom of the queue, where ``reap_idle``
    closes them after ``idle_seconds``. A thread that finds ``keep`` open,
    none free and room for more waits ``overflow_grace`` for one to come
    back before it opens another.
    """

    pool_options = ''
    keep = 0
    idle_seconds = OVERFLOW_IDLE_SECONDS

    overflow_grace = OVERFLOW_GRACE_SECONDS
    # Threads in _do_get: a connection given back while any is there is kept
    # for it, not closed (the queue may still count one a woken thread has
    # yet to take).
    _asking = 0
    _asking_lock = threading.Lock()

    def _do_get(self):
        with self._asking_lock:
            self._asking += 1
        try:
            # With ``keep`` open, none free and room for more, a connection
            # given back within the grace is taken rather than a backend opened
            # (and closed again). At the cap, QueuePool's own wait follows.
            opened = self.size() + self._overflow
            if self.overflow_grace > 0 and opened and self.keep <= opened < self.size():
                try:
                    return self._pool.get(True, self.overflow_grace)
                except sqla_queue.Empty:
                    pass
            return super()._do_get()
        finally:
            with self._asking_lock:
                self._asking -= 1

    def _do_return_conn(self, record) -> None:
        if (self._pool.qsize() >= self.keep and not self._asking
                and _IdleReaper.idle_overflow() >= idle_overflow_bound()):
            # The process keeps enough idle already: closed as it is given back.
            try:
                record.close()
            finally:
                self._dec_overflow()
            return
        record.info[_RETURNED_AT] = time.monotonic()
        super()._do_return_conn(record)

    def idle_overflow(self) -> int:
        """Idle connections beyond ``keep``."""
        return max(0, self._pool.qsize() - self.keep)

    def reap_idle(self, now: float) -> int:
        """Close the connections beyond ``keep`` idle for ``idle_seconds``, oldest first; how many."""
        queue = self._pool
        stale = []
        with queue.mutex:
            # Returned connections are appended: the oldest are on the left.
            for record in list(queue.queue)[:max(0, len(queue.queue) - self.keep)]:
                if now - record.info.get(_RETURNED_AT, now) < self.idle_seconds:
                    break
                queue.queue.remove(record)
                stale.append(record)
        for record in stale:
            try:
                record.close()
            finally:
                self._dec_overflow()
        return len(stale)

    def connect(self):
        try:
            return super().connect()
        except PoolExhausted:
            raise
        except sa.exc.TimeoutError:
            raise PoolExhausted(
                f'all {self.size() + self._max_overflow} connections this process may '
                f'hold to database {self._database_name} stayed in use for '
                f'{self._timeout:g} s; raise {self.pool_options or "pool_size, max_overflow"} '
                f'or lower the threads that share them') from None

    def recreate(self) -> QueuePool:
        fresh = super().recreate()
        fresh.pool_options = self.pool_options
        fresh._database_name = self._database_name
        fresh.keep, fresh.idle_seconds = self.keep, self.idle_seconds
        fresh.overflow_grace = self.overflow_grace
        _IdleReaper.watch(fresh)
        return fresh

    _database_name = '?'


class _IdleReaper:
    """One daemon thread per process that closes every pool's idle overflow (``_BoundedPool.reap_idle``)."""

    _pools: weakref.WeakSet = weakref.WeakSet()
    _lock = threading.Lock()
    _thread: threading.Thread | None = None

    @classmethod
    def watch(cls, pool: _BoundedPool) -> None:
        with cls._lock:
            cls._pools.add(pool)
            if cls._thread is None or not cls._thread.is_alive():
                cls._thread = threading.Thread(target=cls._run, name='db-idle-reaper',
                                               daemon=True)
                cls._thread.start()

    @classmethod
    def forget_after_fork(cls) -> None:
        """In a forked child: no reaper thread yet, and none of the parent's pools (its connections)."""
        cls._pools = weakref.WeakSet()
        cls._lock = threading.Lock()
        cls._thread = None

    @classmethod
    def idle_overflow(cls) -> int:
        """Idle connections beyond their pool's ``keep``, every pool of this process together."""
        with cls._lock:
            pools = list(cls._pools)
        return sum(pool.idle_overflow() for pool in pools)

    @classmethod
    def _run(cls) -> None:
        while True:
            time.sleep(OVERFLOW_IDLE_SECONDS / 2)
            now = time.monotonic()
            for pool in list(cls._pools):
                try:
                    pool.reap_idle(now)
                except Exception:
                    # A pool disposed meanwhile: the next round looks again.
                    LOG.debug('Could not close idle connections of %s', pool, exc_info=True)


os.register_at_fork(after_in_child=_IdleReaper.forget_after_fork)


# SQLAlchemy names a pool's logger after its class's module, so this one is
# outside the ``sqlalchemy`` logger kept at WARNING: its "Pool disposed" and
# "Pool recreating" INFO lines reached every CLI command's stderr.
logging.getLogger(f'{_BoundedPool.__module__}.{_BoundedPool.__name__}').setLevel(logging.WARNING)


def create_engine(url: str, *, pool_size: int = 10, max_overflow: int = 20,
                  pool_timeout: float = 30.0, pool_options: str = '',
                  echo: bool = False, connect_timeout: float | None = None) -> Engine:
    """Return an engine for ``url`` (SQLite file or memory, or PostgreSQL).

    ``connect_timeout`` (seconds, PostgreSQL) bounds each connection attempt:
    without it an unroutable address waits for the kernel's TCP timeout
    (minutes). libpq counts whole seconds, at least 2. ``pool_options``
    names the options that size the pool (``[cell_databases] pool_size,
    max_overflow``), for the error when it is exhausted.
    """
    if not url:
        raise DatabaseNotConfigured('no database connection URL given')
    parsed = make_url(url)
    if parsed.get_backend_name() == 'sqlite':
        return _sqlite_engine(parsed, echo=echo, pool_size=pool_size,
                              max_overflow=max_overflow)
    connect_args: dict = {}
    if parsed.get_backend_name() == 'postgresql':
        connect_args['application_name'] = _process_name
        if connect_timeout is not None:
            connect_args['connect_timeout'] = max(2, math.ceil(connect_timeout))
    if parsed.drivername == 'postgresql':
        # SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3; cellplane
        # ships psycopg2, so an operator's plain URL must mean that.
        parsed = parsed.set(drivername='postgresql+psycopg2')
    # Room for every connection the pool may hold, kept last-used-first; the
    # ones beyond pool_size are closed once idle (_BoundedPool.reap_idle).
    engine = sa.create_engine(
        parsed, poolclass=_BoundedPool, pool_size=pool_size + max_overflow, max_overflow=0,
        pool_use_lifo=True, pool_timeout=pool_timeout, echo=echo, future=True,
        connect_args=connect_args)
    engine.pool.pool_options = pool_options
    engine.pool._database_name = parsed.database or '?'
    engine.pool.keep = pool_size
    _IdleReaper.watch(engine.pool)
    # Not pool_pre_ping: a ping on every checkout costs a round trip per
    # transaction; only connections that sat idle are checked.
    liveness.ping_after_idle(engine)
    if parsed.get_backend_name() == 'postgresql':
        event.listen(engine, 'connect', _no_jit)
    _report_outages(engine, parsed.render_as_string(hide_password=True))
    return engine


def _report_outages(engine: Engine, url: str) -> None:
    """Tell ``cellplane.outage`` when the database stops answering and when it answers again."""
    database = outage.dependency('Database', url)

    @event.listens_for(engine, 'handle_error')
    def _failed(context) -> None:
        # No connection: connecting failed. A disconnect: the server dropped it.
        if context.connection is None or context.is_disconnect:
            reason = (str(context.original_exception).strip().splitlines() or [''])[0]
            database.failed(reason or type(context.original_exception).__name__)

    @event.listens_for(engine, 'connect')
    def _answered(dbapi_conn, record) -> None:
        database.answered()


def _no_jit(dbapi_conn, _record) -> None:
    """Turn PostgreSQL's JIT compiler off for this session.

    PostgreSQL (12 and later, when built with LLVM) compiles a query once its
    estimated cost passes ``jit_above_cost``. Our queries are short index
    lookups whose estimates grow with the tables: measured on a Placement
    candidates query over 200 providers, JIT spent 15.8 ms compiling a query
    that runs in 3.9 ms without it.
    """
    if getattr(dbapi_conn, 'server_version', 0) < 110000:
        return   # no JIT before PostgreSQL 11
    cursor = dbapi_conn.cursor()
    try:
        cursor.execute('SET jit = off')
    finally:
        cursor.close()
    dbapi_conn.commit()   # a SET inside a rolled-back transaction is undone


def _sqlite_engine(url, *, echo: bool, pool_size: int, max_overflow: int) -> Engine:
    kwargs = {}
    if url.database and url.database != ':memory:':
        os.makedirs(os.path.dirname(os.path.abspath(url.database)), exist_ok=True)
        # SQLAlchemy's default for a file is 5 + 10 connections: the embedded
        # mode's threads (a thousand hosts' reports, sixteen handler threads
        # per service) ran it dry. Sized as for PostgreSQL instead; writers
        # still queue on SQLite's lock (BEGIN IMMEDIATE, busy_timeout).
        kwargs = {'pool_size': pool_size, 'max_overflow': max_overflow}
    engine = sa.create_engine(
        url, echo=echo, future=True,
        connect_args={'check_same_thread': False, 'timeout': 30}, **kwargs)

    @event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, _record):
        # Let SQLAlchemy, not pysqlite, decide when a transaction begins.
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        cursor.execute('PRAGMA foreign_keys=ON')
        cursor.execute('PRAGMA busy_timeout=30000')
        if url.database and url.database != ':memory:':
            cursor.execute('PRAGMA journal_mode=WAL')
            cursor.execute('PRAGMA synchronous=NORMAL')
        cursor.close()

    @event.listens_for(engine, 'begin')
    def _on_begin(conn):
        conn.exec_driver_sql('BEGIN IMMEDIATE')

    return engine


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == 'sqlite'
