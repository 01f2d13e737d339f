"""ImagePropertiesFilter: can the host run the image's architecture, hypervisor type and VM mode?

The image properties ``hw_architecture``, ``img_hv_type`` and ``hw_vm_mode``
are matched against the ``supported_instances`` the compute agent reports in
its stats: a list of ``[architecture, hypervisor_type, vm_mode]`` triples.
A property the image does not set matches anything.
"""
from __future__ import annotations

from scheduler.filters.base import HostFilter, Rejection
from scheduler.host_state import SUPPORTED_INSTANCES_STAT, HostState
from scheduler.request import SchedulingRequest

IMAGE_KEYS = ('hw_architecture', 'img_hv_type', 'hw_vm_mode')
NO_SUPPORTED_INSTANCES = 'host reports no supported instance types'
IMAGE_UNSUPPORTED = 'image properties not supported by host'


class ImagePropertiesFilter(HostFilter):
    name = 'ImagePropertiesFilter'

    def applies(self, request: SchedulingRequest) -> bool:
        return any(request.spec.image_properties.get(k) for k in IMAGE_KEYS)

    def check(self, host: HostState, request: SchedulingRequest) -> Rejection | None:
        props = request.spec.image_properties
        wanted = tuple((props.get(key) or '').lower() or None for key in IMAGE_KEYS)
        if not any(wanted):
            return None
        supported = host.record.stats.get(SUPPORTED_INSTANCES_STAT) or []
        if not supported:
            return self.reject(NO_SUPPORTED_INSTANCES)
        for triple in supported:
            offered = tuple(str(v).lower() for v in list(triple)[:3])
            if all(w is None or (i < len(offered) and offered[i] == w)
                   for i, w in enumerate(wanted)):
                return None
        asked = ', '.join(f'{k}={props[k]}' for k in IMAGE_KEYS if props.get(k))
        return self.reject(IMAGE_UNSUPPORTED,
                           f'host supports none of the image properties {asked}')
