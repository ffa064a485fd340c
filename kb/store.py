"""The guideline knowledge base: Chroma storage, idempotent ingestion, and gated two-stage retrieval.

Retrieval (``KnowledgeBase.retrieve``):

1. recall: embed the query (or ``query + "\\n" + anchor`` for HyDE; with the embedder's query prefix) and take the
   nearest chunks by cosine distance (0 = same direction, 1 = unrelated, 2 = opposite). With ``hybrid`` (off by default)
   the dense top ``pool`` and a BM25 top ``pool`` from the SQLite FTS5 index beside the collection
   (:mod:`kb.lexical`) are fused by reciprocal rank fusion (k = 60) and the best ``recall_k`` are kept; chunks
   found only lexically get their true cosine distance from their stored vectors. ``pool`` = max(2 x recall_k, 30).
   With ``RetrievalParams.extra_queries`` (multi-query recall: a case's question sentence alone, a focused facts
   query) each extra query's dense top ``pool`` is fused with that ranking too (weight ``multi_query_weight``) and
   every candidate carries its cosine distance to ``query`` itself, or to a gate query (below) where that is nearer;
2. distance gate: keep hits with ``distance <= threshold``; when none pass, ``gate_passed`` is False, no hits are
   returned and ``closest`` (always the dense nearest chunk) says what came closest and how far. The threshold:
   ``RetrievalParams.distance_threshold`` when > 0, else the one ``oncotui kb calibrate`` stored in the collection's
   metadata, else the embedder's built-in default (``DEFAULT_THRESHOLDS``);
3. rerank the survivors with the cross-encoder (query against title + heading path + passage) and keep the best
   ``rerank_k`` (``rerank=False`` keeps the fused recall order instead). With ``RetrievalParams.grade_queries``
   (a case's focused facts + intent query, kb/EVAL.md round 5b) each scored hit's ``rerank_score`` is the max of its
   logit against ``query`` and against each grade query: the gate and recall are unchanged, the score (what grades
   a passage relevant) is higher where a focused phrasing matches better, and with ``rerank_order = "rerank"`` the
   order follows that max. No grade queries: one cross-encoder pass, as before;
3b. options lists (``RetrievalParams.options_lists``, :mod:`kb.outline`): a kept passage under a treatment section
   that opens with its options ("Treatment options ... include:", "... include the following:[citation]",
   "Treatment options:", "The standard treatment option for ... is the following:"; numbered items with the drugs in
   bullets under each, or bullets) brings that list's lead-in and the item naming its option, verbatim, as one more
   passage after the ``rerank_k`` (origin "options", the distance of the passage that led to it, the
   cross-encoder's score of its lead-in and option line); an item too short to be quoted ("4. Immunotherapy.") is
   followed by the paragraph its own section opens with, verbatim, unless a kept passage holds it; a kept passage
   that begins inside such a list (a chunk of drug bullets) first gets the lead-in and the item line it continues
   put before it, each when no kept passage holds it (``list_lead_ins``);
4. trim to ``char_budget`` characters in rank order, cutting only at sentence boundaries.

Every chunk stores its document's SHA-256 (``doc_hash``), so re-ingesting an unchanged file costs one metadata
lookup and no embedding work. The chunk with ``chunk_index == 0`` of each document doubles as the registry row
(``sources()``).
"""

from __future__ import annotations

import math
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from kb.chunking import (
    CHUNKER_VERSION,
    Chunk,
    chunk_markdown,
    chunk_sections,
    context_text,
    doc_hash_of,
    embedding_text,
    parse_front_matter,
    skipped_section,
    with_lead,
    trim_to_budget,
)
from kb.errors import KBError
from kb.lexical import rrf

DEMO_DIR = Path(__file__).parent / "demo"  # the shipped demo guideline set (Markdown)
# Questions written for the demo set (in-domain) and other medicine / non-medical ones (out-of-domain): `kb ingest --demo`
# calibrates the gate with them while the collection holds only the demo documents.
DEMO_CALIBRATION_DIR = Path(__file__).parent / "demo_calibration"

MARKDOWN_SUFFIXES = (".md", ".markdown", ".txt")
PDF_SUFFIXES = (".pdf",)
SUPPORTED_SUFFIXES = MARKDOWN_SUFFIXES + PDF_SUFFIXES
REBUILD_HINT = "re-ingest with `oncotui kb ingest --rebuild`"
_WRITE_BATCH = 256
_EMBED_GROUP = 256  # chunks embedded together during ingest (see ingest)
_PROGRESS_SLICE = 64  # chunks per embedding call inside a group, so the chunk count moves during a group
RRF_K = 60
ANN_DEPTH = 400  # neighbours asked of Chroma's approximate search for any smaller k (KnowledgeBase._nearest)

# Stage 2 thresholds used when neither config nor a calibration says otherwise; see kb/EVAL.md for the evidence.
DEFAULT_THRESHOLDS = {
    "embedded:all-minilm-l6-v2": 0.75,
    "embedded:bge-small-en-v1.5-int8": 0.27,
}
FALLBACK_THRESHOLD = 0.75
# `kb calibrate` tries gating on the mean distance of the k nearest chunks for each of these k and keeps the best:
# on the full PDQ corpus an out-of-domain question often has one lucky neighbour but few close ones (kb/EVAL.md).
GATE_KS = (1, 3, 5, 10)


@dataclass(frozen=True)
class RetrievalParams:
    recall_k: int = 15
    distance_threshold: float = 0.0  # cosine distance; 0 = the collection's calibrated threshold (module docstring)
    rerank_k: int = 5
    char_budget: int = 6000
    hybrid: bool = False  # fuse BM25 (FTS5) with dense recall (off by default: kb/EVAL.md)
    lexical_weight: float = 0.25  # weight of the BM25 ranking in the fusion (the dense ranking has 1)
    rerank: bool = True  # Stage 3 cross-encoder; False keeps the recall order (for evaluation)
    # "recall": the recall order is kept and only the rerank_k passages kept are scored (their logits still grade
    # them and set rag_confidence); "rerank": the cross-encoder orders every gate survivor. The default is
    # config.toml's rerank.order, so a caller without settings retrieves as a consult does.
    rerank_order: str = "recall"
    # Multi-query recall (kb/EVAL.md round 5): more phrasings of the same question, e.g. a case's question sentence
    # alone and a focused facts query. Each one's dense top ``pool`` is fused with the query's own ranking by
    # reciprocal rank fusion, weight ``multi_query_weight`` each (the query's ranking has 1); 0 or no extra queries:
    # the query alone. The gate is still decided on ``query`` (and ``gate_queries``), every passage kept must lie
    # within the threshold of ``query`` or a gate query (not of any phrasing that found it), and Stage 3 scores
    # passages against ``query`` (and ``grade_queries``, below).
    extra_queries: tuple[str, ...] = ()
    multi_query_weight: float = 0.5
    # Grade queries (kb/EVAL.md round 5b): Stage 3 also scores each passage it scores against these phrasings and
    # keeps the max logit per passage (so the cross-encoder of a long vignette does not grade the passage that names
    # the answer irrelevant). Recall and the gate are unchanged; with rerank_order "rerank" the order uses the max.
    # Empty (the default): the query alone, no extra cross-encoder pass.
    grade_queries: tuple[str, ...] = ()
    # Phrasings the gate may judge instead of ``query`` (a consult's facts query: the cancer, its stage and
    # markers, what is asked): the question is in the domain when ``query`` or one of these is close enough on
    # average. A note's own words about the patient ("She is 71 ... her daughter accompanies her") moved a
    # whole case past the threshold although its facts query lay far inside (kb/EVAL.md round 14). Each passage
    # is judged by the nearer of ``query`` and these (its distance is that nearer one: kb/EVAL.md round 18).
    # Empty (the default): ``query`` alone.
    gate_queries: tuple[str, ...] = ()
    # Options lists (kb/outline.py): for each passage kept that sits under a treatment section's options list, that
    # list's lead-in and the item naming the passage's option are added after the rerank_k passages (at most this
    # many, in the order of the passages that led to them; the cross-encoder scores each on its lead-in and option
    # line). 0 = none.
    options_lists: int = 3
    # A passage the caller knows does not apply (a consult's case fit: its section names another stage or receptor
    # status than the case's, or it is about another cancer: engine.casefit.section_misfit). Stage 1 then reads
    # 2 x recall_k of its ranking (deeper still when fewer than rerank_k fit) and keeps the recall_k that fit and
    # lie within the gate's distance first (in recall order), and such passages move
    # after the others that passed the gate before the rerank_k cut (stable: none is dropped, and they still fill
    # the cut when too few others passed). A number is a level: higher goes later (0 or False: as it is). None: the
    # recall order as it is.
    demote: Callable[[Hit], bool | int] | None = None


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    text: str
    title: str
    source: str
    section: str
    page: int | None
    distance: float
    rerank_score: float | None
    origin: str = ""  # Stage 1: "dense", "lexical" or "dense+lexical"; "options": an options list's item (outline)
    lead: str = ""  # the first sentence of the paragraph or list item the chunk begins inside (kb.chunking.Chunk.lead)


