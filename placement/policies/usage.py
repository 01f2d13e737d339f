"""Policies of a provider's usages and of a project's total usages."""
from placement.policies.base import ADMIN_OR_PROJECT_READER_OR_SERVICE, ADMIN_OR_SERVICE, api_rule

PROVIDER_USAGES = 'placement:resource_providers:usages'
TOTAL_USAGES = 'placement:usages'

rules = [
    api_rule(PROVIDER_USAGES, ADMIN_OR_SERVICE, 'List resource provider usages.',
             ('GET', '/resource_providers/{uuid}/usages')),
    # A project reader (or member) may see its own project's usage; an
    # admin, anyone's.
    api_rule(TOTAL_USAGES, ADMIN_OR_PROJECT_READER_OR_SERVICE,
             'List total resource usages for a given project.',
             ('GET', '/usages')),
]
