"""Full text over passages in the database: SQLite FTS5 (porter stemming, bm25) on the
embedded default, PostgreSQL's tsvector (english stemming, ts_rank_cd) in production. A
question is turned into its content words joined by OR: a passage holding some of them is a
candidate, and the more and rarer it holds, the better it ranks."""

from dataclasses import dataclass
from datetime import date
from time import monotonic

import snowballstemmer
from django.db import connection

from memsite.text.words import content_words

MAX_WORDS = 32


@dataclass(frozen=True)
class Scope:
    space_id: int | None = None  # only the nodes of this space (None: of every space)
    path: str | None = None  # a node's treebeard path: only it and its subtree
    types: tuple[str, ...] = ()  # only nodes of these types
    after: date | None = None  # only passages dated on or after this day (docs/retrieval.md, "Time")
    before: date | None = None  # only passages dated on or before this day

    @property
    def dated(self) -> bool:
        """Whether a time window keeps only the passages dated in it."""
        return self.after is not None or self.before is not None


def query_words(query: str) -> list[str]:
    """The query's content words, once each, the first MAX_WORDS of them: what full text matches."""
    return list(dict.fromkeys(content_words(query)))[:MAX_WORDS]


def scope_sql(scope: Scope) -> tuple[str, list[str | int | date]]:
    """SQL conditions on the nodes `n` for the scope, and on the passages `p` for its time
    window, and their parameters (to which callers add)."""
    clauses: list[str] = []
    params: list[str | int | date] = []
    if scope.space_id is not None:
        clauses.append("n.space_id = %s")
        params.append(scope.space_id)
    if scope.path is not None:
        # A range the path index serves (LIKE is not indexed on SQLite): base-36 paths sort
        # below "~" byte by byte, and PostgreSQL's path column has the "C" collation.
        clauses.append("n.path >= %s AND n.path < %s")
        params.extend([scope.path, scope.path + "~"])
    if scope.types:
        clauses.append(f"n.type IN ({', '.join(['%s'] * len(scope.types))})")
        params.extend(scope.types)
    if scope.after is not None:  # the partial index of dated passages serves both bounds
        clauses.append("p.date >= %s")
        params.append(scope.after)
    if scope.before is not None:
        clauses.append("p.date <= %s")
        params.append(scope.before)
    return "".join(f" AND {clause}" for clause in clauses), params


# A word found in more passages than this says little about any of them (its weight in the
# ranking is near nothing), yet ranking costs a row a match: such words are left out of a query
# that has rarer ones. (At 1,000, "latency" in a tree of 10,000 notes, a thousand of them on
# latency, was left out of "What was the latency of falcon?", and the search benchmark lost 4%.)
COMMON = 5_000
# A query of common words alone ranks only this many of its matches: on PostgreSQL ts_rank_cd
# reads each row's vector, and 5,000 cost 34-76 ms at 100,000 passages.
COMMON_RANKED = 1_000


def _match(words: list[str]) -> str:
    if connection.vendor == "postgresql":
        return " or ".join(words)  # websearch_to_tsquery's OR
    return " OR ".join(f'"{word}"' for word in words)  # each word quoted: FTS5 syntax is inert


def _matching_sql(where: str = "") -> str:
    """The ids of passages matching a query (its first parameter) and `where`."""
    if not where:  # no join: counting a word's passages reads the full-text index alone
        if connection.vendor == "postgresql":
            return "SELECT id FROM memory_passage WHERE search @@ websearch_to_tsquery('english', %s)"
        return "SELECT rowid FROM memory_passage_fts WHERE memory_passage_fts MATCH %s"
    if connection.vendor == "postgresql":
        return (
            "SELECT p.id FROM memory_passage p JOIN memory_node n ON n.id = p.node_id "
            f"WHERE p.search @@ websearch_to_tsquery('english', %s){where}"
        )
    return (
        "SELECT f.rowid FROM memory_passage_fts f JOIN memory_passage p ON p.id = f.rowid "
        f"JOIN memory_node n ON n.id = p.node_id WHERE memory_passage_fts MATCH %s{where}"
    )


