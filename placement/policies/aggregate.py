"""Policies of a provider's aggregates."""
from placement.policies.base import ADMIN_OR_SERVICE, api_rule

PREFIX = 'placement:resource_providers:aggregates:%s'
LIST = PREFIX % 'list'
UPDATE = PREFIX % 'update'
BASE_PATH = '/resource_providers/{uuid}/aggregates'

rules = [
    api_rule(LIST, ADMIN_OR_SERVICE, 'List resource provider aggregates.',
             ('GET', BASE_PATH)),
    api_rule(UPDATE, ADMIN_OR_SERVICE, 'Update resource provider aggregates.',
             ('PUT', BASE_PATH)),
]
