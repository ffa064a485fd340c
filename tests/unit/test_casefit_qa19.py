"""Case fit for what session 19 added: menopausal status, poor performance status and CDK4/6 inhibitors. Guideline
sentences are written as PDQ's breast and pancreatic summaries write them."""

from __future__ import annotations

import pytest

from engine.casefit import (assess, case_from_facts, locked_candidates, misfit_filter, sentence_kind, unusable_section,
                            unusable_targets)
from engine.config import DEFAULT_GENES, DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts
from engine.state import Passage


def case(note: str):
    return case_from_facts(extract_facts(note, genes=DEFAULT_GENES,
                                         treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[]))


POST = ("Abemaciclib, another CDK4/6 inhibitor, has also been tested in the first-line setting for postmenopausal "
        "patients with hormone receptor-positive, recurrent or metastatic breast cancer.")
PRE = "Ribociclib plus endocrine therapy was assessed in premenopausal or perimenopausal women."
BOTH = "The RxPONDER trial included 3,350 postmenopausal and 1,665 premenopausal women."
AI_SECTION = "Endocrine Therapy > Aromatase inhibitors > Premenopausal women"


@pytest.mark.parametrize("note", [
    "Postmenopausal woman, 52, with ER-positive HER2-negative metastatic breast cancer.",
    "63-year-old woman with ER-positive HER2-negative metastatic breast cancer.",  # 60 or more: postmenopausal
    "48F with ER+ metastatic breast cancer, status post bilateral salpingo-oophorectomy.",
])
def test_a_postmenopausal_case_is_not_offered_the_premenopausal_lines(note: str) -> None:
    assert assess(PRE, case(note)).verdict == "contradicts"
    assert "the case is postmenopausal" in assess(PRE, case(note)).reason
    assert assess(POST, case(note)).verdict == "fits"
    assert assess(BOTH, case(note)).verdict == "fits"
    assert assess("AIs have been compared with tamoxifen.", case(note), sections=[AI_SECTION]).verdict \
        == "contradicts"


def test_a_premenopausal_case_has_the_postmenopausal_lines_only_with_ovarian_suppression() -> None:
    """PDQ: premenopausal women with metastatic disease "undergo ovarian suppression or ablation and are treated in
    the same manner as postmenopausal women" (a QA pass's premenopausal case had those trials dropped)."""
    pre = case("44-year-old premenopausal woman with ER-positive metastatic breast cancer.")
    fit = assess(POST, pre)
    assert fit.verdict == "unknown"
    assert "applies if ovarian function is suppressed (the case is premenopausal)" in fit.reason
    assert assess(PRE, pre).verdict == "fits"


def test_a_man_is_of_no_premenopausal_population_and_of_a_postmenopausal_one_with_a_gnrh_agonist() -> None:
    man = case("67-year-old man with ER-positive HER2-negative metastatic breast cancer.")
    assert "given with a GnRH agonist (the case is a man)" in assess(POST, man).reason
    assert assess(PRE, man).verdict == "contradicts"
    assert "the case is a man" in assess(PRE, man).reason
    assert assess(BOTH, man).verdict == "unknown"  # the postmenopausal alternative, qualified


@pytest.mark.parametrize("note", [
    "52-year-old woman with ER-positive metastatic breast cancer.",  # under 60, status unstated
    "60-year-old with ER-positive metastatic breast cancer.",  # sex unstated
    "55-year-old woman with ER+ metastatic breast cancer; is she postmenopausal?",  # asked, not stated
])
def test_an_unstated_menopausal_status_is_not_judged_in_a_sentence(note: str) -> None:
    assert assess(POST, case(note)).verdict == "fits"
    assert assess(PRE, case(note)).verdict == "none"
    # a heading still qualifies the lines under it
    assert assess("AIs have been compared with tamoxifen.", case(note), sections=[AI_SECTION]).verdict == "unknown"


def test_postmenopausal_hormone_therapy_is_a_risk_factor_not_a_population() -> None:
    pre = case("44-year-old premenopausal woman with ER-positive breast cancer.")
    assert assess("Postmenopausal hormone therapy use was associated with breast cancer risk.", pre).verdict \
        == "none"


FOLFIRINOX = "FOLFIRINOX is a treatment option for patients with metastatic pancreatic cancer."


