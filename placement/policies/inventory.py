"""Policies of a provider's inventories."""
from placement.policies.base import ADMIN_OR_SERVICE, api_rule

PREFIX = 'placement:resource_providers:inventories:%s'
LIST = PREFIX % 'list'
CREATE = PREFIX % 'create'
SHOW = PREFIX % 'show'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'
BASE_PATH = '/resource_providers/{uuid}/inventories'
ONE_PATH = BASE_PATH + '/{resource_class}'

rules = [
    api_rule(LIST, ADMIN_OR_SERVICE, 'List resource provider inventories.',
             ('GET', BASE_PATH)),
    api_rule(CREATE, ADMIN_OR_SERVICE, 'Create one resource provider inventory.',
             ('POST', BASE_PATH)),
    api_rule(SHOW, ADMIN_OR_SERVICE, 'Show resource provider inventory.',
             ('GET', ONE_PATH)),
    api_rule(UPDATE, ADMIN_OR_SERVICE, 'Update resource provider inventory.',
             ('PUT', BASE_PATH), ('PUT', ONE_PATH)),
    api_rule(DELETE, ADMIN_OR_SERVICE, 'Delete resource provider inventory.',
             ('DELETE', BASE_PATH), ('DELETE', ONE_PATH)),
]
