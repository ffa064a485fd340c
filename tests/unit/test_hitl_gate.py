"""The HITL gate's reasons that do not come from routing or the governor."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.nodes.hitl_gate import review_reasons

from engine.state import CaseFacts, Claim, ConsultState, Ledger, Passage, Retrieval

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


def mixed(question: str, cancer_type: str | None, *cited: tuple[str, str]) -> tuple[str, ...]:
    """Claims quoting passages E1, E2, ... with the given (title, release state)."""
    from engine.state import CaseFacts

    passages = tuple(Passage(f"E{i}", f"c{i}", title, "x.md", "## Treatment", None, "Text.", 0.2, 4.0, True)
                     for i, (title, _) in enumerate(cited, 1))
    claims = tuple(Claim(id=f"C{i}", recommendation=i, text="Chemotherapy is an option.", evidence=(f"E{i}",),
                         state=st) for i, (_, st) in enumerate(cited, 1))  # type: ignore[arg-type]
    s = ConsultState(thread_id="PT-0001", consult_id="c", case_text=question, ledger=Ledger(claims=claims),
                     facts=CaseFacts(cancer_type=cancer_type),
                     retrieval=Retrieval(query=question, passages=passages, gate_passed=True, rag_confidence=0.9))
    return tuple(r for r in review_reasons(s, 0.0) if "names no cancer type" in r)


def test_claims_from_several_cancers_guidelines_for_an_unnamed_cancer_wait_for_a_reviewer():
    # the audit's held-out gallbladder case, before its type was read: answered from three other cancers' summaries
    q = "72-year-old woman with a metastatic tumour of unclear origin, ECOG 1. What systemic therapy?"
    esophageal, endometrial = "Esophageal Cancer Treatment (PDQ)", "Endometrial Cancer Treatment (PDQ)"
    (reason,) = mixed(q, None, (esophageal, "supported"), (endometrial, "qualified"))
    assert "2 different guidelines (Esophageal Cancer Treatment (PDQ); Endometrial Cancer Treatment (PDQ))" in reason
    # one guideline, a named cancer, or a second guideline that is not released: no such reason
    assert not mixed(q, None, (esophageal, "supported"), (esophageal, "supported"))
    assert not mixed(q, "gallbladder cancer", (esophageal, "supported"), (endometrial, "supported"))
    assert not mixed(q, None, (esophageal, "supported"), (endometrial, "blocked"))


def with_passages(question: str, *texts: str) -> ConsultState:
    passages = tuple(Passage(f"E{i}", f"c{i}", "NSCLC", "x.md", "## Stage IV", None, t, 0.2, 4.0, True)
                     for i, t in enumerate(texts, 1))
    return replace(state(question, ("EGFR tyrosine kinase inhibitors are an option.", "supported")),
                   retrieval=Retrieval(query=question, passages=passages, gate_passed=True,
                                       rag_confidence=0.99))


def off_subject(s: ConsultState) -> bool:
    return any("no retrieved guideline passage mentions" in r for r in review_reasons(s, 0.0))


EGFR_LINES = ("EGFR tyrosine kinase inhibitors with or without chemotherapy; skin toxicity is common.",
              "Osimertinib is a first-line option for EGFR exon 19 deletion.")


def test_a_question_about_something_no_passage_mentions_waits_for_a_reviewer():
    """The QA pass's hypertension question inside an NSCLC case was released as EGFR TKIs, unreviewed."""
    question = ("62-year-old with stage IV NSCLC, EGFR exon 19 deletion, now has new uncontrolled "
                "hypertension. Which antihypertensive drug should be started?")
    assert off_subject(with_passages(question, *EGFR_LINES))
    assert not off_subject(with_passages(question, *EGFR_LINES, "Antihypertensive drugs are needed with ..."))


def test_asking_when_or_how_is_not_a_subject():
    for question in ("Stage IV NSCLC, EGFR exon 19 deletion. Which first-line targeted therapy?",
                     "Stage IV NSCLC, EGFR exon 19 deletion. What is the preferred treatment?",
                     "Stage IV NSCLC, EGFR exon 19 deletion. What are the treatment options?",
                     "Stage IV NSCLC after chemoradiation. What consolidation therapy should follow?",
                     # a compound's part is enough (the held-out mycosis fungoides question; PDQ says
                     # "skin lesions")
                     "Stage IV NSCLC with skin lesions. Which skin-directed treatments are used?"):
        assert not off_subject(with_passages(question, *EGFR_LINES)), question


