"""The HITL gate's reasons that do not come from routing or the governor."""

from __future__ import annotations

from engine.nodes.hitl_gate import review_reasons
from dataclasses import replace

from engine.state import Claim, ConsultState, Ledger, Passage, Retrieval

HCC = "Hepatocellular carcinoma, BCLC C, Child-Pugh A. What first-line systemic therapy?"


def state(question: str, *claims: tuple[str, str]) -> ConsultState:
    return ConsultState(thread_id="PT-0001", consult_id="c", case_text=question, ledger=Ledger(claims=tuple(
        Claim(id=f"C{i}", recommendation=i, text=text, evidence=("E1",), state=st)  # type: ignore[arg-type]
        for i, (text, st) in enumerate(claims, 1))))


def waits(s: ConsultState) -> bool:
    return any("no released claim names a treatment" in r for r in review_reasons(s, 0.0))


def test_a_treatment_question_answered_with_no_treatment_waits_for_a_reviewer():
    assert waits(state(HCC, ("More than ten classifications are used to stage liver cancer.", "supported")))
    assert not waits(state(HCC, ("Atezolizumab plus bevacizumab is a first-line option.", "supported")))
    assert not waits(state(HCC, ("Sorafenib improved survival.", "qualified")))
    # only what is released counts: a blocked treatment line does not answer the question
    assert waits(state(HCC, ("Staging uses the BCLC system.", "supported"), ("Give lenvatinib.", "blocked")))


def test_other_questions_and_empty_answers_are_not_flagged():
    assert not waits(state("Hepatocellular carcinoma: what is the prognosis at BCLC C?",
                           ("Median survival is about one year.", "supported")))
    assert not waits(state(HCC))  # nothing released: the consult is refused anyway


def trial_only(s: ConsultState) -> bool:
    return any("mostly report trials' results" in r for r in review_reasons(s, 0.0))


ALK = "Stage IV NSCLC, ALK rearrangement, treatment naive. What first-line therapy?"
TRIAL = ("In the phase III ALEX trial, 303 patients were randomly assigned to receive alectinib or crizotinib.",
         "supported")
STATS = ("Median progression-free survival was 34.8 months with alectinib (HR, 0.43; 95% CI, 0.32-0.58).",
         "qualified")


def test_a_treatment_answer_made_only_of_trial_results_waits_for_a_reviewer():
    assert trial_only(state(ALK, TRIAL, STATS))
    # mostly trial results, with a plain statement that recommends nothing (the audit's ovarian maintenance answer)
    assert trial_only(state(ALK, TRIAL, STATS, ("Alectinib crosses the blood-brain barrier.", "supported")))
    assert not trial_only(state(ALK, TRIAL, ("Alectinib crosses the blood-brain barrier.", "supported"),
                                ("ALK rearrangements occur in about 5% of NSCLC.", "supported")))
    # one recommendation among them is a guideline answer: released as usual
    assert not trial_only(state(ALK, TRIAL, ("Alectinib is a standard first-line treatment option.", "supported")))
    # a blocked recommendation is not released, so it does not count
    assert trial_only(state(ALK, TRIAL, ("Alectinib is recommended.", "blocked")))
    # not a question about what to do: trial results may be the answer
    assert not trial_only(state("Stage IV NSCLC, ALK rearrangement: what did the ALEX trial show?", TRIAL, STATS))


def test_an_item_of_a_treatment_options_list_is_a_recommendation():
    """"6. ALK inhibitors (for patients with ALK translocations)." under "Treatment options ... include:" says what
    to do, though its words alone do not (kb/outline.py brings such items beside the trials)."""
    listed = Passage(id="E6", chunk_id="c:6", title="NSCLC", source="nsclc.md", section="## Stage IV", page=None,
                     text="Treatment options for patients with newly diagnosed stage IV disease include:\n\n"
                          "6. [ALK inhibitors](/x#_7) (for patients with *ALK* translocations).\n- [Alectinib](/x).",
                     distance=0.1, rerank_score=2.0)
    item = "[ALK inhibitors](/x#_7) (for patients with *ALK* translocations)."
    s = state(ALK, TRIAL, STATS, (item, "supported"))
    quoted = replace(s, retrieval=Retrieval(query="q", passages=(listed,), gate_passed=True), ledger=Ledger(claims=tuple(
        replace(c, sentence_ids=("E6.s1",)) if c.text == item else c for c in s.ledger.claims)))
    assert not trial_only(quoted)
    assert trial_only(s)  # the same words without the list they were quoted from
