"""The Placement client the rest of cellplane uses.

    client = PlacementClient.over_http('http://127.0.0.1:8778', token='admin')   # noauth2
    client = PlacementClient(KeystoneTransport(adapter))   # a keystoneauth1 Adapter
    client = PlacementClient.in_process(engine)     # embedded mode: no socket

All speak the same REST API through the same handlers; the in-process
transport hands WebOb requests straight to ``placement.wsgi.make_app``.
Services build theirs from ``[placement]`` (``placement/client_conf.py``).

What it offers, each generation-safe:

* ``ensure_provider`` - create the provider unless it exists;
* ``get_inventory`` / ``get_traits`` - read them (to write only on change);
* ``set_inventory`` / ``set_traits`` / ``set_aggregates`` - replace them,
  re-reading the provider generation and retrying when another writer
  bumped it (409 placement.concurrent_update);
* ``change_aggregates`` - add and remove some aggregates, keeping the
  others, read and written at one generation (a conflict reads again);
* ``get_candidates`` - typed allocation candidates;
* ``claim`` / ``unclaim`` - write and remove a consumer's allocations.
  A claim that loses a race or finds no room raises ``ClaimConflict`` with
  the reason; the caller decides to try another host.

Connection errors and timeouts are retried (tenacity, exponential backoff);
HTTP errors are not, except the generation re-reads described above.
"""
from __future__ import annotations

import json
import re
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from keystoneauth1 import exceptions as ks_exc
import requests
import tenacity

from cellplane import metrics

MICROVERSION = '1.39'
CONCURRENT_UPDATE = 'placement.concurrent_update'


class PlacementClientError(Exception):
    """Placement answered with an error status."""

    def __init__(self, status: int, detail: str, code: str | None = None):
        super().__init__(f'placement answered {status} ({code}): {detail}')
        self.status = status
        self.detail = detail
        self.code = code


class ClaimConflict(PlacementClientError):
    """The claim was refused with 409: no room, or another writer won.

    ``lost_race`` is True when Placement says the provider or consumer
    changed concurrently (code placement.concurrent_update).
    """

    @property
    def lost_race(self) -> bool:
        return self.code == CONCURRENT_UPDATE

    @property
    def stale_consumer(self) -> bool:
        """The consumer's generation was not the one given: it already has
        (other) allocations, or someone changed them meanwhile."""
        return self.code == CONCURRENT_UPDATE and \
            'consumer generation conflict' in self.detail


class PlacementUnreachable(Exception):
    """Placement could not be reached, even after retrying."""


@dataclass(frozen=True)
class Response:
    status: int
    body: Any   # decoded JSON, or None

    def error(self) -> tuple[str, str | None]:
        try:
            err = self.body['errors'][0]
            return err.get('detail', ''), err.get('code')
        except (TypeError, KeyError, IndexError):
            return str(self.body), None


class Transport(Protocol):
    def request(self, method: str, path: str, body: Any = None,
                microversion: str = MICROVERSION) -> Response: ...


