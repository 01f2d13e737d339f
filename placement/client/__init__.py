"""The Placement client the rest of cellplane uses.

    client = PlacementClient.over_http('http://127.0.0.1:8778', token='admin')   # noauth2
    client = PlacementClient(KeystoneTransport(adapter))   # a keystoneauth1 Adapter
    client = PlacementClient.in_process(engine)     # embedded mode: no socket

All speak the same REST API through the same handlers (``transport``: how
a request gets there; ``types``: what the client returns; ``errors``: what
it raises; all importable from here). Services build theirs from
``[placement]`` (``placement/client_conf.py``).

What it offers, each generation-safe:

* ``ensure_provider`` - create the provider unless it exists
  (``create_provider``: create it, for a caller that just saw it absent);
* ``get_inventory`` / ``get_traits`` - read them (to write only on change);
* ``set_many_inventories`` - the inventories of several providers in one
  request (the reshaper, with no allocations): a hollow agent's new hosts;
* ``set_inventory`` / ``set_traits`` / ``set_aggregates`` - replace them,
  re-reading the provider generation and retrying when another writer
  bumped it (409 placement.concurrent_update); given the generation the
  caller last saw (``generation=``), the first write is sent at it without
  reading the provider first. The custom traits a client has created are
  not created again by each ``set_traits`` of that client (a new host's
  first report is then three requests, not eight);
* ``change_aggregates`` - add and remove some aggregates, keeping the
  others, read and written at one generation (a conflict reads again);
* ``get_candidates`` - typed allocation candidates for the caller's query;
* ``allocations_by_consumer`` - every consumer's allocations;
* ``claim`` / ``unclaim`` - write and remove a consumer's allocations.
  A claim that loses a race or finds no room raises ``ClaimConflict`` with
  the reason; the caller decides to try another host.
* ``claim_move`` / ``unclaim_move`` - a move's claim and its undo, each one
  ``POST /allocations``: the instance's allocation goes to the migration's
  consumer and the instance claims the destination; undone, the
  instance's allocation is what the migration held and the migration holds
  nothing. Consumer generations are sent as read; a write someone else
  made in between is read again.

Connection errors and timeouts are retried (tenacity, exponential backoff);
HTTP errors are not, except the generation re-reads described above.
"""
from __future__ import annotations

import threading
import urllib.parse
from typing import Any, Sequence

from placement.client.errors import (
    CONCURRENT_UPDATE,
    ClaimConflict,
    MalformedCandidates,
    PlacementClientError,
    PlacementUnreachable,
)
from placement.client.transport import (
    MICROVERSION,
    CountedTransport,
    HttpTransport,
    InProcessTransport,
    KeystoneTransport,
    Response,
    Transport,
)
from placement.client.types import (
    Candidates,
    ConsumerAllocations,
    Inventory,
    Provider,
    ProviderSummary,
    Usage,
)

# The code of a move claim refused because the consumers are not as a move expects.
CONFLICT_NOTHING_TO_MOVE = 'cellplane.nothing_to_move'


def _entry(allocations: dict, project_id: str | None, user_id: str | None,
           generation: int | None, consumer_type: str) -> dict:
    """One consumer's part of a ``POST /allocations`` body."""
    return {'allocations': {rp: (a if 'resources' in a else {'resources': a})
                            for rp, a in allocations.items()},
            'project_id': project_id, 'user_id': user_id,
            'consumer_generation': generation, 'consumer_type': consumer_type}


__all__ = [
    'CONCURRENT_UPDATE', 'CONFLICT_NOTHING_TO_MOVE', 'MICROVERSION', 'Candidates',
    'ClaimConflict', 'ConsumerAllocations',
    'CountedTransport', 'HttpTransport', 'InProcessTransport', 'Inventory',
    'KeystoneTransport', 'MalformedCandidates', 'PlacementClient', 'PlacementClientError',
    'PlacementUnreachable', 'Provider', 'ProviderSummary', 'Response', 'Transport', 'Usage',
]


