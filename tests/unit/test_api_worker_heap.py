"""A cellplane-api worker's heap once its app is built: frozen, and young collections rarer
than Python's default, which walked a server list's answer while it was being built."""
from __future__ import annotations

import gc

from cellplane_api import cmd


def test_the_api_worker_freezes_its_heap_and_raises_the_young_threshold():
    before = gc.get_threshold()
    gc.unfreeze()
    try:
        cmd.settle_heap()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (cmd.YOUNG_COLLECTION_THRESHOLD, *before[1:])
        assert cmd.YOUNG_COLLECTION_THRESHOLD > before[0]
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
