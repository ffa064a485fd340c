"""A case that has had chemotherapy was a candidate for it: the stage IIIB case "after concurrent
chemoradiation without progression" is not offered "[For treatment of locally advanced unresectable tumor in
patients who are not candidates for chemotherapy]" (radiation alone, PDQ's NSCLC summary), which the audit had
offered it first. A case that progressed, performs poorly or says it is unfit keeps its fitness as stated."""

import pytest

from engine.casefit import assess, case_from_facts
from engine.config import DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts

NOT_CANDIDATES = ("[For treatment of locally advanced unresectable tumor in patients who are not candidates "
                  "for chemotherapy](/types/lung/hp/non-small-cell-lung-treatment-pdq#_4914).")
CANDIDATES = "Durvalumab consolidation is an option for patients who were candidates for chemotherapy."
INTENSIVE = "Capecitabine alone is an option for patients who are not candidates for intensive therapy."
AFTER_CRT = ("Unresectable stage IIIB squamous non-small cell lung cancer after concurrent chemoradiation "
             "without progression. Consolidation therapy?")


def case(note: str):
    return case_from_facts(extract_facts(note, genes=["EGFR"], treatment_keywords=DEFAULT_TREATMENT_KEYWORDS,
                                         rare_cancers=[]))


def test_a_case_treated_with_chemotherapy_is_not_offered_the_line_for_those_who_cannot_have_it():
    fit = assess(NOT_CANDIDATES, case(AFTER_CRT))
    assert fit.verdict == "contradicts"
    assert "already treated with chemoradiation" in fit.reason
    assert assess(CANDIDATES, case(AFTER_CRT)).verdict == "fits"


@pytest.mark.parametrize("note", [
    "Stage IIIB NSCLC, unresectable, no treatment so far. What now?",  # no chemotherapy in its history
    # may be unfit now
    "Stage IIIB NSCLC, unresectable, progressed after concurrent chemoradiation. Options?",
    "Stage IIIB NSCLC after concurrent chemoradiation, now ECOG 3. Consolidation?",  # performs poorly
])
def test_without_chemotherapy_given_and_tolerated_its_fitness_stays_unstated(note):
    assert "chemotherapy" not in case(note).fitness  # ECOG 3 is unfit for intensive therapy, not for all of it
    assert assess(NOT_CANDIDATES, case(note)).verdict != "contradicts"


def test_a_stated_unfitness_wins_over_the_history():
    note = ("Stage IIIB NSCLC after concurrent chemoradiation, with grade 4 toxicity; no longer a candidate "
            "for chemotherapy. What else?")
    assert assess(NOT_CANDIDATES, case(note)).verdict == "fits"


def test_the_history_judges_chemotherapy_only_not_other_intensities():
    # "not candidates for intensive therapy" stays unjudged, as for any case that states no fitness: not
    # pushed down the list as a subgroup the case might not belong to
    assert assess(INTENSIVE, case(AFTER_CRT)).verdict == assess(INTENSIVE, case("Stage IIIB NSCLC.")).verdict
