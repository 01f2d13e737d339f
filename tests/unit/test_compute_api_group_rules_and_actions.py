"""The compute API's pure mappings: server group rules to a level and bound and back, and a cell's
action record to the action Nova's clients read."""
from __future__ import annotations

import datetime

import pytest

from cellplane.objects import server_groups
from cellplane.objects.instance_actions import ActionRecord, AttemptEvent
from cellplane_api import instance_actions
from cellplane_api.server_groups import RuleError, from_rules, rules_of

T0 = datetime.datetime(2026, 11, 26, 17, 0, 0)


def _group(policy: str, level: str, bound: int) -> server_groups.ServerGroup:
    return server_groups.ServerGroup(uuid='g', project_id='p', user_id='u', name='n',
                                     policy=policy, level=level, max_per_domain=bound)


@pytest.mark.parametrize('policy, rules, level, bound', [
    ('affinity', {}, 'host', None),
    ('affinity', {'failure_domain': 'row'}, 'row', None),
    ('anti-affinity', {'max_server_per_host': '3'}, 'host', 3),
    ('soft-anti-affinity', {'failure_domain': 'rack', 'max_server_per_domain': 2}, 'rack', 2),
    ('anti-affinity', {'failure_domain': 'host', 'max_server_per_host': 2}, 'host', 2),
])
def test_rules_give_a_level_and_a_bound_and_come_back_the_same(policy, rules, level, bound):
    assert from_rules(policy, rules) == (level, bound)
    shown = rules_of(_group(policy, level, bound or 1))
    assert from_rules(policy, shown) == (level, None if (bound or 1) == 1 else bound)


@pytest.mark.parametrize('policy, rules, named', [
    ('anti-affinity', {'max_server_per_rack': 1}, 'max_server_per_rack'),
    ('affinity', {'max_server_per_domain': 2}, 'max_server_per_domain'),
    ('anti-affinity', {'max_server_per_host': True}, 'max_server_per_host'),
    ('anti-affinity', {'max_server_per_host': 2 ** 31}, 'max_server_per_host'),
    ('anti-affinity', {'failure_domain': ''}, 'failure_domain'),
    ('anti-affinity', {'max_server_per_host': 2, 'max_server_per_domain': 2},
     'max_server_per_domain'),
])
def test_a_rule_that_cannot_be_followed_is_named(policy, rules, named):
    with pytest.raises(RuleError) as raised:
        from_rules(policy, rules)
    assert raised.value.rule == named and named in str(raised.value)


def _event(result, reason, host='h1'):
    return AttemptEvent(event='compute_build_and_run_instance', host=host, node=host,
                        start=T0, finish=T0, result=result, reason=reason)


def _record(*events, message=None, request_id='req-1'):
    return ActionRecord(action='create', instance_uuid='i1', request_id=request_id,
                        user_id='u', project_id='p', start_time=T0, finish_time=T0,
                        message=message, updated_at=T0, events=tuple(events))


def test_results_are_novas_words_and_only_a_failure_has_a_reason():
    action = instance_actions.from_record(_record(_event('failed', 'no IP', 'h1'),
                                                  _event('ok', 'fine', 'h2')))
    assert [(e.host, e.result, e.reason) for e in action.events] == [
        ('h1', 'Error', 'no IP'), ('h2', 'Success', None)]


def test_an_action_with_a_failed_event_has_a_message_the_stored_one_first():
    assert instance_actions.from_record(_record(_event('ok', None))).message is None
    assert instance_actions.from_record(_record(_event('failed', None))).message == 'Error'
    assert instance_actions.from_record(_record(_event('failed', None), message='Build failed')
                                        ).message == 'Build failed'
    assert instance_actions.from_record(_record(_event('failed', None))).events[0].reason == (
        'no reason given')


def test_an_action_without_a_request_id_answers_to_its_stand_in():
    action = instance_actions.from_record(_record(request_id=None))
    assert action.request_id == 'req-i1' and action.answers_to('req-i1')
    known = instance_actions.from_record(_record(request_id='req-2'))
    assert known.answers_to('req-2') and known.answers_to('req-i1')
    assert not known.answers_to('req-3')
