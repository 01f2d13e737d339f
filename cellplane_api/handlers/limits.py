"""``GET /limits``: the caller's project's absolute limits and usage, as Nova's ``limits`` answers.

::

    {"limits": {"rate": [], "absolute": {
        "maxTotalInstances": 10, "totalInstancesUsed": 2,
        "maxTotalCores": 20, "totalCoresUsed": 2,
        "maxTotalRAMSize": 51200, "totalRAMUsed": 512,
        "maxServerGroups": 10, "totalServerGroupsUsed": 1,
        "maxServerGroupMembers": 10, "maxServerMeta": 128, "maxImageMeta": 128,
        "maxPersonality": 5, "maxPersonalitySize": 10240, "maxTotalKeypairs": 100,
        "maxSecurityGroups": -1, "maxSecurityGroupRules": -1,
        "maxTotalFloatingIps": -1, "totalSecurityGroupsUsed": 0,
        "totalFloatingIpsUsed": 0}}}

From 2.36 the network fields are gone, from 2.39 ``maxImageMeta``, from
2.57 the personality ones. An admin reads another project's with
``tenant_id``.
"""
from __future__ import annotations

from cellplane_api.policies import quota_sets as rules
from cellplane_api.request import json_response


def show_limits(req):
    req.authorize(rules.LIMITS)
    project_id = req.credentials.project_id
    asked = req.GET.get('tenant_id')
    if asked and asked != project_id:
        req.authorize(rules.LIMITS_OTHER_PROJECT, {'project_id': asked})
        project_id = asked
    driver = req.services.quotas
    limits = driver.limits(project_id)
    used = driver.usage(project_id)
    absolute = {
        'maxTotalInstances': limits['instances'], 'totalInstancesUsed': used.instances,
        'maxTotalCores': limits['cores'], 'totalCoresUsed': used.cores,
        'maxTotalRAMSize': limits['ram'], 'totalRAMUsed': used.ram,
        'maxServerGroups': limits['server_groups'],
        'totalServerGroupsUsed': used.server_groups,
        'maxServerGroupMembers': limits['server_group_members'],
        'maxServerMeta': limits['metadata_items'], 'maxTotalKeypairs': limits['key_pairs'],
    }
    if req.mv < (2, 39):
        absolute['maxImageMeta'] = limits['metadata_items']
    if req.mv < (2, 57):
        absolute['maxPersonality'] = limits['injected_files']
        absolute['maxPersonalitySize'] = limits['injected_file_content_bytes']
    if req.mv < (2, 36):
        absolute.update({
            'maxSecurityGroups': limits['security_groups'],
            'maxSecurityGroupRules': limits['security_group_rules'],
            'maxTotalFloatingIps': limits['floating_ips'],
            'totalSecurityGroupsUsed': 0, 'totalFloatingIpsUsed': 0})
    return json_response({'limits': {'rate': [], 'absolute': absolute}})
