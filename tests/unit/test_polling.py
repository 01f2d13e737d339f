"""tests.support.polling.eventually: the first truthy value, or a failure naming what never came."""
from __future__ import annotations

import itertools

import pytest

from tests.support.polling import eventually


def test_it_returns_the_first_truthy_value_the_check_gives():
    answers = iter([None, 0, [], {'found': 1}, 'later'])
    assert eventually(lambda: next(answers), 'an answer') == {'found': 1}


def test_it_fails_naming_what_never_happened_once_the_time_is_up():
    calls = itertools.count(1)
    with pytest.raises(AssertionError, match=r'never happened within 0.1 s: the sky falling'):
        eventually(lambda: next(calls) and None, 'the sky falling', seconds=0.1)
    assert next(calls) > 2     # asked more than once before giving up
