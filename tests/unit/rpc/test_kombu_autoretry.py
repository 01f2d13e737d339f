"""cellplane.rpc.kombu_autoretry does what kombu's own autoretry does, without a class per call.

Each scenario runs once with kombu's method and once with the replacement,
on kombu's in-memory transport, and what the wrapped function saw and what
the call returned must be the same.
"""
from __future__ import annotations

import gc

import kombu
import pytest
from kombu import connection as kombu_connection

from cellplane.rpc import (
    kombu_autoretry,
    transport,  # noqa: F401 - installs it, as every daemon does
)


@pytest.fixture(params=['kombu', 'cellplane'])
def implementation(request):
    method = (kombu_autoretry._original if request.param == 'kombu'
              else kombu_autoretry.autoretry)
    saved = kombu_connection.Connection.autoretry
    kombu_connection.Connection.autoretry = method
    try:
        yield request.param
    finally:
        kombu_connection.Connection.autoretry = saved


def test_installed_by_the_transport_module():
    assert kombu_autoretry.installed()


def test_another_kombus_method_is_not_replaced():
    def autoretry(self, fun, channel=None, **ensure_options):
        return fun, channel
    assert kombu_autoretry.replaceable()
    assert not kombu_autoretry.replaceable(autoretry)


def _run_on_given_channel():
    conn = kombu.Connection('memory://')
    channel = conn.channel()
    seen = []

    def publish(body, *, channel):
        """Publish it."""
        seen.append((body, channel))
        return 'sent'

    wrapped = conn.autoretry(publish, channel=channel, max_retries=1)
    answer = wrapped('hello')
    return (wrapped.__name__, wrapped.__doc__, wrapped.__module__, answer[0],
            answer[1] is channel, [(body, ch is channel) for body, ch in seen])


def test_a_given_channel_is_used_and_returned(implementation):
    assert _run_on_given_channel() == (
        'publish(ensured)', 'Publish it.', __name__, 'sent', True, [('hello', True)])


def test_without_a_channel_it_connects_and_uses_the_default_channel(implementation):
    conn = kombu.Connection('memory://')
    seen = []
    ret, channel = conn.autoretry(lambda *, channel: seen.append(channel) or 7,
                                  max_retries=1)()
    assert ret == 7
    assert channel is conn.default_channel
    assert seen == [conn.default_channel]


def test_a_recoverable_connection_error_reconnects_and_revives_the_channel(implementation):
    conn = kombu.Connection('memory://')
    first = conn.channel()
    calls, revived, errors = [], [], []

    def flaky(*, channel):
        calls.append(channel)
        if len(calls) == 1:
            raise conn.recoverable_connection_errors[0]('dropped')
        return 'again'

    ret, channel = conn.autoretry(flaky, channel=first, max_retries=2,
                                  errback=lambda exc, interval: errors.append(str(exc)),
                                  on_revive=revived.append)()
    assert ret == 'again'
    assert calls[0] is first
    assert calls[1] is channel is conn.default_channel is revived[0]
    assert errors == ['dropped']


def test_past_max_retries_the_error_is_raised(implementation):
    conn = kombu.Connection('memory://')

    def down(*, channel):
        raise conn.recoverable_connection_errors[0]('down')

    with pytest.raises(kombu.exceptions.OperationalError, match='down'):
        conn.autoretry(down, channel=conn.channel(), max_retries=0)()


def test_no_type_is_made_per_call():
    conn = kombu.Connection('memory://')
    channel = conn.channel()
    gc.collect()
    # No collection meanwhile: kombu's own method leaves 50 types here.
    gc.disable()
    try:
        before = sum(isinstance(o, type) for o in gc.get_objects())
        for _ in range(50):
            conn.autoretry(lambda *, channel: None, channel=channel)()
        made = sum(isinstance(o, type) for o in gc.get_objects()) - before
    finally:
        gc.enable()
    assert made == 0
