"""Grading by fit, and what a resected case is (session 22).

- A stage IA seminoma asking "What next?" had "Treatment of Stage I Testicular Cancer > Stage I Seminoma" scored -3.1
  by the cross-encoder, under relevance_min_score -3.0: the answer (surveillance) was never offered. A passage whose
  section fits the case is relevant down to relevance_min_score - rag.fit_margin.
- "After wide excision and complete lymph node dissection for stage IIIC melanoma, what adjuvant systemic therapy?"
  had not read as resected (the whole note is a question), and "... Resectable Stage III Melanoma > Neoadjuvant
  therapy" (SWOG S1801) was offered third.
- A melanoma excised at stage IB whose axillary nodes are involved since is not "resected": its neoadjuvant options
  are what the note asks for.
"""

from __future__ import annotations

import asyncio

from engine.casefit import assess, case_from_facts, section_fits
from engine.config import Settings
from engine.context import NodeContext
from engine.facts import extract_facts, reported_text
from engine.nodes import corrective_rag
from engine.nodes.corrective_rag import confidence, grade_by_cross_encoder
from engine.state import ConsultState, Passage
from kb.store import Hit, RetrievalResult

SEMINOMA = ("29-year-old after radical inguinal orchiectomy for a 3 cm pure seminoma, markers normalised, CT "
            "chest/abdomen/pelvis clear (stage IA). What next?")
TESTIS = "Testicular Cancer Treatment (PDQ®) - NCI"
STAGE_I = "## Treatment of Stage I Testicular Cancer > ### Stage I Seminoma"
ADVANCED = "## Treatment of Stage III Testicular Cancer > ### Poor Prognosis"
ADJUVANT_ASKED = ("After wide excision and complete lymph node dissection for stage IIIC melanoma of the back (BRAF "
                  "wild type), what adjuvant systemic therapy?")
NEOADJUVANT = ("## Treatment of Resectable Stage III Melanoma > ### Treatment Options for Resectable Stage III "
               "Melanoma > #### Neoadjuvant therapy > ##### Immunotherapy")
ADJUVANT = ("## Treatment of Resectable Stage III Melanoma > ### Treatment Options for Resectable Stage III "
            "Melanoma > #### Adjuvant therapy")


def facts(note: str):
    r = Settings().router
    return extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


def passage(pid: str, section: str, score: float) -> Passage:
    return Passage(pid, pid, TESTIS, "testis.md", section, None, "Surveillance is a standard option.", 0.2, score)


def test_a_passage_whose_section_fits_is_relevant_a_little_below_the_floor() -> None:
    fits = section_fits(facts(SEMINOMA))
    graded = grade_by_cross_encoder((passage("E1", STAGE_I, -3.1), passage("E2", ADVANCED, -3.1),
                                     passage("E3", STAGE_I, -6.5), passage("E4", STAGE_I, 1.0)), -3.0, fits, 3.0)
    assert [p.relevant for p in graded] == [True, False, False, True]  # another stage's: the logit alone
    assert [p.relevant for p in grade_by_cross_encoder(graded, -3.0, fits, 0.0)] == [False, False, False, True]
    # admitted by fit, it is offered but does not pull the confidence down
    assert confidence(graded, -3.0) == confidence((graded[3],))
    assert confidence(graded) < confidence(graded, -3.0)


class OneRetrieval:
    def __init__(self, *hits: Hit) -> None:
        self.hits = hits

    def retrieve(self, query: str, params: object, anchor: str | None = None) -> RetrievalResult:
        return RetrievalResult(query, self.hits, True, self.hits[0], len(self.hits), len(self.hits), {})

    def rerank_scores(self, query: str, texts: list[str]) -> list[float]:
        return [0.0 for _ in texts]


def test_corrective_rag_grades_by_fit_with_the_configured_margin() -> None:
    hits = (Hit("a", "Surveillance is a standard option for stage I seminoma.", TESTIS, "testis.md", STAGE_I, None,
                0.19, -3.1),
            Hit("b", "Orchiectomy is the first step for every patient.", TESTIS, "testis.md", STAGE_I, None, 0.2, 2.0))

    def run(**rag: object) -> tuple[bool | None, ...]:
        state = ConsultState(thread_id="PT-0001", consult_id="c1", raw_input="", case_text=SEMINOMA,
                             facts=facts(SEMINOMA))
        settings = Settings().with_overrides({f"rag.{k}": v for k, v in rag.items()})
        ctx = NodeContext(settings=settings, models=None, kb=lambda: OneRetrieval(*hits),  # type: ignore[arg-type]
                          emit=lambda e: None)
        return tuple(p.relevant for p in asyncio.run(corrective_rag.run(state, ctx)).retrieval.passages)

    assert run() == (True, True)
    assert run(fit_margin=0.0) == (False, True)


def test_a_questions_opening_clause_reports_what_was_done() -> None:
    assert reported_text(ADJUVANT_ASKED) == ("After wide excision and complete lymph node dissection for stage IIIC "
                                             "melanoma of the back (BRAF wild type).")
    assert reported_text("Is he a candidate for surgery, given his COPD?") == ""
    case = case_from_facts(facts(ADJUVANT_ASKED))
    assert case.resected
    assert assess("", case, (NEOADJUVANT,)).verdict == "contradicts"
    assert assess("", case, (ADJUVANT,)).verdict == "fits"


def test_a_resected_cancer_that_came_back_keeps_its_neoadjuvant_options() -> None:
    back = case_from_facts(facts("Stage II rectal cancer resected in 2021; MRI now shows a local recurrence in the "
                                 "pelvis, no distant disease. Options?"))
    assert back.resected and back.recurrent and not back.metastatic
    neoadjuvant = "## Treatment of Recurrent Rectal Cancer > ### Neoadjuvant chemoradiation therapy"
    assert assess("", back, (neoadjuvant,)).verdict != "contradicts"
    # a sentence's own "neoadjuvant" is judged as before (unchanged by this rule)
    assert assess("Neoadjuvant chemotherapy is a treatment option.", back).verdict == "contradicts"


def test_a_melanoma_with_nodal_disease_since_its_excision_is_not_resected() -> None:
    note = ("44-year-old man had a 1.2 mm nonulcerated melanoma of the upper back excised in 2021 with a negative "
            "sentinel node biopsy (stage IB). In 2025 PET-CT shows bulky axillary nodal disease only. The surgeon "
            "has booked a therapeutic axillary lymph node dissection. Should he receive systemic therapy before "
            "surgery, and with what?")
    f = facts(note)
    assert f.stage == "III" and "resected" not in (f.stage_text or "")
    assert assess("", case_from_facts(f), (NEOADJUVANT,)).verdict == "fits"
