"""A case past its first line, and one that progressed after a PD-1/PD-L1 inhibitor (session 17). A third-line
NSCLC case ("First-line carboplatin, pemetrexed and pembrolizumab, then second-line docetaxel; now progressing")
had been offered first-line pembrolizumab trials "(not stated for this case)" and second-line nivolumab."""

from __future__ import annotations

import pytest

from engine.casefit import assess, case_from_facts, locked_candidates, misfit_filter
from engine.config import Settings
from engine.facts import extract_facts, merge_facts
from engine.state import Passage

THIRD_LINE = ("67-year-old man with stage IV lung adenocarcinoma, EGFR and ALK negative, PD-L1 TPS 20%. First-line "
              "carboplatin, pemetrexed and pembrolizumab, then second-line docetaxel; now progressing on second-line "
              "docetaxel with new adrenal metastasis, ECOG 1. What third-line options?")
FIRST_LINE_SECTION = ("Treatment of Newly Diagnosed Stage IV, Relapsed, and Recurrent NSCLC > Treatment Options for "
                      "Newly Diagnosed Stage IV, Relapsed, and Recurrent NSCLC (First-Line Therapy)")
SECOND_LINE = ("Treatment of Progressive Stage IV, Relapsed, and Recurrent NSCLC > Treatment Options for Progressive "
               "Stage IV, Relapsed, and Recurrent NSCLC (Second-Line Therapy)")


def facts(note: str):
    r = Settings().router
    return extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


@pytest.mark.parametrize("note, done", [
    (THIRD_LINE, True),
    ("Stage IV NSCLC progressed after first-line pembrolizumab. Options?", True),
    ("Metastatic NSCLC progressing on carboplatin and pemetrexed. Second-line options?", True),
    ("Relapsed DLBCL after R-CHOP. What second-line therapy?", True),
    # a lymphoma that relapsed has had its first line (no adjuvant therapy there)
    ("DLBCL, complete remission with R-CHOP but relapsed 7 months after completing therapy. Next?", True),
    # progression on adjuvant therapy: the first line for metastatic disease may still come
    ("Stage IV colon cancer progressed on adjuvant FOLFOX; what second-line options?", False),
    ("Metastatic melanoma progressed on nivolumab. Next?", False),  # which line, not said
    ("Untreated stage IV NSCLC, PD-L1 TPS 80%. First-line options?", False),
])
def test_a_case_past_its_first_line(note: str, done: bool) -> None:
    assert facts(note).first_line_done is done


def test_first_line_sections_do_not_apply_past_the_first_line() -> None:
    past = case_from_facts(facts(THIRD_LINE))
    fit = assess("Pembrolizumab alone is a first-line option.", past, [FIRST_LINE_SECTION])
    assert fit.verdict == "contradicts"
    assert "the case is past its first line of therapy" in fit.reason
    # a case that progressed, on adjuvant therapy perhaps: still open, and the qualifier says what is not known
    open_case = case_from_facts(facts("Metastatic NSCLC, progressed on chemotherapy. Options?"))
    fit = assess("Carboplatin and pemetrexed is an option.", open_case, [FIRST_LINE_SECTION])
    assert fit.verdict == "unknown"
    assert fit.reason.startswith("applies if no first line of therapy for advanced disease was given yet "
                                 "(its section \u201cTreatment Options for Newly Diagnosed")
    fit = assess("Carboplatin and pemetrexed is a first-line option.", open_case)
    assert fit.reason == ("applies if no first line of therapy for advanced disease was given yet (it says "
                          "\u201cfirst-line\u201d) (not stated for this case)")
    assert assess("Docetaxel is an option.", past, [SECOND_LINE]).verdict == "fits"


def test_follow_up_turn_keeps_the_first_line_behind() -> None:
    first = facts("Stage IV NSCLC progressed after first-line carboplatin and pembrolizumab.")
    merged = merge_facts(first, facts("What dose of docetaxel?"))
    assert merged.first_line_done and merged.progressed_after == ("pembrolizumab",)


