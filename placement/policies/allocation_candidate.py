"""Policy of /allocation_candidates."""
from placement.policies.base import ADMIN_OR_SERVICE, api_rule

LIST = 'placement:allocation_candidates:list'

rules = [
    api_rule(LIST, ADMIN_OR_SERVICE, 'List allocation candidates.',
             ('GET', '/allocation_candidates')),
]
