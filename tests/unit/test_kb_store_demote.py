"""Case-fit preference in kb.store (``RetrievalParams.demote``): passages the caller knows cannot apply move after the
others before the rerank_k cut; none is dropped. Fake embedder and reranker (tests/unit/test_kb_store_grade_queries),
no models; the engine's test (engine.casefit.misfit_filter) on real PDQ-style headings."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.casefit import misfit_filter
from engine.config import Settings
from engine.facts import extract_facts
from engine.nodes.corrective_rag import consult_queries
from kb.store import Hit, KnowledgeBase, RetrievalParams
from tests.unit.test_kb_store_grade_queries import FakeEmbedder, _unit

CHUNKS = {"her2pos": [1, 0, 0, 0], "metastatic": [0.97, 0.1, 0, 0], "hrpos": [0.9, 0.3, 0, 0],
          "endocrine": [0.85, 0.4, 0.1, 0]}


class FlatReranker:
    def score(self, query: str, texts: list[str]) -> list[float]:
        return [1.0 for _ in texts]


@pytest.fixture()
def kb():
    k = KnowledgeBase(chroma_dir=None, collection="demote-test", embedder_spec="fake", reranker_spec="fake",
                      embedder=FakeEmbedder())
    k._collection.upsert(ids=list(CHUNKS), embeddings=[_unit(v) for v in CHUNKS.values()],
                         documents=[f"{name} text" for name in CHUNKS],
                         metadatas=[{"source": "breast.md", "title": "Breast", "section": f"## {name}"}
                                    for name in CHUNKS])
    k._reranker = FlatReranker()
    yield k
    k.close()


def test_demoted_passages_go_after_the_others_before_the_cut(kb):
    base = RetrievalParams(recall_k=4, rerank_k=4, distance_threshold=0.5, options_lists=0)
    recall = [h.chunk_id for h in kb.retrieve("q", base).hits]
    assert recall[:2] == ["metastatic", "her2pos"]
    misfit = {"her2pos", "metastatic"}
    demoted = kb.retrieve("q", RetrievalParams(recall_k=4, rerank_k=2, distance_threshold=0.5, options_lists=0,
                                               demote=lambda h: h.chunk_id in misfit))
    assert [h.chunk_id for h in demoted.hits] == ["hrpos", "endocrine"]
    # nothing dropped: they still fill the cut when too few others passed
    every = kb.retrieve("q", RetrievalParams(recall_k=4, rerank_k=4, distance_threshold=0.5, options_lists=0,
                                             demote=lambda h: h.chunk_id != "endocrine"))
    assert [h.chunk_id for h in every.hits] == ["endocrine"] + [c for c in recall if c != "endocrine"]


def test_recall_looks_deeper_for_passages_that_fit(kb):
    """An unresectable stage IIIA NSCLC case's 15 recalled held one passage that fit (the rest resectable or EGFR
    sections), so its five were mostly misfits: with a case-fit test Stage 1 reads twice as deep and keeps those that
    fit first."""
    plain = kb.retrieve("q", RetrievalParams(recall_k=2, rerank_k=2, distance_threshold=0.5, options_lists=0))
    assert [h.chunk_id for h in plain.hits] == ["metastatic", "her2pos"]
    misfit = {"her2pos", "metastatic"}
    deeper = kb.retrieve("q", RetrievalParams(recall_k=2, rerank_k=2, distance_threshold=0.5, options_lists=0,
                                              demote=lambda h: h.chunk_id in misfit))
    assert [h.chunk_id for h in deeper.hits] == ["hrpos", "endocrine"]


def hit(title: str, section: str) -> Hit:
    return Hit("c", "text", title, "x.md", section, None, 0.2, None)


def test_a_consult_demotes_sections_of_another_stage_receptor_status_or_cancer():
    """The audit's stage IIA, ER-positive, HER2 IHC 1+ breast case kept 'Stages I, II, and III HER2-Positive' and
    'Metastatic HER2-Low' sections among its five while the HR-positive postoperative sections were cut."""
    facts = extract_facts("58-year-old, invasive ductal carcinoma of the breast, ER 95%, PR 80%, HER2 IHC 1+, pT2N0M0 "
                          "stage IIA. What adjuvant systemic therapy is recommended?", genes=Settings().router.genes,
                          treatment_keywords=[], rare_cancers=[])
    misfit = misfit_filter(facts)
    title = "Breast Cancer Treatment (PDQ®) - NCI"
    assert misfit(hit(title, "## Systemic Therapy for Stages I, II, and III Breast Cancer > ### Stages I, II, and III "
                             "HER2-Positive Breast Cancer > #### Postoperative therapy for HER2-positive breast cancer"))
    assert misfit(hit(title, "## Treatment of Metastatic Breast Cancer > ### Metastatic HER2-Low Breast Cancer"))
    assert misfit(hit("Ovarian Epithelial Cancer Treatment (PDQ®) - NCI", "## Treatment of Early-Stage Disease"))
    assert not misfit(hit(title, "## Systemic Therapy for Stages I, II, and III Breast Cancer > ### Stages I, II, and "
                                 "III HER2-Negative Hormone Receptor–Positive Breast Cancer"))
    assert not misfit(hit(title, "## General Information About Breast Cancer > ### Prognostic and Predictive Factors"))


def test_the_setting_turns_it_off():
    text = "Stage IIA breast cancer, ER-positive, HER2-negative. What adjuvant therapy?"
    assert consult_queries(text, Settings())[1]["demote"] is not None
    off = Settings.model_validate({"rag": {"prefer_fitting": False}})
    assert consult_queries(text, off)[1]["demote"] is None


def test_a_key_references_section_is_neither_chunked_nor_retrieved_from_an_older_store(kb):
    """The audit's CLL consult released "Blood 127 (3): 303-9, 2016." from PDQ's "Key References for Chronic
    Lymphocytic Leukemia Treatment" (a bibliography the chunker did not skip)."""
    from kb.chunking import chunk_markdown, skipped_section

    assert skipped_section("## Key References for Chronic Lymphocytic Leukemia Treatment")
    assert not skipped_section("## Treatment of Chronic Lymphocytic Leukemia > ### Key trials")
    # PDQ dates its change log: every summary's "Latest Updates to This Summary (04/25/2025)" had been retrievable
    assert skipped_section("## Latest Updates to This Summary (04/25/2025)")
    assert not skipped_section("## Treatment of Recurrent Breast Cancer (2025 update)")
    text = ("# CLL\n\n## Treatment\n\nIbrutinib is an option for untreated disease.\n\n"
            "## Key References for CLL Treatment\n\n- Thompson PA, et al.: Blood 127 (3): 303-9, 2016.\n")
    assert [c.section for c in chunk_markdown(text, "cll.md", 500)] == ["## Treatment"]
    # a store chunked before: its chunk is there, and retrieval skips it
    kb._collection.upsert(ids=["refs"], embeddings=[_unit([1, 0.1, 0.05, 0])], documents=["refs text"],
                          metadatas=[{"source": "breast.md", "title": "Breast",
                                      "section": "## Key References for Breast Cancer Treatment"}])
    got = kb.retrieve("q", RetrievalParams(recall_k=5, rerank_k=5, distance_threshold=0.5, options_lists=0))
    assert "refs" not in [h.chunk_id for h in got.hits] and got.hits


