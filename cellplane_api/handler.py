"""The route table of the compute API: every URL and method it serves, and the handler for each.

Paths are matched after the version prefix ``/v2.1`` and an optional
``/{project_id}`` (Nova's legacy form: ``/v2.1/{project_id}/servers``).
A known URL with a method not listed answers 405 with ``Allow``; an
unknown URL 404.
"""
from __future__ import annotations

import re

from cellplane_api import errors
from cellplane_api.handlers import (
    aggregates,
    availability_zones,
    flavors,
    hypervisors,
    instance_actions,
    limits,
    migrations,
    quota_sets,
    root,
    scheduling_records,
    server_actions,
    server_groups,
    server_migrations,
    servers,
    simple_tenant_usage,
)
from cellplane_api.handlers import services as compute_services

# Served without the /v2.1 prefix.
ROOT_ROUTES = {
    '': {'GET': root.versions},
    '/': {'GET': root.versions},
}

ROUTES = {
    '': {'GET': root.version},
    '/': {'GET': root.version},
    '/flavors': {'GET': flavors.list_flavors, 'POST': flavors.create_flavor},
    '/flavors/detail': {'GET': flavors.list_flavors_detail},
    '/flavors/{flavor_id}': {'GET': flavors.show_flavor, 'PUT': flavors.update_flavor,
                             'DELETE': flavors.delete_flavor},
    '/flavors/{flavor_id}/os-flavor-access': {'GET': flavors.list_flavor_access},
    '/flavors/{flavor_id}/action': {'POST': flavors.flavor_action},
    '/flavors/{flavor_id}/os-extra_specs': {'GET': flavors.list_extra_specs,
                                            'POST': flavors.create_extra_specs},
    '/flavors/{flavor_id}/os-extra_specs/{key}': {'GET': flavors.show_extra_spec,
                                                  'PUT': flavors.update_extra_spec,
                                                  'DELETE': flavors.delete_extra_spec},
    '/limits': {'GET': limits.show_limits},
    '/os-quota-sets/{tenant_id}': {'GET': quota_sets.show_quota_set,
                                    'PUT': quota_sets.update_quota_set,
                                    'DELETE': quota_sets.delete_quota_set},
    '/os-quota-sets/{tenant_id}/defaults': {'GET': quota_sets.show_defaults},
    '/os-quota-sets/{tenant_id}/detail': {'GET': quota_sets.show_detail},
    '/servers': {'GET': servers.list_servers, 'POST': servers.create_server},
    '/servers/detail': {'GET': servers.list_servers_detail},
    '/servers/{server_id}': {'GET': servers.show_server, 'DELETE': servers.delete_server},
    '/servers/{server_id}/os-instance-actions': {
        'GET': instance_actions.list_instance_actions},
    '/servers/{server_id}/os-instance-actions/{request_id}': {
        'GET': instance_actions.show_instance_action},
    '/os-server-groups': {'GET': server_groups.list_server_groups,
                          'POST': server_groups.create_server_group},
    '/os-server-groups/{server_group_id}': {'GET': server_groups.show_server_group,
                                     'DELETE': server_groups.delete_server_group},
    '/os-scheduling-records': {'GET': scheduling_records.list_scheduling_records},
    '/os-scheduling-records/{request_id}': {
        'GET': scheduling_records.show_scheduling_record},
    '/os-services': {'GET': compute_services.list_services},
    '/os-services/{service_id}': {'PUT': compute_services.update_service,
                                  'DELETE': compute_services.delete_service},
    '/os-hypervisors': {'GET': hypervisors.list_hypervisors},
    '/os-hypervisors/detail': {'GET': hypervisors.list_hypervisors_detail},
    '/os-hypervisors/statistics': {'GET': hypervisors.statistics},
    '/os-hypervisors/{hypervisor_id}': {'GET': hypervisors.show_hypervisor},
    '/os-hypervisors/{hypervisor_id}/uptime': {'GET': hypervisors.uptime},
    '/os-hypervisors/{hypervisor_id}/search': {'GET': hypervisors.search},
    '/os-hypervisors/{hypervisor_id}/servers': {'GET': hypervisors.servers},
    '/os-availability-zone': {'GET': availability_zones.list_zones},
    '/os-availability-zone/detail': {'GET': availability_zones.detail_zones},
    '/os-aggregates': {'GET': aggregates.list_aggregates},
    '/os-aggregates/{aggregate_id}': {'GET': aggregates.show_aggregate},
    '/servers/{server_id}/action': {'POST': server_actions.server_action},
    '/os-migrations': {'GET': migrations.list_migrations},
    '/servers/{server_id}/migrations': {'GET': server_migrations.list_server_migrations},
    '/servers/{server_id}/migrations/{migration_id}': {
        'GET': server_migrations.show_server_migration,
        'DELETE': server_migrations.delete_server_migration},
    '/servers/{server_id}/migrations/{migration_id}/action': {
        'POST': server_migrations.server_migration_action},
    '/os-simple-tenant-usage': {'GET': simple_tenant_usage.list_tenant_usages},
    '/os-simple-tenant-usage/{tenant_id}': {'GET': simple_tenant_usage.show_tenant_usage},
}

# The first segment of every route: anything else there is a project id.
_COLLECTIONS = frozenset(t.split('/')[1] for t in ROUTES if t.count('/') >= 1 and t != '/')


class Router:
    """Match a path to (handler, urlvars, template, prefix); raise 404 or 405."""

    def __init__(self, routes: dict = ROUTES, root_routes: dict = ROOT_ROUTES):
        self._root = root_routes
        self._routes = [(template, methods, re.compile(
            '^' + re.sub(r'\{(\w+)\}', r'(?P<\1>[^/]+)', template) + '$'))
            for template, methods in routes.items()]

    def match(self, path: str, method: str):
        if path in self._root:
            return self._pick(self._root[path], method), {}, path or '/', ''
        if not (path == '/v2.1' or path.startswith('/v2.1/')):
            raise errors.NotFound('The resource could not be found.')
        rest, prefix = path[len('/v2.1'):], '/v2.1'
        parts = rest.split('/', 2)
        if len(parts) > 1 and parts[1] and parts[1] not in _COLLECTIONS:
            prefix = f'/v2.1/{parts[1]}'
            rest = '/' + parts[2] if len(parts) > 2 else ''
            if not rest:
                raise errors.NotFound('The resource could not be found.')
        for template, methods, regex in self._routes:
            found = regex.match(rest)
            if found is not None:
                return self._pick(methods, method), found.groupdict(), template, prefix
        raise errors.NotFound('The resource could not be found.')

    @staticmethod
    def _pick(methods: dict, method: str):
        handler = methods.get(method)
        if handler is None:
            raise errors.MethodNotAllowed('The method specified is not allowed for this '
                                          'resource.', headers={'Allow': ', '.join(methods)})
        return handler
