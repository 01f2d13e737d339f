"""The ``links`` of a compute API document: ``self`` (with the version) and ``bookmark`` (without)."""
from __future__ import annotations


def links(req, kind: str, ident: str) -> list[dict]:
    """``[{"rel": "self", "href": ".../v2.1[/p]/kind/id"}, {"rel": "bookmark", "href": ".../[p/]kind/id"}]``"""
    versioned, bookmark = req.link_bases()
    return [{'rel': 'self', 'href': f'{versioned}/{kind}/{ident}'},
            {'rel': 'bookmark', 'href': f'{bookmark}/{kind}/{ident}'}]
