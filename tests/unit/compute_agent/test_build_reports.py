"""A build's report the broker refuses is sent again, within a bound; nothing else is retried.

Seen with a RabbitMQ cluster (issue 27's fault table, two nodes stopped):
quorum queues without a majority refused the agents' build reports, and
oslo.messaging raised MessageDeliveryFailure. Sent once, those builds
stayed in BUILD with their allocations.
"""
from __future__ import annotations

import logging

import oslo_messaging as messaging
import pytest
import tenacity

from compute_agent.manager import send_report

NO_WAIT = tenacity.wait_none()


class _Broker:
    """Refuses the first ``refusals`` sends, then takes them; counts every send."""

    def __init__(self, refusals: int, error: Exception | None = None):
        self.refusals = refusals
        self.error = error or messaging.MessageDeliveryFailure('541 INTERNAL_ERROR')
        self.sends = 0

    def send(self) -> None:
        self.sends += 1
        if self.sends <= self.refusals:
            raise self.error


def test_a_refused_report_is_sent_again_until_the_broker_takes_it(caplog):
    broker = _Broker(refusals=2)
    with caplog.at_level(logging.WARNING, logger='compute_agent.manager'):
        send_report('i-1', 'built', broker.send, wait=NO_WAIT)
    assert broker.sends == 3
    refusals = [r for r in caplog.records if 'refused the report that instance i-1 built'
                in r.getMessage()]
    assert len(refusals) == 2


def test_a_report_refused_for_the_whole_bound_is_given_up_and_said(caplog):
    broker = _Broker(refusals=10**9)
    with caplog.at_level(logging.ERROR, logger='compute_agent.manager'), \
            pytest.raises(messaging.MessageDeliveryFailure):
        send_report('i-2', 'failed', broker.send, timeout=0.2,
                    wait=tenacity.wait_fixed(0.02))
    assert broker.sends > 1
    [given_up] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert 'Gave up reporting that instance i-2 failed' in given_up.getMessage()
    assert 'build_timeout' in given_up.getMessage()


def test_other_errors_are_not_sent_again():
    broker = _Broker(refusals=1, error=messaging.MessagingTimeout('no answer'))
    with pytest.raises(messaging.MessagingTimeout):
        send_report('i-3', 'built', broker.send, wait=NO_WAIT)
    assert broker.sends == 1
