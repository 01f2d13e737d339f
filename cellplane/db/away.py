"""A database that went away (restarted, cut, refusing connections): telling it apart, waiting it out.

``is_away(exc)`` says whether a SQLAlchemy error means the database could
not be reached (a connection refused, dropped mid-transaction, a server
shutting down or not accepting connections), as opposed to a fault in the
statement or the data. Only those are worth sending again unchanged.

``again_if_dropped(call)`` runs ``call`` once more when the server dropped
a connection it was using (terminated, restarted): a request's one retry on
a fresh connection, not a wait through an outage (a database still away
fails the second attempt at once).

``retry_while_away(call, timeout=...)`` runs ``call`` and, while it fails
with such an error, runs it again with backoff (0.1 s doubling up to 2 s)
for at most ``timeout`` seconds; then the last error is raised. ``call``
must be one whole transaction: a dropped connection rolls back what it had
not committed, so running it again is running it once. (A commit whose
acknowledgement was lost is the one case where the work was done; callers
whose writes are not idempotent say how they tell.) Each failure is already
reported to ``cellplane.outage`` by the engine (one WARNING per outage), so
nothing more is logged here.
"""
from __future__ import annotations

import sys
import time
from typing import Callable, TypeVar

import tenacity

T = TypeVar('T')

# libpq's and PostgreSQL's words for a server that is not there (yet, or any more).
_AWAY_WORDS = (
    'could not connect', 'connection refused', 'server closed the connection',
    'terminating connection', 'the database system is starting up',
    'the database system is shutting down', 'the database system is in recovery',
    'is not currently accepting connections', 'connection to server',
    'ssl connection has been closed', 'connection already closed', 'timeout expired',
    'no connection to the server', 'could not receive data from server',
    'could not send data to server',
)
# SQLSTATEs of the same: connection exceptions, admin/crash shutdown, cannot connect now.
_AWAY_SQLSTATES = ('08', '57P01', '57P02', '57P03')


def is_away(exc: BaseException) -> bool:
    """True when ``exc`` says the database could not be reached, not that the statement was wrong."""
    # Looked up, not imported: the RPC server and periodic tasks ask this of
    # every error, and a compute agent, which holds no database, need not pay
    # SQLAlchemy's import at every start. Without it loaded, no error is a database's.
    sa = sys.modules.get('sqlalchemy')
    if sa is None:
        return False
    if isinstance(exc, sa.exc.DisconnectionError):
        return True
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    code = getattr(exc.orig, 'pgcode', None) or ''
    if code and (code.startswith(_AWAY_SQLSTATES[0]) or code in _AWAY_SQLSTATES[1:]):
        return True
    if not isinstance(exc, (sa.exc.OperationalError, sa.exc.InterfaceError)):
        return False
    text = str(exc.orig).lower()
    return any(word in text for word in _AWAY_WORDS)


def first_line(exc: BaseException) -> str:
    """The driver's first line of ``exc``: what an operator reads in a fault or a log."""
    inner = getattr(exc, 'orig', None) or exc
    lines = str(inner).strip().splitlines()
    return lines[0].strip() if lines else type(inner).__name__


def dropped(exc: BaseException) -> bool:
    """True when ``exc`` says the server dropped a connection in use (not: none could be made)."""
    sa = sys.modules.get('sqlalchemy')
    return (sa is not None and isinstance(exc, sa.exc.DBAPIError)
            and exc.connection_invalidated)


def again_if_dropped(call: Callable[[], T], *,
                     done: Callable[[], bool] | None = None) -> T | None:
    """``call()``, and once more if the server dropped its connection on the way.

    ``call`` must be reads, or one whole transaction. When the drop may have
    come after a commit (the acknowledgement lost), ``done()`` says whether
    the work is there: then ``call`` is not run again and None is returned.
    """
    try:
        return call()
    except Exception as exc:
        if not dropped(exc):
            raise
    if done is not None and done():
        return None
    return call()


def retry_while_away(call: Callable[[], T], *, timeout: float,
                     sleep: Callable[[float], None] = time.sleep) -> T:
    """``call()``, sent again while the database is away, for at most ``timeout`` seconds."""
    if timeout <= 0:
        return call()
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_away),
        wait=tenacity.wait_exponential(multiplier=0.1, max=2.0),
        stop=tenacity.stop_after_delay(timeout),
        sleep=sleep, reraise=True)
    return retrying(call)