def test_poor_performance_status_rules_out_intensive_chemotherapy() -> None:
    """A QA pass's 87-year-old at ECOG 3 had FOLFIRINOX drafted."""
    frail = case("87-year-old man with metastatic pancreatic adenocarcinoma, ECOG 3, no treatment so far.")
    fit = assess(FOLFIRINOX, frail)
    assert fit.verdict == "contradicts"
    assert "ECOG 3 (poor performance status)" in fit.reason
    assert assess("Patients who are not candidates for intensive chemotherapy may receive gemcitabine.",
                  frail).verdict == "fits"
    assert assess("Cisplatin-based chemotherapy is standard.", frail).verdict == "contradicts"


@pytest.mark.parametrize("note", [
    "60-year-old man with metastatic pancreatic adenocarcinoma, ECOG 1, untreated.",
    "60-year-old man with metastatic pancreatic adenocarcinoma, ECOG 2, untreated.",  # left open
    "60-year-old man with metastatic pancreatic adenocarcinoma, untreated.",
])
def test_intensive_chemotherapy_stays_for_a_case_not_known_to_perform_poorly(note: str) -> None:
    assert assess(FOLFIRINOX, case(note)).verdict == "fits"


def test_a_stated_fitness_wins_over_performance_status() -> None:
    fit = case("AML, 70 years old, ECOG 3 from a pneumonia now resolving; fit for intensive chemotherapy.")
    assert fit.fitness["intensive"][0] == "fit"


AFTER_CDK = "58-year-old woman with ER+ HER2- metastatic breast cancer that progressed on letrozole plus palbociclib."


@pytest.mark.parametrize("note", [AFTER_CDK, "62F, HR+ metastatic breast cancer, progression after a CDK4/6 "
                                              "inhibitor and anastrozole."])
def test_a_cdk46_inhibitor_is_not_offered_again_after_progression_on_one(note: str) -> None:
    for offer in ("Palbociclib plus fulvestrant improved progression-free survival.",
                  "CDK4/6 inhibitors plus an aromatase inhibitor are standard first-line therapy."):
        assert unusable_targets(offer, [], case(note)).startswith("names CDK4/6 therapy; the case progressed after")
    # what comes after one is still offered, and a trial of the same class in patients who progressed on it
    # (postMONARCH) is about this case
    assert unusable_targets("In the postMONARCH trial, abemaciclib plus fulvestrant improved PFS in patients whose "
                            "disease progressed on a CDK4/6 inhibitor plus an AI.", [], case(note)) == ""
    assert unusable_targets("Everolimus plus exemestane is an option for patients whose disease progressed after a "
                            "CDK4/6 inhibitor.", [], case(note)) == ""


@pytest.mark.parametrize("note", [
    "55F with HR+ metastatic breast cancer on ribociclib, responding.",
    "55F with HR+ breast cancer; disease progressed after adjuvant abemaciclib.",  # adjuvant: may be rechallenged
    "55F with HR+ metastatic breast cancer; progressed on letrozole, never received palbociclib.",
])
def test_cdk46_inhibitors_stay_without_progression_on_one(note: str) -> None:
    assert unusable_targets("Palbociclib plus fulvestrant improved progression-free survival.", [], case(note)) == ""


def test_remembered_candidates_are_the_callers_own_copies() -> None:
    p = Passage("E1", "c1", "Breast Cancer Treatment", "breast.md", "Endocrine Therapy", None,
                f"{POST} {PRE}", 0.2, 4.0, True)
    facts = extract_facts("63-year-old woman with ER+ metastatic breast cancer.", genes=DEFAULT_GENES,
                          treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])
    kept, dropped = locked_candidates([p], facts)
    assert list(kept) and list(dropped)  # the premenopausal sentence is dropped for a woman of 63
    kept.clear()
    dropped.clear()
    again, dropped_again = locked_candidates([p], facts)
    assert again and dropped_again


IMBRAVE = (
    "Evidence (atezolizumab and bevacizumab):\n\n"
    "1. The global, open-label, phase III Imbrave150 trial (NCT03434379) included 501 patients with unresectable HCC "
    "who had not received prior systemic therapy. Patients were randomly assigned in a 2:1 ratio to receive either "
    "atezolizumab and bevacizumab every 3 weeks (n = 336) or sorafenib (n = 165). Eligibility criteria included "
    "intact liver function (Child-Pugh class A), and the study excluded patients with untreated varices.\n\n"
    "- The OS was 19.2 months in the atezolizumab-bevacizumab arm and 13.4 months in the sorafenib arm (HR, 0.66).")


