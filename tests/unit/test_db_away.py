"""Telling a database that went away from a statement that is wrong, and waiting it out within a bound."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from cellplane.db import away


class _DriverError(Exception):
    def __init__(self, message: str, pgcode: str | None = None) -> None:
        super().__init__(message)
        self.pgcode = pgcode


def _wrapped(cls, message: str, pgcode: str | None = None, invalidated: bool = False):
    return cls('SELECT 1', {}, _DriverError(message, pgcode),
               connection_invalidated=invalidated)


@pytest.mark.parametrize('error', [
    _wrapped(sa.exc.OperationalError, 'server closed the connection unexpectedly\n'
                                      '\tThis probably means the server terminated'),
    _wrapped(sa.exc.OperationalError, 'connection to server at "127.0.0.1", port 5432 '
                                      'failed: Connection refused'),
    _wrapped(sa.exc.OperationalError, 'FATAL:  database "cell1" is not currently '
                                      'accepting connections'),
    _wrapped(sa.exc.OperationalError, 'FATAL:  the database system is shutting down'),
    _wrapped(sa.exc.DBAPIError, 'terminating connection due to administrator command',
             pgcode='57P01'),
    _wrapped(sa.exc.DBAPIError, 'whatever the driver says', invalidated=True),
    sa.exc.DisconnectionError('idle connection failed its ping'),
], ids=['dropped', 'refused', 'not-accepting', 'shutting-down', 'terminated',
        'invalidated', 'ping'])
def test_a_database_that_went_away_is_away(error):
    assert away.is_away(error)


@pytest.mark.parametrize('error', [
    _wrapped(sa.exc.IntegrityError, 'duplicate key value violates unique constraint',
             pgcode='23505'),
    _wrapped(sa.exc.ProgrammingError, 'relation "instances" does not exist', pgcode='42P01'),
    _wrapped(sa.exc.OperationalError, 'database is locked'),
    ValueError('not a database error'),
], ids=['integrity', 'programming', 'sqlite-locked', 'other'])
def test_a_wrong_statement_is_not_away(error):
    assert not away.is_away(error)


def test_first_line_is_the_drivers_first_line():
    error = _wrapped(sa.exc.OperationalError, 'server closed the connection unexpectedly\n'
                                              '\tThis probably means ...')
    assert away.first_line(error) == 'server closed the connection unexpectedly'


def test_a_call_is_sent_again_while_the_database_is_away_and_answered_when_back():
    outcomes = [_wrapped(sa.exc.OperationalError, 'Connection refused')] * 3 + ['done']
    slept = []

    def call():
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert away.retry_while_away(call, timeout=60, sleep=slept.append) == 'done'
    assert len(slept) == 3 and slept == sorted(slept)


def test_a_wrong_statement_is_not_sent_again():
    calls = []

    def call():
        calls.append(1)
        raise _wrapped(sa.exc.IntegrityError, 'duplicate key', pgcode='23505')

    with pytest.raises(sa.exc.IntegrityError):
        away.retry_while_away(call, timeout=60, sleep=lambda s: None)
    assert len(calls) == 1


def test_past_the_bound_the_last_error_is_raised():
    calls = []

    def call():
        calls.append(1)
        raise _wrapped(sa.exc.OperationalError, 'Connection refused')

    with pytest.raises(sa.exc.OperationalError):
        away.retry_while_away(call, timeout=0.3, sleep=lambda s: None)
    assert len(calls) >= 2


def _calls(*outcomes):
    """A call that raises or returns each of ``outcomes`` in turn; its list of calls made."""
    made = []

    def call():
        made.append(len(made))
        outcome = outcomes[len(made) - 1]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome
    return call, made


def test_a_read_whose_connection_was_dropped_is_read_once_more():
    call, made = _calls(_wrapped(sa.exc.OperationalError, 'server closed the connection',
                                 invalidated=True), 'rows')
    assert away.again_if_dropped(call) == 'rows'
    assert len(made) == 2


def test_a_second_drop_is_raised_not_retried():
    dropped = _wrapped(sa.exc.OperationalError, 'server closed the connection',
                       invalidated=True)
    call, made = _calls(dropped, dropped, 'never')
    with pytest.raises(sa.exc.OperationalError):
        away.again_if_dropped(call)
    assert len(made) == 2


@pytest.mark.parametrize('error', [
    _wrapped(sa.exc.OperationalError, 'connection to server at "127.0.0.1", port 5432 '
                                      'failed: Connection refused'),
    _wrapped(sa.exc.IntegrityError, 'duplicate key value', pgcode='23505'),
], ids=['refused', 'integrity'])
def test_no_connection_made_or_a_wrong_statement_is_not_run_again(error):
    # Refused: the database is away, not one connection of it; a request
    # says so at once (its caller may wait it out with retry_while_away).
    call, made = _calls(error, 'never')
    with pytest.raises(type(error)):
        away.again_if_dropped(call)
    assert len(made) == 1


def test_a_write_found_done_after_the_drop_is_not_run_again():
    call, made = _calls(_wrapped(sa.exc.OperationalError, 'server closed the connection',
                                 invalidated=True), 'twice')
    assert away.again_if_dropped(call, done=lambda: True) is None
    assert len(made) == 1


def test_a_write_found_not_done_after_the_drop_is_run_again():
    call, made = _calls(_wrapped(sa.exc.OperationalError, 'server closed the connection',
                                 invalidated=True), 'written')
    assert away.again_if_dropped(call, done=lambda: False) == 'written'
    assert len(made) == 2
