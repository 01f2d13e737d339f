"""The RPC servers' pool: idle threads sleep until work or a stop comes, and a stop wakes them all."""
from __future__ import annotations

import queue
import threading
import time

import oslo_messaging as messaging
from oslo_config import cfg

from cellplane.rpc import quiet_executor
from cellplane.rpc.server import build_server


class _CountingQueue(queue.Queue):
    """A work queue that counts the waits for work (each wake of an idle thread is one)."""

    def __init__(self) -> None:
        super().__init__()
        self.waits = 0

    def get(self, block=True, timeout=None):
        self.waits += 1
        return super().get(block, timeout)


def _pool(workers: int) -> quiet_executor.QuietThreadPoolExecutor:
    pool = quiet_executor.QuietThreadPoolExecutor(max_workers=workers)
    pool._work_queue = _CountingQueue()
    return pool


def _spin_up(pool, workers: int) -> None:
    """Make ``workers`` threads (futurist adds one per submission up to the maximum), then let them idle."""
    gate = threading.Event()
    futures = [pool.submit(gate.wait, 10) for _ in range(workers)]
    gate.set()
    for future in futures:
        future.result(timeout=10)


def test_idle_threads_wait_once_instead_of_waking_every_turn():
    pool = _pool(4)
    _spin_up(pool, 4)
    assert pool.num_workers == 4
    settled = pool._work_queue.waits
    # futurist's own turn is 1 s (cellplane had set 0.25 s): 4 threads
    # idle for 1.5 s would wait again 4-24 times. Asleep, not once more.
    time.sleep(1.5)
    assert pool._work_queue.waits == settled
    pool.shutdown(wait=True)


def test_a_stop_wakes_every_sleeping_thread():
    pool = _pool(4)
    _spin_up(pool, 4)
    assert quiet_executor.IDLE_TURN_SECONDS >= 60
    # Asleep for a minute each: only the stop's wake ends them before that.
    stopper = threading.Thread(target=pool.shutdown, kwargs={'wait': True})
    stopper.start()
    stopper.join(20)
    assert not stopper.is_alive()
    assert not any(worker.is_alive() for worker in pool._workers)


def test_work_in_hand_is_done_before_the_stop():
    pool = _pool(2)
    done = []
    futures = [pool.submit(lambda n=n: (time.sleep(0.05), done.append(n))) for n in range(6)]
    pool.shutdown(wait=True)
    assert sorted(done) == list(range(6))
    assert all(f.done() for f in futures)


def test_rpc_servers_run_their_handlers_in_the_quiet_pool():
    conf = cfg.ConfigOpts()
    conf([])
    transport = messaging.get_rpc_transport(conf, url='fake://')
    try:
        server = build_server(transport, topic='quiet-test', server='host-1', endpoints=[object()])
        assert server._executor_cls is quiet_executor.QuietThreadPoolExecutor
    finally:
        transport.cleanup()