@dataclass(frozen=True)
class RetrievalResult:
    query: str
    hits: tuple[Hit, ...]
    gate_passed: bool
    closest: Hit | None  # the nearest candidate (by distance) whether or not it passed the gate; None if no candidates
    recalled: int
    passed_gate: int
    timings: dict[str, float]  # seconds: embed, search, lexical, gate, rerank, trim, total
    threshold: float = 0.0  # the Stage 2 threshold applied
    candidates: tuple[Hit, ...] = ()  # Stage 1 output in recall (fused) order, before the gate
    ranked: tuple[Hit, ...] = ()  # Stage 3 output: every gate survivor in final order, before the rerank_k cut
    gate_k: int = 1  # the gate compared the mean distance of this many nearest chunks with the threshold
    gate_value: float | None = None  # that mean (with gate_k = 1: the closest chunk's distance)
    gate_query: str = ""  # the gate query whose mean is gate_value (RetrievalParams.gate_queries); "" = query


@dataclass(frozen=True)
class IngestReport:
    added_docs: int
    updated_docs: int
    skipped_docs: int
    chunks_added: int
    removed_chunks: int
    errors: tuple[tuple[str, str], ...]  # (path, reason); duplicates are reported here too ("duplicate of ...")
    patient_skipped: tuple[tuple[str, str], ...] = ()  # (path, reason): patient-facing material, not indexed
    moved: tuple[tuple[str, str], ...] = ()  # (old source, new source): renamed/moved files, chunks re-labelled
    duplicates: tuple[str, ...] = ()  # the paths in ``errors`` that are duplicates (their content is indexed)
    # (path, message): indexed, but part of it was not (a PDF's pages without a text layer, unreadable pages)
    warnings: tuple[tuple[str, str], ...] = ()

    @property
    def failed(self) -> tuple[tuple[str, str], ...]:
        """The errors that are failures (unreadable, corrupt, empty, unsupported, missing): duplicates left out."""
        dup = set(self.duplicates)
        return tuple(e for e in self.errors if e[0] not in dup)

    @property
    def warned_documents(self) -> tuple[str, ...]:
        """The documents indexed with a warning: not a folder's (its files of other types skipped), which the
        summaries had counted as a document."""
        return tuple(dict.fromkeys(p for p, _m in self.warnings if not Path(p).is_dir()))


def _pdf_layout() -> int:
    from kb.pdf import PDF_LAYOUT_VERSION

    return PDF_LAYOUT_VERSION


class _DocError(Exception):
    pass


class _PatientFacing(Exception):
    """The document is patient-facing material (kb.audience); the message says why."""


_EF_CLASS: Any = None
_EF_LOCK = threading.Lock()


def _embedding_function_class() -> Any:
    """A Chroma EmbeddingFunction backed by our Embedder, registered once so Chroma never falls back to its own
    (downloading) default. We always pass vectors ourselves; this only guards against Chroma embedding text."""
    global _EF_CLASS
    with _EF_LOCK:
        if _EF_CLASS is not None:
            return _EF_CLASS
        from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
        from chromadb.utils.embedding_functions import register_embedding_function

        class OncotuiEmbeddingFunction(EmbeddingFunction[Documents]):
            def __init__(self, spec: str = "", device: str = "cpu", embedder: Any = None) -> None:
                self._spec = spec
                self._device = device
                self._embedder = embedder

            def __call__(self, input: Documents) -> Embeddings:
                if self._embedder is None:
                    from kb.embed import get_embedder

                    self._embedder = get_embedder(self._spec, self._device)
                import numpy as np

                return [np.asarray(v, dtype=np.float32) for v in self._embedder.embed(list(input))]

            @staticmethod
            def name() -> str:
                return "oncotui-kb"

            def get_config(self) -> dict[str, Any]:
                return {"spec": self._spec}

            @staticmethod
            def build_from_config(config: dict[str, Any]) -> OncotuiEmbeddingFunction:
                return OncotuiEmbeddingFunction(str(config.get("spec", "")))

            def default_space(self) -> Any:
                return "cosine"

            def supported_spaces(self) -> Any:
                return ["cosine"]

            def is_legacy(self) -> bool:
                return False

        register_embedding_function(OncotuiEmbeddingFunction)
        _EF_CLASS = OncotuiEmbeddingFunction
        return _EF_CLASS


def _broken_link(path: Path) -> str:
    try:
        target = str(path.readlink())
    except OSError:
        target = "?"
    return f"unreadable: broken symbolic link (points to {target}, which does not exist)"


def _walk(root: Path, others: list[str] | None = None) -> tuple[list[Path], list[tuple[str, str]]]:
    """The non-hidden entries below ``root`` named like a supported document, sorted (symbolic links to folders are
    not followed), and (folder, reason) for each folder that could not be listed: Path.rglob skips those silently.
    ``others``, when given, receives the suffix ("" for none) of every other non-hidden file name there."""
    found: list[Path] = []
    unreadable: list[tuple[str, str]] = []

    def failed(e: OSError) -> None:
        folder = Path(e.filename) if e.filename else root
        unreadable.append((str(folder.absolute()), f"unreadable folder: {e.strerror or e}; nothing in it was indexed"))

    for folder, dirs, names in os.walk(root, onerror=failed):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for n in names:
            if n.startswith("."):
                continue
            if Path(n).suffix.lower() in SUPPORTED_SUFFIXES:
                found.append(Path(folder) / n)
            elif others is not None and (Path(folder) / n).exists():  # a broken or looping link is no file
                others.append(Path(n).suffix.lower())
    return sorted(found), unreadable


def _unsupported_note(suffixes: list[str]) -> str:
    """"2 files of unsupported types: .docx, .xlsx" (each type once, in order; "(none)" for no extension)."""
    kinds = ", ".join(sorted({s or "(none)" for s in suffixes}))
    return f"{len(suffixes)} file{'s' if len(suffixes) != 1 else ''} of unsupported types: {kinds}"


