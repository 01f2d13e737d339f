"""The reservation stack: given back last first, one failed undo stops none of the others."""
from __future__ import annotations

import logging

import pytest

from cellplane.reservations import Reservation, ReservationStack


class Held(Reservation):
    def __init__(self, name: str, log: list[str], fail: Exception | None = None) -> None:
        self.consumer = name
        self._log = log
        self._fail = fail

    def _release(self) -> None:
        self._log.append(self.consumer)
        if self._fail is not None:
            raise self._fail


def test_unwind_gives_back_in_the_reverse_of_the_order_taken():
    log: list[str] = []
    stack = ReservationStack()
    for name in ('claim', 'assumption', 'place'):
        stack.push(Held(name, log))
    undone = stack.unwind()
    assert log == ['place', 'assumption', 'claim']
    assert [r.consumer for r in undone] == ['place', 'assumption', 'claim']
    assert len(stack) == 0


def test_an_unreserve_that_fails_is_logged_and_the_others_are_still_given_back(caplog):
    log: list[str] = []
    stack = ReservationStack()
    stack.push(Held('claim', log))
    broken = stack.push(Held('place', log, fail=ConnectionError('database away')))
    stack.push(Held('last', log))
    with caplog.at_level(logging.ERROR, logger='cellplane.reservations'):
        undone = stack.unwind()
    assert log == ['last', 'place', 'claim']
    assert [r.consumer for r in undone] == ['last', 'claim']
    assert [(r, str(e)) for r, e in stack.failed] == [(broken, 'database away')]
    assert not broken.released
    [record] = caplog.records
    assert 'Held of place' in record.getMessage() and 'database away' in record.getMessage()


def test_unwind_to_a_mark_gives_back_only_what_came_after_it():
    log: list[str] = []
    stack = ReservationStack()
    stack.push(Held('first instance', log))
    mark = stack.mark()
    stack.push(Held('claim', log))
    stack.push(Held('assumption', log))
    stack.unwind(to=mark)
    assert log == ['assumption', 'claim']
    assert [r.consumer for r in stack] == ['first instance']


def test_a_reservation_given_back_early_is_not_given_back_twice():
    log: list[str] = []
    stack = ReservationStack()
    early = stack.push(Held('charge', log))
    early.unreserve()
    stack.unwind()
    assert log == ['charge'] and early.released


def test_a_reservation_kept_is_handed_on_not_given_back():
    log: list[str] = []
    stack = ReservationStack()
    claim = stack.push(Held('claim', log))
    stack.push(Held('cell row', log))
    stack.keep(claim)
    stack.unwind()
    assert log == ['cell row'] and not claim.released


def test_a_reservation_must_say_how_it_is_given_back():
    class Forgetful(Reservation):
        pass
    with pytest.raises(TypeError):
        Forgetful()