class HttpTransport:
    """Placement over HTTP with ``requests``; retries while Placement is away.

    A connection refused or timed out, or a 503 (Placement restarting, or
    out of database connections), is retried with exponential backoff
    (0.05 s doubling up to ``max_wait``) until ``attempts`` were made or
    ``retry_timeout`` seconds went by, whichever comes first (``None``: no
    bound of that kind). Then a connection failure raises
    ``PlacementUnreachable`` with one line naming Placement, how long and
    why; a last 503 is returned as Placement gave it.
    """

    # What "Placement cannot be reached" looks like to the HTTP library used.
    unreachable: tuple[type[Exception], ...] = (requests.ConnectionError, requests.Timeout)

    def __init__(self, base_url: str, *, token: str = 'admin',
                 timeout: float = 30.0, attempts: int | None = 5, max_wait: float = 2.0,
                 retry_timeout: float | None = None):
        self.base_url = base_url.rstrip('/')
        self.token = token
        self.timeout = timeout
        self.session = requests.Session()
        stops = []
        if attempts is not None:
            stops.append(tenacity.stop_after_attempt(attempts))
        if retry_timeout is not None:
            stops.append(tenacity.stop_after_delay(retry_timeout))
        stop = stops[0] if len(stops) == 1 else tenacity.stop_any(*stops)
        self._retrying = tenacity.Retrying(
            retry=(tenacity.retry_if_exception_type(self.unreachable)
                   | tenacity.retry_if_result(lambda resp: resp.status_code == 503)),
            stop=stop,
            wait=tenacity.wait_exponential(multiplier=0.05, max=max_wait),
            retry_error_callback=_last_outcome)

    def request(self, method, path, body=None, microversion=MICROVERSION) -> Response:
        headers = {'accept': 'application/json',
                   'openstack-api-version': f'placement {microversion}'}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers['content-type'] = 'application/json'
        began = time.monotonic()
        retrying = self._retrying.copy()
        try:
            resp = retrying(self._send, method, path, data, headers)
        except self.unreachable as exc:
            attempts = retrying.statistics.get('attempt_number', 1)
            raise PlacementUnreachable(
                f'placement at {self.base_url} unreachable after {attempts} '
                f'attempt(s) in {time.monotonic() - began:.1f} s: {_why(exc)}') from exc
        return Response(resp.status_code, _json_body(resp))

    def _send(self, method: str, path: str, data: str | None, headers: dict):
        """One attempt: a ``requests.Response``."""
        return self.session.request(method, self.base_url + path, data=data,
                                    headers={**headers, 'x-auth-token': self.token},
                                    timeout=self.timeout)


class KeystoneTransport(HttpTransport):
    """Placement over HTTP as a Keystone user: a keystoneauth1 adapter gets,
    caches and renews the token (once more on a 401), and finds Placement
    in the service catalog unless it was given its URL. Retries as
    ``HttpTransport``."""

    unreachable = (ks_exc.ConnectFailure, ks_exc.ConnectTimeout)

    def __init__(self, adapter, *, attempts: int | None = 5, max_wait: float = 2.0,
                 retry_timeout: float | None = None):
        where = adapter.endpoint_override or f'the catalog\'s {adapter.service_type} endpoint'
        super().__init__(where, attempts=attempts, max_wait=max_wait,
                         retry_timeout=retry_timeout)
        self.adapter = adapter
        self.session = adapter.session

    def _send(self, method: str, path: str, data: str | None, headers: dict):
        return self.adapter.request(path, method, data=data, headers=headers,
                                    raise_exc=False)


def _last_outcome(state: tenacity.RetryCallState):
    """When retrying stops: raise the last exception, or return the last response."""
    if state.outcome.failed:
        raise state.outcome.exception()
    return state.outcome.result()


def _json_body(resp) -> Any:
    if not resp.content:
        return None
    try:
        return resp.json()
    except ValueError:
        # A proxy's or server's own error page (a 503 while restarting).
        return {'errors': [{'status': resp.status_code,
                            'detail': resp.text.strip()[:200]}]}


_ERRNO = re.compile(r'\[Errno -?\d+\] ([^\'"\)]+)')


def _why(exc: Exception) -> str:
    """``Connection refused``, ``timed out``: the reason without the URL-laden chain."""
    if isinstance(exc, (requests.Timeout, ks_exc.ConnectTimeout)):
        return 'timed out'
    found = _ERRNO.search(str(exc))
    return found.group(1).strip() if found else type(exc).__name__


class InProcessTransport:
    """Placement without a socket: WebOb requests into the WSGI app.

    A 503 (Placement's database busy) is retried as ``HttpTransport`` does:
    exponential backoff from 0.05 s, at most ``attempts`` tries; the last
    503 is returned as Placement gave it.
    """

    def __init__(self, app, *, token: str = 'admin', attempts: int = 8,
                 max_wait: float = 2.0):
        self.app = app
        self.token = token
        self._retrying = tenacity.Retrying(
            retry=tenacity.retry_if_result(lambda resp: resp.status == 503),
            stop=tenacity.stop_after_attempt(attempts),
            wait=tenacity.wait_exponential(multiplier=0.05, max=max_wait),
            retry_error_callback=_last_outcome)

    def request(self, method, path, body=None, microversion=MICROVERSION) -> Response:
        return self._retrying.copy()(self._request_once, method, path, body, microversion)

    def _request_once(self, method, path, body, microversion) -> Response:
        import webob
        req = webob.Request.blank(path, method=method)
        req.headers['x-auth-token'] = self.token
        req.headers['accept'] = 'application/json'
        req.headers['openstack-api-version'] = f'placement {microversion}'
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        resp = req.get_response(self.app)
        return Response(resp.status_int, json.loads(resp.body) if resp.body else None)


