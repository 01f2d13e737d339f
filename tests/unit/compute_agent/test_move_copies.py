"""A move's copy on its source: an abort stops it or refuses it before it begins; too late once it ended.

The fake driver's copy waits on its ``CopyControl``; ``MoveCopies`` finds a
copy by its migration, whichever of the abort and the hand-over comes first.
Each copy here waits an hour unless told otherwise: a test that passes did
not wait for it.
"""
from __future__ import annotations

import threading
import uuid

import pytest

from compute_agent import move_copies
from compute_agent.virt import driver
from compute_agent.virt.fake import FakeDriver, FakeSettings

AN_HOUR = 3600.0
# A bound on something that must happen, not a speed target.
DEADLINE_SECONDS = 30


def _running_instance(fake: FakeDriver) -> str:
    instance = str(uuid.uuid4())
    fake.spawn(driver.BuildRequest(instance_uuid=instance, vcpus=1, memory_mb=512,
                                   root_gb=1, image_properties={}))
    return instance


def _copy_in_a_thread(fake: FakeDriver, instance: str, control: driver.CopyControl):
    outcome = {}

    def copy():
        try:
            fake.hand_over(instance, control)
            outcome['result'] = 'handed over'
        except driver.MoveAborted:
            outcome['result'] = 'aborted'
    thread = threading.Thread(target=copy, daemon=True)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize('ask, result, runs', [
    ('abort', 'aborted', True),              # the instance still runs here
    ('force_complete', 'handed over', False),
])
def test_the_fake_copy_stops_at_an_abort_and_ends_at_a_force_complete(ask, result, runs):
    fake = FakeDriver(FakeSettings(move_seconds=AN_HOUR))
    instance = _running_instance(fake)
    control = driver.CopyControl()
    thread, outcome = _copy_in_a_thread(fake, instance, control)
    assert getattr(control, ask)()
    thread.join(DEADLINE_SECONDS)
    assert outcome == {'result': result}
    assert (instance in fake.running()) == runs
    assert instance in fake.list_instances()


def test_once_the_copy_reached_its_end_an_abort_is_refused():
    fake = FakeDriver(FakeSettings(move_seconds=0.0))
    instance = _running_instance(fake)
    control = driver.CopyControl()
    fake.hand_over(instance, control)
    assert not control.abort()
    assert instance not in fake.running()


def test_an_abort_while_the_copy_runs_stops_it():
    copies = move_copies.MoveCopies()
    fake = FakeDriver(FakeSettings(move_seconds=AN_HOUR))
    instance = _running_instance(fake)
    control = copies.begin('m1')
    thread, outcome = _copy_in_a_thread(fake, instance, control)
    assert copies.abort('m1') == move_copies.STOPPING
    thread.join(DEADLINE_SECONDS)
    copies.end('m1', copied=False)
    assert outcome == {'result': 'aborted'} and instance in fake.running()


def test_an_abort_before_the_copy_refuses_it_once_and_only_for_that_migration():
    copies = move_copies.MoveCopies()
    assert copies.abort('m1') == move_copies.BEFORE_COPY
    with pytest.raises(move_copies.AbortedBeforeCopy):
        copies.begin('m1')
    copies.begin('m2')            # another migration is not touched
    copies.end('m2', copied=True)
    assert copies.abort('m2') == move_copies.TOO_LATE
    copies.begin('m1')            # the abort was used up


def test_force_complete_acts_only_on_a_copy_that_runs():
    copies = move_copies.MoveCopies()
    assert not copies.force_complete('m1')
    control = copies.begin('m1')
    assert copies.force_complete('m1') and control.asked == driver.CopyControl.COMPLETE
    assert copies.abort('m1') == move_copies.TOO_LATE    # completing: the abort loses


def test_what_is_kept_is_bounded(monkeypatch):
    monkeypatch.setattr(move_copies, 'KEEP', 3)
    copies = move_copies.MoveCopies()
    for n in range(5):
        copies.abort(f'm{n}')
    copies.begin('m0')            # forgotten: the oldest went first
    with pytest.raises(move_copies.AbortedBeforeCopy):
        copies.begin('m4')
