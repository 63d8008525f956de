"""Full text over passages in the database: SQLite FTS5 (porter stemming, bm25) on the
embedded default, PostgreSQL's tsvector (english stemming, ts_rank_cd) in production. A
question is turned into its content words joined by OR: a passage holding some of them is a
candidate, and the more and rarer it holds, the better it ranks."""

import re
from dataclasses import dataclass

from django.db import connection

from memsite.llm.providers.offline import STOPWORDS

WORD = re.compile(r"\w+", re.UNICODE)
MAX_WORDS = 32


@dataclass(frozen=True)
class Scope:
    path: str | None = None  # a node's treebeard path: only it and its subtree
    types: tuple[str, ...] = ()  # only nodes of these types


def query_words(query: str) -> list[str]:
    words = [word for word in WORD.findall(query.lower()) if word not in STOPWORDS and len(word) > 1]
    return list(dict.fromkeys(words))[:MAX_WORDS]


def scope_sql(scope: Scope) -> tuple[str, list[object]]:
    clauses, params = [], []
    if scope.path is not None:
        # A range the path index serves (LIKE is not indexed on SQLite): base-36 paths sort
        # below "~" byte by byte, and PostgreSQL's path column has the "C" collation.
        clauses.append("n.path >= %s AND n.path < %s")
        params.extend([scope.path, scope.path + "~"])
    if scope.types:
        clauses.append(f"n.type IN ({', '.join(['%s'] * len(scope.types))})")
        params.extend(scope.types)
    return "".join(f" AND {clause}" for clause in clauses), params


def rank(query: str, *, scope: Scope, limit: int) -> list[tuple[int, float]]:
    """(passage id, score) best first, higher scores better."""
    words = query_words(query)
    if not words:
        return []
    where, params = scope_sql(scope)
    if connection.vendor == "postgresql":
        sql = (
            "SELECT p.id, ts_rank_cd(p.search, q, 1) AS score FROM memory_passage p "
            "JOIN memory_node n ON n.id = p.node_id, websearch_to_tsquery('english', %s) q "
            f"WHERE p.search @@ q{where} ORDER BY score DESC, p.id LIMIT %s"
        )
        arguments = [" or ".join(words), *params, limit]
    else:
        sql = (
            "SELECT f.rowid, -bm25(memory_passage_fts) AS score FROM memory_passage_fts f "
            "JOIN memory_passage p ON p.id = f.rowid JOIN memory_node n ON n.id = p.node_id "
            f"WHERE memory_passage_fts MATCH %s{where} ORDER BY bm25(memory_passage_fts), f.rowid LIMIT %s"
        )
        arguments = [" OR ".join(f'"{word}"' for word in words), *params, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, arguments)
        return [(pk, float(score)) for pk, score in cursor.fetchall()]
