"""Writes scheduling records off the reply path: a bounded queue and one thread.

``submit`` takes the run's trace and never blocks nor raises: the
scheduler's reply must not wait for a disk or a database, nor for the record
to be built (the thread builds it from the trace, which nothing changes
once the run is over). When the queue is full (the backend is slower than
the scheduling rate, or unreachable) the record is dropped: ``dropped``
counts them and a WARNING is logged for the first drop and every
``DROP_LOG_EVERY``-th after it. A backend error loses that batch (counted in
``failed``, logged) and the thread carries on. Records are written in
batches of what arrived within ``LINGER_SECONDS``. ``close`` writes what is
queued, waiting at most ``timeout`` seconds.
"""
from __future__ import annotations

import logging
import queue
import threading
import time

from scheduler import metrics
from scheduler.records.backend import RecordBackend
from scheduler.records.record import DEFAULT_WEIGHED_HOSTS, SchedulingRecord
from scheduler.trace import SchedulingTrace

LOG = logging.getLogger(__name__)

DROP_LOG_EVERY = 100
#: Records written in one backend call at most (one transaction, one flush).
BATCH = 64
#: How long the thread waits for more records before writing a batch: a
#: record reaches its backend at most this much later.
LINGER_SECONDS = 0.05
_STOP = object()


class RecordWriter:
    def __init__(self, backend: RecordBackend, *, queue_size: int,
                 weighed_hosts: int = DEFAULT_WEIGHED_HOSTS) -> None:
        self.backend = backend
        self.weighed_hosts = weighed_hosts
        self._queue: queue.Queue = queue.Queue(maxsize=queue_size)
        self.written = 0
        self.dropped = 0
        self.failed = 0
        self._thread = threading.Thread(target=self._run, name='scheduling-records',
                                        daemon=True)
        self._thread.start()

    def submit(self, trace: SchedulingTrace) -> bool:
        """Queue the record of ``trace``; False if the queue was full and it was dropped."""
        try:
            self._queue.put_nowait(trace)
            return True
        except queue.Full:
            self.dropped += 1
            metrics.RECORDS_DROPPED.inc()
            if self.dropped == 1 or self.dropped % DROP_LOG_EVERY == 0:
                LOG.warning('Scheduling record of request %s dropped: the record queue '
                            'is full (%d dropped so far; [scheduler] record_queue_size, '
                            'or a faster record_backend)', trace.request_id, self.dropped)
            return False

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            batch = [first]
            stop = False
            # Gather what arrives within LINGER_SECONDS into one write: one
            # transaction (or flush) and one wake-up per batch, not per record,
            # which is what keeps the writer from competing with the replies.
            flush_at = time.monotonic() + LINGER_SECONDS
            while len(batch) < BATCH:
                try:
                    more = self._queue.get(timeout=max(0.0, flush_at - time.monotonic()))
                except queue.Empty:
                    break
                if more is _STOP:
                    stop = True
                    break
                batch.append(more)
            try:
                self.backend.write([SchedulingRecord.from_trace(
                    t, weighed_hosts=self.weighed_hosts) for t in batch])
                self.written += len(batch)
            except Exception as exc:  # noqa: BLE001 - the thread must outlive a bad backend
                self.failed += len(batch)
                LOG.error('Could not write %d scheduling record(s) to %s: %s',
                          len(batch), type(self.backend).__name__, exc)
            if stop:
                return

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued (within ``timeout`` seconds), stop, close the backend."""
        try:
            self._queue.put(_STOP, timeout=timeout)
        except queue.Full:
            LOG.warning('Scheduling records still queued at shutdown were not written')
        self._thread.join(timeout)
        if self._thread.is_alive():
            LOG.warning('The scheduling record writer did not finish within %.0f s', timeout)
            return
        self.backend.close()
