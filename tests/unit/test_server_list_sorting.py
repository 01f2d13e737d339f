"""``server_lists._sorted``: Nova's order (NULL before any value, ties in creation order), with or
without NULLs among the values sorted on."""
from __future__ import annotations

import datetime

from webob.multidict import MultiDict

from cellplane_api import server_lists, servers


class _Req:
    def __init__(self, query: str):
        self.GET = MultiDict(pair.split('=') for pair in query.split('&') if pair)

    def allowed(self, rule, target=None):
        return True


def _server(uuid: str, host: str | None, minute: int, name: str) -> servers.Server:
    return servers.Server(uuid=uuid, name=name, status='ACTIVE', task_state=None, flavor='f',
                          cell='c', host=host, node=host, fault=None,
                          created_at=datetime.datetime(2026, 1, 1, 0, minute))


FOUND = [_server('1', 'b', 1, 'x'), _server('2', None, 2, 'y'), _server('3', 'a', 2, 'x'),
         _server('4', 'b', 3, 'z'), _server('5', None, 1, 'y')]


def _uuids(query: str) -> list[str]:
    return [s.uuid for s in server_lists._sorted(_Req(query), FOUND)]


def test_the_default_order_is_newest_first_then_the_last_created():
    assert _uuids('') == ['4', '3', '2', '5', '1']


def test_null_sorts_before_any_value_and_ties_keep_nova_order():
    # The defaults (created_at, id) follow in the first direction given.
    assert _uuids('sort_key=host&sort_dir=asc') == ['5', '2', '3', '1', '4']
    assert _uuids('sort_key=host&sort_dir=desc') == ['4', '1', '3', '2', '5']


def test_several_keys_without_nulls():
    assert _uuids('sort_key=display_name&sort_dir=asc&sort_key=created_at&sort_dir=asc') == [
        '1', '3', '5', '2', '4']
