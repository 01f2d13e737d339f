"""The compute API in-process over the embedded control plane, and a client that checks tempest's schemas.

``ComputeCloud`` starts ``cellplane_embedded.runtime.EmbeddedCloud`` (the
services built by the daemons' own builders, on in-memory buses and SQLite)
and builds the compute API's WSGI app over its API database, cells and
top-level bus with ``cellplane_api.wsgi.make_app`` (noauth2), as
``cellplane-api``'s workers build theirs from a config file. ``client``
sends WebOb requests to it; ``check`` validates an answer against a
response schema of ``tempest.lib.api_schema.response.compute``, which
rejects missing and extra fields.
"""
from __future__ import annotations

import dataclasses
import json
import time

import jsonschema
import webob

from cellplane_api import policy, quotas, service_conf, wsgi
from cellplane_api.request import Services
from cellplane_embedded.runtime import CloudPlan, EmbeddedCloud
from compute_agent.rpcapi import ComputeAPI
from tests.support.polling import eventually

# A bound on something that must happen (a boot finishing), not a speed target.
DEADLINE_SECONDS = 30


@dataclasses.dataclass
class Answer:
    status: int
    headers: webob.headers.ResponseHeaders
    text: str

    @property
    def json(self):
        return json.loads(self.text)


class ComputeCloud:
    def __init__(self, state_dir, *, cells: int = 2, hosts_per_cell: int = 2,
                 driver_for=None, quota: dict | None = None, quota_driver_for=None):
        """``driver_for(cell, host)``: a host's fake driver settings (a host that fails its builds).

        ``quota``: ``[quota]`` options other than Nova's defaults;
        ``quota_driver_for(cloud)``: another quota driver over the
        ``EmbeddedCloud`` (unified limits) instead of the database one.
        """
        self.cloud = EmbeddedCloud(state_dir, CloudPlan.uniform(
            cells=cells, hosts_per_cell=hosts_per_cell, driver_for=driver_for)).start()
        conf = service_conf.defaults()
        for name, value in (quota or {}).items():
            conf.set_override(name, value, group='quota')
        cloud = self.cloud
        # As cellplane-api: one [quota] driver for servers and server groups.
        quota_driver = (quota_driver_for(cloud) if quota_driver_for is not None
                        else quotas.from_conf(conf, cloud.api_engine, cloud.placement))
        self.services = Services(
            api_engine=cloud.api_engine, cells=cloud.cells, conductor=cloud.conductor_api,
            compute_api_for=lambda cell: ComputeAPI(cloud.cell_buses[cell.name].transport,
                                                    conf=cloud.conf),
            enforcer=policy.PolicyEnforcer(conf), cell_timeout=5.0,
            max_body_size=conf.api.max_request_body_size, placement=cloud.placement,
            service_down_time=cloud.conf.service.service_down_time,
            group_quota=quota_driver, quotas=quota_driver)
        self.app = wsgi.make_app(self.services, conf=conf, auth_strategy='noauth2')

    def make_app(self, **overrides: dict):
        """Another app over the same cloud (noauth2 unless overridden), with
        ``{group: {option: value}}`` overrides."""
        conf = service_conf.defaults()
        conf.set_override('auth_strategy', 'noauth2', group='api')
        for group, options in overrides.items():
            for name, value in options.items():
                conf.set_override(name, value, group=group)
        return wsgi.make_app(self.services, conf=conf, count_requests=True)

    def request(self, method: str, path: str, body=None, *, token: str | None = 'demo:demo',
                version: str | None = None, headers: dict | None = None,
                raw: bytes | None = None, app=None) -> Answer:
        req = webob.Request.blank(path, method=method)
        if token is not None:
            req.headers['X-Auth-Token'] = token
        if version is not None:
            req.headers['OpenStack-API-Version'] = f'compute {version}'
        if body is not None or raw is not None:
            req.body = raw if raw is not None else json.dumps(body).encode()
            req.content_type = 'application/json'
        req.headers.update(headers or {})
        resp = req.get_response(app or self.app)
        return Answer(resp.status_int, resp.headers, resp.text)

    def wait_for_status(self, server_id: str, wanted: str, *, token: str = 'demo:demo') -> dict:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            server = self.request('GET', f'/v2.1/servers/{server_id}', token=token).json['server']
            if server['status'] == wanted:
                return server
            if time.monotonic() > deadline:
                raise AssertionError(f'server {server_id} never {wanted}: {server["status"]}')
            time.sleep(0.05)

    def wait_until(self, predicate, what: str) -> None:
        eventually(predicate, what, seconds=DEADLINE_SECONDS)

    def stop(self) -> None:
        self.cloud.stop()


def check(schema: dict, answer: Answer) -> dict:
    """``answer``'s body, after asserting its status and body match tempest's ``schema``."""
    assert answer.status in schema['status_code'], (answer.status, answer.text)
    body = answer.json if answer.text else None
    if 'response_body' in schema:
        jsonschema.Draft4Validator(schema['response_body'],
                                   format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
                                   ).validate(body)
    return body