@pytest.mark.parametrize(("child_pugh", "offered"), [("B8", []), ("A", ["E1.s1", "E1.s2", "E1.s3", "E1.s4"])])
def test_a_trial_whose_eligibility_excludes_the_case_is_not_offered(child_pugh: str, offered: list[str]) -> None:
    """A QA pass's Child-Pugh B8 case had IMbrave150's design and results offered once only its eligibility
    sentence was dropped."""
    p = Passage("E1", "c1", "Adult Primary Liver Cancer Treatment", "liver.md",
                "Treatment of Advanced HCC > Atezolizumab and bevacizumab", None, IMBRAVE, 0.2, 4.0, True)
    facts = extract_facts(f"67-year-old man with unresectable hepatocellular carcinoma, Child-Pugh {child_pugh}, "
                          "no prior systemic therapy.", genes=DEFAULT_GENES,
                          treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])
    kept, dropped = locked_candidates([p], facts)
    assert sorted(kept) == offered
    if not offered:
        assert "tells the trial whose eligibility E1.s3 states" in dropped["E1.s1"]


MYELOMA_ECOG3 = "76F newly diagnosed IgG kappa multiple myeloma, lytic lesions. ECOG 3 due to pain. Induction?"


@pytest.mark.parametrize("text", [
    "Some trials showed improved survival for patients who received autologous peripheral stem cell or bone marrow "
    "transplant.",
    "A Cochrane review compared single versus tandem transplants.",
])
def test_every_wording_of_a_transplant_is_ruled_out_for_a_case_unfit_for_one(text: str) -> None:
    """A QA pass's ECOG 3 myeloma case had these released."""
    assert assess(text, case(MYELOMA_ECOG3)).verdict == "contradicts"


def test_a_transplants_results_under_its_heading_are_ruled_out_for_a_case_unfit_for_one() -> None:
    section = "Treatment of Multiple Myeloma > Consolidation Therapy > Tandem autologous transplant"
    fit = assess("There was no difference in OS or EFS.", case(MYELOMA_ECOG3), sections=[section])
    assert fit.verdict == "contradicts"
    assert "comes from a section about autologous transplant" in fit.reason
    fit_case = case("58M newly diagnosed multiple myeloma, ECOG 1. Induction?")
    assert assess("There was no difference in OS or EFS.", fit_case, sections=[section]).verdict != "contradicts"
    # a heading that says whom it is for is judged as a fitness, not as the treatment it names
    assert assess("Lenalidomide and dexamethasone are options.", case(MYELOMA_ECOG3),
                  sections=["Treatment of Multiple Myeloma > Transplant-ineligible patients"]).verdict == "fits"


def test_a_neuroendocrine_trial_population_does_not_fit_lung_adenocarcinoma() -> None:
    """RADIANT-4 ("neuroendocrine tumors of lung or gastrointestinal origin") was released to a QA pass's lung
    adenocarcinoma case."""
    nsclc = case("66M stage IV lung adenocarcinoma, EGFR/ALK negative, PD-L1 TPS 85%. First-line treatment?")
    for text in ("A phase III trial (RADIANT-4) evaluated everolimus in patients older than 18 years with advanced, "
                 "progressive, well-differentiated, nonfunctional neuroendocrine tumors of lung or gastrointestinal "
                 "origin.",
                 "The FDA approved everolimus for the treatment of adult patients with unresectable, locally advanced "
                 "or metastatic, progressive, well-differentiated (low or intermediate grade), nonfunctional "
                 "neuroendocrine tumors of lung or gastrointestinal origin."):
        assert assess(text, nsclc).verdict == "contradicts"