def test_a_treatment_question_prefers_treatment_sections_to_background_ones():
    """The audit's DLBCL case ("IPI 3. What is the recommended first-line treatment?") kept PDQ's "Prognostic
    factors" and "Lugano classification" chunks among its five; a question about surveillance or prognosis does not
    demote them."""
    settings = Settings()
    text = ("70-year-old with stage III diffuse large B-cell lymphoma, IPI 3, LVEF 60%. What is the recommended "
            "first-line treatment?")
    demote = consult_queries(text, settings)[1]["demote"]
    title = "Aggressive B-Cell Non-Hodgkin Lymphoma Treatment (PDQ®) - NCI"
    options = "## Treatment of Aggressive, Noncontiguous Stage II/III/IV B-Cell NHL > ### Treatment Options for " \
              "Aggressive, Noncontiguous Stage II/III/IV B-Cell NHL"
    assert demote(hit(title, f"{options} > #### Prognostic factors"))
    assert demote(hit(title, "## Stage Information > ### Staging Subclassification System > #### Lugano "
                             "classification"))
    assert not demote(hit(title, f"{options} > #### Pola-R-CHP"))
    from engine.nodes.corrective_rag import background_section
    assert not background_section("## Treatment of Good-Prognosis Nonseminoma")  # a heading naming a treatment
    # a heading above the deepest (a QA pass's HPV-positive tonsil case was released the risk factors' lines)
    assert background_section("## General Information About Oropharyngeal Cancer > ### Risk Factors > #### HPV "
                              "infection")
    assert background_section("## General Information About Colon Cancer")
    assert not background_section("## General Information About Colon Cancer > ### Treatment Option Overview")
    follow_up = "## General Information About Colon Cancer > ### Follow-Up and Survivorship"
    colon = "Stage II colon cancer resected 2 years ago, CEA normal. What follow-up surveillance is recommended?"
    demote = consult_queries(colon, settings)[1]["demote"]
    assert not demote(hit("Colon Cancer Treatment (PDQ®) - NCI", follow_up))
    assert consult_queries("Stage II colon cancer resected. What adjuvant therapy?", settings)[1]["demote"](
        hit("Colon Cancer Treatment (PDQ®) - NCI", follow_up))


