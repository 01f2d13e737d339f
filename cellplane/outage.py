"""Say an outage once: one WARNING when a dependency stops answering, one INFO when it is back.

A daemon reaches Placement, the broker and its databases from many threads
and clients, each retrying on its own; what the operator needs in the log
is when a dependency went away and for how long, not a line per attempt.
``dependency(what, url)`` gives the process's one ``Dependency`` for that
URL; every caller reports to it:

- ``failed(reason)`` on an attempt the dependency did not answer: the first
  of an outage logs a WARNING naming it and its URL (password masked), the
  others only count;
- ``answered()`` on an attempt it answered: the first after an outage logs
  an INFO with how long it was away and how many attempts failed; otherwise
  it costs a lock and a comparison.

Messages go to the logger ``cellplane.outage``.
"""
from __future__ import annotations

import logging
import re
import sys
import threading
import time
from typing import Callable

LOG = logging.getLogger(__name__)

# user:password@ after the scheme or between the hosts of a broker URL.
_CREDENTIALS = re.compile(r'(?P<lead>//|,)(?P<user>[^:/@,]*):[^@/]*@')


def mask(url: str) -> str:
    """``url`` with every password replaced by ``***``."""
    return _CREDENTIALS.sub(lambda m: f'{m["lead"]}{m["user"]}:***@', url)


class Dependency:
    """The answering state of one dependency (Placement, a broker, a database) in this process."""

    def __init__(self, what: str, url: str, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.what = what
        self.url = mask(url)
        self._clock = clock
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._back_at: float | None = None
        self._failures = 0

    @property
    def down(self) -> bool:
        """True between a failure and the next answer."""
        with self._lock:
            return self._down_since is not None

    def answered_within(self, seconds: float) -> bool:
        """True if it answers again after an outage that ended less than ``seconds`` ago."""
        with self._lock:
            return (self._down_since is None and self._back_at is not None
                    and self._clock() - self._back_at < seconds)

    def failed(self, reason: str, *, seconds_ago: float = 0.0, attempts: int = 1) -> None:
        """``attempts`` attempts were not answered (refused, timed out, 503...).

        ``seconds_ago``: how long ago the first of them was made, if not
        now; an outage that begins with them is counted from it.
        """
        with self._lock:
            self._failures += attempts
            if self._down_since is not None:
                return
            self._down_since = self._clock() - max(0.0, seconds_ago)
        _say(logging.WARNING, '%s at %s is not answering: %s; retrying, and saying here '
             'when it answers again', self.what, self.url, reason)

    def answered(self) -> None:
        """An attempt was answered."""
        with self._lock:
            if self._down_since is None:
                return
            self._back_at = self._clock()
            away = self._back_at - self._down_since
            failures, self._failures, self._down_since = self._failures, 0, None
        _say(logging.INFO, '%s at %s answers again, after %.1f s away (%d attempt(s) '
             'failed meanwhile)', self.what, self.url, away, failures)


def _say(level: int, msg: str, *args) -> None:
    """Log one line, without the exception its caller may be handling."""
    if sys.exc_info()[0] is None:
        LOG.log(level, msg, *args)
        return
    # Callers report from their except blocks, and oslo.log appends the
    # exception being handled to a WARNING: the reason is already in the
    # line, so it is said from a thread that handles none.
    sayer = threading.Thread(target=LOG.log, args=(level, msg, *args), name='outage-log')
    sayer.start()
    sayer.join()


_LOCK = threading.Lock()
_DEPENDENCIES: dict[tuple[str, str], Dependency] = {}


def dependency(what: str, url: str) -> Dependency:
    """The process's one ``Dependency`` for ``what`` at ``url`` (created on first use)."""
    key = (what, mask(url))
    with _LOCK:
        found = _DEPENDENCIES.get(key)
        if found is None:
            found = _DEPENDENCIES[key] = Dependency(what, url)
        return found
