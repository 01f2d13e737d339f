"""Policies of /resource_classes and /resource_classes/{name}."""
from placement.policies.base import ADMIN_OR_SERVICE, api_rule

PREFIX = 'placement:resource_classes:%s'
LIST = PREFIX % 'list'
CREATE = PREFIX % 'create'
SHOW = PREFIX % 'show'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'

rules = [
    api_rule(LIST, ADMIN_OR_SERVICE, 'List resource classes.',
             ('GET', '/resource_classes')),
    api_rule(CREATE, ADMIN_OR_SERVICE, 'Create resource class.',
             ('POST', '/resource_classes')),
    api_rule(SHOW, ADMIN_OR_SERVICE, 'Show resource class.',
             ('GET', '/resource_classes/{name}')),
    api_rule(UPDATE, ADMIN_OR_SERVICE, 'Update resource class.',
             ('PUT', '/resource_classes/{name}')),
    api_rule(DELETE, ADMIN_OR_SERVICE, 'Delete resource class.',
             ('DELETE', '/resource_classes/{name}')),
]
