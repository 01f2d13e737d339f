"""cellplane.outage: passwords masked; one line when a dependency goes, one when it is back."""
from __future__ import annotations

import logging

from cellplane import outage


def test_every_password_of_a_url_is_masked():
    assert outage.mask('rabbit://u:s3cret@h1:5672,v:p@h2:5672/top') == \
        'rabbit://u:***@h1:5672,v:***@h2:5672/top'
    assert outage.mask('postgresql://cellplane:pw@db/api') == 'postgresql://cellplane:***@db/api'
    assert outage.mask('http://127.0.0.1:8778') == 'http://127.0.0.1:8778'


def test_an_outage_is_said_once_and_its_end_with_how_long(caplog):
    now = [100.0]
    dep = outage.Dependency('Broker', 'rabbit://u:pw@mq:5672/', clock=lambda: now[0])
    caplog.set_level(logging.INFO, logger='cellplane.outage')
    dep.answered()
    for _ in range(5):
        dep.failed('Connection refused')
    assert dep.down
    now[0] += 13.0
    dep.answered()
    dep.answered()
    said = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert said == [
        ('WARNING', 'Broker at rabbit://u:***@mq:5672/ is not answering: Connection refused; '
                    'retrying, and saying here when it answers again'),
        ('INFO', 'Broker at rabbit://u:***@mq:5672/ answers again, after 13.0 s away '
                 '(5 attempt(s) failed meanwhile)')]
    assert not dep.down


def test_one_dependency_per_url_in_a_process():
    assert outage.dependency('Database', 'postgresql://a:x@db/api') is \
        outage.dependency('Database', 'postgresql://a:y@db/api')


def test_the_line_carries_no_exception_its_caller_was_handling(caplog):
    # oslo.log appends the exception being handled to a WARNING's line.
    import sys
    seen = []

    class Spy(logging.Handler):
        def emit(self, record):
            seen.append(sys.exc_info()[0])
    spy = Spy()
    logging.getLogger('cellplane.outage').addHandler(spy)
    try:
        dep = outage.Dependency('Placement', 'http://p:8778')
        try:
            raise ConnectionError('refused')
        except ConnectionError:
            dep.failed('Connection refused')
    finally:
        logging.getLogger('cellplane.outage').removeHandler(spy)
    assert seen == [None]