@pytest.mark.parametrize("note, given", [
    # and the cytotoxic it is progressing on now (engine.facts ``_early_progression``)
    (THIRD_LINE, ("pembrolizumab", "docetaxel")),
    ("Metastatic melanoma on nivolumab since March. CT shows progression in the liver. Next?", ("nivolumab",)),
    ("Metastatic RCC refractory to nivolumab and ipilimumab. Second-line options?", ("nivolumab", "ipilimumab")),
    ("Stage IV NSCLC progressed after chemo-immunotherapy. What next?", ("chemo-immunotherapy",)),
    # on it, not past it; planned; negated; adjuvant (a rechallenge may be considered); a question
    ("Metastatic NSCLC progressed on carboplatin/pemetrexed; pembrolizumab started 2 weeks ago. Rash?",
     ("carboplatin", "pemetrexed")),
    ("Stage IV NSCLC, progressed on first-line chemotherapy; plan to start nivolumab. Right?", ()),
    ("Metastatic urothelial carcinoma, progressed on platinum; not a candidate for pembrolizumab.", ()),
    ("Stage III melanoma, recurred with lung metastases 3 months after adjuvant pembrolizumab. Next?", ()),
    ("Metastatic NSCLC progressed on chemotherapy. Is pembrolizumab an option?", ()),
    # a lymphoma's "chemo-immunotherapy" is rituximab's; its frontline regimen counts
    ("Relapsed DLBCL after R-CHOP chemo-immunotherapy. Options?", ("R-CHOP",)),
    ("DLBCL, complete remission with 6 cycles of R-CHOP but relapsed 7 months after completing therapy.",
     ("R-CHOP",)),
])
def test_checkpoint_inhibitors_the_case_progressed_after(note: str, given: tuple[str, ...]) -> None:
    assert facts(note).progressed_after == given


def _passage(pid: str, section: str, text: str) -> Passage:
    return Passage(pid, pid, "Non-Small Cell Lung Cancer Treatment (PDQ®) - NCI", "nsclc.md", section, None,
                   text, 0.2, 5.0, True)


IMMUNO = (f"{SECOND_LINE} > Immunotherapy",
          "Treatment options for patients with progressive NSCLC include the following:\n\n"
          "1. Immunotherapy with checkpoint inhibitors.\n    - Nivolumab.\n    - Pembrolizumab.\n    - Atezolizumab.\n"
          "2. Chemotherapy with a single agent.\n    - Docetaxel.\n    - Pemetrexed.\n\n"
          "Nivolumab improved survival compared with docetaxel.\n\n"
          "Nivolumab plus ipilimumab is another option.\n")
CRIZOTINIB = (f"{SECOND_LINE} > ALK-directed TKIs > ALK-directed TKIs after first-line chemotherapy > Crizotinib",
              "The primary end point was PFS.")


def test_a_pd1_class_the_case_progressed_after_is_not_offered_again() -> None:
    passages = (_passage("E1", *IMMUNO), _passage("E2", *CRIZOTINIB))
    kept, dropped = locked_candidates(passages, facts(THIRD_LINE))
    texts = [t for _pid, t in kept.values()]
    assert any(t.startswith("Chemotherapy") for t in texts)
    assert "Nivolumab plus ipilimumab is another option." in texts  # CTLA-4 is another class
    assert not any(t.startswith(("Immunotherapy", "Nivolumab improved")) for t in texts)
    assert "names PD-1/PD-L1 therapy; the case progressed after pembrolizumab" in dropped.values()
    # the crizotinib section is an ALK inhibitor's (the case is ALK negative), whatever crizotinib's other targets
    assert not any(t.startswith("The primary end point") for t in texts)
    assert any("which names therapy targeted at ALK; the case is ALK negative" in why for why in dropped.values())
    # a case that has not had a PD-1 inhibitor is offered them, and crizotinib stays when ALK is not stated
    kept, _ = locked_candidates(passages, facts("Stage IV NSCLC progressed after first-line carboplatin and "
                                                "pemetrexed. Second-line options?"))
    texts = [t for _pid, t in kept.values()]
    assert any(t.startswith("Immunotherapy") for t in texts)
    assert "The primary end point was PFS." in texts


