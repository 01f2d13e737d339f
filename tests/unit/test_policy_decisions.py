"""``cellplane.wsgi.policy_decisions``: one question to oslo.policy per rule, caller and target while remembered."""
import copy

from oslo_context import context as oslo_context

from cellplane.wsgi.policy_decisions import Decisions


def _asker(answer: bool):
    asked = []

    def ask():
        asked.append(1)
        return answer
    return ask, asked


def test_a_decision_is_remembered_for_the_same_rule_caller_and_target():
    decisions = Decisions(ttl=3600)
    member = oslo_context.RequestContext(user_id='u', project_id='p', roles=['member'])
    ask, asked = _asker(True)
    assert decisions.decide('r', member, {'project_id': 'p'}, ask) is True
    assert decisions.decide('r', member, {'project_id': 'p'}, ask) is True
    assert len(asked) == 1


def test_another_rule_caller_role_or_target_is_asked_again():
    decisions = Decisions(ttl=3600)
    member = oslo_context.RequestContext(user_id='u', project_id='p', roles=['member'])
    admin = oslo_context.RequestContext(user_id='u', project_id='p', roles=['admin'])
    ask, asked = _asker(False)
    decisions.decide('r', member, {'project_id': 'p'}, ask)
    decisions.decide('other', member, {'project_id': 'p'}, ask)
    decisions.decide('r', admin, {'project_id': 'p'}, ask)
    decisions.decide('r', member, {'project_id': 'q'}, ask)
    assert len(asked) == 4


def test_with_no_ttl_every_question_is_asked():
    decisions = Decisions(ttl=0)
    member = oslo_context.RequestContext(user_id='u', project_id='p', roles=['member'])
    ask, asked = _asker(True)
    decisions.decide('r', member, {}, ask)
    decisions.decide('r', member, {}, ask)
    assert len(asked) == 2


def test_past_its_size_everything_is_forgotten():
    decisions = Decisions(ttl=3600, size=2)
    member = oslo_context.RequestContext(user_id='u', project_id='p', roles=['member'])
    ask, asked = _asker(True)
    for rule in ('a', 'b', 'c', 'a'):
        decisions.decide(rule, member, {}, ask)
    assert len(asked) == 4


def test_the_caller_is_turned_into_its_key_once(monkeypatch):
    decisions = Decisions(ttl=3600)
    member = oslo_context.RequestContext(user_id='u', project_id='p', roles=['member'])
    other = oslo_context.RequestContext(user_id='v', project_id='p', roles=['member'])
    turned = []
    real = oslo_context.RequestContext.to_policy_values

    def counted(self):
        turned.append(self.user_id)
        return real(self)
    monkeypatch.setattr(oslo_context.RequestContext, 'to_policy_values', counted)
    ask, asked = _asker(True)
    for rule in ('a', 'b', 'a'):
        decisions.decide(rule, member, {'project_id': 'p'}, ask)
    decisions.decide('a', other, {'project_id': 'p'}, ask)
    assert turned == ['u', 'v']
    assert len(asked) == 3      # a and b for u, a for v


def test_a_copy_of_the_caller_with_other_roles_gets_its_own_key():
    # A copy (as Nova's elevated() makes one) takes the remembered key along.
    decisions = Decisions(ttl=3600)
    member = oslo_context.RequestContext(user_id='u', project_id='p', roles=['member'])
    ask_member, _ = _asker(False)
    assert decisions.decide('r', member, {'project_id': 'p'}, ask_member) is False
    admin = copy.copy(member)
    admin.roles = [*member.roles, 'admin']
    ask_admin, asked = _asker(True)
    assert decisions.decide('r', admin, {'project_id': 'p'}, ask_admin) is True
    assert len(asked) == 1
