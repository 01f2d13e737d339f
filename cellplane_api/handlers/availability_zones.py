"""``/os-availability-zone`` and ``/os-availability-zone/detail``: the zones the services are in.

A zone is listed when a service is in it (``cellplane_api/availability_zones.py``
says which zone each is in): available when at least one of its services
is enabled, else not available. An aggregate's zone with no host is not a
zone yet, as in Nova. The list hides the internal zone; the detail (admins)
shows it, with the hosts of each available zone and their enabled
services::

    {"availabilityZoneInfo": [
        {"zoneName": "nova", "zoneState": {"available": true},
         "hosts": {"cell1-host1": {"cellplane-compute": {
             "available": true, "active": true,
             "updated_at": "2026-11-26T17:40:02.000000"}}}}]}
"""
from __future__ import annotations

from cellplane_api.handlers.services import found_services, is_up, iso, zones_of
from cellplane_api.policies import availability_zone as rules
from cellplane_api.request import json_response


def _zones(req):
    found = found_services(req)
    zones = zones_of(req, found)
    placed = [(zones.of(one.row['binary'], one.row['host']), one.row) for one in found.services]
    available = sorted({zone for zone, row in placed if not row['disabled']})
    unavailable = sorted({zone for zone, row in placed if row['disabled']} - set(available))
    return zones, placed, available, unavailable


def list_zones(req):
    """Every zone but the internal one, with ``"hosts": null``."""
    req.authorize(rules.LIST)
    zones, _, available, unavailable = _zones(req)
    return json_response({'availabilityZoneInfo': [
        {'zoneName': zone, 'zoneState': {'available': state}, 'hosts': None}
        for zones_of_state, state in ((available, True), (unavailable, False))
        for zone in zones_of_state if zone != zones.internal]})


def detail_zones(req):
    """Every zone, the internal one too; an available zone's hosts and their enabled services."""
    req.authorize(rules.DETAIL)
    _, placed, available, unavailable = _zones(req)
    hosts: dict[str, dict[str, dict]] = {}
    for zone, row in placed:
        if row['disabled']:
            continue
        hosts.setdefault(zone, {}).setdefault(row['host'], {})[row['binary']] = {
            'available': is_up(req, row), 'active': True, 'updated_at': iso(row['updated_at'])}
    return json_response({'availabilityZoneInfo': [
        {'zoneName': zone, 'zoneState': {'available': True}, 'hosts': hosts.get(zone, {})}
        for zone in available] + [
        {'zoneName': zone, 'zoneState': {'available': False}, 'hosts': None}
        for zone in unavailable]})