def test_a_phase_written_as_a_compound_is_not_a_subject():
    # "first-line" split into "first" and "line" held the DLBCL case, whose passages never say "line"
    question = "DLBCL stage III, IPI 3. What first-line treatment is standard?"
    assert not off_subject(with_passages(question, "Pola-R-CHP (for IPI score of 2 to 5)."))
    # nor are the words of how much or how long ("What dose of radiation therapy?")
    assert not off_subject(with_passages("Stage III NSCLC. What dose of radiation therapy?",
                                         "Radiation therapy of 60 Gy in 30 fractions is standard."))


def _with_titles(question: str, age: int | None, title: str) -> ConsultState:
    s = state(question, ("Ongoing treatment with a BCR::ABL1 tyrosine kinase inhibitor.", "supported"))
    passage = Passage(id="E1", chunk_id="c1", title=title, source="x.md", section="## Treatment", page=None,
                      text="Ongoing treatment with a BCR::ABL1 tyrosine kinase inhibitor.", distance=0.2,
                      rerank_score=3.0, relevant=True)
    retrieval = Retrieval(query=question, passages=(passage,), gate_passed=True, rag_confidence=0.9)
    return replace(s, facts=replace(s.facts, age=age), retrieval=retrieval)


def age_group(s: ConsultState) -> list[str]:
    return [r for r in review_reasons(s, 0.0) if "written for" in r]


def test_a_child_answered_from_an_adult_guideline_waits_for_a_reviewer():
    adult_all = "Adult Acute Lymphoblastic Leukemia Treatment (PDQ®) - NCI"
    question = "8-year-old with newly diagnosed standard-risk B-ALL. What induction therapy?"
    (reason,) = age_group(_with_titles(question, 8, adult_all))
    assert reason.startswith("The patient is a child") and adult_all in reason
    # a child without an age: the note's words
    assert age_group(_with_titles("A boy with newly diagnosed B-ALL. Induction?", None, adult_all))
    # the same guideline for an adult, or a child's own guideline: nothing to say
    assert not age_group(_with_titles(question.replace("8-year-old", "48-year-old"), 48, adult_all))
    childhood_all = "Childhood Acute Lymphoblastic Leukemia Treatment (PDQ®) - NCI"
    assert not age_group(_with_titles(question, 8, childhood_all))
    assert not age_group(_with_titles("Newly diagnosed B-ALL. Induction?", None, adult_all))  # no age known


def test_an_adult_answered_from_a_childrens_guideline_waits_for_a_reviewer():
    childhood = "Childhood Hodgkin Lymphoma Treatment (PDQ®) - NCI"
    hodgkin = "52-year-old with stage II Hodgkin lymphoma. Treatment?"
    (reason,) = age_group(_with_titles(hodgkin, 52, childhood))
    assert reason.startswith("The patient is an adult") and childhood in reason


def test_the_seer_registry_is_no_surveillance_answer():
    """Five epidemiology claims citing "the Surveillance, Epidemiology, and End Results (SEER) program"
    had passed as naming an approach ("surveillance") for "HPV-positive tonsil cancer: primary treatment
    options?"."""
    seer = ("According to the Surveillance, Epidemiology, and End Results (SEER) program, incidence rose "
            "by 2% a year.")
    assert waits(state("HPV-positive tonsil cancer, T2N1. What are the primary treatment options?",
                       (seer, "supported")))
    assert not waits(state("Low-risk prostate cancer. What management options?",
                           ("Active surveillance is an option for low-risk disease.", "supported")))


FOLFOX_LINES = ("Most physicians have adopted FOLFOX as the standard of care because of toxicity concerns "
                "with weekly FLOX; grade 3 neutropenia was more common.",)


@pytest.mark.parametrize("question", [
    "Patient on FOLFOX for colon cancer, 38.6 C, ANC 300. How should febrile neutropenia be managed?",
    "Colon cancer on FOLFOX. How do we treat her febrile neutropenia?",
    "Colon cancer on FOLFOX, fever and ANC 300. What is the management of febrile neutropenia?",
])
def test_how_to_manage_something_no_passage_is_about_waits_for_a_reviewer(question: str) -> None:
    """A released FOLFOX adoption line answered a febrile neutropenia question (QA session 16): one word of
    the subject ("neutropenia", a toxicity the trials name) is not enough, all must be there."""
    assert off_subject(with_passages(question, *FOLFOX_LINES))
    assert not off_subject(with_passages(question, *FOLFOX_LINES,
                                         "Febrile neutropenia is managed with empiric antibiotics."))