@dataclass(frozen=True)
class Provider:
    uuid: str
    name: str
    generation: int
    parent_uuid: str | None = None
    root_uuid: str | None = None


@dataclass(frozen=True)
class Inventory:
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int | None = None     # None: total
    step_size: int = 1
    allocation_ratio: float = 1.0

    def as_body(self) -> dict:
        return {'total': self.total, 'reserved': self.reserved,
                'min_unit': self.min_unit,
                'max_unit': self.max_unit if self.max_unit is not None else self.total,
                'step_size': self.step_size, 'allocation_ratio': self.allocation_ratio}


@dataclass(frozen=True)
class ProviderSummary:
    uuid: str
    resources: dict[str, tuple[int, int]]      # class -> (capacity, used)
    traits: frozenset[str]
    parent_uuid: str | None
    root_uuid: str | None

    def free(self, resource_class: str) -> int:
        capacity, used = self.resources.get(resource_class, (0, 0))
        return capacity - used


@dataclass(frozen=True)
class Candidate:
    """One way to place the request. ``allocations`` is the PUT body's
    ``allocations`` as is; ``root_uuid`` is the tree it lands in."""
    allocations: dict[str, dict[str, dict[str, int]]]
    mappings: dict[str, list[str]]
    root_uuid: str | None

    @property
    def provider_uuids(self) -> list[str]:
        return list(self.allocations)


@dataclass(frozen=True)
class Candidates:
    candidates: list[Candidate]
    summaries: dict[str, ProviderSummary] = field(default_factory=dict)


@dataclass(frozen=True)
class ConsumerAllocations:
    allocations: dict[str, dict[str, int]]     # provider -> class -> amount
    generation: int | None
    project_id: str | None
    user_id: str | None

    def node(self, is_node: Callable[[str], bool] | None = None) -> str | None:
        """Where the consumer is: the first of its providers (by uuid) ``is_node`` accepts; None if none.

        The one answer to "where does this instance run" for the scheduler
        (which accepts the compute nodes it knows) and the cell conductor
        (which compares providers with its alternates').
        """
        for provider in sorted(self.allocations):
            if is_node is None or is_node(provider):
                return provider
        return None


class CountedTransport:
    """A transport whose every request is counted and timed (``cellplane.metrics``)."""

    def __init__(self, transport: Transport) -> None:
        self.inner = transport

    def request(self, method, path, body=None, microversion=MICROVERSION) -> Response:
        route = metrics.route_of(path)
        started = time.monotonic()
        try:
            response = self.inner.request(method, path, body, microversion)
        except PlacementUnreachable:
            metrics.PLACEMENT_REQUESTS.labels(method, route, 'unreachable').inc()
            raise
        finally:
            metrics.PLACEMENT_SECONDS.labels(method, route).observe(
                time.monotonic() - started)
        metrics.PLACEMENT_REQUESTS.labels(method, route, str(response.status)).inc()
        return response


