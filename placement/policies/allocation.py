"""Policies of /allocations and of a provider's allocations."""
from placement.policies.base import ADMIN_OR_SERVICE, api_rule

RP_ALLOC_LIST = 'placement:resource_providers:allocations:list'

ALLOC_PREFIX = 'placement:allocations:%s'
ALLOC_LIST = ALLOC_PREFIX % 'list'
ALLOC_MANAGE = ALLOC_PREFIX % 'manage'
ALLOC_UPDATE = ALLOC_PREFIX % 'update'
ALLOC_DELETE = ALLOC_PREFIX % 'delete'

rules = [
    api_rule(ALLOC_MANAGE, ADMIN_OR_SERVICE, 'Manage allocations.',
             ('POST', '/allocations')),
    api_rule(ALLOC_LIST, ADMIN_OR_SERVICE, 'List allocations.',
             ('GET', '/allocations/{consumer_uuid}')),
    api_rule(ALLOC_UPDATE, ADMIN_OR_SERVICE, 'Update allocations.',
             ('PUT', '/allocations/{consumer_uuid}')),
    api_rule(ALLOC_DELETE, ADMIN_OR_SERVICE, 'Delete allocations.',
             ('DELETE', '/allocations/{consumer_uuid}')),
    api_rule(RP_ALLOC_LIST, ADMIN_OR_SERVICE, 'List resource provider allocations.',
             ('GET', '/resource_providers/{uuid}/allocations')),
]