def test_how_to_treat_the_case_s_own_cancer_is_no_other_subject():
    for question in ("Stage III colon cancer after resection. How should this be treated?",
                     "Stage III colon cancer after resection. How should her colon cancer be managed?",
                     "What is the treatment of stage III colon cancer?"):
        s = with_passages(question, *FOLFOX_LINES, "Stage III colon cancer is treated with adjuvant therapy.")
        assert not off_subject(replace(s, facts=replace(s.facts, cancer_type="colon cancer"))), question


def pregnancy(s: ConsultState) -> bool:
    return any(r.startswith("The patient is pregnant") for r in review_reasons(s, 0.0))


def test_a_pregnant_patient_always_waits_for_a_reviewer():
    """QA session 18: a HER2-positive breast cancer at 18 weeks was released "chemotherapy and HER2-targeted
    therapy" from the non-pregnant section, though a retrieved passage addressed pregnancy."""
    question = "31 years old, 22 weeks pregnant, stage II Hodgkin lymphoma. Which regimen?"
    hodgkin = "ABVD is a standard regimen for early-stage Hodgkin lymphoma."
    unaddressed = [r for r in review_reasons(with_passages(question, hodgkin), 0.0) if "pregnant" in r]
    assert unaddressed and "no retrieved guideline passage mentions pregnancy" in unaddressed[0]
    addressed = [r for r in review_reasons(with_passages(question, hodgkin, "During pregnancy, treatment may be "
                                                                            "delayed."), 0.0) if "pregnant" in r]
    assert addressed and "safe in pregnancy" in addressed[0]
    # a gestational trophoblastic neoplasm is no pregnancy (its passages all mention pregnancy)
    for note in ("Low-risk gestational trophoblastic neoplasia after evacuation of a molar pregnancy. Treatment?",
                 "52-year-old, gravida 2 para 2, stage IB endometrial cancer, pregnancy test negative. Adjuvant?",
                 "Breast cancer diagnosed 8 months after pregnancy, stage II. Treatment?"):
        assert not [r for r in review_reasons(with_passages(note, "Methotrexate is a standard option."), 0.0)
                    if "pregnant" in r], note
    assert not pregnancy(with_passages("Stage II Hodgkin lymphoma, not pregnant. Which regimen?", hodgkin))
    assert not pregnancy(with_passages("Stage II Hodgkin lymphoma. Which regimen?", hodgkin))


def test_an_adult_summary_named_so_only_by_its_source_counts():
    """PDQ's adult ALL summary is titled "Acute Lymphoblastic Leukemia Treatment (PDQ®) - NCI"; its source is
    "types-leukemia-hp-adult-all-treatment-pdq.md". The title alone never held the QA pass's 8-year-old."""
    s = _with_titles("8-year-old with newly diagnosed standard-risk B-ALL. What induction therapy?", 8,
                     "Acute Lymphoblastic Leukemia Treatment (PDQ®) - NCI")
    assert not age_group(s)  # no source named: nothing says it is for adults
    passage = replace(s.retrieval.passages[0], source="/corpus/pdq/types-leukemia-hp-adult-all-treatment-pdq.md")
    (reason,) = age_group(replace(s, retrieval=replace(s.retrieval, passages=(passage,))))
    assert "Acute Lymphoblastic Leukemia Treatment (PDQ®) - NCI" in reason


def test_the_child_pugh_score_is_no_child():
    """The audit's "Hepatocellular carcinoma ... Child-Pugh A. Systemic therapy options?" was held as a child
    answered from the adult liver summary."""
    s = _with_titles("Hepatocellular carcinoma with lung metastases, Child-Pugh A. Systemic therapy options?",
                     None, "Adult Primary Liver Cancer Treatment (PDQ®) - NCI")
    assert not age_group(s)


MYELOMA = ("66-year-old man with newly diagnosed IgG kappa multiple myeloma, lytic lesions in the spine, serum "
           "calcium 13.4 mg/dL, creatinine 2.0 mg/dL, confused and dehydrated. How should hypercalcemia be managed?")


