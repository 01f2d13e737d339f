"""The compute API as a user's tools call it, for boot_bench's ``--via api``: boot, watch, list.

    client = ComputeClient('http://127.0.0.1:8774', token)   # microversion negotiated
    client.create('web', 'bench.small', count=10)             # POST /servers (min = max = 10)
    watch = BootWatch(client, 'web', expected=10)             # which of them are final
    watch.look()                                              # -> progress.Seen

One HTTP session (keep-alive) with the token in ``X-Auth-Token``, every
request at the highest microversion the API advertises (``GET /v2.1``), as
openstacksdk negotiates it. ``BootWatch`` polls ``GET /servers/detail``
with the filters clients pass when they wait for many servers:
``changes-since`` the start of the boots and ``status=BUILD&status=ERROR``,
so each poll answers only the servers not ACTIVE yet (a finished boot drops
out of the answer); pages are followed through ``servers_links``.
"""
from __future__ import annotations

import datetime
import time

import progress  # the sibling benchmarks/progress.py
import requests

# Nova's (and cellplane's) largest page: GET /servers/detail?limit=1000.
LIST_LIMIT = 1000
# A bound on one HTTP request that must answer, not a speed expectation.
REQUEST_SECONDS = 120


class ApiError(RuntimeError):
    """The API answered with an error status; ``str()`` has the method, path, status and body."""


class ComputeClient:
    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip('/')
        self.session = requests.Session()
        self.session.headers['X-Auth-Token'] = token
        self.session.headers['Accept'] = 'application/json'
        version = self.call('GET', '/v2.1').json()['version']['version']
        self.version = version
        self.session.headers['OpenStack-API-Version'] = f'compute {version}'

    def call(self, method: str, path: str, **kwargs) -> requests.Response:
        """One request (``path`` below the API's URL, or a full link); raises ``ApiError`` on >= 400."""
        url = path if path.startswith('http') else self.url + path
        resp = self.session.request(method, url, timeout=REQUEST_SECONDS, **kwargs)
        if resp.status_code >= 400:
            raise ApiError(f'{method} {path}: {resp.status_code} {resp.text[:500]}')
        return resp

    def create(self, name: str, flavor: str, *, count: int = 1, image: str = 'bench') -> str:
        """``POST /servers`` of ``count`` servers (one request); the first one's id, as Nova answers."""
        server = {'name': name, 'flavorRef': flavor, 'imageRef': image, 'networks': 'none'}
        if count > 1:
            server.update(min_count=count, max_count=count)
        return self.call('POST', '/v2.1/servers', json={'server': server}).json()['server']['id']

    def servers(self, path: str = '/v2.1/servers/detail', params=None) -> list[dict]:
        """Every server a list answers, its pages followed (``servers_links`` ``next``)."""
        found: list[dict] = []
        while path:
            body = self.call('GET', path, params=params).json()
            found += body['servers']
            path = next((link['href'] for link in body.get('servers_links', ())
                         if link['rel'] == 'next'), None)
            params = None       # the next link carries them
        return found


def isotime(at: datetime.datetime) -> str:
    return at.strftime('%Y-%m-%dT%H:%M:%S.%fZ')


class BootWatch:
    """The servers named ``prefix``... booted since now: how many are final, as ``progress.Seen``."""

    def __init__(self, client: ComputeClient, prefix: str, expected: int) -> None:
        self.client = client
        self.prefix = prefix
        self.expected = expected
        # A second early: the API database's clock and this one are the machine's.
        self.since = isotime(datetime.datetime.now(datetime.timezone.utc)
                             - datetime.timedelta(seconds=1))
        self.polls = 0

    def look(self) -> progress.Seen:
        """One poll: the servers still BUILD or in ERROR; the rest of ``expected`` are ACTIVE."""
        self.polls += 1
        unfinished = [s for s in self.client.servers(params=[
            ('changes-since', self.since), ('status', 'BUILD'), ('status', 'ERROR')])
            if s['name'].startswith(self.prefix)]
        errors: dict[str, int] = {}
        building = 0
        for server in unfinished:
            if server['status'] == 'ERROR':
                reason = (server.get('fault') or {}).get('message') or 'ERROR without a fault'
                errors[reason] = errors.get(reason, 0) + 1
            else:
                building += 1
        return progress.Seen(active=self.expected - building - sum(errors.values()),
                             errors=errors)

    def wait(self, watch: progress.Progress, *, poll_seconds: float) -> dict[str, int]:
        """Poll until ``watch`` says every server is final; ``{'active': n, 'error': m}``."""
        while True:
            seen = self.look()
            if watch.update(seen):
                return {'active': seen.active, 'error': seen.error}
            time.sleep(poll_seconds)

    def ids(self) -> list[str]:
        """The ids of the servers named ``prefix``... made since the watch began."""
        return [s['id'] for s in self.client.servers('/v2.1/servers', params={
            'changes-since': self.since}) if s['name'].startswith(self.prefix)]
