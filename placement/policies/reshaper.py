"""Policy of /reshaper: the services' own, not an admin's (as the reference)."""
from placement.policies.base import SERVICE, api_rule

RESHAPE = 'placement:reshaper:reshape'

rules = [
    api_rule(RESHAPE, SERVICE, 'Reshape Inventory and Allocations.',
             ('POST', '/reshaper')),
]
