"""Quota request bodies: ``PUT /os-quota-sets/{project_id}`` per microversion (Nova's ``quota_sets.update``).

Each resource is an integer from -1 (unlimited); ``force`` sets a limit
below what is used. The fields Nova stopped accepting at 2.36 (the
network ones) and 2.57 (injected files) are refused from then on.
"""
from __future__ import annotations

from cellplane_api.schemas import compile_schema

_LIMIT = {'type': ['integer', 'string'], 'pattern': '^-?[0-9]+$', 'minimum': -1,
          'maximum': 2147483647}
NETWORK = ('fixed_ips', 'floating_ips', 'security_groups', 'security_group_rules')
INJECTED = ('injected_files', 'injected_file_content_bytes', 'injected_file_path_bytes')
_ALWAYS = ('instances', 'cores', 'ram', 'server_groups', 'server_group_members',
           'metadata_items', 'key_pairs')


def _update(fields) -> object:
    return compile_schema({
        'type': 'object',
        'properties': {
            'quota_set': {
                'type': 'object',
                'properties': {**{name: _LIMIT for name in fields},
                               'force': {'type': ['boolean', 'string'],
                                         'enum': [True, False, 'True', 'False', 'true',
                                                  'false']}},
                'additionalProperties': False,
            },
        },
        'required': ['quota_set'],
        'additionalProperties': False,
    })


UPDATE_2_1 = _update(_ALWAYS + INJECTED + NETWORK)
UPDATE_2_36 = _update(_ALWAYS + INJECTED)
UPDATE_2_57 = _update(_ALWAYS)
