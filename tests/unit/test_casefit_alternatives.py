"""A trial's population given as a list of alternatives, and a trial's control arm (session 22). Three answers had
been dropped whole: TOPAZ-1 ("unresectable locally advanced, recurrent, or metastatic biliary tract cancer") for a
metastatic gallbladder case, KEYNOTE-564 ("stage III disease or higher, regional lymph node metastases, or stage
M1 status with no evidence of disease after resection") for a resected renal cell carcinoma, and PROfound ("olaparib
... or physician's choice of enzalutamide or abiraterone") for castration-resistant prostate cancer after
abiraterone. And "preoperative imaging" had read as the early setting, dropping a liver resection passage."""

from __future__ import annotations

from engine.casefit import assess, case_from_facts, locked_candidates, unusable_targets
from engine.config import Settings
from engine.facts import extract_facts
from engine.state import Passage

TOPAZ = ("An international, multicenter, phase III study included 685 patients with previously untreated and "
         "unresectable locally advanced, recurrent, or metastatic biliary tract cancer.")
KEYNOTE_564 = ("Eligibility included patients with stage II disease with nuclear grade 4 or sarcomatoid "
               "differentiation, stage III disease or higher, regional lymph node metastases, or stage M1 status "
               "with no evidence of disease after resection.")
PROFOUND = ("The trial enrolled 387 men and randomly assigned them in a 2:1 ratio to receive olaparib (300 mg twice "
            "daily) or physician's choice of enzalutamide or abiraterone plus prednisone.")


def case(note: str):
    r = Settings().router
    return case_from_facts(extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords,
                                         rare_cancers=r.rare_cancers))


def test_a_list_of_extents_whose_last_item_fits_applies() -> None:
    metastatic = case("72-year-old woman with metastatic gallbladder adenocarcinoma (liver and peritoneum), ECOG 1. "
                      "What systemic therapy is recommended?")
    assert assess(TOPAZ, metastatic).verdict == "fits"
    # the list still rules out a case it leaves out
    assert assess(TOPAZ.replace("locally advanced, recurrent, or metastatic", "locally advanced, resectable, or "
                                "recurrent"), metastatic).verdict == "contradicts"


def test_a_list_of_stages_with_one_that_contradicts_is_not_ruled_out() -> None:
    resected = case("59-year-old woman had radical nephrectomy for a 9 cm clear cell renal cell carcinoma; "
                    "postoperative CT shows no residual or metastatic disease. Is adjuvant therapy recommended?")
    fit = assess(KEYNOTE_564, resected)
    assert fit.verdict == "unknown"  # stage II or III is not stated; M1 alone would not apply
    assert fit.verdict != "contradicts"
    # separate clauses are still judged one by one
    assert assess("Stage M1 disease was excluded, and the trial enrolled patients after nephrectomy.",
                  resected).verdict != "fits"


def test_a_trials_control_arm_is_not_what_it_offers() -> None:
    after = case("Man aged 71 with metastatic castration-resistant prostate cancer progressing after abiraterone, "
                 "germline BRCA2 mutation. Targeted option?")
    assert unusable_targets(PROFOUND, [], after) == ""
    # a trial of the class the case progressed after is still not offered
    propel = ("In the trial, 796 patients were randomly assigned in a 1:1 ratio to receive either olaparib with "
              "abiraterone or placebo with abiraterone.")
    assert "progressed after abiraterone" in unusable_targets(propel, [], after)
    passage = Passage("E1", "E1", "Prostate Cancer Treatment (PDQ®) - NCI", "prostate.md",
                      "## Treatment of Metastatic Castration-Resistant Prostate Cancer > ### PARP inhibitors", None,
                      "The PARP inhibitor olaparib was tested in an open-label, phase III, randomized controlled "
                      f"trial in men with mCRPC and BRCA1 or BRCA2 variants. {PROFOUND}", 0.2, 4.0, relevant=True)
    r = Settings().router
    facts = extract_facts("Man aged 71 with metastatic castration-resistant prostate cancer progressing after "
                          "abiraterone, germline BRCA2 mutation. Targeted option?", genes=r.genes,
                          treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)
    kept, dropped = locked_candidates([passage], facts, "Targeted option?")
    assert set(kept) == {"E1.s1", "E1.s2"}, dropped


def test_preoperative_imaging_is_no_treatment_setting() -> None:
    # a long note's colon cancer, resected, now with liver metastases: the liver resection passage had been dropped
    resected = case("58-year-old woman had a right hemicolectomy in 2019 for stage II colon cancer; MRI now shows "
                    "three liver metastases. Is surgical resection of the liver metastases appropriate?")
    said = "Improved surgical techniques and advances in preoperative imaging have improved patient selection."
    assert assess(said, resected).verdict != "contradicts"
    assert assess("Preoperative chemotherapy is a treatment option.", resected).verdict == "contradicts"
