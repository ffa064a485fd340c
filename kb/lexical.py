"""A BM25 index over chunk texts in SQLite FTS5, kept beside the Chroma collection for hybrid recall.

The index holds, per chunk: its id, its source and the text that is embedded (title, heading path, passage), with
the ``porter unicode61`` tokenizer (English stemming, case and accent folding). Queries are turned into an OR of
their content words (stop words and punctuation dropped) and ranked by FTS5's ``bm25()``.

Location: ``<chroma_dir>/lexical-<collection>.sqlite3`` for a local store; an in-memory database for a Chroma
server or an in-memory store, filled from the collection on first use. Whenever the number of rows differs from
the collection's chunk count (an index from an older version, a crash between the two writes, another client
ingesting into the server) it is rebuilt from the collection, which is the source of truth.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

_STOP = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both but
by can could did do does doing down during each few for from further had has have having he her here hers herself
him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their theirs them themselves then
there these they this those through to too under until up very was we were what when where which while who whom why
will with would you your yours yourself yourselves (are) (is) is are
""".split())
_WORD = re.compile(r"[A-Za-z0-9]+")


def fts_query(text: str, max_terms: int = 32) -> str:
    """An FTS5 MATCH expression: the distinct content words of ``text`` OR-ed together ("" when none)."""
    terms: list[str] = []
    for w in _WORD.findall(text.lower()):
        if w in _STOP or (len(w) < 2 and not w.isdigit()) or w in terms:
            continue
        terms.append(w)
    return " OR ".join(f'"{t}"' for t in terms[:max_terms])


class LexicalIndex:
    """chunk id -> BM25-searchable text. Thread-safe (one connection, one lock)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._count: int | None = None  # cached row count, dropped on every write
        try:
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path) if path else ":memory:", check_same_thread=False)
            self._db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS chunks USING fts5("
                             "chunk_id UNINDEXED, source UNINDEXED, body, tokenize = 'porter unicode61')")
            # chunk id -> FTS rowid, so that replacing/deleting a chunk is an indexed lookup, not a table scan
            self._db.execute("CREATE TABLE IF NOT EXISTS ids (rid INTEGER PRIMARY KEY, chunk_id TEXT UNIQUE NOT NULL)")
            self._db.commit()
            self._count = None
        except sqlite3.Error as e:  # pragma: no cover - sqlite without FTS5 / unwritable folder
            raise OSError(f"cannot open the lexical index {path or '(in memory)'}: {e}") from e

    def close(self) -> None:
        with self._lock:
            try:
                self._db.close()
            except sqlite3.Error:  # pragma: no cover
                pass

    def count(self) -> int:
        with self._lock:
            if self._count is None:
                self._count = int(self._db.execute("SELECT count(*) FROM ids").fetchone()[0])
            return self._count

    def add(self, rows: Iterable[tuple[str, str, str]]) -> None:
        """Insert or replace (chunk id, source, text) rows."""
        rows = list(rows)
        if not rows:
            return
        with self._lock:
            self._delete_locked([r[0] for r in rows])
            cur = self._db.cursor()
            for cid, source, body in rows:
                cur.execute("INSERT INTO ids (chunk_id) VALUES (?)", (cid,))
                cur.execute("INSERT INTO chunks (rowid, chunk_id, source, body) VALUES (?, ?, ?, ?)",
                            (cur.lastrowid, cid, source, body))
            self._db.commit()
            self._count = None

    def delete(self, ids: Iterable[str]) -> None:
        ids = list(ids)
        if not ids:
            return
        with self._lock:
            self._delete_locked(ids)
            self._db.commit()
            self._count = None

    def _delete_locked(self, ids: list[str]) -> None:
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            marks = ",".join("?" * len(part))
            rids = [r[0] for r in self._db.execute(f"SELECT rid FROM ids WHERE chunk_id IN ({marks})", part)]
            if rids:
                self._db.executemany("DELETE FROM chunks WHERE rowid = ?", [(r,) for r in rids])
                self._db.execute(f"DELETE FROM ids WHERE chunk_id IN ({marks})", part)

    def clear(self) -> None:
        with self._lock:
            self._db.execute("DELETE FROM chunks")
            self._db.execute("DELETE FROM ids")
            self._db.commit()
            self._count = None

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` (chunk id, bm25 score; lower is better) best matches."""
        expr = fts_query(query)
        if not expr or k < 1:
            return []
        with self._lock:
            try:
                rows = self._db.execute("SELECT chunk_id, bm25(chunks) AS s FROM chunks WHERE chunks MATCH ? "
                                        "ORDER BY s LIMIT ?", (expr, int(k))).fetchall()
            except sqlite3.Error:
                return []
        return [(str(cid), float(s)) for cid, s in rows]


def rrf(rankings: Iterable[list[str]], k: int = 60, weights: Iterable[float] | None = None
        ) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion: score(id) = sum over rankings of weight / (k + rank), rank from 1 (weights
    default to 1). Best first; ties keep the order of first appearance."""
    scores: dict[str, float] = {}
    rankings = list(rankings)
    ws = list(weights) if weights is not None else [1.0] * len(rankings)
    for ranking, w in zip(rankings, ws):
        for rank, cid in enumerate(ranking, 1):
            scores[cid] = scores.get(cid, 0.0) + w / (k + rank)
    return sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