@pytest.mark.parametrize(("note", "verdict"), [
    ("79M newly diagnosed AML, complex karyotype, previously untreated. What treatment?", "contradicts"),
    # the second QA pass's note: newly diagnosed, no line stated
    ("79M newly diagnosed AML, complex karyotype, TP53 mutated. ECOG 3. What treatment should be offered?",
     "contradicts"),
    ("AML relapsed after 7 + 3 induction. Options?", "fits"),
    ("Newly diagnosed AML, refractory to 7 + 3 induction. Next?", "fits"),  # primary refractory
])
def test_a_refractory_or_recurrent_section_is_for_disease_that_recurred_or_resisted(note: str, verdict: str) -> None:
    """A QA pass's newly diagnosed AML case was released an option from "Treatment of Refractory or Recurrent
    AML"."""
    fit = assess("Reduced-intensity therapy is an option.", case(note),
                 sections=["Treatment of Refractory or Recurrent AML > Chemotherapy"])
    assert fit.verdict == verdict
    assert verdict == "fits" or "Refractory or Recurrent" in fit.reason


def test_a_population_that_progressed_on_therapy_is_not_an_untreated_case() -> None:
    """postMONARCH's eligibility ("Eligible patients had (1) disease progression during initial therapy for
    metastatic breast cancer ...") was released to a QA pass's untreated premenopausal case."""
    eligibility = ("Eligible patients had (1) disease progression during initial therapy for metastatic breast cancer, "
                   "which included a CDK4/6 inhibitor and aromatase inhibitor, or (2) disease relapse during or after "
                   "adjuvant therapy for early breast cancer with a CDK4/6 inhibitor plus endocrine therapy.")
    untreated = case("44F premenopausal, de novo metastatic ER+ breast cancer, no prior therapy. First-line?")
    assert assess(eligibility, untreated).verdict == "contradicts"
    assert assess(eligibility, case(AFTER_CDK)).verdict != "contradicts"
    # a share of the patients is still no line
    assert assess("Eligible patients were allowed one prior line of chemotherapy.", untreated).verdict != "contradicts"


ON_ALECTINIB = ("49F stage IV lung adenocarcinoma, ALK rearrangement, on alectinib 30 months, now progression in liver "
                "and new brain mets. What next?")


def test_after_a_second_generation_alk_tki_crizotinib_is_not_offered_and_lorlatinib_is() -> None:
    """A QA pass's case had PROFILE 1007's crizotinib trial released after progression on alectinib."""
    alk = case(ON_ALECTINIB)
    assert alk.exhausted == {"ALK TKI other than lorlatinib": "alectinib"}
    assert "ALK TKI other than lorlatinib" in unusable_targets(
        "Patients received either crizotinib or chemotherapy.", [], alk)
    assert unusable_targets("Brigatinib is an option.", [], alk) != ""
    assert unusable_targets("Patients received lorlatinib 100 mg daily.", [], alk) == ""
    assert unusable_section("ALK-directed TKIs > Crizotinib", alk) != ""
    assert unusable_section("ALK-directed TKIs after prior ALK TKI therapy > Lorlatinib", alk) == ""
    # after lorlatinib, none of them
    after_lorlatinib = case("ALK-positive NSCLC that progressed on lorlatinib. Options?")
    assert unusable_targets("Patients received lorlatinib 100 mg daily.", [], after_lorlatinib) != ""
    # an ALK case that progressed on crizotinib still has the second generation
    after_crizotinib = case("ALK-positive NSCLC that progressed on crizotinib. Options?")
    assert unusable_targets("Alectinib is an option.", [], after_crizotinib) == ""


def test_the_disease_a_population_relapsed_from_is_its_history_not_its_extent() -> None:
    """postMONARCH's eligibility ("... or (2) disease relapse during or after adjuvant therapy for early breast
    cancer ...") had been read as early disease, and the trial dropped for a metastatic case after palbociclib."""
    eligibility = ("Eligible patients had (1) disease progression during initial therapy for metastatic breast cancer, "
                   "which included a CDK4/6 inhibitor and aromatase inhibitor, or (2) disease relapse during or after "
                   "adjuvant therapy for early breast cancer with a CDK4/6 inhibitor plus endocrine therapy.")
    assert assess(eligibility, case(AFTER_CDK)).verdict != "contradicts"
    # the population's receptors still hold; a stage not after a relapse still does
    her2 = "Recurrence after resection of stage II HER2-positive breast cancer is treated with trastuzumab."
    assert assess(her2, case("HER2-negative metastatic breast cancer.")).verdict == "contradicts"
    assert assess("Stage II disease is treated with surgery.", case("Metastatic breast cancer.")).verdict \
        == "contradicts"