class TwoWayEmbedder:
    """The question points one way, its focused phrasing ("x") another."""
    query_prefix = ""

    def embed_query(self, text: str) -> list[float]:
        return [0.0, 1.0, 0.0, 0.0] if text == "x" else [1.0, 0.0, 0.0, 0.0]

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0, 0.0, 0.0] for _ in texts]


def test_when_few_recalled_passages_fit_the_phrasings_are_read_deeper():
    """Recall's 2 x 15 held only misfits (as the unresectable IIIA case's did): the passages that fit lay beyond
    both rankings' top 30, near the question and its focused phrasing alike; they are found and kept first."""
    k = KnowledgeBase(chroma_dir=None, collection="deeper-test", embedder_spec="fake", reranker_spec="fake",
                      embedder=TwoWayEmbedder())
    try:
        vectors = {f"misfit{i:02d}": _unit([1, 0, 0.002 * i, 0]) for i in range(40)}  # near the question only
        vectors |= {f"fits{i}": _unit([0.9, 0.45, 0, 0.001 * i]) for i in range(3)}  # near both
        vectors |= {f"far{i:02d}": _unit([0, 1, 0, 1 + 0.01 * i]) for i in range(40)}  # near the phrasing only
        vectors |= {f"other{i:02d}": _unit([0.5, 0, 0, 1 + 0.01 * i]) for i in range(40)}  # near neither
        k._collection.upsert(ids=list(vectors), embeddings=list(vectors.values()),
                             documents=[f"{c} text" for c in vectors],
                             metadatas=[{"source": "x.md", "title": "X", "section": f"## {c}"} for c in vectors])
        k._reranker = FlatReranker()
        params = RetrievalParams(recall_k=15, rerank_k=3, distance_threshold=0.5, options_lists=0,
                                 extra_queries=("x",), multi_query_weight=0.5)
        plain = k.retrieve("q", params)
        assert all(h.chunk_id.startswith("misfit") for h in plain.hits)
        deeper = k.retrieve("q", replace(params, demote=lambda h: h.chunk_id.startswith("misfit")))
        assert sorted(h.chunk_id for h in deeper.hits) == ["fits0", "fits1", "fits2"]
    finally:
        k.close()
