"""Who is calling: ``noauth2`` (development) or static ``tokens``, and what
each role may do.

Both strategies read ``X-Auth-Token``; a request without a valid one gets
401 (except ``GET /``, which is open, as in the reference). Roles:

    admin, service   everything
    reader           GET and HEAD only; anything else is 403

``noauth2`` trusts the token: ``admin`` (or ``admin:<project>``) is an
administrator, ``service`` and ``reader`` have those roles, any other token
is an authenticated user with no role, refused everything but ``GET /``
(the reference's noauth2 does the same through its policy defaults).
``tokens`` reads a file of ``<token> <role>`` lines.
"""
from __future__ import annotations

from dataclasses import dataclass

from placement import errors

ADMIN = 'admin'
SERVICE = 'service'
READER = 'reader'
ROLES = (ADMIN, SERVICE, READER)
_READ_METHODS = frozenset(('GET', 'HEAD'))


class TokenFileError(Exception):
    """The token file cannot be read or has a bad line; the message says where."""


@dataclass(frozen=True, slots=True)
class Identity:
    user_id: str
    role: str | None


ANONYMOUS = Identity('anonymous', None)


class NoAuth2:
    """Development mode: the token names the user, as in the reference."""

    def authenticate(self, environ: dict) -> Identity:
        token = environ.get('HTTP_X_AUTH_TOKEN')
        if not token:
            raise errors.Unauthorized('No X-Auth-Token header was given.')
        user_id = token.partition(':')[0]
        return Identity(user_id, user_id if user_id in ROLES else None)


class StaticTokens:
    """Tokens and their roles, fixed at start-up."""

    def __init__(self, tokens: dict[str, str]):
        for token, role in tokens.items():
            if role not in ROLES:
                raise TokenFileError(
                    f'token role {role!r} is not one of {", ".join(ROLES)}')
        self._identities = {t: Identity(f'token-{i}', r)
                            for i, (t, r) in enumerate(tokens.items())}

    @classmethod
    def from_file(cls, path: str) -> 'StaticTokens':
        return cls(read_token_file(path))

    def authenticate(self, environ: dict) -> Identity:
        token = environ.get('HTTP_X_AUTH_TOKEN')
        if not token:
            raise errors.Unauthorized('No X-Auth-Token header was given.')
        identity = self._identities.get(token)
        if identity is None:
            raise errors.Unauthorized('The token given is not valid.')
        return identity


def read_token_file(path: str) -> dict[str, str]:
    """Parse ``<token> <role>`` lines; blank lines and ``#`` comments ignored."""
    tokens: dict[str, str] = {}
    try:
        with open(path, encoding='utf-8') as handle:
            lines = handle.readlines()
    except OSError as exc:
        raise TokenFileError(f'cannot read token file {path}: {exc}') from exc
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        parts = line.split()
        if len(parts) != 2 or parts[1] not in ROLES:
            raise TokenFileError(
                f'{path}:{number}: expected "<token> <role>" with role one of '
                f'{", ".join(ROLES)}')
        tokens[parts[0]] = parts[1]
    return tokens


def make_authenticator(strategy: str, *, token_file: str | None = None,
                       tokens: dict[str, str] | None = None):
    if strategy == 'noauth2':
        return NoAuth2()
    if strategy == 'tokens':
        if tokens is not None:
            return StaticTokens(tokens)
        if not token_file:
            raise TokenFileError(
                '[api] auth_strategy = tokens needs [api] token_file')
        return StaticTokens.from_file(token_file)
    raise ValueError(f'unknown auth strategy {strategy!r}')


def authorize(identity: Identity, method: str, path: str) -> None:
    """Raise 403 unless ``identity``'s role allows ``method`` on the API."""
    role = identity.role
    if role == ADMIN or role == SERVICE:
        return
    if role == READER and method in _READ_METHODS:
        return
    raise errors.Forbidden(
        f'Policy does not allow {method} {path} to be performed.')
