"""Usages summed over the consumers of a project (and optionally a user).

``totals`` answers GET /usages before microversion 1.38 (one sum per
resource class); ``by_consumer_type`` answers it from 1.38 on, grouped by
consumer type with a count of distinct consumers per group. Consumers that
never said their type are grouped under ``unknown``.
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from placement.objects import resource_class as rc_obj

UNKNOWN_TYPE = 'unknown'
ALL_TYPES = 'all'

_BASE = (
    'FROM allocations a JOIN consumers c ON c.uuid = a.consumer_id '
    'JOIN projects p ON p.id = c.project_id '
    'LEFT JOIN users u ON u.id = c.user_id '
    'LEFT JOIN consumer_types ct ON ct.id = c.consumer_type_id '
    'WHERE p.external_id = :project')


def _filters(user_id: str | None, consumer_type: str | None) -> str:
    sql = _BASE
    if user_id:
        sql += ' AND u.external_id = :user'
    if consumer_type == UNKNOWN_TYPE:
        sql += ' AND c.consumer_type_id IS NULL'
    elif consumer_type and consumer_type != ALL_TYPES:
        sql += ' AND ct.name = :ctype'
    return sql


def totals(engine: Engine, project_id: str, user_id: str | None = None) -> dict[str, int]:
    """{resource class: total used} for the project (and user)."""
    sql = ('SELECT a.resource_class_id, SUM(a.used) ' + _filters(user_id, None)
           + ' GROUP BY a.resource_class_id')
    with engine.connect() as conn:
        rows = conn.execute(sa.text(sql), {'project': project_id, 'user': user_id}).all()
        names = rc_obj.names_by_id(conn, {r[0] for r in rows})
    return {names[rc]: int(used) for rc, used in rows}


def by_consumer_type(engine: Engine, project_id: str, user_id: str | None = None,
                     consumer_type: str | None = None) -> dict[str, dict[str, int]]:
    """{consumer type: {resource class: used, ..., 'consumer_count': n}}.

    ``consumer_type`` narrows to one type; ``all`` puts everything under
    ``all`` and ``unknown`` keeps only consumers without a type.
    """
    params = {'project': project_id, 'user': user_id, 'ctype': consumer_type}
    where = _filters(user_id, consumer_type)
    if consumer_type in (ALL_TYPES, UNKNOWN_TYPE):
        # One group named after the filter itself.
        group_expr = None
        sums = (f'SELECT a.resource_class_id, SUM(a.used) {where} '
                'GROUP BY a.resource_class_id')
        counts = f'SELECT COUNT(DISTINCT a.consumer_id) {where}'
    else:
        group_expr = f"COALESCE(ct.name, '{UNKNOWN_TYPE}')"
        sums = (f'SELECT {group_expr}, a.resource_class_id, SUM(a.used) {where} '
                f'GROUP BY {group_expr}, a.resource_class_id')
        counts = (f'SELECT {group_expr}, COUNT(DISTINCT a.consumer_id) {where} '
                  f'GROUP BY {group_expr}')
    with engine.connect() as conn:
        rows = conn.execute(sa.text(sums), params).all()
        count_rows = conn.execute(sa.text(counts), params).all()
        if group_expr is None:
            if not rows:
                return {}
            rows = [(consumer_type, rc, used) for rc, used in rows]
            count_rows = [(consumer_type, count_rows[0][0])]
        names = rc_obj.names_by_id(conn, {r[1] for r in rows})
    result: dict[str, dict[str, int]] = {}
    for grp, rc, used in rows:
        result.setdefault(grp, {})[names[rc]] = int(used)
    for grp, count in count_rows:
        result.setdefault(grp, {})['consumer_count'] = int(count)
    return result