def unhandled(s: ConsultState) -> bool:
    return any(r.startswith("The question asks how to manage \u201chypercalcemia\u201d")
               for r in review_reasons(s, 0.0))


def test_how_to_manage_something_the_released_claims_only_name_waits_for_a_reviewer() -> None:
    """QA session 16: the IMWG criteria ("Hypercalcemia greater than 1 mg/dL higher than reference range.") were
    released as the answer to a hypercalcemia question; "hypercalcemia" is in the passages, so the subject rule
    above let it pass."""
    criteria = ("Hypercalcemia greater than 1 mg/dL higher than reference range.", "supported")
    anemia = ("Anemia with hemoglobin less than 10.0 g/dL.", "supported")
    myeloma = replace(state(MYELOMA, criteria, anemia), facts=CaseFacts(cancer_type="multiple myeloma"))
    assert unhandled(myeloma)
    handled = ("Treatment most often is directed at reducing the tumor cell burden and reversing any complications "
               "of disease, such as renal failure, infection, hyperviscosity, or hypercalcemia, with appropriate "
               "medical management.", "supported")
    assert not unhandled(replace(state(MYELOMA, criteria, handled), facts=myeloma.facts))
    # a blocked claim that says how answers nothing; a question about the cancer itself is not this rule's
    blocked = replace(state(MYELOMA, criteria, (handled[0], "blocked")), facts=myeloma.facts)
    assert unhandled(blocked)
    stage = state("Stage III colon cancer. How should stage III disease be managed?",
                  ("Stage III disease has a 5-year survival of 70%.", "supported"))
    assert not any(r.startswith("The question asks how to manage") for r in review_reasons(stage, 0.0))


def emergency(question: str) -> list[str]:
    return [r for r in review_reasons(with_passages(question, "Hormonal treatment is the mainstay of therapy."), 0.0)
            if "oncologic emergency" in r]


@pytest.mark.parametrize("question", [
    "68-year-old man with metastatic prostate cancer, new back pain and leg weakness; MRI shows metastatic spinal "
    "cord compression at T10. How should this be managed urgently?",
    "Day 10 after FOLFOX, temperature 38.9 C, ANC 200: febrile neutropenia. What next?",
    "Burkitt lymphoma with tumor lysis syndrome on admission, potassium 6.8. Next steps?",
])
def test_an_oncologic_emergency_waits_for_a_reviewer(question: str) -> None:
    """QA session 18: the cord compression case was released bisphosphonates and hormone therapy."""
    assert emergency(question)


@pytest.mark.parametrize("question", [
    "Metastatic prostate cancer, bone pain, MRI shows no cord compression. Which systemic therapy?",
    "Colon cancer on FOLFOX; history of febrile neutropenia with cycle 2. Should the dose be reduced?",
    "Burkitt lymphoma, high tumor burden. What tumor lysis syndrome prophylaxis is needed?",
    "Is there a risk of spinal cord compression with these bone metastases?",
])
def test_an_emergency_denied_past_prevented_or_asked_about_does_not(question: str) -> None:
    assert not emergency(question)


def no_drug(s: ConsultState) -> bool:
    return any("asks for a drug or regimen, but no released claim names one" in r for r in review_reasons(s, 0.0))


MELANOMA = ("Melanoma with bulky axillary nodal disease, dissection booked. Should he receive systemic therapy before "
            "surgery rather than going straight to dissection, and with what?")


def test_a_question_for_a_drug_answered_without_one_waits_for_a_reviewer():
    """A clinician QA pass found such answers released (kb/EVAL.md round 19)."""
    assert no_drug(state(MELANOMA, ("Elective regional lymph node dissection has no proven benefit for patients "
                                    "with stage I melanoma; wide excision surgery is the standard.", "supported")))
    assert no_drug(state("Platinum-resistant ovarian cancer. What targeted treatment is appropriate?",
                         ("This drug has shown activity in this setting; radiation therapy may palliate "
                          "symptoms.", "supported")))
    assert not no_drug(state(MELANOMA, ("Neoadjuvant pembrolizumab improved event-free survival.", "supported")))
    assert not no_drug(state(MELANOMA, ("Neoadjuvant immunotherapy is an option.", "supported")))
    # the history names systemic therapy; the question asks about surgery: not a drug question
    assert not no_drug(state("After adjuvant chemotherapy, liver metastases. Is resection appropriate?",
                             ("Resection of liver metastases may be curative.", "supported")))
