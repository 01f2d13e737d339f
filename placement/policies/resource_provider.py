"""Policies of /resource_providers and /resource_providers/{uuid}."""
from placement.policies.base import ADMIN_OR_SERVICE, api_rule

PREFIX = 'placement:resource_providers:%s'
LIST = PREFIX % 'list'
CREATE = PREFIX % 'create'
SHOW = PREFIX % 'show'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'

rules = [
    api_rule(LIST, ADMIN_OR_SERVICE, 'List resource providers.',
             ('GET', '/resource_providers')),
    api_rule(CREATE, ADMIN_OR_SERVICE, 'Create resource provider.',
             ('POST', '/resource_providers')),
    api_rule(SHOW, ADMIN_OR_SERVICE, 'Show resource provider.',
             ('GET', '/resource_providers/{uuid}')),
    api_rule(UPDATE, ADMIN_OR_SERVICE, 'Update resource provider.',
             ('PUT', '/resource_providers/{uuid}')),
    api_rule(DELETE, ADMIN_OR_SERVICE, 'Delete resource provider.',
             ('DELETE', '/resource_providers/{uuid}')),
]