def test_initial_tki_therapy_is_a_first_line_section() -> None:
    """A QA pass's GIST that progressed on imatinib was offered PDQ's "Initial TKI therapy" passages as if they
    fitted; they are qualified now (the imatinib may have been adjuvant: which line, the note does not say)."""
    gist = case("63M metastatic gastric GIST (KIT exon 11) to liver, progressed after 3 years on imatinib 400 mg "
                "daily. ECOG 1. Next step?")
    initial = "Gastrointestinal Stromal Tumors > Treatment of Metastatic GIST > Initial TKI therapy > Imatinib"
    fit = assess("Imatinib 400 mg daily is the standard.", gist, sections=[initial])
    assert fit.verdict == "unknown" and "no first line of therapy for advanced disease was given yet" in fit.reason
    resistant = "Gastrointestinal Stromal Tumors > TKI therapy for imatinib-resistant GISTs > Sunitinib"
    assert assess("Sunitinib is an option.", gist, sections=[resistant]).verdict in ("fits", "none")


@pytest.mark.parametrize("text", [
    "Chemotherapy consisted of cisplatin plus 5-FU or capecitabine chosen at the investigator's discretion.",
    "HER2 positivity was defined as either 3+ by IHC or a HER2 to CEP17 ratio of 2 or more using FISH.",
    "There was no difference in OS, which was thought to be the result of crossing over to panitumumab.",
    "Forty percent of the women had suboptimally resected stage III disease.",
    "The prespecified statistical analysis plan did not test this difference further.",
    "Patients had advanced HCC refractory to, or intolerant of, sorafenib and received pembrolizumab.",
    "One previous treatment (biological or chemotherapy) was allowed.",
    # released by the second QA pass once the cross-encoder no longer vetoed verbatim sentences
    "The study was amended to enlarge the sample size to address patients with the KRAS wild-type tumors.",
    "Over 98% of patients in both arms had received 5-FU, irinotecan, and oxaliplatin.",
])
def test_a_trials_design_and_results_in_words_are_narrative(text: str) -> None:
    """Offered among the first five in a QA pass, ahead of the guideline's recommendations."""
    assert sentence_kind(text) == 2


def test_anti_egfr_antibodies_are_not_offered_for_ras_mutant_colorectal_cancer() -> None:
    """A QA pass's KRAS G12D colon case kept five cetuximab and panitumumab passages."""
    kras = case("58M metastatic colon adenocarcinoma, KRAS G12D, MSI-H, untreated. First-line?")
    why = unusable_targets("FOLFOX plus panitumumab improved OS.", [], kras)
    assert why.endswith("which is for RAS wild-type colorectal cancer; the case is KRAS G12D")
    assert unusable_targets("Encorafenib plus cetuximab improved OS.", [], kras) != ""
    assert unusable_section("Treatment of Stage IV Colon Cancer > Panitumumab", kras) != ""
    # RAS wild-type, a BRAF V600E colon case (encorafenib plus cetuximab is its treatment), another cancer: kept
    for note in ("Metastatic colon adenocarcinoma, RAS and BRAF wild-type, MSS, untreated.",
                 "Metastatic colon adenocarcinoma, BRAF V600E, progressed on FOLFOX. Next?",
                 "Stage IV NSCLC, KRAS G12C. Options?"):
        assert unusable_targets("Encorafenib plus cetuximab improved OS.", [], case(note)) == ""
        assert unusable_targets("Cetuximab plus chemotherapy improved OS.", [], case(note)) == ""
    assert misfit_filter(extract_facts("58M metastatic colon adenocarcinoma, KRAS G12D. First-line?",
                                       genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS,
                                       rare_cancers=[]))(
        type("Hit", (), {"title": "Colon Cancer Treatment (PDQ®) - NCI", "text": "FOLFOX plus cetuximab.",
                         "section": "Treatment of Stage IV Colon Cancer > Cetuximab"})())


