"""Policies of /traits and of a provider's traits."""
from placement.policies.base import ADMIN_OR_SERVICE, api_rule

RP_TRAIT_PREFIX = 'placement:resource_providers:traits:%s'
RP_TRAIT_LIST = RP_TRAIT_PREFIX % 'list'
RP_TRAIT_UPDATE = RP_TRAIT_PREFIX % 'update'
RP_TRAIT_DELETE = RP_TRAIT_PREFIX % 'delete'

TRAITS_PREFIX = 'placement:traits:%s'
TRAITS_LIST = TRAITS_PREFIX % 'list'
TRAITS_SHOW = TRAITS_PREFIX % 'show'
TRAITS_UPDATE = TRAITS_PREFIX % 'update'
TRAITS_DELETE = TRAITS_PREFIX % 'delete'

RP_PATH = '/resource_providers/{uuid}/traits'

rules = [
    api_rule(TRAITS_LIST, ADMIN_OR_SERVICE, 'List traits.', ('GET', '/traits')),
    api_rule(TRAITS_SHOW, ADMIN_OR_SERVICE, 'Show trait.', ('GET', '/traits/{name}')),
    api_rule(TRAITS_UPDATE, ADMIN_OR_SERVICE, 'Update trait.', ('PUT', '/traits/{name}')),
    api_rule(TRAITS_DELETE, ADMIN_OR_SERVICE, 'Delete trait.',
             ('DELETE', '/traits/{name}')),
    api_rule(RP_TRAIT_LIST, ADMIN_OR_SERVICE, 'List resource provider traits.',
             ('GET', RP_PATH)),
    api_rule(RP_TRAIT_UPDATE, ADMIN_OR_SERVICE, 'Update resource provider traits.',
             ('PUT', RP_PATH)),
    api_rule(RP_TRAIT_DELETE, ADMIN_OR_SERVICE, 'Delete resource provider traits.',
             ('DELETE', RP_PATH)),
]
