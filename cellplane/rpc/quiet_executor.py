"""The RPC servers' thread pool: futurist's, whose idle threads sleep until work or a stop comes.

futurist's worker threads wait for work in turns of ``MAX_IDLE_FOR``
seconds and only between two turns see that their pool is stopping. A
short turn makes a stop prompt (``cellplane.rpc.server`` had set it to
0.25 s) but wakes every idle thread four times a second: with eight
handler threads in each of twenty daemons (ten cells), that was a third of
the idle CPU of the compute agents and cell conductors (py-spy, 2026-11-27).

Here a worker sleeps for ``IDLE_TURN_SECONDS`` (a minute) at a time, and
its ``stop`` wakes it: it puts a work item that does nothing on the pool's
queue. A pool stops all its workers together, each puts one item and each
worker, once stopping, takes at most one before it ends; so every sleeper
is woken, and the pool's ``shutdown`` returns as soon as the work in hand
is done.

futurist has no hook for its worker class; ``QuietThreadPoolExecutor``
overrides ``_add_thread``, which builds one. With a futurist that lacks
the pieces this relies on, ``executor_class()`` gives futurist's own pool.
"""
from __future__ import annotations

import futurist

try:
    from futurist import _thread as _futurist_thread
    from futurist import _utils as _futurist_utils
except ImportError:  # a futurist laid out otherwise: its own pool is used
    _futurist_thread = _futurist_utils = None

IDLE_TURN_SECONDS = 60.0


def _nothing() -> None:
    return None


def _usable() -> bool:
    worker = getattr(_futurist_thread, 'ThreadWorker', None)
    return (worker is not None and hasattr(worker, 'MAX_IDLE_FOR')
            and hasattr(_futurist_utils, 'WorkItem')
            and hasattr(futurist.ThreadPoolExecutor, '_add_thread'))


if _usable():
    class QuietWorker(_futurist_thread.ThreadWorker):
        """A futurist worker that sleeps while idle and is woken by ``stop``."""

        MAX_IDLE_FOR = IDLE_TURN_SECONDS

        def stop(self) -> None:
            first = not self.should_stop
            super().stop()
            if first:
                self.work_queue.put(_futurist_utils.WorkItem(futurist.Future(), _nothing))

    class QuietThreadPoolExecutor(futurist.ThreadPoolExecutor):
        """futurist's ``ThreadPoolExecutor`` with ``QuietWorker`` threads."""

        def _add_thread(self) -> None:
            worker = QuietWorker.create_and_register(self, self._work_queue)
            self._workers.append(worker)   # before start, as futurist does: joined even if it fails
            worker.start()
else:  # pragma: no cover - only with a futurist laid out otherwise
    QuietThreadPoolExecutor = None


def executor_class() -> type:
    """The pool class the RPC servers run their handlers in."""
    return QuietThreadPoolExecutor or futurist.ThreadPoolExecutor
