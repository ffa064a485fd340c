"""A population defined by the drugs it had before ("Patients had disease progression during, or were intolerant
of, trifluridine-tipiracil, regorafenib, or both.", FRESCO-2) is not stated for a case whose note names none of them
(session 23: a QA pass's colon cancer after FOLFOX and FOLFIRI had fruquintinib's later-line trial drafted first)."""

from __future__ import annotations

from engine.casefit import assess, case_from_facts, locked_candidates
from engine.config import Settings
from engine.facts import extract_facts, merge_facts
from engine.state import CaseFacts, Passage

FRESCO2 = ("Patients had disease progression during, or were intolerant of, trifluridine-tipiracil, regorafenib, "
           "or both.")
NOTE = ("Metastatic colon cancer, KRAS G12D mutant, progressed on FOLFOX with bevacizumab and then on FOLFIRI. What "
        "third-line therapy?")


def facts(note: str) -> CaseFacts:
    r = Settings().router
    return extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


def test_a_population_after_drugs_the_note_never_names_is_not_stated_for_the_case() -> None:
    fit = assess(FRESCO2, case_from_facts(facts(NOTE)))
    assert fit.verdict == "unknown"
    assert "the case had what its population had before (progression during, or were intolerant of, " \
           "trifluridine-tipiracil, regorafenib)" in fit.reason
    # after regorafenib it is the case's population
    after = facts(NOTE.replace("then on FOLFIRI", "then on FOLFIRI and regorafenib"))
    assert after.drugs_named == ("folfox", "bevacizumab", "folfiri", "regorafenib")
    assert assess(FRESCO2, case_from_facts(after)).verdict == "fits"
    # a follow-up turn keeps the drugs named before
    assert "regorafenib" in merge_facts(after, facts("And the dose?")).drugs_named


def test_such_a_sentence_is_offered_after_those_that_fit() -> None:
    p = Passage("E1", "c-E1", "Colon Cancer Treatment", "colon.md", "Treatment of Stage IV Colon Cancer", None,
                f"{FRESCO2} Patients had received two prior regimens with oxaliplatin and irinotecan.", 0.2, 5.0,
                relevant=True)
    kept, _ = locked_candidates([p], facts(NOTE), NOTE)
    assert list(kept) == ["E1.s2", "E1.s1"]
    after = NOTE.replace("then on FOLFIRI", "then on FOLFIRI and regorafenib")
    assert list(locked_candidates([p], facts(after), after)[0]) == ["E1.s1", "E1.s2"]


def test_a_trial_whose_second_sentence_gives_an_unstated_population_goes_after_what_fits() -> None:
    """FRESCO-2's opening names fruquintinib and metastatic colorectal cancer, which fit; its second sentence gives
    the population (after trifluridine-tipiracil or regorafenib), which the case does not state: the opening had
    still been offered first."""
    section = "Treatment of Stage IV and Recurrent Colon Cancer > Systemic therapy"
    fresco2 = Passage("E1", "c-E1", "Colon Cancer Treatment", "colon.md", section, None,
                      "The phase III FRESCO-2 trial (NCT04322539) included 691 patients with metastatic colorectal "
                      f"cancer who were randomly assigned to fruquintinib or placebo. {FRESCO2}", 0.2, 5.0,
                      relevant=True)
    sunlight = Passage("E2", "c-E2", "Colon Cancer Treatment", "colon.md", section, None,
                       "Patients had received two prior regimens with oxaliplatin and irinotecan.", 0.2, 4.0,
                       relevant=True)
    kept, _ = locked_candidates([fresco2, sunlight], facts(NOTE), NOTE)
    assert list(kept) == ["E2.s1", "E1.s1", "E1.s2"]
    after = NOTE.replace("then on FOLFIRI", "then on FOLFIRI and regorafenib")
    assert list(locked_candidates([fresco2, sunlight], facts(after), after)[0])[0] == "E1.s1"
