"""Sentence ranking (kb/EVAL.md round 20): the tiny model drafts the first five sentences it is offered, so the one
that answers the question must be among them. A long note's HER2-positive case asked for the oral combination with
activity in brain metastases; "A phase Ib trial ... tucatinib was combined with trastuzumab and capecitabine" had
been offered 7th, behind trial background that fitted as well, and was never drafted. Corrective RAG scores each
sentence against the question with the cross-encoder and evidence-locked mode fuses that order with fit and kind."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from engine.casefit import locked_candidates, sentence_relevance
from engine.config import Settings
from engine.context import NodeContext
from engine.facts import extract_facts
from engine.nodes import corrective_rag
from engine.safety import offered_sentences
from engine.state import ConsultState, Passage
from kb.store import Hit, RetrievalResult

NOTE = ("49-year-old woman with HER2-positive, hormone receptor-negative metastatic breast cancer; three new brain "
        "metastases after trastuzumab emtansine. Which oral-based combination has shown benefit in patients with "
        "and without brain metastases?")
TITLE = "Breast Cancer Treatment (PDQ®) - NCI"
HER2 = "## Treatment of Metastatic Breast Cancer > ### Metastatic HER2-Positive Breast Cancer"
MARGETUXIMAB = Passage("E1", "E1", TITLE, "breast.md", f"{HER2} > #### Margetuximab", None,
                       "Margetuximab is an Fc-engineered anti-HER2 monoclonal antibody. "
                       "Both groups received investigator's choice of chemotherapy (capecitabine, eribulin, "
                       "gemcitabine, or vinorelbine). "
                       "The sequential primary end points were PFS by central review followed by OS. "
                       "All patients had received previous trastuzumab and most had received pertuzumab.",
                       0.18, 5.0, relevant=True)
TKI = Passage("E2", "E2", TITLE, "breast.md", f"{HER2} > #### Tyrosine kinase inhibitors", None,
              "Tucatinib is an oral TKI highly selective for the kinase domain of HER2. "
              "Lapatinib is an oral TKI that inhibits both HER2 and the epidermal growth factor receptor. "
              "Secondary end points were time to intervention for metastatic central nervous system disease. "
              "A phase Ib trial in pretreated patients demonstrated activity when tucatinib was combined with "
              "trastuzumab and capecitabine.",
              0.19, 4.0, relevant=True)
ANSWER = "E2.s4"


def facts():
    r = Settings().router
    return extract_facts(NOTE, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


def scored(p: Passage, best: int | None = None) -> Passage:
    """The passage with a score per sentence: -8 each, +4 for its ``best``-th sentence (1-based)."""
    n = len(offered_sentences(p.text))
    return replace(p, sentence_scores=tuple(4.0 if j == best else -8.0 for j in range(1, n + 1)))


def test_the_answering_sentence_is_offered_among_the_first_five_when_it_answers_the_question() -> None:
    f = facts()
    plain = list(locked_candidates([MARGETUXIMAB, TKI], f, NOTE)[0])
    assert plain.index(ANSWER) >= 5  # by fit and kind alone: trial narrative after the rest
    ranked = list(locked_candidates([scored(MARGETUXIMAB), scored(TKI, best=4)], f, NOTE)[0])
    assert ranked.index(ANSWER) < 5
    assert set(ranked) == set(plain)  # the order changes, never what is offered


def test_scores_that_say_nothing_leave_the_order_by_fit_and_kind() -> None:
    f = facts()
    plain = list(locked_candidates([MARGETUXIMAB, TKI], f, NOTE)[0])
    flat = [replace(p, sentence_scores=(-11.3,) * len(offered_sentences(p.text))) for p in (MARGETUXIMAB, TKI)]
    assert list(locked_candidates(flat, f, NOTE)[0]) == plain


def test_a_sentence_whose_condition_the_case_does_not_state_stays_after_the_others() -> None:
    # the case states no BRCA status: the PARP inhibitor sentence is offered after every other, however relevant
    parp = Passage("E3", "E3", TITLE, "breast.md", f"{HER2} > #### Other options", None,
                   "For patients with germline BRCA mutations, olaparib is a treatment option. "
                   "Trastuzumab plus chemotherapy is a standard treatment option.", 0.2, 3.0, relevant=True)
    offered = list(locked_candidates([scored(parp, best=1), scored(TKI)], facts(), NOTE)[0])
    assert offered[-1] == "E3.s1"


def test_scores_are_ignored_for_a_passage_whose_sentences_they_do_not_match() -> None:
    assert sentence_relevance([scored(TKI, best=4)])[ANSWER] == 4.0
    assert sentence_relevance([replace(TKI, sentence_scores=(1.0, 2.0))]) == {}  # 4 sentences, 2 scores
    assert sentence_relevance([TKI]) == {}


class ScoringKB:
    """One retrieval, and a cross-encoder that scores the sentences naming capecitabine high."""

    def __init__(self, *hits: Hit) -> None:
        self.hits = hits
        self.scored: list[tuple[str, list[str]]] = []

    def retrieve(self, query: str, params: object, anchor: str | None = None) -> RetrievalResult:
        return RetrievalResult(query, self.hits, True, self.hits[0], len(self.hits), len(self.hits), {})

    def rerank_scores(self, query: str, texts: list[str]) -> list[float]:
        self.scored.append((query, list(texts)))
        return [3.5 if "capecitabine" in t else -9.0 for t in texts]


def consult(kb: object, **rag: object) -> ConsultState:
    state = ConsultState(thread_id="PT-0001", consult_id="c1", raw_input="", case_text=NOTE, facts=facts())
    settings = Settings().with_overrides({f"rag.{k}": v for k, v in rag.items()})
    ctx = NodeContext(settings=settings, models=None, kb=lambda: kb, emit=lambda e: None)  # type: ignore[arg-type]
    return asyncio.run(corrective_rag.run(state, ctx))


def hit(p: Passage, score: float) -> Hit:
    return Hit(p.id, p.text, p.title, p.source, p.section, None, p.distance, score)


def test_corrective_rag_scores_each_sentence_of_a_usable_passage_against_the_question() -> None:
    pancreas = Hit("p1", "FOLFIRINOX is a first-line option for metastatic pancreatic adenocarcinoma.",
                   "Pancreatic Cancer Treatment (PDQ®) - NCI", "pancreas.md", "## Metastatic", None, 0.3, 2.0)
    kb = ScoringKB(hit(MARGETUXIMAB, 5.0), hit(TKI, 4.0), pancreas, hit(TKI, -9.5))
    passages = consult(kb).retrieval.passages
    (question, texts), = kb.scored  # one call for all of them
    assert question == ("Which oral-based combination has shown benefit in patients with and without brain "
                        "metastases?")
    assert passages[0].sentence_scores == (-9.0, 3.5, -9.0, -9.0)
    assert passages[1].sentence_scores == (-9.0, -9.0, -9.0, 3.5)
    assert passages[2].other_cancer and passages[2].sentence_scores == ()  # another cancer's: never offered
    assert not passages[3].relevant and passages[3].sentence_scores == ()  # graded irrelevant
    assert len(texts) == 8 and not any("](" in t for t in texts)
    offered = list(locked_candidates([p for p in passages if p.relevant], facts(), NOTE)[0])
    assert offered.index(ANSWER) < 5


def test_sentence_ranking_can_be_switched_off_and_needs_a_cross_encoder() -> None:
    kb = ScoringKB(hit(TKI, 4.0))
    assert consult(kb, rank_sentences=False).retrieval.passages[0].sentence_scores == ()
    assert kb.scored == []

    class NoReranker:
        def retrieve(self, query: str, params: object, anchor: str | None = None) -> RetrievalResult:
            return kb.retrieve(query, params, anchor)

    assert consult(NoReranker()).retrieval.passages[0].sentence_scores == ()


def test_the_scores_survive_a_checkpoint() -> None:
    state = ConsultState(thread_id="PT-0001", consult_id="c1", raw_input="", case_text=NOTE,
                         retrieval=consult(ScoringKB(hit(TKI, 4.0))).retrieval)
    again = ConsultState.from_dict(state.to_dict())
    assert again.retrieval == state.retrieval
    assert again.retrieval.passages[0].sentence_scores == (-9.0, -9.0, -9.0, 3.5)


KEYNOTE_775 = Passage("E1", "E1", "Endometrial Cancer Treatment (PDQ®) - NCI", "endometrial.md",
                      "## Treatment of Stage III, Stage IV, and Recurrent Endometrial Cancer > ### Immunotherapy",
                      None, "Study 309/KEYNOTE-775 was a large, international, multicenter, randomized trial that "
                      "compared the combination of pembrolizumab and lenvatinib with chemotherapy. The study enrolled "
                      "women with advanced or recurrent endometrial cancer who had disease progression after a "
                      "platinum-based regimen. Patients were stratified by mismatch repair (MMR) status. The two "
                      "primary end points were PFS and OS.", 0.17, 3.0, relevant=True)
ENDOMETRIAL = ("67-year-old woman with recurrent mismatch repair-proficient endometrial carcinoma progressing after "
               "carboplatin and paclitaxel. What second-line regimen has shown a survival benefit after platinum?")


def test_a_trials_later_sentence_comes_after_the_one_that_began_its_story() -> None:
    r = Settings().router
    f = extract_facts(ENDOMETRIAL, genes=r.genes, treatment_keywords=r.treatment_keywords,
                      rare_cancers=r.rare_cancers)
    # the cross-encoder likes the population sentence and the stratification best
    ranked = replace(KEYNOTE_775, sentence_scores=(-10.0, 2.0, 1.5, -9.0))
    offered = list(locked_candidates([ranked], f, ENDOMETRIAL)[0])
    assert offered[:2] == ["E1.s1", "E1.s2"]  # KEYNOTE-775's opening, which names the drugs, first
    # a trial's design detail goes last, however relevant its words
    assert set(offered[-2:]) == {"E1.s3", "E1.s4"}


RESECTABLE = "## Treatment of Resectable Stage III Melanoma > ### Treatment Options for Resectable Stage III Melanoma"


def test_the_setting_the_question_asks_for_comes_first() -> None:
    adjuvant = Passage("E1", "E1", "Melanoma Treatment (PDQ®) - NCI", "melanoma.md", f"{RESECTABLE} > #### Adjuvant "
                       "therapy", None, "Adjuvant therapeutic options are expanding for patients at high risk of "
                       "recurrence and include checkpoint inhibitors. Nivolumab is a standard treatment option.",
                       0.16, 3.0, relevant=True)
    neoadjuvant = Passage("E2", "E2", "Melanoma Treatment (PDQ®) - NCI", "melanoma.md", f"{RESECTABLE} > #### "
                          "Neoadjuvant therapy > ##### Immunotherapy", None, "Events were defined as disease "
                          "progression or toxic effects that precluded surgery. Pembrolizumab was given for three "
                          "cycles.", 0.19, 2.0, relevant=True)
    note = ("44-year-old man with a melanoma excised in 2021 (stage IB); in 2025 PET-CT shows bulky axillary nodal "
            "disease only. {}")
    r = Settings().router

    def offered(question: str) -> list[str]:
        text = note.format(question)
        f = extract_facts(text, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)
        return list(locked_candidates([adjuvant, neoadjuvant], f, text)[0])

    before = offered("Should he receive systemic therapy before surgery rather than going straight to dissection?")
    assert set(before[:2]) == {"E2.s1", "E2.s2"}
    after = offered("What adjuvant therapy after the dissection?")
    assert set(after[:2]) == {"E1.s1", "E1.s2"}


def test_residual_disease_after_preoperative_therapy_is_the_setting_after_surgery() -> None:
    """A long note's TNBC with residual disease after neoadjuvant chemotherapy asked for postoperative therapy; its
    capecitabine section's "These approaches should be considered for patients with residual disease after
    preoperative therapy." had been read as preoperative and offered after the neoadjuvant sentences (session 23)."""
    tnbc = "## Treatment of Early Breast Cancer > ### Stages I, II, and III TNBC"
    residual = Passage("E1", "E1", "Breast Cancer Treatment (PDQ®) - NCI", "breast.md",
                       f"{tnbc} > #### Postoperative therapy for TNBC > ##### Capecitabine therapy", None,
                       "These approaches should be considered for patients with residual disease after preoperative "
                       "therapy.", 0.16, 3.0, relevant=True)
    preoperative = Passage("E2", "E2", "Breast Cancer Treatment (PDQ®) - NCI", "breast.md", tnbc, None,
                           "Preoperative chemotherapy is a standard treatment option for stage II TNBC.",
                           0.16, 3.0, relevant=True)
    note = ("38-year-old woman with stage IIB triple-negative breast cancer; after neoadjuvant chemotherapy, her "
            "resected tumour showed residual disease. What postoperative systemic therapy is recommended?")
    r = Settings().router
    f = extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)
    kept, dropped = locked_candidates([preoperative, residual], f, note)
    assert list(kept)[0] == "E1.s1"
    assert "E1.s1" not in dropped
