"""BrokerOutageFilter reads oslo.messaging's reconnect records as outage reports and lets them through."""
from __future__ import annotations

import itertools
import logging

from cellplane import outage
from cellplane.rpc.broker_outage import AFTER_OUTAGE_SECONDS, RETRY_WITHIN_SECONDS, BrokerOutageFilter

UNREACHABLE = ('[%(connection_id)s] AMQP server on %(hostname)s:%(port)s is unreachable: '
               '%(err_str)s. Trying again in %(sleep_time)d seconds.')
RECONNECTED = ('[%(connection_id)s] Reconnected to AMQP server on %(hostname)s:%(port)s via '
               '[%(transport)s] client with port %(client_port)s.')


# Each test its own broker port: the process keeps one Dependency per URL.
_PORTS = itertools.count(5990)


def _record(level, msg, **args):
    record = logging.LogRecord('oslo.messaging._drivers.impl_rabbit', level, __file__, 1,
                               msg, None, None)
    record.args = {'connection_id': 'c', 'hostname': 'mq.example', 'port': 5999,
                   'transport': 'tcp', 'client_port': 1, 'sleep_time': 1, **args}
    return record


def _said(caplog):
    return [(r.levelname, r.getMessage()) for r in caplog.records
            if r.name == 'cellplane.outage']


def test_many_connections_retrying_make_one_warning_and_one_info(caplog):
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    check, port = BrokerOutageFilter(), next(_PORTS)
    for _ in range(4):
        assert check.filter(_record(logging.ERROR, UNREACHABLE, port=port,
                                    err_str='Connection refused'))
    assert check.filter(_record(logging.INFO, RECONNECTED, port=port))
    assert check.filter(_record(logging.INFO, RECONNECTED, port=port))
    said = _said(caplog)
    assert [level for level, _ in said] == ['WARNING', 'INFO']
    assert said[0][1].startswith(f'Broker at amqp://mq.example:{port} is not answering: '
                                 'Connection refused')
    assert '(4 attempt(s) failed meanwhile)' in said[1][1]


def test_other_records_pass_untouched(caplog):
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    assert BrokerOutageFilter().filter(_record(logging.INFO, 'Queue %(queue)s declared'))
    assert caplog.records == []


def _an_outage_ended(check, port):
    check.filter(_record(logging.ERROR, UNREACHABLE, port=port, connection_id='listener',
                         err_str='Connection refused'))
    check.filter(_record(logging.INFO, RECONNECTED, port=port, connection_id='listener'))


def test_a_connection_lost_and_back_at_its_first_retry_is_said_when_no_outage_just_ended(caplog):
    """A node of a cluster killed: its connections go to the next node at their first retry."""
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    check, port = BrokerOutageFilter(), next(_PORTS)
    check.filter(_record(logging.ERROR, UNREACHABLE, port=port,
                         err_str='Connection reset by peer'))
    check.filter(_record(logging.INFO, RECONNECTED, port=port))
    said = _said(caplog)
    assert [level for level, _ in said] == ['WARNING', 'INFO']
    assert said[0][1].startswith(f'Broker at amqp://mq.example:{port} is not answering: '
                                 'Connection reset by peer')


def test_a_connection_idle_through_the_outage_just_ended_is_no_second_outage(caplog):
    """A pooled connection finds its socket dead after the broker is back, and reconnects at once."""
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    check, port = BrokerOutageFilter(), next(_PORTS)
    _an_outage_ended(check, port)
    check.filter(_record(logging.ERROR, UNREACHABLE, port=port, connection_id='pooled',
                         err_str='Server unexpectedly closed connection'))
    check.filter(_record(logging.INFO, RECONNECTED, port=port, connection_id='pooled'))
    assert [level for level, _ in _said(caplog)] == ['WARNING', 'INFO']


