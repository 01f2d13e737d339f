"""What a compute API handler is given: the request, its version, its caller and the services it may use."""
from __future__ import annotations

import dataclasses
import json
from typing import Callable

import msgspec
import webob
from oslo_context import context as oslo_context
from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.context import RequestContext
from cellplane_api import errors
from cellplane_api.image_catalog import ImageCatalog
from cellplane_api.policy import PolicyEnforcer
from cellplane_api.quotas import DatabaseQuotas
from cellplane_api.server_groups import UNLIMITED, GroupQuota


@dataclasses.dataclass
class Services:
    """The API role's parts a handler calls: databases, the super conductor, the cells' computes."""

    api_engine: Engine
    cells: CellDatabases
    conductor: object           # conductor.super.rpcapi.SuperConductorAPI
    compute_api_for: Callable   # CellMapping -> compute_agent.rpcapi.ComputeAPI
    enforcer: PolicyEnforcer
    cell_timeout: float
    max_body_size: int
    # A compute service silent longer than this is down ([service] service_down_time).
    service_down_time: float = 60.0
    # Asked before and after a server group is written; none until a quota driver is
    # given (cellplane-api and the CLI give the [quota] driver, ``quotas`` below).
    group_quota: GroupQuota = UNLIMITED
    # placement.client.PlacementClient: hypervisor usage, a disabled host's trait.
    placement: object = None
    default_zone: str = 'nova'
    internal_zone: str = 'internal'
    # The [quota] driver (cellplane_api.quotas): servers are created within it,
    # os-quota-sets and limits read and change it.
    quotas: DatabaseQuotas | None = None
    # The image catalog (cellplane_api/image_catalog.py); None: none configured.
    images: ImageCatalog | None = None


class ComputeRequest(webob.Request):
    mv = None
    credentials: oslo_context.RequestContext | None = None
    services: Services | None = None
    urlvars: dict = {}
    # '/v2.1' or '/v2.1/{project_id}': the links this request's answers carry start with it.
    prefix = '/v2.1'

    def link_base(self) -> str:
        return self.host_url + self.prefix

    def link_bases(self) -> tuple[str, str]:
        """The bases of ``self`` and ``bookmark`` links: made once per request (a list has thousands)."""
        bases = self.environ.get('cellplane.link_bases')
        if bases is None:
            host = self.host_url
            bases = (host + self.prefix, host + self.prefix.removeprefix('/v2.1'))
            self.environ['cellplane.link_bases'] = bases
        return bases

    def json_body(self):
        if not self.body:
            raise errors.BadRequest('The request body is missing: a JSON object is required.')
        try:
            return json.loads(self.body)
        except ValueError as exc:
            raise errors.BadRequest(f'Malformed request body: {exc}') from None

    def authorize(self, rule: str, target: dict | None = None) -> None:
        self.services.enforcer.authorize(rule, self.credentials, target)

    def allowed(self, rule: str, target: dict | None = None) -> bool:
        return self.services.enforcer.allowed(rule, self.credentials, target)

    def work_context(self) -> RequestContext:
        """The context the work this request starts carries: the caller, and this request's id.

        The id is the ``x-openstack-request-id`` the caller gets back, so a
        server's instance action and its scheduling record are found by it.
        """
        return RequestContext(user_id=self.credentials.user_id,
                              project_id=self.credentials.project_id,
                              request_id=self.environ.get('openstack.request_id'))

    def is_admin(self) -> bool:
        """The caller passes ``context_is_admin`` (what Nova's ``context.is_admin`` is)."""
        return self.allowed('context_is_admin')


# msgspec writes the same JSON as json.dumps (without its spaces) about ten
# times faster: a thousand detailed servers are a megabyte (as in Placement).
_encode = msgspec.json.Encoder().encode


def json_response(body, status: int = 200) -> webob.Response:
    resp = webob.Response(status=status, content_type='application/json', charset=None)
    resp.body = _encode(body)
    return resp


def empty_response(status: int) -> webob.Response:
    resp = webob.Response(status=status, charset=None)
    resp.content_type = None
    return resp