def test_retrieval_puts_sections_of_drugs_the_case_cannot_have_last() -> None:
    class Hit:
        def __init__(self, section: str, text: str) -> None:
            self.title, self.section, self.text = "Non-Small Cell Lung Cancer Treatment (PDQ®) - NCI", section, text

    misfit = misfit_filter(facts(THIRD_LINE))
    assert misfit(Hit(f"{SECOND_LINE} > Immunotherapy > Nivolumab", "Nivolumab improved OS."))
    assert misfit(Hit(CRIZOTINIB[0], "Crizotinib improved PFS."))
    assert misfit(Hit(FIRST_LINE_SECTION, "Pembrolizumab alone."))
    assert not misfit(Hit(f"{SECOND_LINE} > Chemotherapy > Gemcitabine plus ramucirumab",
                          "Patients who progressed after pembrolizumab were included."))
    # the case is progressing on docetaxel: a regimen built on it is not for it
    assert misfit(Hit(f"{SECOND_LINE} > Chemotherapy > Docetaxel plus ramucirumab",
                      "Patients who progressed after pembrolizumab were included."))
    assert not misfit(Hit(f"{SECOND_LINE} > Immunotherapy > Nivolumab plus ipilimumab", "An option."))


def test_a_combination_the_case_progressed_on_is_not_offered_again() -> None:
    """QA session 17: an RCC case that progressed on first-line ipilimumab plus nivolumab was offered it again."""
    rcc = Passage("E1", "E1", "Renal Cell Cancer Treatment (PDQ®) - NCI", "rcc.md",
                  "Treatment of Stage IV and Recurrent RCC", None, IMMUNO[1], 0.2, 5.0, True)
    kept, dropped = locked_candidates((rcc,), facts(
        "Metastatic clear cell renal cell carcinoma. She received first-line ipilimumab plus nivolumab and progressed "
        "after 11 months. What second-line therapy?"))
    assert "Nivolumab plus ipilimumab is another option." not in [t for _pid, t in kept.values()]
    assert "names CTLA-4, PD-1/PD-L1 therapy; the case progressed after ipilimumab, nivolumab" in dropped.values()


def test_a_drug_named_as_the_patients_history_is_not_what_a_sentence_offers() -> None:
    """"Docetaxel ... in patients who progressed after pembrolizumab" offers docetaxel, not pembrolizumab: it stays
    for a case that progressed after pembrolizumab; "R-CHOP is the preferred regimen" does not, after R-CHOP."""
    history = _passage("E1", f"{SECOND_LINE} > Chemotherapy",
                       "Docetaxel improved survival in patients who progressed after pembrolizumab.")
    kept, _ = locked_candidates((history,), facts(THIRD_LINE))
    assert [t for _pid, t in kept.values()] == [history.text]
    dlbcl = Passage("E1", "E1", "Aggressive B-Cell Non-Hodgkin Lymphoma Treatment (PDQ®) - NCI", "nhl.md",
                    "Treatment of Aggressive, Recurrent B-Cell NHL",
                    None, "R-CHOP is the preferred regimen when polatuzumab is not available.\n\n"
                          "CAR T-cell therapy is given to patients refractory to R-CHOP.", 0.2, 5.0, True)
    kept, dropped = locked_candidates((dlbcl,), facts(
        "Diffuse large B-cell lymphoma, stage IV, relapsed 7 months after completing R-CHOP. Next treatment?"))
    assert [t for _pid, t in kept.values()] == ["CAR T-cell therapy is given to patients refractory to R-CHOP."]
    assert "names R-CHOP therapy; the case progressed after R-CHOP" in dropped.values()


@pytest.mark.parametrize("note, line, done", [
    # a first-line therapy a progression follows is behind the case
    ("Stage IV lung adenocarcinoma, EGFR exon 19 deletion, on first-line osimertinib for 26 months, now with "
     "progression in the liver. What now?", "later", True),
    ("Stage IV lung adenocarcinoma on first-line osimertinib for 26 months, now with new liver metastases; biopsy "
     "shows transformation to small cell carcinoma. What now?", "later", True),
    ("Metastatic GIST, treated with imatinib for 3 years, now has progression in the liver. Next?", "later", False),
    # not a progression: a risk, a plan, an end point, a negation
    ("Stage IV NSCLC starting first-line pembrolizumab; risk of progression discussed. Follow-up?", "first", False),
    ("Metastatic colon cancer on first-line FOLFOX without progression. Maintenance?", "first", False),
    ("New liver lesions on CT; biopsy shows metastatic colon adenocarcinoma. First-line options?", "first", False),
])
def test_progression_after_a_first_line(note: str, line: str, done: bool) -> None:
    f = facts(note)
    assert (f.line, f.first_line_done) == (line, done)