def test_a_connection_lost_long_after_the_outage_ended_is_said_at_once(caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    check, port = BrokerOutageFilter(), next(_PORTS)
    now = [1000.0]
    broker = outage.Dependency('Broker', f'amqp://mq.example:{port}', clock=lambda: now[0])
    monkeypatch.setitem(outage._DEPENDENCIES, ('Broker', broker.url), broker)
    _an_outage_ended(check, port)
    now[0] += AFTER_OUTAGE_SECONDS + 1
    check.filter(_record(logging.ERROR, UNREACHABLE, port=port, connection_id='pooled',
                         err_str='Connection reset by peer'))
    assert [level for level, _ in _said(caplog)] == ['WARNING', 'INFO', 'WARNING']


def test_a_lost_connection_whose_retry_fails_starts_the_outage_at_its_loss(caplog):
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    now = [1000.0]
    check, port = BrokerOutageFilter(clock=lambda: now[0]), next(_PORTS)
    _an_outage_ended(check, port)
    check.filter(_record(logging.ERROR, UNREACHABLE, port=port, err_str='closed'))
    assert len(_said(caplog)) == 2
    now[0] += 5.0                                   # its retry, 5 s after the loss
    check.filter(_record(logging.ERROR, UNREACHABLE, port=port, err_str='Connection refused'))
    check.filter(_record(logging.INFO, RECONNECTED, port=port))
    said = _said(caplog)[2:]
    assert [level for level, _ in said] == ['WARNING', 'INFO']
    assert said[0][1].startswith(f'Broker at amqp://mq.example:{port} is not answering: '
                                 'Connection refused')
    away = float(said[1][1].split('after ')[1].split(' s away')[0])
    assert 5.0 <= away < 6.0
    assert '(2 attempt(s) failed meanwhile)' in said[1][1]


def test_a_connection_that_reconnected_after_the_outage_and_is_lost_again_is_said_at_once(caplog):
    """Its socket is younger than the outage: a node behind the broker's address restarted."""
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    check, port = BrokerOutageFilter(), next(_PORTS)
    _an_outage_ended(check, port)               # the listener reconnected
    check.filter(_record(logging.ERROR, UNREACHABLE, port=port, connection_id='listener',
                         err_str='Connection reset by peer'))
    check.filter(_record(logging.INFO, RECONNECTED, port=port, connection_id='listener'))
    assert [level for level, _ in _said(caplog)] == ['WARNING', 'INFO', 'WARNING', 'INFO']


def test_a_connection_lost_while_the_broker_is_not_answering_counts_at_once(caplog):
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    check, port = BrokerOutageFilter(), next(_PORTS)
    for _ in range(2):
        check.filter(_record(logging.ERROR, UNREACHABLE, port=port, connection_id='a',
                             err_str='Connection refused'))
    check.filter(_record(logging.ERROR, UNREACHABLE, port=port, connection_id='b',
                         err_str='Connection refused'))
    check.filter(_record(logging.INFO, RECONNECTED, port=port, connection_id='a'))
    check.filter(_record(logging.INFO, RECONNECTED, port=port, connection_id='b'))
    said = _said(caplog)
    assert [level for level, _ in said] == ['WARNING', 'INFO']
    assert '(3 attempt(s) failed meanwhile)' in said[1][1]


def test_a_connection_given_up_on_and_lost_again_later_is_a_fresh_loss(caplog):
    """A bounded retry gives up without "Reconnected"; its next loss, much later, is no retry."""
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    now = [1000.0]
    check, port = BrokerOutageFilter(clock=lambda: now[0]), next(_PORTS)
    _an_outage_ended(check, port)
    check.filter(_record(logging.ERROR, UNREACHABLE, port=port, err_str='closed'))
    now[0] += RETRY_WITHIN_SECONDS + 1
    check.filter(_record(logging.ERROR, UNREACHABLE, port=port, err_str='closed'))
    check.filter(_record(logging.INFO, RECONNECTED, port=port))
    assert len(_said(caplog)) == 2