class PlacementClient:
    """Typed operations on Placement over a Transport."""

    def __init__(self, transport: Transport, *, generation_retries: int = 10):
        # The custom traits this client created (or found): not PUT again.
        self._custom_traits: set[str] = set()
        # Held while custom traits are created: an agent's hosts register on
        # many threads at once, and each had PUT the same traits (65 PUTs of
        # two traits for 100 hosts).
        self._custom_traits_lock = threading.Lock()
        # The reshaper answered 403 (no service role): set_many_inventories is not tried again.
        self._reshaper_refused = False
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
        return Provider.from_body(resp.body)

    def list_providers(self, *, name_prefix: str = '',
                       required: Sequence[str] = ()) -> list[Provider]:
        """Every resource provider (whose name starts with ``name_prefix``; with all ``required`` traits)."""
        path = '/resource_providers'
        if required:
            path += '?' + urllib.parse.urlencode({'required': ','.join(required)})
        body = self._call('GET', path).body
        return [Provider.from_body(b) for b in body['resource_providers']
                if b['name'].startswith(name_prefix)]

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
        return self.create_provider(uuid, name, parent_uuid)

    def create_provider(self, uuid: str, name: str,
                        parent_uuid: str | None = None) -> Provider:
        """Create the provider ``uuid`` (with ``name``); if it exists already, that one."""
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
        return Provider.from_body(resp.body)

    def _with_generation(self, uuid: str, write, generation: int | None = None) -> int:
        """Run ``write(generation)``, re-reading the generation on conflict.

        ``generation``: the one the caller last saw, tried first (a stale
        one is a conflict, read again); None reads it first.
        """
        if generation is None:
            generation = self._generation_of(uuid)
        for _ in range(self.generation_retries):
            resp = write(generation)
            if resp.status == 200:
                return resp.body['resource_provider_generation']
            detail, code = resp.error()
            if resp.status != 409 or code != CONCURRENT_UPDATE:
                raise PlacementClientError(resp.status, detail, code)
            generation = self._generation_of(uuid)
        raise PlacementClientError(409, f'provider {uuid} kept changing; gave up after '
                                        f'{self.generation_retries} attempts',
                                   CONCURRENT_UPDATE)

    def _generation_of(self, uuid: str) -> int:
        provider = self.get_provider(uuid)
        if provider is None:
            raise PlacementClientError(404, f'no resource provider {uuid}')
        return provider.generation

    def get_inventory(self, uuid: str) -> dict[str, Inventory]:
        """The provider's inventory, resource class -> ``Inventory``."""
        body = self._call('GET', f'/resource_providers/{uuid}/inventories').body
        return {rc: Inventory(total=i['total'], reserved=i['reserved'],
                              min_unit=i['min_unit'], max_unit=i['max_unit'],
                              step_size=i['step_size'],
                              allocation_ratio=i['allocation_ratio'])
                for rc, i in body['inventories'].items()}

    def get_usages(self, uuid: str) -> dict[str, int]:
        """What the provider's allocations use, resource class -> amount."""
        return dict(self._call('GET', f'/resource_providers/{uuid}/usages').body['usages'])

    def get_traits(self, uuid: str) -> frozenset[str]:
        """The provider's traits."""
        return self.get_traits_and_generation(uuid)[0]

    def get_traits_and_generation(self, uuid: str) -> tuple[frozenset[str], int]:
        """The provider's traits and the generation they were read at (``set_traits``' ``generation``).

        The custom traits among them exist: ``set_traits`` does not create them again.
        """
        body = self._call('GET', f'/resource_providers/{uuid}/traits').body
        traits = frozenset(body['traits'])
        self._custom_traits.update(t for t in traits if t.startswith('CUSTOM_'))
        return traits, body['resource_provider_generation']

    def set_inventory(self, uuid: str, inventories: dict[str, Inventory | dict], *,
                      generation: int | None = None) -> int:
        """Replace the provider's inventory; returns the new generation."""
        body = {rc: inv.as_body() if isinstance(inv, Inventory) else inv
                for rc, inv in inventories.items()}
        return self._with_generation(uuid, lambda gen: self.transport.request(
            'PUT', f'/resource_providers/{uuid}/inventories',
            {'resource_provider_generation': gen, 'inventories': body}), generation)

    def set_many_inventories(self, providers: dict[str, tuple[int, dict]]) -> dict[str, int]:
        """Replace the inventory of several providers in one request; their new generations.

        ``providers``: uuid -> (the generation the caller last saw, resource
        class -> ``Inventory`` or body). One ``POST /reshaper`` with no
        allocations (1.30+), all or nothing: Placement bumps each
        provider's generation twice (the reshaper's interim and final
        inventory, as the reference does), so each is returned as given + 2;
        once for an empty inventory (no interim step), given + 1.
        Raises ``PlacementClientError`` if Placement refuses (a generation
        that moved, 409 ``placement.concurrent_update``; a caller without
        the reshaper's ``service`` role, 403): nothing was written then, and
        the caller writes them one by one (``set_inventory``). A 403 is
        remembered: this client does not ask again.
        """
        if self._reshaper_refused:
            raise PlacementClientError(403, 'the reshaper refused this client before')
        body = {'inventories': {
            uuid: {'resource_provider_generation': generation,
                   'inventories': {rc: inv.as_body() if isinstance(inv, Inventory) else inv
                                   for rc, inv in inventories.items()}}
            for uuid, (generation, inventories) in providers.items()}, 'allocations': {}}
        resp = self.transport.request('POST', '/reshaper', body)
        if resp.status == 204:
            return {uuid: generation + (2 if inventories else 1)
                    for uuid, (generation, inventories) in providers.items()}
        detail, code = resp.error()
        if resp.status == 403:
            self._reshaper_refused = True
        raise PlacementClientError(resp.status, detail, code)

    def set_traits(self, uuid: str, traits, *, generation: int | None = None) -> int:
        """Replace the provider's traits (custom ones are created first, once per client)."""
        custom = {name for name in traits if name.startswith('CUSTOM_')}
        for attempt in (1, 2):
            if custom - self._custom_traits:
                with self._custom_traits_lock:
                    for name in sorted(custom - self._custom_traits):
                        self._call('PUT', f'/traits/{name}', ok=(201, 204))
                        self._custom_traits.add(name)
            try:
                return self._with_generation(uuid, lambda gen: self.transport.request(
                    'PUT', f'/resource_providers/{uuid}/traits',
                    {'resource_provider_generation': gen, 'traits': sorted(traits)}),
                    generation)
            except PlacementClientError as exc:
                # A custom trait deleted since this client made it: make it again, once.
                if attempt == 2 or exc.status != 400 or not custom:
                    raise
                self._custom_traits -= custom
        raise AssertionError('unreachable')

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
    def get_candidates(self, params: Sequence[tuple[str, str]]) -> Candidates:
        """Allocation candidates for the query ``params``, sent as given and in that order.

        ``params`` are query-string pairs, e.g. the scheduler's
        ``CandidatesQuery.to_params()``: ``[("resources", "MEMORY_MB:512,VCPU:1"),
        ("required", "!COMPUTE_STATUS_DISABLED"), ("member_of", "in:<agg>"),
        ("limit", "1000")]``; what a caller records of them is what Placement
        was asked.
        """
        body = self._call('GET', '/allocation_candidates?'
                          + urllib.parse.urlencode(list(params))).body
        return Candidates.from_body(body)

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

    # ------------------------------------------------------ move claims
    def claim_move(self, instance_uuid: str, migration_uuid: str, allocations: dict, *,
                   project_id: str, user_id: str) -> None:
        """The move's claim: the source to the migration, the destination to the instance.

        In one ``POST /allocations``: the migration's consumer (new) takes
        what the instance holds now (its source host's allocation) and the
        instance's consumer holds ``allocations`` (the destination, as
        ``claim`` takes them) instead. A same-host resize holds both on
        one provider. Raises ``ClaimConflict`` when the destination has no
        room or a generation kept changing; nothing was written then. An
        instance holding nothing, or a migration that holds something
        already, is refused (``PlacementClientError`` 409): its source
        allocation is not where a move expects it.
        """
        def body(held: ConsumerAllocations, migration: ConsumerAllocations) -> dict:
            if not held.allocations:
                raise PlacementClientError(
                    409, f'instance {instance_uuid} holds no allocation to move to '
                         f'migration {migration_uuid}', CONFLICT_NOTHING_TO_MOVE)
            if migration.allocations:
                raise PlacementClientError(
                    409, f'migration {migration_uuid} already holds an allocation',
                    CONFLICT_NOTHING_TO_MOVE)
            return {
                migration_uuid: _entry(held.allocations, held.project_id or project_id,
                                       held.user_id or user_id, None, 'MIGRATION'),
                instance_uuid: _entry(allocations, project_id, user_id, held.generation,
                                      'INSTANCE'),
            }
        # The migration's consumer is new: its null generation makes Placement
        # refuse the first POST if it is not, and the retry reads it. One
        # GET less per move's claim (a quarter of the scheduler's Placement
        # calls for a move).
        self._post_moves(instance_uuid, migration_uuid, body, migration_is_new=True)

    def unclaim_move(self, instance_uuid: str, migration_uuid: str) -> bool:
        """Undo ``claim_move``: the instance holds what the migration held; the migration, nothing.

        In one ``POST /allocations`` (the destination's allocation is
        replaced, not removed first: the source's room is never offered to
        someone else in between). False, with nothing written, if the
        migration holds nothing (undone already, or never claimed).
        """
        def body(held: ConsumerAllocations, migration: ConsumerAllocations) -> dict | None:
            if not migration.allocations:
                return None
            return {
                instance_uuid: _entry(migration.allocations,
                                      held.project_id or migration.project_id,
                                      held.user_id or migration.user_id,
                                      held.generation, 'INSTANCE'),
                migration_uuid: _entry({}, migration.project_id, migration.user_id,
                                       migration.generation, 'MIGRATION'),
            }
        return self._post_moves(instance_uuid, migration_uuid, body)

    def _post_moves(self, instance_uuid: str, migration_uuid: str, body, *,
                    migration_is_new: bool = False) -> bool:
        """POST ``body(instance's, migration's)`` at the generations read; False if body is None.

        ``migration_is_new``: the first attempt takes the migration's consumer
        for one holding nothing without reading it (``body`` must then give
        it a null generation, so that Placement refuses if it exists).
        """
        for attempt in range(self.generation_retries):
            migration = (ConsumerAllocations({}, None, None, None)
                         if migration_is_new and attempt == 0
                         else self.get_allocations(migration_uuid))
            wanted = body(self.get_allocations(instance_uuid), migration)
            if wanted is None:
                return False
            resp = self.transport.request('POST', '/allocations', wanted)
            if resp.status == 204:
                return True
            detail, code = resp.error()
            if resp.status == 409 and code == CONCURRENT_UPDATE:
                continue   # a consumer changed since it was read: read again
            if resp.status == 409:
                raise ClaimConflict(409, detail, code)
            raise PlacementClientError(resp.status, detail, code)
        raise ClaimConflict(409, f'the allocations of {instance_uuid} and {migration_uuid} '
                                 f'kept changing; gave up after {self.generation_retries} '
                                 f'attempts', CONCURRENT_UPDATE)

    def usages(self, project_id: str, user_id: str | None = None) -> dict[str, dict[str, int]]:
        query = {'project_id': project_id}
        if user_id:
            query['user_id'] = user_id
        return self._call('GET', '/usages?' + urllib.parse.urlencode(query)).body['usages']
