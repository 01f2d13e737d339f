"""The ``links`` of a compute API document: ``self`` (with the version) and ``bookmark`` (without)."""
from __future__ import annotations


def links(req, kind: str, ident: str) -> list[dict]:
    """``[{"rel": "self", "href": ".../v2.1[/p]/kind/id"}, {"rel": "bookmark", "href": ".../[p/]kind/id"}]``"""
    return [{'rel': 'self', 'href': f'{req.link_base()}/{kind}/{ident}'},
            {'rel': 'bookmark', 'href': f'{req.host_url}{req.prefix.removeprefix("/v2.1")}'
                                        f'/{kind}/{ident}'}]
