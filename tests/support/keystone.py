"""A real OpenStack Keystone for the integration tests: installed, started once per session, stopped.

Keystone (PyPI ``keystone``, pinned in ``tools/keystone/requirements.txt``)
lives in a venv of its own, ``.venv-keystone``, which
``tools/keystone/setup_venv.sh`` builds (``.ci/run`` runs it first; the
``keystone`` fixture runs it too, so a developer's first run installs it,
about 35 s, and later runs find it cached). When it cannot be installed,
the tests that need Keystone skip and say so, or fail under ``CI=true`` /
``CELLPLANE_REQUIRE_INTEGRATION=1`` (``backing_services.unavailable``).

``Keystone.start`` makes a fresh one in a directory of its own: identity
v3, fernet tokens, SQLite, ``keystone-manage db_sync`` and ``bootstrap``,
served by gunicorn on a free port of 127.0.0.1 (about 10 s here), then the
projects, users and role assignments of ``USERS`` through the identity API
as the bootstrap admin. Only tests that ask for the ``keystone`` fixture
start it; a pytest-xdist worker starts at most one.
"""
from __future__ import annotations

import ctypes
import dataclasses
import grp
import os
import pwd
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import v3

from tests.support.backing_services import unavailable

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / 'tools' / 'keystone'
VENV = Path(os.environ.get('CELLPLANE_KEYSTONE_VENV', REPO / '.venv-keystone'))
REGION = 'RegionOne'
DOMAIN = 'Default'
# A bound on things that must happen, not a performance expectation.
START_SECONDS = 120


@dataclasses.dataclass(frozen=True)
class User:
    """A Keystone user with a role on one project (domain Default)."""
    name: str
    project: str
    role: str
    password: str = 'secret'


ADMIN = User('admin', 'admin', 'admin')          # made by keystone-manage bootstrap
# cellplane's daemons (scheduler, conductors, agents) in their [placement]
# sections, and Placement's auth_token in [keystone_authtoken]: the service
# role, as the deploy guides give Nova's and Placement's service users.
SERVICE = User('cellplane', 'service', 'service')
PLACEMENT = User('placement', 'service', 'service')
MEMBER_A = User('alice', 'project-a', 'member')
READER_A = User('rita', 'project-a', 'reader')
MEMBER_B = User('bob', 'project-b', 'member')
USERS = (SERVICE, PLACEMENT, MEMBER_A, READER_A, MEMBER_B)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def ensure_venv() -> Path:
    """``.venv-keystone``, installed (or found cached) by tools/keystone/setup_venv.sh."""
    proc = subprocess.run(['bash', str(TOOLS / 'setup_venv.sh')], capture_output=True,
                          text=True, timeout=900,
                          env={**os.environ, 'KEYSTONE_VENV': str(VENV)})
    if proc.returncode != 0:
        why = ' '.join(proc.stderr.strip().splitlines()[-3:]) or f'exit status {proc.returncode}'
        unavailable(f'Keystone (to be installed in {VENV})',
                    f'tools/keystone/setup_venv.sh failed: {why}. Run it by hand to see '
                    f'why, or set CELLPLANE_KEYSTONE_VENV to a venv with keystone and gunicorn')
    return VENV


