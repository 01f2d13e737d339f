"""The clients a cloud's users already have, pointed at a test deployment: python-openstackclient and openstacksdk.

Both are the real, unmodified packages, pinned in setup.cfg's test extra
(``python-openstackclient``, ``openstacksdk``). They reach cellplane as they
reach any cloud: a password login to the test Keystone
(``tests/support/keystone.py``), then the ``compute`` and ``image``
endpoints of the deployment's region in the token's catalog
(``Deployment(keystone=..., compute_api=True)`` registers them).

    osc = Openstack(deployment, MEMBER_A)
    osc('server', 'list', '--long')          # parsed ``-f json`` output
    osc.fails('server', 'show', 'nope')      # (exit status, stderr)
    conn = sdk(deployment, MEMBER_A)         # openstack.connect(...) in-process

``openstack`` runs as a process of its own per command, forked from one
that imported it once (``tests/support/cli_runner.py``: its start-up and
imports, about 1.5 s of CPU each, are paid once per test worker); the SDK
runs in the test process.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import openstack

from tests.support import cli_runner
from tests.support.deployment import Deployment
from tests.support.keystone import DOMAIN, User

OPENSTACK = Path(sys.executable).parent / 'openstack'
# A bound on a command that must finish, not a speed expectation.
COMMAND_SECONDS = 180


class Openstack:
    """``openstack ARGV`` as ``user`` against ``deployment``'s region.

    ``console=True`` runs the installed ``openstack`` console script itself
    for every command, as a user's shell does (a fresh interpreter each).
    """

    def __init__(self, deployment: Deployment, user: User, *, console: bool = False):
        self.console = console
        keystone = deployment.keystone
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith('OS_')},
                    'OS_AUTH_TYPE': 'password', 'OS_AUTH_URL': keystone.url,
                    'OS_IDENTITY_API_VERSION': '3', 'OS_USERNAME': user.name,
                    'OS_PASSWORD': user.password, 'OS_PROJECT_NAME': user.project,
                    'OS_USER_DOMAIN_NAME': DOMAIN, 'OS_PROJECT_DOMAIN_NAME': DOMAIN,
                    'OS_REGION_NAME': deployment.region, 'OS_INTERFACE': 'public'}

    def run(self, *argv: str) -> subprocess.CompletedProcess:
        if self.console:
            return subprocess.run([str(OPENSTACK), *argv], capture_output=True, text=True,
                                  env=self.env, timeout=COMMAND_SECONDS,
                                  stdin=subprocess.DEVNULL)
        return cli_runner.run('openstackclient.shell', list(argv), env=self.env,
                              timeout=COMMAND_SECONDS)

    def __call__(self, *argv: str, json_output: bool = True):
        """The command's parsed ``-f json`` output (its stdout without); it must exit 0."""
        proc = self.run(*argv, *(('-f', 'json') if json_output else ()))
        if proc.returncode != 0:
            raise AssertionError(f'openstack {" ".join(argv)} failed ({proc.returncode}):\n'
                                 f'{proc.stderr}\n{proc.stdout}')
        return json.loads(proc.stdout) if json_output else proc.stdout

    def fails(self, *argv: str) -> tuple[int, str]:
        """(exit status, stderr) of a command that must fail."""
        proc = self.run(*argv)
        if proc.returncode == 0:
            raise AssertionError(f'openstack {" ".join(argv)} succeeded:\n{proc.stdout}')
        return proc.returncode, proc.stderr


def sdk(deployment: Deployment, user: User) -> openstack.connection.Connection:
    """openstacksdk's Connection as ``user``, in the deployment's region."""
    keystone = deployment.keystone
    return openstack.connect(
        auth_url=keystone.url, username=user.name, password=user.password,
        project_name=user.project, user_domain_name=DOMAIN, project_domain_name=DOMAIN,
        region_name=deployment.region, interface='public', identity_api_version='3',
        load_yaml_config=False, load_envvars=False)