class PlacementClient:
    """Typed operations on Placement over a Transport."""

    def __init__(self, transport: Transport, *, generation_retries: int = 10):
        self.transport = CountedTransport(transport)
        self.generation_retries = generation_retries

    @classmethod
    def over_http(cls, base_url: str, *, token: str = 'admin', **kwargs) -> PlacementClient:
        return cls(HttpTransport(base_url, token=token, **kwargs))

    @classmethod
    def in_process(cls, engine, *, randomize_candidates: bool = False,
                   **kwargs) -> PlacementClient:
        from placement.wsgi import make_app
        return cls(InProcessTransport(make_app(engine, auth_strategy='noauth2',
                                               randomize_candidates=randomize_candidates)),
                   **kwargs)

    # ----------------------------------------------------------- basics
    def _call(self, method: str, path: str, body: Any = None, *,
              ok=(200,), microversion: str = MICROVERSION) -> Response:
        resp = self.transport.request(method, path, body, microversion)
        if resp.status not in ok:
            detail, code = resp.error()
            raise PlacementClientError(resp.status, detail, code)
        return resp

    def get_provider(self, uuid: str) -> Provider | None:
        resp = self.transport.request('GET', f'/resource_providers/{uuid}')
        if resp.status == 404:
            return None
        if resp.status != 200:
            detail, code = resp.error()
            raise PlacementClientError(resp.status, detail, code)
        b = resp.body
        return Provider(b['uuid'], b['name'], b['generation'],
                        b.get('parent_provider_uuid'), b.get('root_provider_uuid'))

    def list_providers(self, *, name_prefix: str = '') -> list[Provider]:
        """Every resource provider (whose name starts with ``name_prefix``)."""
        body = self._call('GET', '/resource_providers').body
        return [Provider(b['uuid'], b['name'], b['generation'],
                         b.get('parent_provider_uuid'), b.get('root_provider_uuid'))
                for b in body['resource_providers'] if b['name'].startswith(name_prefix)]

    def delete_provider(self, uuid: str) -> bool:
        """Delete the provider; False if it is gone already.

        Placement refuses (409, ``PlacementClientError``) a provider that
        still has allocations or child providers.
        """
        resp = self._call('DELETE', f'/resource_providers/{uuid}', ok=(204, 404))
        return resp.status == 204

    def ensure_provider(self, uuid: str, name: str,
                        parent_uuid: str | None = None) -> Provider:
        """The provider ``uuid``, created (with ``name``) if it does not exist."""
        found = self.get_provider(uuid)
        if found is not None:
            return found
        body = {'uuid': uuid, 'name': name}
        if parent_uuid:
            body['parent_provider_uuid'] = parent_uuid
        resp = self.transport.request('POST', '/resource_providers', body)
        if resp.status == 409:
            # Created by someone else meanwhile (or the name is taken).
            found = self.get_provider(uuid)
            if found is not None:
                return found
        if resp.status != 200:
            detail, code = resp.error()
            raise PlacementClientError(resp.status, detail, code)
        b = resp.body
        return Provider(b['uuid'], b['name'], b['generation'],
                        b.get('parent_provider_uuid'), b.get('root_provider_uuid'))

    def _with_generation(self, uuid: str, write) -> int:
        """Run ``write(generation)``, re-reading the generation on conflict."""
        provider = self.get_provider(uuid)
        if provider is None:
            raise PlacementClientError(404, f'no resource provider {uuid}')
        generation = provider.generation
        for _ in range(self.generation_retries):
            resp = write(generation)
            if resp.status == 200:
                return resp.body['resource_provider_generation']
            detail, code = resp.error()
            if resp.status != 409 or code != CONCURRENT_UPDATE:
                raise PlacementClientError(resp.status, detail, code)
            provider = self.get_provider(uuid)
            if provider is None:
                raise PlacementClientError(404, f'no resource provider {uuid}')
            generation = provider.generation
        raise PlacementClientError(409, f'provider {uuid} kept changing; gave up after '
                                        f'{self.generation_retries} attempts',
                                   CONCURRENT_UPDATE)

    def get_inventory(self, uuid: str) -> dict[str, Inventory]:
        """The provider's inventory, resource class -> ``Inventory``."""
        body = self._call('GET', f'/resource_providers/{uuid}/inventories').body
        return {rc: Inventory(total=i['total'], reserved=i['reserved'],
                              min_unit=i['min_unit'], max_unit=i['max_unit'],
                              step_size=i['step_size'],
                              allocation_ratio=i['allocation_ratio'])
                for rc, i in body['inventories'].items()}

    def get_traits(self, uuid: str) -> frozenset[str]:
        """The provider's traits."""
        return frozenset(self._call('GET', f'/resource_providers/{uuid}/traits').body['traits'])

    def set_inventory(self, uuid: str, inventories: dict[str, Inventory | dict]) -> int:
        """Replace the provider's inventory; returns the new generation."""
        body = {rc: inv.as_body() if isinstance(inv, Inventory) else inv
                for rc, inv in inventories.items()}
        return self._with_generation(uuid, lambda gen: self.transport.request(
            'PUT', f'/resource_providers/{uuid}/inventories',
            {'resource_provider_generation': gen, 'inventories': body}))

    def set_traits(self, uuid: str, traits) -> int:
        """Replace the provider's traits (custom ones are created first)."""
        for name in traits:
            if name.startswith('CUSTOM_'):
                self._call('PUT', f'/traits/{name}', ok=(201, 204))
        return self._with_generation(uuid, lambda gen: self.transport.request(
            'PUT', f'/resource_providers/{uuid}/traits',
            {'resource_provider_generation': gen, 'traits': sorted(traits)}))

    def set_aggregates(self, uuid: str, aggregates) -> int:
        return self._with_generation(uuid, lambda gen: self.transport.request(
            'PUT', f'/resource_providers/{uuid}/aggregates',
            {'resource_provider_generation': gen, 'aggregates': sorted(aggregates)}))

    def get_aggregates(self, uuid: str) -> tuple[frozenset[str], int]:
        """The provider's aggregates and the generation they were read at."""
        body = self._call('GET', f'/resource_providers/{uuid}/aggregates').body
        return frozenset(body['aggregates']), body['resource_provider_generation']

    def change_aggregates(self, uuid: str, *, add=(), remove=()) -> bool:
        """Add and remove aggregates of the provider, keeping its others; False if none changed.

        Read, changed, written at the generation read: a write by someone
        else in between (409 placement.concurrent_update) is read again and
        the change made on what it wrote, never over it.
        """
        add, remove = frozenset(add), frozenset(remove) - frozenset(add)
        for _ in range(self.generation_retries):
            present, generation = self.get_aggregates(uuid)
            wanted = (present - remove) | add
            if wanted == present:
                return False
            resp = self.transport.request(
                'PUT', f'/resource_providers/{uuid}/aggregates',
                {'resource_provider_generation': generation, 'aggregates': sorted(wanted)})
            if resp.status == 200:
                return True
            detail, code = resp.error()
            if resp.status != 409 or code != CONCURRENT_UPDATE:
                raise PlacementClientError(resp.status, detail, code)
        raise PlacementClientError(409, f'provider {uuid} kept changing; gave up after '
                                        f'{self.generation_retries} attempts',
                                   CONCURRENT_UPDATE)

    # ------------------------------------------------------- candidates
    def get_candidates(self, resources: dict[str, int], *, required=(), forbidden=(),
                       member_of=(), not_member_of=(), in_tree: str | None = None,
                       limit: int | None = None) -> Candidates:
        """Allocation candidates for one unsuffixed request group.

        ``member_of`` is a list of aggregate sets: each set is any-of, the
        sets are all-of (as Placement's repeated ``member_of=in:``);
        ``not_member_of``: aggregates no candidate may be in
        (``member_of=!in:``, microversion 1.32).
        """
        query = [('resources', ','.join(f'{rc}:{n}' for rc, n in resources.items()))]
        traits = list(required) + [f'!{t}' for t in forbidden]
        if traits:
            query.append(('required', ','.join(traits)))
        for aggs in member_of:
            aggs = sorted(aggs)
            query.append(('member_of', aggs[0] if len(aggs) == 1
                          else 'in:' + ','.join(aggs)))
        if not_member_of:
            query.append(('member_of', '!in:' + ','.join(sorted(not_member_of))))
        if in_tree:
            query.append(('in_tree', in_tree))
        if limit:
            query.append(('limit', str(limit)))
        body = self._call('GET', '/allocation_candidates?'
                          + urllib.parse.urlencode(query)).body
        summaries = {
            uuid: ProviderSummary(
                uuid,
                {rc: (r['capacity'], r['used']) for rc, r in s['resources'].items()},
                frozenset(s.get('traits', ())), s.get('parent_provider_uuid'),
                s.get('root_provider_uuid'))
            for uuid, s in body['provider_summaries'].items()}
        candidates = []
        for ar in body['allocation_requests']:
            first = next(iter(ar['allocations']), None)
            root = summaries[first].root_uuid if first in summaries else None
            candidates.append(Candidate(ar['allocations'], ar.get('mappings', {}), root))
        return Candidates(candidates, summaries)

    # ----------------------------------------------------------- claims
    def allocations_by_consumer(self, progress=None) -> dict[str, dict[str, dict[str, int]]]:
        """Consumer -> provider uuid -> {resource class: amount}, over every provider.

        One request per provider (Placement lists allocations by provider or
        by consumer, not all at once); ``progress(done, total)`` is called
        after each.
        """
        providers = self._call('GET', '/resource_providers').body['resource_providers']
        held: dict[str, dict[str, dict[str, int]]] = {}
        for done, provider in enumerate(providers, 1):
            body = self._call('GET', f'/resource_providers/{provider["uuid"]}/allocations').body
            for consumer, entry in body['allocations'].items():
                held.setdefault(consumer, {})[provider['uuid']] = dict(entry['resources'])
            if progress is not None:
                progress(done, len(providers))
        return held

    def get_allocations(self, consumer_uuid: str) -> ConsumerAllocations:
        b = self._call('GET', f'/allocations/{consumer_uuid}').body
        return ConsumerAllocations(
            {rp: a['resources'] for rp, a in b['allocations'].items()},
            b.get('consumer_generation'), b.get('project_id'), b.get('user_id'))

    def claim(self, consumer_uuid: str, allocations: dict, *, project_id: str,
              user_id: str, consumer_generation: int | None = None,
              consumer_type: str = 'INSTANCE') -> None:
        """Write the consumer's allocations (replacing any it has).

        ``allocations`` is {provider: {"resources": {...}}} (a candidate's
        ``allocations``) or {provider: {class: amount}}. ``consumer_generation``
        None means "the consumer has no allocations yet". Raises
        ClaimConflict on 409; nothing was written then.
        """
        body = {'allocations': {rp: (a if 'resources' in a else {'resources': a})
                                for rp, a in allocations.items()},
                'project_id': project_id, 'user_id': user_id,
                'consumer_generation': consumer_generation,
                'consumer_type': consumer_type}
        resp = self.transport.request('PUT', f'/allocations/{consumer_uuid}', body)
        if resp.status == 204:
            return
        detail, code = resp.error()
        if resp.status == 409:
            raise ClaimConflict(409, detail, code)
        raise PlacementClientError(resp.status, detail, code)

    def claim_many(self, allocations_by_consumer: dict[str, dict], *, project_id: str,
                   user_id: str, consumer_type: str = 'INSTANCE') -> None:
        """``claim`` for several new consumers in one ``POST /allocations``: all or none.

        ``allocations_by_consumer``: consumer uuid -> allocations as ``claim``
        takes them; none of the consumers may have allocations yet. Raises
        ClaimConflict on 409 (Placement names the provider or consumer that
        conflicted); nothing was written then.
        """
        body = {consumer: {'allocations': {rp: (a if 'resources' in a else {'resources': a})
                                           for rp, a in allocations.items()},
                           'project_id': project_id, 'user_id': user_id,
                           'consumer_generation': None, 'consumer_type': consumer_type}
                for consumer, allocations in allocations_by_consumer.items()}
        resp = self.transport.request('POST', '/allocations', body)
        if resp.status == 204:
            return
        detail, code = resp.error()
        if resp.status == 409:
            raise ClaimConflict(409, detail, code)
        raise PlacementClientError(resp.status, detail, code)

    def unclaim(self, consumer_uuid: str) -> bool:
        """Remove all the consumer's allocations; False if it had none."""
        resp = self.transport.request('DELETE', f'/allocations/{consumer_uuid}')
        if resp.status == 204:
            return True
        if resp.status == 404:
            return False
        detail, code = resp.error()
        raise PlacementClientError(resp.status, detail, code)

    def usages(self, project_id: str, user_id: str | None = None) -> dict[str, dict[str, int]]:
        query = {'project_id': project_id}
        if user_id:
            query['user_id'] = user_id
        return self._call('GET', '/usages?' + urllib.parse.urlencode(query)).body['usages']