class Keystone:
    """One Keystone process (gunicorn) on 127.0.0.1 with ``USERS`` created."""

    def __init__(self, workdir: Path, venv: Path = VENV, *, workers: int = 1,
                 threads: int = 4) -> None:
        self.workdir = Path(workdir)
        self.venv = Path(venv)
        # One process loads Keystone once (about 2 s of CPU); threads serve
        # the daemons' logins and auth_token's validations side by side.
        self.workers = workers
        self.threads = threads
        self.port = _free_port()
        self.url = f'http://127.0.0.1:{self.port}/v3'
        self.config = self.workdir / 'keystone.conf'
        self.log = self.workdir / 'keystone.log'
        self.process: subprocess.Popen | None = None
        self.ids: dict[str, str] = {}          # project name -> id
        self.startup_seconds = 0.0

    # -- start and stop -----------------------------------------------------------------
    def start(self) -> 'Keystone':
        began = time.monotonic()
        try:
            self._write_config()
            owner = ('--keystone-user', _user(), '--keystone-group', _group())
            # Independent (the database, two key repositories): side by side.
            self._manage(['db_sync'], ['fernet_setup', *owner], ['credential_setup', *owner])
            self._manage(['bootstrap', '--bootstrap-password', ADMIN.password,
                         '--bootstrap-admin-url', self.url + '/',
                         '--bootstrap-internal-url', self.url + '/',
                         '--bootstrap-public-url', self.url + '/',
                         '--bootstrap-region-id', REGION])
            self._serve()
            self._create_users()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        return self

    def _write_config(self) -> None:
        for keys in ('fernet-keys', 'credential-keys'):
            (self.workdir / keys).mkdir(parents=True, exist_ok=True)
        # Receipts read [fernet_receipts]; its default repository is in /etc.
        self.config.write_text(
            f'[DEFAULT]\nlog_file = {self.log}\n'
            f'[database]\nconnection = sqlite:///{self.workdir}/keystone.sqlite\n'
            f'[token]\nprovider = fernet\n'
            f'[fernet_tokens]\nkey_repository = {self.workdir}/fernet-keys\n'
            f'[fernet_receipts]\nkey_repository = {self.workdir}/fernet-keys\n'
            f'[credential]\nkey_repository = {self.workdir}/credential-keys\n'
            # bcrypt's fewest rounds: each login checks a password (0.3 s at the default 12).
            f'[identity]\npassword_hash_rounds = 4\n')

    def _env(self) -> dict[str, str]:
        return {**os.environ, 'OS_KEYSTONE_CONFIG_FILES': str(self.config)}

    def _manage(self, *commands: list[str]) -> None:
        """``keystone-manage`` once per command, all at once; an error names the one that failed."""
        procs = [(argv, subprocess.Popen(
            [str(self.venv / 'bin' / 'keystone-manage'), '--config-file', str(self.config),
             *argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=self._env())) for argv in commands]
        failed = []
        for argv, proc in procs:
            _, err = proc.communicate(timeout=300)
            if proc.returncode != 0:
                failed.append(f'keystone-manage {argv[0]} failed ({proc.returncode}):\n'
                              f'{err[-3000:]}')
        if failed:
            raise RuntimeError('\n'.join(failed) + '\n' + self._log_tail())

    def _serve(self) -> None:
        with open(self.workdir / 'gunicorn.log', 'ab') as out:
            self.process = subprocess.Popen(
                [str(self.venv / 'bin' / 'gunicorn'), '--no-control-socket',
                 '--chdir', str(TOOLS), '--workers', str(self.workers),
                 '--worker-class', 'gthread', '--threads', str(self.threads),
                 '--bind', f'127.0.0.1:{self.port}', '--timeout', '120',
                 'keystone_wsgi:application'],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env=self._env(), start_new_session=True, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                if requests.get(self.url + '/', timeout=5).status_code == 200:
                    return
            except (requests.ConnectionError, requests.Timeout):
                # Not listening yet, or a worker still loading Keystone under
                # load: ask again until the deadline.
                pass
            if self.process.poll() is not None:
                raise RuntimeError(f'Keystone (gunicorn) exited with {self.process.returncode}:\n'
                                   f'{(self.workdir / "gunicorn.log").read_text()[-3000:]}')
            if time.monotonic() > deadline:
                raise RuntimeError(f'Keystone did not answer {self.url}/ in {START_SECONDS} s')
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        # The gunicorn master stops its workers on SIGTERM.
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def _log_tail(self) -> str:
        return self.log.read_text()[-3000:] if self.log.exists() else ''

    # -- identities ----------------------------------------------------------------------
    def _create_users(self) -> None:
        admin = self.adapter(ADMIN)
        roles = {r['name']: r['id'] for r in admin.get('/roles').json()['roles']}
        projects = {p['name']: p['id'] for p in admin.get('/projects').json()['projects']}
        domain = 'default'
        for user in USERS:
            if user.project not in projects:
                projects[user.project] = admin.post('/projects', json={'project': {
                    'name': user.project, 'domain_id': domain}}).json()['project']['id']
            user_id = admin.post('/users', json={'user': {
                'name': user.name, 'password': user.password,
                'domain_id': domain}}).json()['user']['id']
            admin.put(f'/projects/{projects[user.project]}/users/{user_id}'
                      f'/roles/{roles[user.role]}')
        self.ids = projects

    def project_id(self, user: User) -> str:
        return self.ids[user.project]

    def auth(self, user: User) -> v3.Password:
        return v3.Password(auth_url=self.url, username=user.name, password=user.password,
                           user_domain_name=DOMAIN, project_name=user.project,
                           project_domain_name=DOMAIN)

    def session(self, user: User) -> ks_session.Session:
        return ks_session.Session(auth=self.auth(user))

    def adapter(self, user: User, **kwargs) -> ks_adapter.Adapter:
        """keystoneauth1 for ``user``; identity by default, raising on an error status."""
        kwargs.setdefault('service_type', 'identity')
        kwargs.setdefault('interface', 'public')
        return ks_adapter.Adapter(self.session(user), **kwargs)

    def system_admin(self) -> ks_adapter.Adapter:
        """The bootstrap admin, system-scoped (Keystone's defaults keep limits and the catalog to it)."""
        auth = v3.Password(auth_url=self.url, username=ADMIN.name, password=ADMIN.password,
                           user_domain_name=DOMAIN, system_scope='all')
        return ks_adapter.Adapter(ks_session.Session(auth=auth), service_type='identity',
                                  interface='public')

    def system_reader(self, name: str, password: str = 'secret') -> dict[str, str]:
        """A new user with the reader role on the system (what oslo.limit reads limits as,
        as Nova's deploy guide gives its service user); its ``[oslo_limit]`` options."""
        admin = self.system_admin()
        roles = {r['name']: r['id'] for r in admin.get('/roles').json()['roles']}
        user_id = admin.post('/users', json={'user': {
            'name': name, 'password': password, 'domain_id': 'default'}}).json()['user']['id']
        admin.put(f'/system/users/{user_id}/roles/{roles["reader"]}')
        return {'auth_type': 'password', 'auth_url': self.url, 'username': name,
                'password': password, 'user_domain_name': DOMAIN, 'system_scope': 'all'}

    def token(self, user: User) -> str:
        """A new project-scoped token of ``user``."""
        return self.session(user).get_token()

    # -- what cellplane's config files say -----------------------------------------------
    def password_options(self, user: User) -> dict[str, str]:
        """keystoneauth1's password plugin options for ``user``, as a config section has them."""
        return {'auth_type': 'password', 'auth_url': self.url, 'username': user.name,
                'password': user.password, 'project_name': user.project,
                'user_domain_name': DOMAIN, 'project_domain_name': DOMAIN}

    def authtoken_section(self) -> dict[str, str]:
        """Placement's ``[keystone_authtoken]``: tokens validated as the placement user."""
        return {'www_authenticate_uri': self.url, **self.password_options(PLACEMENT)}

    # -- the catalog ---------------------------------------------------------------------
    def add_endpoint(self, service_type: str, url: str, region: str) -> None:
        """``service_type`` at ``url`` in ``region`` (public and internal), made when new."""
        admin = self.adapter(ADMIN)
        services = admin.get('/services', params={'type': service_type}).json()['services']
        if services:
            service_id = services[0]['id']
        else:
            service_id = admin.post('/services', json={'service': {
                'type': service_type, 'name': service_type}}).json()['service']['id']
        if admin.get(f'/regions/{region}', raise_exc=False).status_code == 404:
            admin.post('/regions', json={'region': {'id': region}})
        for interface in ('public', 'internal'):
            admin.post('/endpoints', json={'endpoint': {
                'service_id': service_id, 'interface': interface, 'url': url,
                'region_id': region}})

    def remove_region(self, region: str) -> None:
        """The endpoints of ``region`` and the region, as ``add_endpoint`` made them."""
        admin = self.adapter(ADMIN)
        for endpoint in admin.get('/endpoints', params={'region_id': region}).json()['endpoints']:
            admin.delete(f'/endpoints/{endpoint["id"]}')
        admin.delete(f'/regions/{region}')


def _die_with_parent() -> None:
    """Linux, in the child before exec: SIGTERM to it when the test process dies,
    however it dies, so that no Keystone outlives a killed test run."""
    if sys.platform.startswith('linux'):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


def _user() -> str:
    return pwd.getpwuid(os.getuid()).pw_name


def _group() -> str:
    return grp.getgrgid(os.getgid()).gr_name


@pytest.fixture(scope='session')
def keystone(tmp_path_factory):
    """A running Keystone with ``USERS``, started on first use in the session, stopped at its end."""
    venv = ensure_venv()
    server = Keystone(tmp_path_factory.mktemp('keystone'), venv).start()
    yield server
    server.stop()
