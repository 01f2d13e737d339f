"""The route table: every URL and method of the API, and the handler for each.

A URL template's ``{name}`` parts reach the handler as ``req.urlvars``. A
known URL with a method not listed answers 405 with an ``Allow`` header;
an unknown URL answers 404. Handlers are plain functions
``handler(req) -> webob.Response``; see placement/README.md.
"""
from __future__ import annotations

import re

from placement import errors
from placement.handlers import (
    aggregate,
    allocation,
    allocation_candidate,
    inventory,
    provider_usage,
    reshaper,
    resource_class,
    resource_provider,
    root,
    trait,
    usage,
)

ROUTES = {
    '': {'GET': root.home},
    '/': {'GET': root.home},
    '/resource_classes': {
        'GET': resource_class.list_resource_classes,
        'POST': resource_class.create_resource_class,
    },
    '/resource_classes/{name}': {
        'GET': resource_class.get_resource_class,
        'PUT': resource_class.update_resource_class,
        'DELETE': resource_class.delete_resource_class,
    },
    '/resource_providers': {
        'GET': resource_provider.list_resource_providers,
        'POST': resource_provider.create_resource_provider,
    },
    '/resource_providers/{uuid}': {
        'GET': resource_provider.get_resource_provider,
        'PUT': resource_provider.update_resource_provider,
        'DELETE': resource_provider.delete_resource_provider,
    },
    '/resource_providers/{uuid}/inventories': {
        'GET': inventory.get_inventories,
        'POST': inventory.create_inventory,
        'PUT': inventory.set_inventories,
        'DELETE': inventory.delete_inventories,
    },
    '/resource_providers/{uuid}/inventories/{resource_class}': {
        'GET': inventory.get_inventory,
        'PUT': inventory.update_inventory,
        'DELETE': inventory.delete_inventory,
    },
    '/resource_providers/{uuid}/usages': {
        'GET': provider_usage.list_usages,
    },
    '/resource_providers/{uuid}/aggregates': {
        'GET': aggregate.get_aggregates,
        'PUT': aggregate.set_aggregates,
    },
    '/resource_providers/{uuid}/traits': {
        'GET': trait.list_traits_for_resource_provider,
        'PUT': trait.update_traits_for_resource_provider,
        'DELETE': trait.delete_traits_for_resource_provider,
    },
    '/traits': {
        'GET': trait.list_traits,
    },
    '/traits/{name}': {
        'GET': trait.get_trait,
        'PUT': trait.put_trait,
        'DELETE': trait.delete_trait,
    },
    '/allocations': {
        'POST': allocation.set_allocations,
    },
    '/allocations/{consumer_uuid}': {
        'GET': allocation.list_for_consumer,
        'PUT': allocation.set_allocations_for_consumer,
        'DELETE': allocation.delete_allocations,
    },
    '/resource_providers/{uuid}/allocations': {
        'GET': allocation.list_for_resource_provider,
    },
    '/allocation_candidates': {
        'GET': allocation_candidate.list_allocation_candidates,
    },
    '/usages': {
        'GET': usage.get_total_usages,
    },
    '/reshaper': {
        'POST': reshaper.reshape,
    },
}


class Route:
    __slots__ = ('template', 'methods', 'allow', 'regex')

    def __init__(self, template: str, methods: dict):
        self.template = template
        self.methods = methods
        self.allow = ', '.join(methods)
        pattern = re.sub(r'\{(\w+)\}', r'(?P<\1>[^/]+)', template)
        self.regex = re.compile(f'^{pattern}$')


class Router:
    """Match a path to a route: static paths by dict, the rest by regex."""

    def __init__(self, routes: dict[str, dict]):
        self._static: dict[str, Route] = {}
        self._dynamic: list[Route] = []
        for template, methods in routes.items():
            route = Route(template, methods)
            if '{' in template:
                self._dynamic.append(route)
            else:
                self._static[template] = route

    def match(self, path: str, method: str):
        """Return (handler, urlvars, route template); raise 404 or 405."""
        route = self._static.get(path)
        urlvars = {}
        if route is None:
            for candidate in self._dynamic:
                found = candidate.regex.match(path)
                if found is not None:
                    route, urlvars = candidate, found.groupdict()
                    break
            else:
                raise errors.NotFound()
        handler = route.methods.get(method)
        if handler is None:
            raise errors.MethodNotAllowed(
                'The method specified is not allowed for this resource.',
                headers={'Allow': route.allow})
        return handler, urlvars, route.template
