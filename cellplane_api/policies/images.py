"""Rules of the read-only image catalog (``/image/v2/images``), with Glance's names.

Glance's defaults let any reader of a project read the public images; every
image of cellplane's catalog is public, so the rule is the project reader's
(or an admin's).
"""
from __future__ import annotations

from oslo_policy import policy

from cellplane_api.policies import base

GET_IMAGES = 'get_images'
GET_IMAGE = 'get_image'

rules = [
    policy.DocumentedRuleDefault(
        name=GET_IMAGES, check_str=base.PROJECT_READER_OR_ADMIN,
        description='List the images of the catalog (Glance v2, read-only)',
        operations=[{'method': 'GET', 'path': '/image/v2/images'}],
        scope_types=base.PROJECT_SCOPE),
    policy.DocumentedRuleDefault(
        name=GET_IMAGE, check_str=base.PROJECT_READER_OR_ADMIN,
        description='Show an image of the catalog (Glance v2, read-only)',
        operations=[{'method': 'GET', 'path': '/image/v2/images/{image_id}'}],
        scope_types=base.PROJECT_SCOPE),
]
