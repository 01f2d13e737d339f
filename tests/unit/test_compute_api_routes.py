"""The compute API's route table and its policies cannot drift apart, and the router reads Nova's paths."""
from __future__ import annotations

import re

import pytest

from cellplane_api import errors, handler, images_app, policies
from cellplane_api.handlers import (
    flavors,
    instance_actions,
    migrations,
    root,
    scheduling_records,
    server_groups,
    server_migrations,
    servers,
)

# Routes Nova serves without a policy check: discovery and reading flavors.
UNGUARDED = {('GET', ''), ('GET', '/'), ('GET', '/flavors'), ('GET', '/flavors/detail'),
             ('GET', '/flavors/{flavor_id}')}


def _routed(method: str, path: str) -> str:
    """The route template that serves a documented path (its placeholders given sample values)."""
    concrete = re.sub(r'\{[^}]+\}', 'x', path.split(' (')[0])
    _, _, template, _ = handler.Router().match('/v2.1' + concrete, method)
    return template


def test_every_documented_operation_is_a_route_and_every_route_but_discovery_is_guarded():
    documented = {(op['method'], _routed(op['method'], op['path']))
                  for rule in policies.list_rules() for op in getattr(rule, 'operations', ())
                  if not op['path'].startswith(images_app.PREFIX)}
    served = {(method, template) for template, methods in handler.ROUTES.items()
              for method in methods}
    assert documented <= served, documented - served
    assert served - documented == UNGUARDED


def test_rule_names_are_unique_and_novas():
    names = [rule.name for rule in policies.list_rules()]
    assert len(names) == len(set(names))
    assert 'os_compute_api:servers:create' in names
    assert 'os_compute_api:os-flavor-manage:create' in names


@pytest.mark.parametrize('path, method, found, urlvars, prefix', [
    ('/', 'GET', root.versions, {}, ''),
    ('/v2.1', 'GET', root.version, {}, '/v2.1'),
    ('/v2.1/', 'GET', root.version, {}, '/v2.1'),
    ('/v2.1/servers', 'POST', servers.create_server, {}, '/v2.1'),
    ('/v2.1/servers/detail', 'GET', servers.list_servers_detail, {}, '/v2.1'),
    ('/v2.1/servers/abc', 'DELETE', servers.delete_server, {'server_id': 'abc'}, '/v2.1'),
    ('/v2.1/proj1/servers/abc', 'GET', servers.show_server, {'server_id': 'abc'},
     '/v2.1/proj1'),
    ('/v2.1/proj1/flavors/f/os-extra_specs/k', 'PUT', flavors.update_extra_spec,
     {'flavor_id': 'f', 'key': 'k'}, '/v2.1/proj1'),
    ('/v2.1/proj1/os-server-groups', 'POST', server_groups.create_server_group, {},
     '/v2.1/proj1'),
    ('/v2.1/os-server-groups/g', 'DELETE', server_groups.delete_server_group,
     {'server_group_id': 'g'}, '/v2.1'),
    ('/v2.1/servers/abc/os-instance-actions', 'GET', instance_actions.list_instance_actions,
     {'server_id': 'abc'}, '/v2.1'),
    ('/v2.1/proj1/servers/abc/os-instance-actions/req-1', 'GET',
     instance_actions.show_instance_action, {'server_id': 'abc', 'request_id': 'req-1'},
     '/v2.1/proj1'),
    ('/v2.1/os-scheduling-records/req-1', 'GET', scheduling_records.show_scheduling_record,
     {'request_id': 'req-1'}, '/v2.1'),
    ('/v2.1/proj1/os-migrations', 'GET', migrations.list_migrations, {}, '/v2.1/proj1'),
    ('/v2.1/servers/abc/migrations', 'GET', server_migrations.list_server_migrations,
     {'server_id': 'abc'}, '/v2.1'),
    ('/v2.1/servers/abc/migrations/7', 'DELETE', server_migrations.delete_server_migration,
     {'server_id': 'abc', 'migration_id': '7'}, '/v2.1'),
    ('/v2.1/proj1/servers/abc/migrations/7/action', 'POST',
     server_migrations.server_migration_action, {'server_id': 'abc', 'migration_id': '7'},
     '/v2.1/proj1'),
])
def test_the_router_reads_paths_with_and_without_a_project(path, method, found, urlvars, prefix):
    matched, got_vars, _, got_prefix = handler.Router().match(path, method)
    assert (matched, got_vars, got_prefix) == (found, urlvars, prefix)


@pytest.mark.parametrize('path', ['/v2', '/v2.1/proj1', '/v2.1/proj1/nothing', '/servers'])
def test_unknown_paths_are_404(path):
    with pytest.raises(errors.NotFound):
        handler.Router().match(path, 'GET')


def test_a_known_path_with_another_method_is_405_with_allow():
    with pytest.raises(errors.MethodNotAllowed) as raised:
        handler.Router().match('/v2.1/servers/detail', 'POST')
    assert raised.value.headers == {'Allow': 'GET'}


def test_the_image_catalogs_rules_document_its_two_routes():
    documented = {(op['method'], op['path']) for rule in policies.list_rules()
                  for op in getattr(rule, 'operations', ())
                  if op['path'].startswith(images_app.PREFIX)}
    assert documented == {('GET', '/image/v2/images'), ('GET', '/image/v2/images/{image_id}')}