def test_a_trial_the_case_is_not_of_has_none_of_its_sentences_offered() -> None:
    """QA session 17: DESTINY-Breast06's opening sentence (HR-positive patients) was dropped for an HR-negative
    case, but "These patients previously received ... endocrine-based therapy" and its results were released."""
    trial = Passage("E1", "E1", "Breast Cancer Treatment (PDQ®) - NCI", "breast.md",
                    "Treatment of Metastatic Breast Cancer > Metastatic HER2-Low Breast Cancer", None,
                    "The phase III DESTINY-Breast06 trial included patients with hormone receptor\u2013positive "
                    "HER2-low metastatic breast cancer. These patients previously received endocrine-based therapy. "
                    "The median PFS was 13.2 months in the trastuzumab deruxtecan group.", 0.2, 5.0, True)
    kept, dropped = locked_candidates((trial,), facts(
        "Metastatic breast cancer, hormone receptor negative, HER2-low (IHC 1+). Next line of therapy?"))
    assert kept == {}
    assert dropped["E1.s3"].startswith("tells the trial begun in E1.s1, which states")
    kept, _ = locked_candidates((trial,), facts(
        "Metastatic breast cancer, hormone receptor positive, HER2-low (IHC 1+). Next line of therapy?"))
    assert len(kept) == 3


def test_earlier_egfr_tkis_are_not_offered_after_osimertinib() -> None:
    """QA session 17: a case progressing on first-line osimertinib was offered "EGFR-directed therapy after
    first-line chemotherapy" (gefitinib, erlotinib). After erlotinib, osimertinib stays (T790M)."""
    from engine.casefit import unusable_targets

    past = case_from_facts(facts("Stage IV lung adenocarcinoma, EGFR exon 19 deletion, on first-line osimertinib "
                                 "for 26 months, now with progression in the liver. What now?"))
    assert unusable_targets("Gefitinib improved PFS versus chemotherapy.", [], past) == \
        "names EGFR TKI therapy; the case progressed after osimertinib"
    assert unusable_targets("Amivantamab plus lazertinib improved PFS.", [], past) == ""  # another class beside
    after_erlotinib = case_from_facts(facts("Stage IV NSCLC, EGFR L858R, progressed on erlotinib; T790M detected."))
    assert unusable_targets("Osimertinib improved PFS in T790M-positive disease.", [], after_erlotinib) == ""


def test_the_export_shows_the_line_history_and_groups_the_case_was_judged_by(tmp_path) -> None:
    from oncotui.export import consult_markdown
    from tests.fakes import collect, make_engine

    engine, _, _ = make_engine(tmp_path)
    collect(lambda: engine.stream("PT-0001", "Metastatic clear cell renal cell carcinoma, IMDC intermediate risk. "
                                             "First-line ipilimumab plus nivolumab, progressed after 11 months. "
                                             "What second-line therapy?"))
    text = consult_markdown(engine.store, "PT-0001")
    assert "- Line of therapy: past the first line" in text
    assert "- Progressed after: ipilimumab, nivolumab" in text and "- Groups: intermediate-risk" in text
    collect(lambda: engine.stream("PT-0002", "Metastatic pancreatic adenocarcinoma, ECOG 1. Options?"))
    assert "Line of therapy" not in consult_markdown(engine.store, "PT-0002")
    assert "Avoided" not in consult_markdown(engine.store, "PT-0002")
    collect(lambda: engine.stream("PT-0003", "Metastatic pancreatic adenocarcinoma, ECOG 1; nab-paclitaxel was "
                                             "stopped because of grade 3 neuropathy. Options?"))
    assert "- Avoided (toxicity, resistance or contraindication): paclitaxel" in \
        consult_markdown(engine.store, "PT-0003")
