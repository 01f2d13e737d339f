"""Small SQL helpers every search path shares: inlined id lists, raw fetches, provider traits."""
from __future__ import annotations

from sqlalchemy.engine import Connection


def in_list(ids) -> str:
    # Internal integer ids only: safe to inline, and it spares the driver
    # thousands of bound parameters on the hot path.
    return ','.join(str(int(i)) for i in ids) or 'NULL'



def names_of_traits(conn: Connection, ids) -> dict[int, str]:
    """{id: name} of the traits ``ids``, by one small query."""
    if not ids:
        return {}
    return dict(fetch(conn, f'SELECT id, name FROM traits WHERE id IN ({in_list(ids)})'))


def fetch(conn: Connection, sql: str) -> list[tuple]:
    """Rows of a parameterless statement as plain tuples, straight from the
    driver: thousands of rows per request, SQLAlchemy Row objects cost
    more than the query."""
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute(sql)
        return cursor.fetchall()
    finally:
        cursor.close()


def traits_of(conn: Connection, provider_ids) -> list[tuple[int, str]]:
    if not provider_ids:
        return []
    return fetch(conn,
                  'SELECT rpt.resource_provider_id, t.name FROM resource_provider_traits rpt '
                  'JOIN traits t ON t.id = rpt.trait_id '
                  f'WHERE rpt.resource_provider_id IN ({in_list(provider_ids)}) '
                  # The reference lists a provider's traits in trait id order.
                  'ORDER BY rpt.resource_provider_id, t.id')
