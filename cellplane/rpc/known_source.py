"""Whether a library's function is, to the byte, the one a cellplane patch was written from.

``kombu_autoretry`` and ``idle_wait`` replace or wrap a method of a library
only over the very source they were written against: a patch over another
version could be wrong without a test noticing. ``matches`` compares the
SHA-256 of the function's source with the one recorded.
"""
from __future__ import annotations

import hashlib
import inspect


def matches(function, sha256: str) -> bool:
    """Whether ``function``'s source hashes to ``sha256`` (False when it has no source)."""
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):   # no source to compare: not known
        return False
    return hashlib.sha256(source.encode()).hexdigest() == sha256
