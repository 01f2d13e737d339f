"""Placement's policy rules: every route has one, and they are the reference's."""
from __future__ import annotations

from placement import handler, policies, policy


def test_every_route_but_the_root_has_exactly_one_rule():
    by_route = policy.rules_by_route(policies.list_rules())
    routes = {(method, template) for template, methods in handler.ROUTES.items()
              for method in methods if template not in ('', '/')}
    assert set(by_route) == routes


def test_rule_names_are_unique_and_project_scoped():
    rules = policies.list_rules()
    names = [r.name for r in rules]
    assert len(names) == len(set(names))
    for rule in rules:
        if rule.name != 'project_reader_api':   # as the reference: no scope
            assert rule.scope_types == ['project'], rule.name


def test_the_defaults_are_the_references():
    defaults = {r.name: r.check_str for r in policies.list_rules()}
    assert defaults['admin_or_service_api'] == 'role:admin or role:service'
    assert defaults['placement:reshaper:reshape'] == 'rule:service_api'
    assert defaults['placement:usages'] == 'rule:admin_or_project_reader_or_service_api'
    assert defaults['project_reader_api'] == 'role:reader and project_id:%(project_id)s'
    assert sum(name.startswith('placement:') for name in defaults) == 33
