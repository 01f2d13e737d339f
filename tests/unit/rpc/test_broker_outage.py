"""BrokerOutageFilter reads oslo.messaging's reconnect records as outage reports and lets them through."""
from __future__ import annotations

import logging

from cellplane.rpc.broker_outage import BrokerOutageFilter

UNREACHABLE = ('[%(connection_id)s] AMQP server on %(hostname)s:%(port)s is unreachable: '
               '%(err_str)s. Trying again in %(sleep_time)d seconds.')
RECONNECTED = ('[%(connection_id)s] Reconnected to AMQP server on %(hostname)s:%(port)s via '
               '[%(transport)s] client with port %(client_port)s.')


def _record(level, msg, **args):
    record = logging.LogRecord('oslo.messaging._drivers.impl_rabbit', level, __file__, 1,
                               msg, None, None)
    record.args = {'connection_id': 'c', 'hostname': 'mq.example', 'port': 5999,
                   'transport': 'tcp', 'client_port': 1, 'sleep_time': 1, **args}
    return record


def test_many_connections_retrying_make_one_warning_and_one_info(caplog):
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    check = BrokerOutageFilter()
    for _ in range(4):
        assert check.filter(_record(logging.ERROR, UNREACHABLE, err_str='Connection refused'))
    assert check.filter(_record(logging.INFO, RECONNECTED))
    assert check.filter(_record(logging.INFO, RECONNECTED))
    said = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in said] == ['WARNING', 'INFO']
    assert said[0][1].startswith('Broker at amqp://mq.example:5999 is not answering: '
                                 'Connection refused')
    assert '(4 attempt(s) failed meanwhile)' in said[1][1]


def test_other_records_pass_untouched(caplog):
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    assert BrokerOutageFilter().filter(_record(logging.INFO, 'Queue %(queue)s declared'))
    assert caplog.records == []