def _matches(words: list[str], *, space_id: int | None) -> dict[str, int]:
    """How many passages of the space hold each word, counted up to COMMON, in one query; a word
    PostgreSQL's statistics already know as common is not counted. Counted in the space alone:
    counts over every space would move this space's scores with what another's memory holds."""
    known = _common_stems()
    stems = snowballstemmer.stemmer("english").stemWords(words) if known else words
    common = {word for word, stem in zip(words, stems, strict=True) if stem in known}
    counted = [word for word in words if word not in common]
    found = dict.fromkeys(common, COMMON)
    if not counted:
        return found
    where, params = scope_sql(Scope(space_id=space_id))
    counts = ", ".join(
        f"(SELECT count(*) FROM ({_matching_sql(where)} LIMIT %s) AS matched_{n})" for n in range(len(counted))
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {counts}", [value for word in counted for value in (_match([word]), *params, COMMON)])
        return found | dict(zip(counted, cursor.fetchone(), strict=True))


# On PostgreSQL, counting a common word's passages fetches COMMON rows (5-14 ms a query at
# 100,000 passages); ANALYZE's statistics of the tsvector column already estimate how many
# passages hold each of the most common stems. Read again every STATS_TTL_S; until the table has
# been analysed there are none, and every word is counted.
STATS_TTL_S = 300.0
_stats: tuple[float, int, frozenset[str]] = (float("-inf"), COMMON, frozenset())  # read at, for COMMON, stems


def forget() -> None:
    """Drop this process's statistics, to be read again at the next query (a benchmark that has
    just analysed the table)."""
    global _stats
    _stats = (float("-inf"), COMMON, frozenset())


def _common_stems() -> frozenset[str]:
    """The stems PostgreSQL estimates held by COMMON passages or more (none on SQLite)."""
    global _stats
    if connection.vendor != "postgresql":
        return frozenset()
    read_at, common, stems = _stats
    if monotonic() - read_at < STATS_TTL_S and common == COMMON:
        return stems
    sql = (
        "SELECT x.stem FROM pg_stats s JOIN pg_class c ON c.oid = 'memory_passage'::regclass, "
        "unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS x(stem, share) "
        "WHERE s.schemaname = current_schema() AND s.tablename = 'memory_passage' AND s.attname = 'search' "
        "AND x.stem IS NOT NULL AND x.share * c.reltuples >= %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [COMMON])
        stems = frozenset(row[0] for row in cursor.fetchall())
    _stats = (monotonic(), COMMON, stems)
    return stems


def _ranking_sql(where: str) -> str:
    if connection.vendor == "postgresql":
        return (
            "SELECT p.id, ts_rank_cd(p.search, q, 1) AS score FROM memory_passage p "
            "JOIN memory_node n ON n.id = p.node_id, websearch_to_tsquery('english', %s) q "
            f"WHERE p.search @@ q{where} ORDER BY score DESC, p.id LIMIT %s"
        )
    return (
        "SELECT f.rowid, -bm25(memory_passage_fts) AS score FROM memory_passage_fts f "
        "JOIN memory_passage p ON p.id = f.rowid JOIN memory_node n ON n.id = p.node_id "
        f"WHERE memory_passage_fts MATCH %s{where} ORDER BY bm25(memory_passage_fts), f.rowid LIMIT %s"
    )


def rank(query: str, *, scope: Scope, limit: int) -> list[tuple[int, float]]:
    """(passage id, score) of the passages in scope holding the query's words, best first,
    higher scores better."""
    words = query_words(query)
    if not words:
        return []
    counts = _matches(words, space_id=scope.space_id)
    if not any(counts[word] for word in words):
        return []
    rarer = [word for word in words if 0 < counts[word] < COMMON]
    where, params = scope_sql(scope)
    if not rarer:  # common words alone: a bounded share of their matches in the scope
        where, params = (
            f" AND p.id IN ({_matching_sql(where)} LIMIT %s){where}",
            [_match(words), *params, COMMON_RANKED, *params],
        )
    with connection.cursor() as cursor:
        cursor.execute(_ranking_sql(where), [_match(rarer or words), *params, limit])
        return [(pk, float(score)) for pk, score in cursor.fetchall()]