def _utf8(name: str) -> bool:
    """Whether a file name (as os.fsdecode gives it: undecodable bytes as lone surrogates) is valid UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def _suspicious_note(chunks: list[Chunk], suspicious: Callable[[str], bool]) -> str | None:
    """A warning naming the chunks whose text ``suspicious`` flags (instruction-like text: a prompt injection
    planted in a guideline?), quoting the first flagged sentence; None when nothing is flagged."""
    flagged = [c for c in chunks if suspicious(c.text)]
    if not flagged:
        return None
    first = flagged[0]
    sentence = next((x for x in _SENTENCE_END.split(first.text) if x.strip() and suspicious(x)), first.text)
    sentence = " ".join(sentence.split())
    quote = sentence if len(sentence) <= 100 else sentence[:99] + "…"
    section = re.sub(r"#+\s*", "", first.section)  # "## A > ### B" -> "A > B"
    where = section or (f"page {first.page}" if first.page is not None else "the text")
    more = f" and {len(flagged) - 1} more chunk(s)" if len(flagged) > 1 else ""
    return (f"instruction-like text in {where}{more}: \"{quote}\" (a prompt injection?); consults treat it as data "
            "and flag it, but check the source")


def _long_chunk_note(chunks: list[Chunk], chunk_chars: int, max_tokens: int) -> str | None:
    """A warning naming the chunks longer than ``chunk_chars`` and than about what the embedder reads (4 characters
    a token): text with no sentence end to cut at (the chunker never cuts a sentence, so evidence can be quoted
    whole), kept as one chunk. The embedding model reads only its first ``max_tokens`` tokens and a consult's
    character budget may leave it out. None when there are none. (A chunk just over ``chunk_chars`` is still read
    whole: PDQ has 90 such long sentences in 37 of 80 summaries, and a warning for each would only be noise.)"""
    long = [c for c in chunks if len(c.text) > max(chunk_chars, 4 * max_tokens)]
    if not long:
        return None
    first = long[0]
    section = re.sub(r"#+\s*", "", first.section)  # "## A > ### B" -> "A > B"
    where = (f'"{section}"' if section else f"page {first.page}" if first.page is not None else "the text before "
             "the first heading")
    more = f" and {len(long) - 1} more" if len(long) > 1 else ""
    longest = max(len(c.text) for c in long)
    return (f"text with no sentence end for more than `kb.chunk_chars` ({chunk_chars}) characters in {where}{more} "
            f"(the longest {longest:,} characters) is kept whole as one chunk: only about its first {max_tokens} "
            "tokens are embedded, so retrieval may miss the rest, and a consult's character budget may leave it "
            "out; give the text sentence ends or headings")


def _staging_name(name: str, role: str = "rebuild") -> str:
    """The name of the collection that stands beside ``name`` during a rebuild (Chroma allows 512 characters)."""
    return f"{name[:500]}-{role}"


def _parse_chroma_url(url: str) -> tuple[str, int, bool]:
    raw = url.strip()
    parsed = urlparse(raw if "://" in raw else f"http://{raw}")
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise KBError(f"`kb.chroma_url` = {url!r} is not an http(s)://host:port address")
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 8000)
    except ValueError as e:
        raise KBError(f"`kb.chroma_url` = {url!r}: bad port ({e})") from e
    return parsed.hostname, port, parsed.scheme == "https"


def _cosine_distance(q: Any, emb: Sequence[float]) -> float:
    """1 - cosine similarity of a query vector (numpy) and a stored embedding."""
    import numpy as np

    e = np.asarray(emb, dtype=np.float32)
    return 1.0 - float(q @ e / max(float(np.linalg.norm(q) * np.linalg.norm(e)), 1e-12))


class KnowledgeBase:
    """A Chroma collection of guideline chunks plus the models that index and rank them.

    Storage: ``PersistentClient(chroma_dir)`` when ``chroma_url`` is empty, an ``HttpClient`` when it is set, and an
    in-memory client when both are empty (tests). The embedder loads at the first ingest/query and the reranker at
    the first rerank; pass ``embedder=``/``reranker=`` to share already-loaded models. ``rebuild=True`` (for
    ``oncotui kb ingest --rebuild``, e.g. after changing ``embedding.model``) checks that the embedding model embeds
    and then works on an empty replacement collection beside the existing one, which stays untouched until
    ``finish_rebuild()`` swaps the replacement in; ``abandon_rebuild()`` (or ``close()``) drops the replacement.
    """

    def __init__(self, *, chroma_dir: Path | None, chroma_url: str = "", collection: str, embedder_spec: str,
                 reranker_spec: str, device: str = "cpu", embedder: Any = None, reranker: Any = None,
                 batch_size: int = 32, rebuild: bool = False, max_tokens: int = 256,
                 rerank_max_tokens: int = 256, check_model: bool = True) -> None:
        name = (collection or "").strip()
        if not 3 <= len(name) <= 512:
            raise KBError(f"`kb.collection` = {collection!r}: a collection name needs 3 to 512 characters")
        self.collection_name = name
        self.embedder_spec = embedder_spec
        self.reranker_spec = reranker_spec
        self.device = device or "cpu"
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.rerank_max_tokens = rerank_max_tokens
        self._lexical: Any = None
        self.chroma_dir = Path(chroma_dir).expanduser() if chroma_dir else None
        self.chroma_url = (chroma_url or "").strip()
        self._embedder = embedder
        self._reranker = reranker
        self._model_lock = threading.Lock()
        self.check_model = check_model
        # set when check_model is False and the collection was built with another embedding model: what to tell
        # the user (stats and remove still work; nothing may be embedded or queried against it)
        self.model_mismatch: str | None = None
        self._rebuild_of: str | None = None  # while rebuilding: the collection the replacement will take over
        self._client = self._connect()
        try:
            self._recover_swap(name)
            if rebuild:
                # a model that cannot embed would end a rebuild with nothing: prove it works before anything else
                problem = self._embedder_problem()
                if problem:
                    raise KBError(f"{problem}; nothing was dropped: the knowledge base at {self.location} is "
                                  "unchanged")
                self._rebuild_of, self.collection_name = name, _staging_name(name)
                self._drop()  # a replacement left over by an interrupted rebuild
            self._collection = self._open_collection()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Release the Chroma client (HTTP connections / the local store's files); an unfinished rebuild is
        abandoned. Safe to call twice."""
        if getattr(self, "_rebuild_of", None) and getattr(self, "_client", None) is not None:
            try:
                self.abandon_rebuild()
            except Exception:  # closing is best effort; a leftover replacement is dropped by the next rebuild
                pass
        client, self._client = getattr(self, "_client", None), None
        lexical, self._lexical = getattr(self, "_lexical", None), None
        if lexical is not None:
            lexical.close()
        if client is not None:
            try:
                client.close()
            except Exception:  # closing is best effort
                pass

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ storage

    @property
    def location(self) -> str:
        return self.chroma_url or (str(self.chroma_dir) if self.chroma_dir else "(in memory)")

    def _connect(self) -> Any:
        try:
            import chromadb
            from chromadb.config import Settings
        except ImportError as e:  # pragma: no cover - broken install
            raise KBError(f"chromadb is not importable ({e}); run `make setup`") from e
        settings = Settings(anonymized_telemetry=False, allow_reset=False)
        if self.chroma_url:
            host, port, ssl = _parse_chroma_url(self.chroma_url)
            try:
                client = chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings)
                client.heartbeat()
            except Exception as e:
                raise KBError(f"cannot reach the Chroma server at {self.chroma_url} (`kb.chroma_url`): "
                              f"{type(e).__name__}: {e}. Start it (`chroma run --path DIR --host {host} --port "
                              f"{port}`) or set kb.chroma_url = \"\" to use the local store.") from e
            return client
        if self.chroma_dir:
            try:
                self.chroma_dir.mkdir(parents=True, exist_ok=True)
                return chromadb.PersistentClient(path=str(self.chroma_dir), settings=settings)
            except Exception as e:
                raise KBError(f"cannot open the knowledge base at {self.chroma_dir}: {type(e).__name__}: {e}") from e
        return chromadb.EphemeralClient(settings=settings)

    def _ef(self) -> Any:
        return _embedding_function_class()(self.embedder_spec, self.device, self._embedder)

    def _open_collection(self) -> Any:
        try:
            col = self._client.get_or_create_collection(
                self.collection_name,
                metadata={"hnsw:space": "cosine", "embedding_model": self.embedder_spec},
                embedding_function=self._ef(),
            )
        except ValueError as e:
            raise KBError(f"cannot open collection {self.collection_name!r} at {self.location}: {e}") from e
        built = (col.metadata or {}).get("embedding_model")
        if built != self.embedder_spec and col.count() == 0:
            # an empty collection holds nothing built by the other model (e.g. a first ingest that failed on a
            # mistyped model path): take it over instead of demanding a rebuild of nothing
            self._client.delete_collection(self.collection_name)
            return self._open_collection()
        if built != self.embedder_spec:
            where = (f"the knowledge base collection {self.collection_name!r} at {self.location} was built with "
                     f"{built or 'an unknown embedding model'}")
            problem = self._embedder_problem()
            if problem:  # a broken setting, not a model change: a rebuild would fail too (and used to wipe the kb)
                message = (f"{problem}. Fix `embedding.model`" + (f" (set it back to {built})" if built else "")
                           + f"; {where}, which is kept as it is")
            else:
                message = f"{where}, configured {self.embedder_spec} (`embedding.model`): {REBUILD_HINT}"
            if self.check_model:
                raise KBError(message)
            self.model_mismatch = message
        return col

    @property
    def rebuilding(self) -> bool:
        """True between ``rebuild=True`` and ``finish_rebuild()`` / ``abandon_rebuild()``."""
        return self._rebuild_of is not None

    def finish_rebuild(self) -> None:
        """Make the replacement built since ``rebuild=True`` the collection, dropping the one it replaces (the old
        one is renamed aside first and deleted last, so no moment leaves neither)."""
        target = self._rebuild_of
        if target is None:
            return
        aside = _staging_name(target, "replaced")
        try:
            self._client.delete_collection(aside)  # left over by an earlier interrupted swap
        except Exception:  # not there
            pass
        try:
            old = self._client.get_collection(target, embedding_function=self._ef())
        except Exception:  # nothing to replace
            old = None
        if old is not None:
            old.modify(name=aside)
        self._collection.modify(name=target)
        if old is not None:
            self._client.delete_collection(aside)
        staged_lexical = self._lexical_path()
        if self._lexical is not None:
            self._lexical.close()
            self._lexical = None
        self._rebuild_of, self.collection_name = None, target
        lexical = self._lexical_path()
        if staged_lexical is not None and lexical is not None:
            if staged_lexical.exists():
                os.replace(staged_lexical, lexical)
            elif lexical.exists():
                lexical.unlink()  # the old collection's index; rebuilt from the collection when next used
        self._collection = self._client.get_collection(target, embedding_function=self._ef())

    def _recover_swap(self, target: str) -> None:
        """Finish or undo a ``finish_rebuild`` swap that a crash interrupted; its ``<target>-replaced`` collection
        says one was under way. Without ``target`` (the crash fell between its two renames) the replaced collection,
        the old data, takes its name back: as when a rebuild is interrupted, the old knowledge base stays, and the
        next rebuild drops the replacement left beside it. With ``target`` (the crash fell after the new collection
        took the name) the swap is finished: the replaced collection is dropped and the replacement's lexical index
        moved into place."""
        aside = _staging_name(target, "replaced")
        try:
            replaced = self._client.get_collection(aside, embedding_function=self._ef())
        except Exception:  # no swap was interrupted (the usual case)
            return
        try:
            self._client.get_collection(target, embedding_function=self._ef())
        except Exception:
            replaced.modify(name=target)
            return
        self._client.delete_collection(aside)
        lexical = self._lexical_path()
        if lexical is not None:
            staged = lexical.with_name(f"lexical-{_staging_name(target)}.sqlite3")
            if staged.exists():
                os.replace(staged, lexical)

    def abandon_rebuild(self) -> None:
        """Drop the replacement built since ``rebuild=True``; the existing collection is used again, as it was
        (built with another embedding model, it is opened as with ``check_model=False``: see ``model_mismatch``)."""
        target = self._rebuild_of
        if target is None:
            return
        self._drop()
        if self._lexical is not None:
            self._lexical.close()
            self._lexical = None
        staged_lexical = self._lexical_path()
        if staged_lexical is not None and staged_lexical.exists():
            staged_lexical.unlink()
        self._rebuild_of, self.collection_name = None, target
        check, self.check_model = self.check_model, False
        try:
            self._collection = self._open_collection()
        finally:
            self.check_model = check

    def _embedder_problem(self) -> str | None:
        """Why the configured embedding model cannot embed (KBError text), or None when it embeds a probe."""
        try:
            self.embedder.embed(["probe"])
        except KBError as e:
            return str(e)
        except Exception as e:  # any failure to embed means the same: this model cannot index or query
            return f"`embedding.model` = {self.embedder_spec!r}: cannot embed ({type(e).__name__}: {e})"
        return None

    def reset(self) -> None:
        """Delete every chunk (drop and recreate the collection)."""
        self._drop()
        self._collection = self._open_collection()
        if self._lexical is not None:
            self._lexical.clear()

    def _drop(self) -> None:
        try:
            self._client.delete_collection(self.collection_name)
        except Exception:  # not there: nothing to drop
            pass
        if self._lexical is not None:
            self._lexical.clear()
        elif self.chroma_dir and not self.chroma_url and self._lexical_path().exists():
            self.lexical.clear()

    # ------------------------------------------------------------------ lexical index

    def _lexical_path(self) -> Path | None:
        if self.chroma_url or not self.chroma_dir:
            return None
        return self.chroma_dir / f"lexical-{self.collection_name}.sqlite3"

    @property
    def lexical(self) -> Any:
        """The BM25 index beside the collection (kb.lexical), opened and synchronised on first use."""
        if self._lexical is None:
            with self._model_lock:
                if self._lexical is None:
                    from kb.lexical import LexicalIndex

                    try:
                        self._lexical = LexicalIndex(self._lexical_path())
                    except OSError as e:
                        raise KBError(str(e)) from e
        return self._lexical

    def sync_lexical(self, force: bool = False) -> int:
        """Rebuild the lexical index from the collection when their chunk counts differ (or ``force``).
        Returns the number of rows written (0 when already in step)."""
        lex = self.lexical
        n = self.count()
        if not force and lex.count() == n:
            return 0
        lex.clear()
        written = 0
        for offset in range(0, n, 2000):
            res = self._collection.get(include=["documents", "metadatas"], limit=2000, offset=offset)
            rows = []
            for cid, doc, meta in zip(res["ids"], res["documents"] or [], res["metadatas"] or []):
                meta = meta or {}
                page = meta.get("page")
                rows.append((cid, str(meta.get("source", "")),
                             context_text(str(meta.get("title", "")), str(meta.get("section", "")),
                                          int(page) if page is not None else None, doc or "")))
            lex.add(rows)
            written += len(rows)
        return written

    # ------------------------------------------------------------------ threshold

    @property
    def metadata(self) -> dict[str, Any]:
        return dict(self._collection.metadata or {})

    def calibrated_threshold(self) -> float | None:
        value = self.metadata.get("distance_threshold")
        try:
            return float(value) if value is not None and float(value) > 0 else None
        except (TypeError, ValueError):
            return None

    def threshold_for(self, configured: float = 0.0) -> tuple[float, str]:
        """(Stage 2 threshold, where it came from): config (> 0) > calibrated (collection metadata) > built-in."""
        if configured and configured > 0:
            return float(configured), "config (kb.distance_threshold)"
        cal = self.calibrated_threshold()
        if cal is not None:
            return cal, "calibrated (stored with the collection)"
        return DEFAULT_THRESHOLDS.get(self.embedder_spec, FALLBACK_THRESHOLD), "built-in default for this embedder"

    def gate_k(self, configured: float = 0.0) -> int:
        """How many nearest chunks the gate averages: the calibrated choice, else 1 (the nearest chunk alone).
        A threshold set in config is a nearest-chunk threshold."""
        if (configured and configured > 0) or self.calibrated_threshold() is None:
            return 1
        try:
            return max(1, int(self.metadata.get("gate_k", 1)))
        except (TypeError, ValueError):
            return 1

    def set_threshold(self, threshold: float, **info: Any) -> None:
        """Store a calibrated Stage 2 threshold (and scalar facts about the calibration) in the collection."""
        meta = {k: v for k, v in self.metadata.items() if not k.startswith("hnsw:")}
        meta.update({k: v for k, v in info.items() if isinstance(v, (str, int, float, bool))})
        meta["distance_threshold"] = float(threshold)
        meta["embedding_model"] = self.embedder_spec
        self._collection.modify(metadata=meta)
        self._collection = self._client.get_collection(self.collection_name, embedding_function=self._ef())

    def stats(self) -> dict[str, Any]:
        threshold, origin = self.threshold_for(0.0)
        return {"collection": self.collection_name, "location": self.location, "documents": len(self.sources()),
                "chunks": self.count(), "embedding_model": self.metadata.get("embedding_model", self.embedder_spec),
                "threshold": threshold, "threshold_source": origin,
                "calibrated_at": self.metadata.get("calibrated_at"),
                "calibration_set": self.metadata.get("calibration_set")}

    def count(self) -> int:
        return int(self._collection.count())

    # ------------------------------------------------------------------ models

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            with self._model_lock:
                if self._embedder is None:
                    from kb.embed import get_embedder

                    self._embedder = get_embedder(self.embedder_spec, self.device, self.batch_size,
                                                  self.max_tokens)
        return self._embedder

    @property
    def reranker(self) -> Any:
        if self._reranker is None:
            with self._model_lock:
                if self._reranker is None:
                    from kb.rerank import get_reranker

                    self._reranker = get_reranker(self.reranker_spec, self.rerank_max_tokens)
        return self._reranker

    def rerank_scores(self, query: str, texts: list[str]) -> list[float]:
        """Cross-encoder logits for (query, text) pairs, in order."""
        return self.reranker.score(query, list(texts))

    # ------------------------------------------------------------------ registry

    def _get(self, where: dict[str, Any], include: list[str]) -> dict[str, Any]:
        return self._collection.get(where=where, include=include)

    def _chunks_of(self, source: str) -> dict[str, dict[str, Any]]:
        res = self._get({"source": source}, ["metadatas"])
        return dict(zip(res["ids"], res["metadatas"] or [{}] * len(res["ids"])))

    def _source_with_hash(self, doc_hash: str, exclude: str) -> str | None:
        res = self._get({"doc_hash": doc_hash}, ["metadatas"])
        for meta in res["metadatas"] or []:
            if meta and meta.get("source") != exclude:
                return str(meta.get("source"))
        return None

    def sources(self) -> list[dict[str, Any]]:
        """One row per document: source, title, chunks, doc_hash (sorted by source)."""
        res = self._get({"chunk_index": 0}, ["metadatas"])
        rows = [{"source": m.get("source", ""), "title": m.get("title", ""), "chunks": int(m.get("n_chunks", 0)),
                 "doc_hash": m.get("doc_hash", "")} for m in (res["metadatas"] or []) if m]
        return sorted(rows, key=lambda r: r["source"])

    def _delete_ids(self, ids: Iterable[str]) -> int:
        ids = list(ids)
        for start in range(0, len(ids), _WRITE_BATCH):
            self._collection.delete(ids=ids[start:start + _WRITE_BATCH])
        if ids:
            self.lexical.delete(ids)
        return len(ids)

    def remove(self, source: str) -> int:
        """Delete a document's chunks; ``source`` as listed by ``sources()`` or a path to the file, relative to the
        working directory or absolute (the file need not exist any more). Returns the number of chunks removed
        (0 when it is not in the knowledge base)."""
        candidates = [str(source)]
        try:
            candidates.append(str(Path(source).expanduser().resolve()))  # sources are stored resolved
        except (OSError, RuntimeError):
            pass
        for cand in dict.fromkeys(candidates):
            ids = list(self._chunks_of(cand))
            if ids:
                return self._delete_ids(ids)
        return 0

    # ------------------------------------------------------------------ ingestion

    @staticmethod
    def _collect(paths: Iterable[Path | str], warnings: list[tuple[str, str]] | None = None
                 ) -> tuple[list[Path], list[tuple[str, str]]]:
        files: dict[Path, None] = {}
        errors: list[tuple[str, str]] = []
        for raw in paths:
            p = Path(raw).expanduser()
            try:
                KnowledgeBase._collect_one(p, files, errors, warnings)
            except OSError as e:  # e.g. a path below a folder that may not be entered
                errors.append((str(p), f"unreadable: {e.strerror or e}"))
        return list(files), errors

    @staticmethod
    def _collect_one(p: Path, files: dict[Path, None], errors: list[tuple[str, str]],
                     warnings: list[tuple[str, str]] | None = None) -> None:
        """Add the documents at ``p`` (a file, or a folder searched recursively) to ``files`` and say in ``errors``
        why anything there cannot be indexed; files of other types in a folder are counted, once per folder, in
        ``warnings`` (a folder may hold other files: not a failure, but not silent either)."""
        supported = ", ".join(SUPPORTED_SUFFIXES)
        if p.is_dir():
            before = len(errors)
            others: list[str] = []
            found, unreadable = _walk(p, others)
            errors.extend(unreadable)
            kept = 0
            for f in found:
                # a guideline the folder claims to hold but that cannot be read: say so, never skip silently
                try:
                    if f.is_file():
                        files[f.resolve()] = None
                        kept += 1
                    elif f.is_symlink() and not f.exists():
                        errors.append((str(f.absolute()), _broken_link(f)))
                    elif f.exists():  # a named pipe or socket with a document's name
                        errors.append((str(f.absolute()), "not a regular file (a device, pipe or socket?)"))
                except OSError as e:  # e.g. in a folder that may be listed but not entered (no x permission)
                    errors.append((str(f.absolute()), f"unreadable: {e.strerror or e}"))
            if not kept and len(errors) == before:
                also = f" ({_unsupported_note(others)})" if others else ""
                errors.append((str(p), f"no {supported} files in this folder{also}"))
            elif others and warnings is not None:
                warnings.append((str(p), f"skipped {_unsupported_note(others)} (supported: {supported})"))
        elif p.is_file():
            if p.suffix.lower() in SUPPORTED_SUFFIXES:
                files[p.resolve()] = None
            else:
                errors.append((str(p), f"unsupported file type {p.suffix or '(none)'!r}; supported: {supported}"))
        elif p.is_symlink() and not p.exists():
            errors.append((str(p.absolute()), _broken_link(p)))
        elif p.exists():  # a device (/dev/zero), a named pipe, a socket: reading it could block or never end
            errors.append((str(p), "not a regular file (a device, pipe or socket?); give a document or a folder"))
        else:
            errors.append((str(p), "no such file or folder"))

    @staticmethod
    def _chunk_file(path: Path, data: bytes, source: str, doc_hash: str, chunk_chars: int,
                    include_patient: bool = False) -> tuple[list[Chunk], dict[str, Any], list[str]]:
        """Extract and chunk one file: (chunks, extra metadata, what was left out of it, for the report's warnings).
        Raises _DocError (unreadable) or _PatientFacing (kb.audience)."""
        from kb.audience import markdown_title_lines, patient_facing, pdf_title_lines

        if path.suffix.lower() in PDF_SUFFIXES:
            from kb.pdf import PDF_LAYOUT_VERSION, PdfError, pdf_sections

            left_out: list[str] = []
            try:
                title, sections = pdf_sections(path, data, left_out)  # heading paths detected from the text layer
            except PdfError as e:
                raise _DocError(str(e)) from e
            if not include_patient:
                why = patient_facing(pdf_title_lines(title, sections[0][2] if sections else ""),
                                     "\n".join(text for _p, _n, text in sections))
                if why:
                    raise _PatientFacing(why)
            chunks = chunk_sections(sections, title=title, source=source, doc_hash=doc_hash, max_chars=chunk_chars)
            return chunks, {"kind": "pdf", "pdf_layout": PDF_LAYOUT_VERSION}, left_out
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise _DocError(f"not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8") from e
        extra: dict[str, Any] = {"kind": "markdown"}
        meta, body = parse_front_matter(text)
        if not include_patient:
            why = patient_facing(markdown_title_lines(str(meta.get("title") or ""), body), body)
            if why:
                raise _PatientFacing(why)
        types = meta.get("cancerTypes")
        if isinstance(types, list) and types:
            extra["cancer_types"] = "; ".join(str(t) for t in types)
        elif isinstance(types, str) and types:
            extra["cancer_types"] = types
        return chunk_markdown(text, source, chunk_chars, doc_hash=doc_hash), extra, []

    def ingest(self, paths: list[Path], chunk_chars: int = 900,
               progress: Callable[[str, int, int], None] | None = None, *, include_patient: bool = False,
               chunk_progress: Callable[[int, int], None] | None = None,
               suspicious: Callable[[str], bool] | None = None) -> IngestReport:
        """Index Markdown/.txt/PDF files and folders of them (recursive; hidden entries skipped).

        Unchanged documents (same SHA-256 and chunk size) are skipped without embedding work; a changed document's
        chunks are replaced. A file whose content is already indexed under another path is a duplicate when that
        path still holds it, and a rename/move when it does not (deleted, or now holds other content): the chunks
        then take the new path (``moved``; metadata only, no embedding, unless the title came from the old file
        name). Patient-facing material (:mod:`kb.audience`) is skipped into ``patient_skipped`` unless
        ``include_patient``; documents already indexed are not re-judged while unchanged. Unreadable files and
        folders (broken links included) go to ``errors`` and the batch continues (a changed file that can no longer
        be read, or that is now patient-facing, keeps its previous chunks). A PDF indexed without some of its pages
        (no text layer, unreadable) is named in ``warnings``, once, when it is indexed, and so is a document with a
        chunk that ``suspicious`` flags (the CLI passes the consult's prompt-injection detector; kb cannot import
        it). It is indexed all the same: consults treat such text as data. So is a document with text longer than
        ``chunk_chars`` that has no sentence end to cut at (one oversized chunk), and a folder holding files of
        unsupported types (how many, of which types). A file name that is not UTF-8 is an error (Chroma cannot
        store it), and so is a device, pipe or socket. ``progress(source, done,
        total)`` is called after each file, ``chunk_progress(embedded, chunked)`` whenever either count of chunks
        grows.
        """
        if chunk_chars < 1:
            raise KBError("chunk size (`kb.chunk_chars`) must be positive")
        warnings: list[tuple[str, str]] = []
        files, errors = self._collect(paths, warnings)
        added = updated = skipped = chunks_added = removed = 0
        embedded = chunked = 0
        moved: list[tuple[str, str]] = []
        patient: list[tuple[str, str]] = []
        duplicates: list[str] = []
        batch_hashes: dict[str, str] = {}
        self.sync_lexical()
        # one read of the registry rows (chunk 0 of each document) answers "unchanged?" for every file at once
        registry: dict[str, list[dict[str, Any]]] = {}
        for meta in self._get({"chunk_index": 0}, ["metadatas"])["metadatas"] or []:
            if meta:
                registry.setdefault(str(meta.get("source", "")), []).append(meta)
        total = len(files)
        done = 0
        # Documents waiting to be embedded: their chunks go to the model together so that length-sorted batches
        # span documents (on the PDQ corpus, per-document batches pad ~9% extra tokens, groups of 256 chunks ~4%).
        # Flushed every _EMBED_GROUP chunks: progress keeps moving and an interruption loses at most one group.
        pending: list[tuple[str, str, list[Chunk], dict[str, Any], dict[str, dict[str, Any]]]] = []

        def current(metas: Iterable[dict[str, Any]], doc_hash: str) -> bool:
            # a PDF indexed by an older PDF reader (e.g. "Page N" paths before headings were detected) is redone
            return all(m.get("doc_hash") == doc_hash and m.get("chunk_chars") == chunk_chars
                       and m.get("chunker") == CHUNKER_VERSION
                       and (m.get("kind") != "pdf" or m.get("pdf_layout") == _pdf_layout()) for m in metas)

        def tick(source: str) -> None:
            nonlocal done
            done += 1
            if progress is not None:
                progress(source, done, total)

        def chunk_tick() -> None:
            if chunk_progress is not None:
                chunk_progress(embedded, chunked)

        def flush() -> None:
            nonlocal added, updated, chunks_added, removed, embedded
            if not pending:
                return
            texts = [embedding_text(c) for _s, _h, cs, _e, _x in pending for c in cs]
            # Embedded shortest first in slices, so the chunk count moves during a long group; each slice holds
            # whole model batches of similar length, as one call would form them.
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            vecs: list[Any] = [None] * len(texts)
            for start in range(0, len(order), _PROGRESS_SLICE):
                idx = order[start:start + _PROGRESS_SLICE]
                for i, vec in zip(idx, self.embedder.embed([texts[i] for i in idx])):
                    vecs[i] = vec
                embedded += len(idx)
                chunk_tick()
            vectors = iter(vecs)
            for source, doc_hash, chunks, extra, existing in pending:
                self._write(source, doc_hash, chunk_chars, chunks, [next(vectors) for _ in chunks], extra)
                removed += self._delete_ids(sorted(set(existing) - {c.id for c in chunks}))
                if existing:
                    updated += 1
                else:
                    added += 1
                chunks_added += len(chunks)
                tick(source)
            pending.clear()

        for path in files:
            source = str(path)
            queued = False
            try:
                if not _utf8(source):  # Chroma cannot store or look up such a source: it failed the whole batch
                    raise _DocError("file name is not valid UTF-8; rename it" if not _utf8(path.name) else
                                    "a folder name in its path is not valid UTF-8; rename it")
                try:
                    data = path.read_bytes()
                except OSError as e:
                    raise _DocError(f"cannot read: {e.strerror or e}") from e
                doc_hash = doc_hash_of(data)
                rows = registry.get(source, [])
                if len(rows) == 1 and current(rows, doc_hash):
                    skipped += 1  # unchanged: no chunking, no embedding, no further queries
                    batch_hashes.setdefault(doc_hash, source)
                    continue
                existing = self._chunks_of(source)
                if existing and current(existing.values(), doc_hash):
                    skipped += 1
                    batch_hashes.setdefault(doc_hash, source)
                    continue
                dup = batch_hashes.get(doc_hash)
                if dup is None:
                    dup = self._source_with_hash(doc_hash, exclude=source)
                    if dup and not self._holds(dup, doc_hash):
                        # renamed or moved: the chunks follow the file instead of citing a path that is gone
                        if existing:  # this path held other content before; that content is gone now
                            removed += self._delete_ids(existing)
                        self._relabel(dup, source)
                        moved.append((dup, source))
                        batch_hashes[doc_hash] = source
                        existing = self._chunks_of(source)
                        named = any(m.get("title") == Path(dup).stem != path.stem for m in existing.values())
                        if current(existing.values(), doc_hash) and not named:
                            continue
                        dup = None  # re-chunk under the new path: older chunking, or a title from the old name
                if dup and dup != source:
                    if existing:  # this path used to hold other content; that content is gone now
                        removed += self._delete_ids(existing)
                    errors.append((source, f"duplicate of {dup} (identical content); not indexed again"))
                    duplicates.append(source)
                    continue
                chunks, extra, left_out = self._chunk_file(path, data, source, doc_hash, chunk_chars,
                                                           include_patient)
                if not chunks:
                    raise _DocError("no text to index (empty document)")
                warnings += [(source, note) for note in left_out]
                note = _long_chunk_note(chunks, chunk_chars, self.max_tokens)
                if note:
                    warnings.append((source, note))
                if suspicious is not None:
                    note = _suspicious_note(chunks, suspicious)
                    if note:
                        warnings.append((source, note))
                pending.append((source, doc_hash, chunks, extra, existing))
                batch_hashes[doc_hash] = source
                chunked += len(chunks)
                chunk_tick()
                queued = True
            except _PatientFacing as e:
                patient.append((source, f"patient-facing material ({e})"))
            except _DocError as e:
                errors.append((source, str(e)))
            finally:
                if not queued:
                    tick(source)
            if sum(len(p[2]) for p in pending) >= _EMBED_GROUP:
                flush()
        flush()
        return IngestReport(added_docs=added, updated_docs=updated, skipped_docs=skipped, chunks_added=chunks_added,
                            removed_chunks=removed, errors=tuple(errors), patient_skipped=tuple(patient),
                            moved=tuple(moved), duplicates=tuple(duplicates), warnings=tuple(warnings))

    @staticmethod
    def _holds(path: str, doc_hash: str) -> bool:
        """Whether the file at ``path`` still has this content. Unreadable counts as yes: nothing is relabelled on
        a guess."""
        p = Path(path)
        try:
            return p.exists() and doc_hash_of(p.read_bytes()) == doc_hash
        except OSError:
            return True

    def _relabel(self, old: str, new: str) -> int:
        """Point every chunk of source ``old`` at ``new`` (a renamed or moved file): metadata only, no embedding."""
        got = self._collection.get(where={"source": old}, include=["metadatas", "documents"])
        ids = list(got["ids"])
        metas = [{**(m or {}), "source": new} for m in got["metadatas"] or [{}] * len(ids)]
        for start in range(0, len(ids), _WRITE_BATCH):
            self._collection.update(ids=ids[start:start + _WRITE_BATCH], metadatas=metas[start:start + _WRITE_BATCH])
        rows = []
        for cid, doc, meta in zip(ids, got["documents"] or [""] * len(ids), metas):
            page = meta.get("page")
            rows.append((cid, new, context_text(str(meta.get("title", "")), str(meta.get("section", "")),
                                                int(page) if page is not None else None,
                                                with_lead(str(meta.get("lead", "")), doc or ""))))
        self.lexical.add(rows)  # the lexical index keys rows by source too (add replaces by chunk id)
        return len(ids)

    def _write(self, source: str, doc_hash: str, chunk_chars: int, chunks: list[Chunk], vectors: list[Any],
               extra: dict[str, Any]) -> None:
        """Upsert one document's chunks (vectors, text, metadata) into Chroma and the lexical index."""
        metas = []
        for i, c in enumerate(chunks):
            meta: dict[str, Any] = {"source": source, "title": c.title, "section": c.section,
                                    "doc_hash": doc_hash, "chunk_index": i, "n_chunks": len(chunks),
                                    "chunk_chars": chunk_chars, "chunker": CHUNKER_VERSION, **extra}
            if c.page is not None:
                meta["page"] = c.page
            if c.lead:
                meta["lead"] = c.lead
            metas.append(meta)
        ids = [c.id for c in chunks]
        for start in range(0, len(chunks), _WRITE_BATCH):
            end = start + _WRITE_BATCH
            self._collection.upsert(ids=ids[start:end], embeddings=vectors[start:end],
                                    documents=[c.text for c in chunks[start:end]], metadatas=metas[start:end])
        self.lexical.add((c.id, source, embedding_text(c)) for c in chunks)

    # ------------------------------------------------------------------ retrieval

    def _query_vector(self, probe: str) -> list[float]:
        if self.model_mismatch:  # vectors of another model: distances would be meaningless
            raise KBError(self.model_mismatch)
        embed_query = getattr(self.embedder, "embed_query", None)
        return embed_query(probe) if embed_query is not None else self.embedder.embed([probe])[0]

    @staticmethod
    def _hit(cid: str, doc: str | None, meta: dict[str, Any] | None, dist: float, origin: str) -> Hit:
        meta = meta or {}
        page = meta.get("page")
        return Hit(chunk_id=cid, text=doc or "", title=str(meta.get("title", "")), source=str(meta.get("source", "")),
                   section=str(meta.get("section", "")), page=int(page) if page is not None else None,
                   distance=float(dist), rerank_score=None, origin=origin, lead=str(meta.get("lead", "")))

    def _nearest(self, vec: Sequence[float], k: int, n: int, fields: Sequence[str] = ()) -> dict[str, list[Any]]:
        """The ``k`` chunks nearest to ``vec`` (of the store's ``n``), nearest first: "ids", "distances" and the
        other ``fields`` (Chroma's names), one list each. Chroma's HNSW search is approximate and, asked for only
        the 30 nearest, missed some of the true 30 and answered differently from one process to the next (the same
        consult got another fifth passage); asked for ``ANN_DEPTH`` it found them all (kb/EVAL.md, round 11).
        Only the distances come with the deep answer: the ``k`` kept are then read by id (reading 400 chunks' text
        took ~50 ms a query, this ~8 ms, as asking for 60 did)."""
        res = self._collection.query(query_embeddings=[list(vec)], n_results=max(1, min(max(k, ANN_DEPTH), n)),
                                     include=["distances"])
        ranked = sorted(zip(res["ids"][0], res["distances"][0]), key=lambda x: float(x[1]))[:k]
        got: dict[str, Any] = {}
        if fields and ranked:
            got = self._collection.get(ids=[cid for cid, _ in ranked], include=list(fields))
            rows = {cid: i for i, cid in enumerate(got["ids"])}
            ranked = [(cid, d) for cid, d in ranked if cid in rows]  # a chunk deleted between the two reads
        out: dict[str, list[Any]] = {"ids": [cid for cid, _ in ranked], "distances": [d for _, d in ranked]}
        for f in fields if got else ():
            out[f] = [got[f][rows[cid]] for cid in out["ids"]]
        return out

    def nearest_distances(self, query: str, k: int) -> list[float]:
        """Cosine distances from ``query`` to its ``k`` nearest chunks, nearest first; [] when empty."""
        n = self.count()
        if n == 0:
            return []
        return [float(d) for d in self._nearest(self._query_vector(query), min(k, n), n)["distances"]]

    def retrieve(self, query: str, params: RetrievalParams | None = None, anchor: str | None = None
                 ) -> RetrievalResult:
        params = params or RetrievalParams()
        timings: dict[str, float] = {}
        t_start = time.perf_counter()

        def lap(name: str, since: float) -> float:
            now = time.perf_counter()
            timings[name] = now - since
            return now

        n = self.count()
        threshold, _origin = self.threshold_for(params.distance_threshold)
        gate_k = self.gate_k(params.distance_threshold)
        if n == 0 or not query.strip():
            timings["total"] = time.perf_counter() - t_start
            return RetrievalResult(query, (), False, None, 0, 0, timings, threshold)
        probe = f"{query}\n{anchor}" if anchor else query
        vec = self._query_vector(probe)
        phrasings: dict[str, list[float]] = {}  # each extra or gate phrasing embedded once per retrieval

        def embedded(phrasing: str) -> list[float]:
            if phrasing not in phrasings:
                phrasings[phrasing] = self._query_vector(phrasing)
            return phrasings[phrasing]
        t = lap("embed", t_start)
        recall_k = max(1, params.recall_k)
        extras = [q for q in dict.fromkeys(x.strip() for x in params.extra_queries)
                  if q and q != query.strip()] if params.multi_query_weight > 0 else []
        # With a case-fit test, recall keeps 2 x recall_k of its ranking and the recall_k of them that fit (and lie
        # within the gate's distance) first; when fewer than rerank_k of those fit, the phrasings' pools are doubled
        # too (an unresectable stage IIIA case's 15 held one passage that fit, the rest resectable or EGFR
        # sections). Doubling them always moved answers that were first to second (kb/EVAL.md round 10): only then.
        wide = 2 * recall_k if params.demote is not None else recall_k
        pool = max(2 * recall_k, 30, gate_k) if params.hybrid or extras else max(wide, gate_k)
        deep = max(4 * recall_k, 60) if params.demote is not None and extras and not params.hybrid else pool
        res = self._nearest(vec, max(pool, deep), n, ("documents", "metadatas"))
        # a chunk of a section the chunker now skips (a store ingested before "Key References" joined the list)
        dense = [self._hit(cid, doc, meta, dist, "dense") for cid, doc, meta, dist in
                 zip(res["ids"], res["documents"], res["metadatas"], res["distances"])
                 if not skipped_section(str((meta or {}).get("section", "")))]
        dense.sort(key=lambda h: h.distance)
        dense, deeper = dense[:pool], dense
        t = lap("search", t)
        closest = dense[0] if dense else None
        if params.hybrid:
            if self.lexical.count() != n:
                self.sync_lexical()
            lexical_ids = [cid for cid, _s in self.lexical.search(probe, pool)]
            by_id = {h.chunk_id: h for h in dense}
            fused = [cid for cid, _s in rrf([[h.chunk_id for h in dense], lexical_ids], RRF_K,
                                                [1.0, params.lexical_weight])][:recall_k]
            lexical_set = set(lexical_ids)
            missing = [cid for cid in fused if cid not in by_id]
            if missing:
                import numpy as np

                got = self._collection.get(ids=missing, include=["documents", "metadatas", "embeddings"])
                q = np.asarray(vec, dtype=np.float32)
                for cid, doc, meta, emb in zip(got["ids"], got["documents"], got["metadatas"], got["embeddings"]):
                    by_id[cid] = self._hit(cid, doc, meta, _cosine_distance(q, emb), "lexical")
            candidates = []
            for cid in fused:
                h = by_id.get(cid)
                if h is None:  # deleted between the two reads
                    continue
                if h.origin == "dense" and cid in lexical_set:
                    h = replace(h, origin="dense+lexical")
                candidates.append(h)
            lap("lexical", t)
            t = time.perf_counter()
        else:
            candidates = dense[:wide]
        if extras:
            main = candidates if params.hybrid else dense
            candidates = self._multi_query(vec, main, extras, params.multi_query_weight, recall_k, n, embedded,
                                           keep=wide)
            t = lap("multi_query", t)
        # a passage is judged by the nearer of the query and the gate queries (the consult's facts query): a long
        # note's history pulls the whole case's vector away from passages its facts query finds close (a limited-
        # stage SCLC case lost its PCI and radiation passages at the cut: kb/EVAL.md round 18)
        gate_phrasings = [q for q in dict.fromkeys(x.strip() for x in params.gate_queries) if q and q != query.strip()]
        gate_vecs = {q: embedded(q) for q in gate_phrasings}
        if gate_vecs:
            candidates = self._nearer(candidates, list(gate_vecs.values()))
        if wide > recall_k and params.demote is not None:
            def fitting(hits: list[Hit]) -> list[Hit]:  # fit the case and lie within the gate's distance
                return [h for h in hits if h.distance <= threshold and not params.demote(h)]

            fit = fitting(candidates)
            if extras and deep > pool and len(fit) < params.rerank_k:
                candidates = self._multi_query(vec, deeper, extras, params.multi_query_weight, 2 * recall_k, n,
                                               embedded, keep=wide)
                if gate_vecs:
                    candidates = self._nearer(candidates, list(gate_vecs.values()))
                fit = fitting(candidates)
            candidates = (fit + [h for h in candidates if h not in fit])[:recall_k]
        candidates = [h for h in candidates if not skipped_section(h.section)]  # found by BM25 or another phrasing
        # The question is in the domain when its k nearest chunks are close on average (k = 1: the nearest one);
        # then single passages beyond the threshold still drop out.
        near = [h.distance for h in dense[:gate_k]]
        gate_value = sum(near) / len(near) if near else None
        in_domain = gate_value is not None and gate_value <= threshold
        gate_query, main_value = "", gate_value
        for phrasing in gate_phrasings if gate_value is not None and not in_domain else ():
            near = self._nearest(gate_vecs[phrasing], gate_k, n)["distances"]
            if near and sum(near) / len(near) <= threshold:
                in_domain, gate_value, gate_query = True, sum(near) / len(near), phrasing
                break
        passed = [h for h in candidates if h.distance <= threshold] if in_domain else []
        if not passed:  # the refusal explains the query's own distances
            gate_value, gate_query = main_value, ""
        t = lap("gate", t)
        if not passed:
            timings["total"] = time.perf_counter() - t_start
            return RetrievalResult(query, (), False, closest, len(candidates), 0, timings, threshold,
                                   tuple(candidates), gate_k=gate_k, gate_value=gate_value,
                                   gate_query=gate_query)
        if params.demote is not None:
            demote = params.demote
            passed = sorted(passed, key=lambda h: int(demote(h)))  # stable: recall order within a level
        if params.rerank:
            keep_order = params.rerank_order == "recall"
            pool = passed[:max(1, params.rerank_k)] if keep_order else passed
            scored = [replace(h, rerank_score=float(sc)) for h, sc in zip(pool, self._scores(query, params, pool))]
            ranked = (scored + passed[len(pool):] if keep_order
                      else sorted(scored, key=lambda h: h.rerank_score, reverse=True))
        else:
            ranked = list(passed)
        t = lap("rerank", t)
        top = self.block_leads(ranked[:max(1, params.rerank_k)])
        if params.options_lists > 0:
            read = self._section_reader()
            top = self.list_lead_ins(top, read)
            lists = self.options_lists(top, params.options_lists, read)
            if lists and params.rerank:  # each scored on its lead-in and option line (kb.outline.scored_text)
                from kb.outline import scored_text

                scores = self._scores(query, params, [replace(h, text=scored_text(h.text)) for h in lists])
                lists = [replace(h, rerank_score=sc) for h, sc in zip(lists, scores)]
            top = top + lists
            t = lap("options", t)
        kept = trim_to_budget([h.text for h in top], params.char_budget)
        hits = tuple(replace(top[i], text=text) for i, text in kept)
        lap("trim", t)
        timings["total"] = time.perf_counter() - t_start
        return RetrievalResult(query, hits, True, closest, len(candidates), len(passed), timings, threshold,
                               tuple(candidates), tuple(ranked), gate_k=gate_k, gate_value=gate_value,
                               gate_query=gate_query)

    def _scores(self, query: str, params: RetrievalParams, hits: Sequence[Hit]) -> list[float]:
        """Stage 3 logits of ``hits``: the cross-encoder's, of the query and of each grade query, the highest."""
        # a passage is scored as it will be read: after its block's first sentence (a trial's results after the
        # sentence that names the trial and its population)
        texts = [context_text(h.title, h.section, h.page, with_lead(h.lead, h.text)) for h in hits]
        scores = [float(x) for x in self.rerank_scores(query, texts)]
        for grader in dict.fromkeys(x.strip() for x in params.grade_queries):
            if grader and grader != query.strip():  # the max over the query and each grade query
                scores = [max(a, float(b)) for a, b in zip(scores, self.rerank_scores(grader, texts))]
        return scores

    def _section_reader(self) -> Callable[[str, str], tuple[str, str, int | None, dict[str, int]]]:
        """A reader of one section's text (its chunks in order, joined by newlines), with the id and page of its first
        chunk and where each chunk begins in the text; each section is read once per reader."""
        texts: dict[tuple[str, str], tuple[str, str, int | None, dict[str, int]]] = {}

        def section(source: str, path: str) -> tuple[str, str, int | None, dict[str, int]]:
            if (source, path) not in texts:
                got = self._get({"$and": [{"source": source}, {"section": path}]}, ["documents", "metadatas"])
                rows = sorted(zip(got["ids"], got["documents"], got["metadatas"]),
                              key=lambda r: int((r[2] or {}).get("chunk_index", 0)))
                page = (rows[0][2] or {}).get("page") if rows else None
                starts, at, joined = {}, 0, ""
                for cid, doc, meta in rows:
                    # a chunk that continues its block (it has a lead) joins it on the same line, as in the file
                    joined += ("" if not at else " " if (meta or {}).get("lead") else "\n") + (doc or "")
                    starts[cid] = at
                    at += len(doc or "") + 1
                texts[(source, path)] = (joined, rows[0][0] if rows else "",
                                         int(page) if page is not None else None, starts)
            return texts[(source, path)]

        return section

    @staticmethod
    def block_leads(hits: Sequence[Hit]) -> list[Hit]:
        """``hits`` with each passage that begins inside a paragraph or list item preceded by that block's first
        sentence (``Hit.lead``; CheckMate-649's "A total of 789 patients ... were assigned" after "1. In a randomized
        ... phase III study (CheckMate-649), 1,581 patients ... HER2-negative ..."), unless a passage holds it."""
        out = list(hits)
        for n, h in enumerate(hits):
            if h.lead and not any(h.lead in o.text for o in out):
                out[n] = replace(h, text=with_lead(h.lead, h.text), lead="")  # read in its text now
        return out

    def list_lead_ins(self, hits: Sequence[Hit], read: Callable[..., Any] | None = None) -> list[Hit]:
        """``hits`` with each passage that begins inside an options list (a chunk of drug bullets, "- Alectinib."
        "- Lorlatinib.", cut from the item line "6. ALK inhibitors (for patients with ALK translocations)." that ends
        the chunk before it) preceded by what it lacks of the list, verbatim (``kb.outline.list_context``): the list's
        lead-in and the numbered item its first bullets sit under, each only when no passage of ``hits`` holds it; in
        any other numbered list, the item (a trial's results in bullets get the trial whose population they share).
        Other passages are unchanged; ids, scores and order are kept."""
        from kb.outline import list_context

        read = read or self._section_reader()
        out = list(hits)
        for n, h in enumerate(hits):
            first = next((line.strip() for line in h.text.splitlines() if line.strip()), "")
            if not re.match(r"(?:[-*+\u2022]|\d{1,2}[.)])\s", first):
                continue  # only a chunk that begins with a list line can begin inside a list
            text, _, _, starts = read(h.source, h.section)
            found = list_context(text, starts[h.chunk_id]) if h.chunk_id in starts else None
            if not found:
                continue
            lead, item = (x if x and not any(x in o.text for o in out) else "" for x in found)
            if lead or item:
                body = f"{item}\n{h.text}" if item else h.text
                out[n] = replace(h, text=f"{lead}\n\n{body}" if lead else body)
        return out

    def options_lists(self, hits: Sequence[Hit], limit: int, read: Callable[..., Any] | None = None) -> list[Hit]:
        """For each of ``hits`` under a section that opens with an options list whose item names the hit's option
        (``kb.outline.option_item``), that list's lead-in and item as a passage (origin "options") filed under the
        option's heading, at most ``limit``, without repeats and without an item a hit already holds. An item too
        short to be quoted ("4. Immunotherapy.", ``kb.outline.short``) is followed by the paragraph its own section
        opens with (``kb.outline.opening``), verbatim, unless a hit holds it."""
        from kb.outline import item_key, opening, option_item, short

        read = read or self._section_reader()
        out: list[Hit] = []
        seen: set[str] = set()  # the items added (before an opening paragraph)
        for h in hits:
            parts = h.section.split(" > ")
            for k in range(len(parts) - 2, -1, -1):  # the nearest section above the hit that lists its option
                path = " > ".join(parts[:k + 1])
                text, first_id, page, _ = read(h.source, path)
                # the deepest heading below it that the list names: PDQ nests options ("2. Signal transduction
                # inhibitors." then "1. BRAF inhibitors (for ... BRAF V600 ...)."), numbered flat
                found = next(((j, x) for j in range(len(parts) - 1, k, -1) if (x := option_item(text, parts[j]))),
                             None) if text else None
                if found:
                    j, item = found
                    line = item.split("\n\n", 1)[1].split("\n", 1)[0]
                    cid = f"{first_id}:{item_key(line)}"
                    if any(o.chunk_id == cid for o in out):  # flat numbering repeats in nested lists ("1." twice)
                        cid = f"{cid}-{item_key(re.sub(r'^[0-9]{1,2}[.)]', '-', line))}"
                    if item not in seen and not any(line in x.text for x in hits):
                        seen.add(item)
                        section = " > ".join(parts[:j + 1])
                        if short(line) and (para := opening(read(h.source, section)[0])) and \
                                not any(para[:100] in x.text for x in hits):
                            item = f"{item}\n\n{para}"
                        # filed under the option's own heading: its condition ("(for patients with ALK
                        # translocations)") is the passage's, for a paraphrase citing it as for the trials under it
                        out.append(Hit(chunk_id=cid, text=item, title=h.title, source=h.source, section=section,
                                       page=page, distance=h.distance, rerank_score=None, origin="options"))
                    break
            if len(out) >= limit:
                break
        return out

    def _multi_query(self, vec: list[float], main: list[Hit], extras: list[str], weight: float, recall_k: int,
                     n: int, embed: Callable[[str], list[float]], keep: int | None = None) -> list[Hit]:
        """Fuse the query's recall ranking ``main`` (its dense top ``pool``, or the hybrid fusion) with each extra
        query's dense top ``pool`` (RRF, k = RRF_K; weight 1 for the query, ``weight`` for each extra) and keep the
        best ``keep`` (default ``recall_k``, which sets the pools); ``embed`` gives a phrasing's vector. Every hit
        carries its cosine distance to the QUERY's vector, whichever phrasing found it (``retrieve`` then takes the
        nearer of that and a gate query's)."""
        pool = max(2 * recall_k, 30)
        by_id = {h.chunk_id: h for h in main}
        rankings = [[h.chunk_id for h in main]]
        for extra in extras:
            res = self._nearest(embed(extra), pool, n, ("documents", "metadatas"))
            ids = []
            for cid, doc, meta in zip(res["ids"], res["documents"], res["metadatas"]):
                ids.append(cid)
                if cid not in by_id:
                    by_id[cid] = self._hit(cid, doc, meta, float("nan"), "multi_query")
            rankings.append(ids)
        fused = [cid for cid, _s in rrf(rankings, RRF_K, [1.0] + [weight] * len(extras))][:keep or recall_k]
        unknown = [cid for cid in fused if math.isnan(by_id[cid].distance)]  # found by an extra query only
        if unknown:
            import numpy as np

            got = self._collection.get(ids=unknown, include=["embeddings"])
            q = np.asarray(vec, dtype=np.float32)
            for cid, emb in zip(got["ids"], got["embeddings"]):
                by_id[cid] = replace(by_id[cid], distance=_cosine_distance(q, emb))
        # a chunk deleted between the reads has no distance: dropped rather than passed unjudged
        return [by_id[cid] for cid in fused if not math.isnan(by_id[cid].distance)]

    def _nearer(self, hits: list[Hit], vecs: list[list[float]]) -> list[Hit]:
        """``hits`` with each distance the nearer of its own and its distance to each of ``vecs``."""
        if not hits:
            return hits
        import numpy as np

        got = self._collection.get(ids=[h.chunk_id for h in hits], include=["embeddings"])
        emb = dict(zip(got["ids"], got["embeddings"]))
        qs = [np.asarray(v, dtype=np.float32) for v in vecs]
        out = []
        for h in hits:
            if (e := emb.get(h.chunk_id)) is not None:
                d = min(_cosine_distance(q, e) for q in qs)
                h = replace(h, distance=d) if d < h.distance else h
            out.append(h)
        return out

    def __repr__(self) -> str:
        return f"KnowledgeBase({self.collection_name!r} at {self.location}, embedder={self.embedder_spec!r})"
