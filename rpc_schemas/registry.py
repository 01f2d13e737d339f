"""Which payloads, and which of their versions, this service accepts.

The default rule for a registered class is the one of ``Payload.check_version``:
same major, minor no newer than the class. A class can instead be registered
with an explicit list of accepted versions (for instance to stop accepting an
old minor whose senders are known to be gone).
"""
from __future__ import annotations

from typing import Any, Iterable, TypeVar

from rpc_schemas.base import ENVELOPE_DATA, ENVELOPE_NAME, ENVELOPE_VERSION, Payload, parse_version
from rpc_schemas.errors import MalformedPayload, UnknownPayload, UnsupportedPayloadVersion

P = TypeVar('P', bound=type[Payload])


class PayloadRegistry:
    """Payload classes by name, each with the versions it accepts."""

    def __init__(self) -> None:
        self._classes: dict[str, type[Payload]] = {}
        self._accepted: dict[str, frozenset[str] | None] = {}

    def register(self, cls: P, *, accepts: Iterable[str] | None = None) -> P:
        """Register ``cls``; ``accepts`` replaces the same-major rule with a list."""
        if cls.NAME in self._classes and self._classes[cls.NAME] is not cls:
            raise ValueError(f'two payload classes are named {cls.NAME!r}')
        parse_version(cls.VERSION)
        if accepts is not None:
            accepts = frozenset(accepts)
            for version in accepts:
                parse_version(version)
        self._classes[cls.NAME] = cls
        self._accepted[cls.NAME] = accepts
        return cls

    def names(self) -> list[str]:
        return sorted(self._classes)

    def classes(self) -> list[type[Payload]]:
        return [self._classes[n] for n in self.names()]

    def lookup(self, name: Any, version: Any) -> type[Payload]:
        """The class for ``name`` if ``version`` is accepted, else a clear error."""
        try:
            cls = self._classes[name]
        except (KeyError, TypeError):
            known = ', '.join(self.names()) or 'none'
            raise UnknownPayload(
                f'unknown payload {name!r} (version {version!r}); this service '
                f'knows: {known}') from None
        accepted = self._accepted[name]
        if accepted is None:
            cls.check_version(version)
        elif version not in accepted:
            raise UnsupportedPayloadVersion(
                f'{name} version {version} is not supported here; accepted: '
                f'{", ".join(sorted(accepted))}')
        return cls

    def from_primitive(self, primitive: Any) -> Payload:
        """Build the payload an envelope describes, validating name, version and data."""
        if not is_envelope(primitive):
            raise MalformedPayload('not a cellplane payload envelope')
        missing = [k for k in (ENVELOPE_VERSION, ENVELOPE_DATA) if k not in primitive]
        if missing:
            raise MalformedPayload(
                f'{primitive[ENVELOPE_NAME]!r} payload envelope lacks '
                f'{", ".join(missing)}')
        cls = self.lookup(primitive[ENVELOPE_NAME], primitive[ENVELOPE_VERSION])
        return cls.from_data(primitive[ENVELOPE_DATA], primitive[ENVELOPE_VERSION])


def is_envelope(value: Any) -> bool:
    return isinstance(value, dict) and ENVELOPE_NAME in value


#: Every payload cellplane defines registers itself here on import.
REGISTRY = PayloadRegistry()
register = REGISTRY.register
