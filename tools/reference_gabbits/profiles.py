"""The server configurations the reference's YAML files are written for.

The reference's fixtures configure its app per file; a live daemon is
configured by its file. Each profile is the config-file sections that
give the daemon what those fixtures set (one daemon start per profile):

- legacy: APIFixture and every data fixture, LegacyRBACPolicyFixture
  (the deprecated policy defaults accepted too);
- secure: SecureRBACPolicyFixture (the new defaults; oslo.policy 6
  always checks a rule's scope, it has no ``enforce_scope`` any more);
- open: OpenPolicyFixture (every rule but ``admin_api`` is "@");
- cors: CORSFixture (CORS for one origin, the microversion header allowed).
"""
from __future__ import annotations

import yaml

PROFILES = ('legacy', 'secure', 'open', 'cors')


def sections(profile: str, policy_file: str | None = None) -> dict[str, dict[str, str]]:
    """Config-file sections of ``profile`` (``open`` needs ``policy_file``)."""
    legacy = {'oslo_policy': {'enforce_new_defaults': 'False'}}
    if profile == 'legacy':
        return legacy
    if profile == 'secure':
        return {'oslo_policy': {'enforce_new_defaults': 'True'}}
    if profile == 'open':
        return {'oslo_policy': {**legacy['oslo_policy'], 'policy_file': policy_file}}
    if profile == 'cors':
        return {**legacy, 'cors': {'allowed_origin': 'http://valid.example.com',
                                   'allow_headers': 'openstack-api-version'}}
    raise ValueError(f'unknown profile {profile}')


def open_policy(rule_names: list[str]) -> str:
    """The policy file of the open profile: as OpenPolicyFixture, "@" for all but admin_api."""
    return yaml.safe_dump({name: '@' for name in rule_names if name != 'admin_api'})


def profile_of(path: str, fixtures_module) -> str:
    """The profile a YAML file needs, from the fixtures it names."""
    with open(path) as f:
        names = (yaml.safe_load(f) or {}).get('fixtures') or ['APIFixture']
    found = {getattr(fixtures_module, name).profile for name in names}
    if len(found) != 1:
        raise ValueError(f'{path}: fixtures {names} need several profiles {sorted(found)}')
    return found.pop()