def test_a_regimen_named_as_what_the_population_relapsed_within_months_of_is_its_history() -> None:
    """ZUMA-7 ("relapse within 12 months of initial R-CHOP") had been dropped for a QA pass's case after R-CHOP."""
    after_rchop = case("DLBCL relapsed 7 months after completing R-CHOP. Next treatment?")
    assert unusable_targets("ZUMA-7 enrolled patients with relapse within 12 months of initial R-CHOP who received "
                            "axicabtagene ciloleucel.", [], after_rchop) == ""
    assert unusable_targets("R-CHOP is the preferred regimen.", [], after_rchop) != ""


def test_distant_metastases_count_where_the_stage_is_not_used() -> None:
    """Thyroid cancer's stage is never derived (M1 under 55 is stage II); a QA pass's "radioactive iodine-refractory
    lung mets" had its metastatic lines qualified "applies if metastatic"."""
    thyroid = case("52F papillary thyroid carcinoma s/p total thyroidectomy and 2 courses of RAI, now radioactive "
                   "iodine-refractory lung mets progressing over 12 months, BRAF V600E. Systemic therapy?")
    assert thyroid.metastatic and thyroid.stage is None
    assert assess("Lenvatinib is an option for patients with metastatic, RAI-refractory differentiated thyroid "
                  "cancer.", thyroid).verdict == "fits"
    assert assess("Localized disease is treated with surgery alone.", thyroid).verdict == "contradicts"
    assert assess("Stage I disease is treated with surgery.", thyroid).verdict == "unknown"  # the stage stays open


def test_an_iodine_refractory_case_is_not_offered_radioactive_iodine() -> None:
    """A QA pass's "radioactive iodine-refractory lung mets" case was offered "RAI is the second treatment ..."."""
    thyroid = case("52F papillary thyroid carcinoma s/p total thyroidectomy and 2 courses of RAI, now radioactive "
                   "iodine-refractory lung mets progressing. Systemic therapy?")
    assert thyroid.statuses == {"iodine": "resistant"}
    assert "names RAI; the case is iodine-refractory" in assess("RAI is the second treatment.", thyroid).reason
    sensitive = "Treatment > Treatment options for iodine-sensitive thyroid cancer include:"
    assert assess("131I therapy.", thyroid, sections=[sensitive]).verdict == "contradicts"
    resistant = "Treatment > Treatment options for iodine-resistant thyroid cancer include:"
    assert assess("Lenvatinib.", thyroid, sections=[resistant]).verdict == "fits"
    assert assess("Sorafenib was evaluated in patients with progressive, iodine-refractory, differentiated thyroid "
                  "cancer.", thyroid).verdict == "fits"
    # a case that takes up iodine still has it
    avid = case("45F papillary thyroid cancer with RAI-avid lung metastases after thyroidectomy. Next?")
    assert assess("RAI is the second treatment.", avid).verdict != "contradicts"


@pytest.mark.parametrize(("note", "other", "own"), [
    ("68M epithelioid malignant pleural mesothelioma, unresectable, untreated. First-line?",
     "Of the 73 patients with malignant peritoneal mesothelioma, 40 responded to HIPEC.",
     "Nivolumab plus ipilimumab improved OS in pleural mesothelioma."),
    ("58F high-grade serous ovarian carcinoma, stage IIIC, after surgery and carboplatin-paclitaxel. Maintenance?",
     "As LGSC is relatively chemoresistant, endocrine therapy is used.",
     "Niraparib maintenance improved PFS in high-grade serous ovarian cancer."),
])
def test_mesothelioma_sites_and_serous_grades_are_told_apart(note: str, other: str, own: str) -> None:
    """The second QA pass's pleural case was offered the peritoneal sentence, its high-grade serous case LGSC's."""
    facts = extract_facts(note, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])
    kept, dropped = locked_candidates([Passage("E1", "c1", "T", "t.md", "Treatment", None, f"{other} {own}", 0.2,
                                               4.0, True)], facts)
    assert [text for _, text in kept.values()] == [own]
    assert "its paragraph is about the" in dropped["E1.s1"]


def test_a_metastatic_extent_named_after_a_progression_still_holds() -> None:
    """Only the early disease a population relapsed from is history: "progressed after first-line chemotherapy for
    metastatic disease" is still metastatic (an early-stage case must not be offered it)."""
    stage2 = case("Stage II colon cancer after resection. Adjuvant therapy?")
    assert assess("For patients whose disease progressed after first-line chemotherapy for metastatic disease, "
                  "regorafenib improved OS.", stage2).verdict == "contradicts"
