"""Risk groups and APL (QA, sessions 16-17): "stage IIA classic Hodgkin lymphoma, favorable" had the early
unfavorable options item second; "APL, WBC 4,000 (low risk)" had the high-risk induction and AML's "too frail for
intensive induction" lines."""

from __future__ import annotations

import pytest

from engine.casefit import assess, case_from_facts
from engine.config import Settings
from engine.facts import extract_facts, risk_readings


def facts(note: str):
    r = Settings().router
    return extract_facts(note, genes=r.genes, treatment_keywords=r.treatment_keywords, rare_cancers=r.rare_cancers)


def case(note: str):
    return case_from_facts(facts(note))


@pytest.mark.parametrize("text, groups", [
    ("Stage IIA classic Hodgkin lymphoma, favorable, no B symptoms.", [("favorable",)]),
    ("APL, WBC 4,000 (low risk).", [("low",)]),
    ("ATRA plus ATO for low- to intermediate-risk disease.", [("low", "intermediate")]),
    ("Treatment of Early Unfavorable Classic HL", [("unfavorable",)]),
    ("patients with favorable-risk AML", [("low",)]),
    ("IMDC intermediate risk; cytoreductive nephrectomy for good-risk disease", [("intermediate",), ("low",)]),
    # a risk of something, a negated or compared one, HPV: none
    ("She is at high risk of recurrence.", []),
    ("Stage II colon cancer with no high-risk features.", []),
    ("Outcomes were more favorable with ABVD; a favorable outcome.", []),
    ("High-risk HPV was detected.", []),
])
def test_risk_groups_read(text: str, groups: list[tuple[str, ...]]) -> None:
    assert [g for _, _, g in risk_readings(text)] == groups


def test_a_stated_risk_group_rules_out_the_others() -> None:
    favorable = case("35-year-old man with stage IIA classic Hodgkin lymphoma, favorable, no B symptoms. Treatment?")
    unfavorable = "Treatment of Early Unfavorable Classic HL > Treatment Options for Early Unfavorable Classic HL"
    fit = assess("Chemotherapy with or without radiation therapy.", favorable, [unfavorable])
    assert fit.verdict == "contradicts" and "the case is favorable" in fit.reason
    assert assess("Chemotherapy with or without radiation therapy.", favorable,
                  [unfavorable.replace("Unfavorable", "Favorable")]).verdict == "fits"
    both = "Patients with early favorable disease or early unfavorable disease are treated with ABVD."
    assert assess(both, favorable).verdict == "fits"
    low = case("Newly diagnosed acute promyelocytic leukemia, PML-RARA positive, WBC 4,000 (low risk). Induction?")
    fit = assess("ATRA plus chemotherapy, followed by ATO-based consolidation therapy for high-risk disease.", low)
    assert fit.verdict == "contradicts" and "the case is low-risk" in fit.reason
    assert assess("ATRA plus ATO for low- to intermediate-risk disease.", low).verdict == "fits"


def test_a_case_without_a_risk_group_is_not_judged_on_one() -> None:
    unstated = case("Stage IIA classic Hodgkin lymphoma. Treatment?")
    section = "Treatment of Early Unfavorable Classic HL > Treatment Options for Early Unfavorable Classic HL"
    assert assess("Chemotherapy with or without radiation therapy.", unstated, [section]).verdict == "fits"
    assert assess("High-risk patients received more cycles.", unstated).verdict == "none"


AML_INDUCTION = ("Treatment of Newly Diagnosed AML > Treatment Options for Newly Diagnosed (Untreated; Remission "
                 "Induction) AML > Chemotherapy > Older adults or adults with significant comorbid conditions")
APL_SECTION = "Treatment of Acute Promyelocytic Leukemia (APL) > Treatment of Newly Diagnosed APL"


def test_apl_and_other_aml_are_treated_apart() -> None:
    apl = case("45-year-old with newly diagnosed acute promyelocytic leukemia, t(15;17). What induction therapy?")
    line = "Some patients may decline or be too frail for intensive induction chemotherapy."
    fit = assess(line, apl, [AML_INDUCTION])
    assert fit.verdict == "contradicts" and "the case is APL" in fit.reason
    assert assess("ATRA is given.", apl, [APL_SECTION]).verdict == "fits"
    aml = case("70-year-old with newly diagnosed acute myeloid leukemia, FLT3 wild-type. What induction therapy?")
    assert assess(line, aml, [AML_INDUCTION]).verdict != "contradicts"
    fit = assess("ATRA is given.", aml, [APL_SECTION])
    assert fit.verdict == "contradicts" and "names no APL" in fit.reason
    # the overview and supportive care are for every AML
    assert assess("Transfusions are given.", apl, ["Treatment Option Overview for AML > Supportive Care"]).verdict \
        != "contradicts"


THYROID = ("47-year-old woman with papillary thyroid cancer, 3.2 cm, after total thyroidectomy, 4 of 12 central neck "
           "nodes positive, no distant metastases. Is radioactive iodine ablation indicated?")


def test_thyroid_cancers_are_treated_apart() -> None:
    """QA session 17: "External-beam radiation therapy (EBRT)" of anaplastic thyroid cancer was released for a
    papillary case."""
    papillary = case(THYROID)
    anaplastic = "Anaplastic Thyroid Cancer > Treatment Options for Anaplastic Thyroid Cancer"
    fit = assess("External-beam radiation therapy (EBRT).", papillary, [anaplastic])
    assert fit.verdict == "contradicts" and "differentiated thyroid" in fit.reason
    assert assess("Radioactive iodine (RAI) therapy.", papillary,
                  ["Papillary and Follicular Thyroid Cancer > Treatment Options for Papillary and Follicular "
                   "Thyroid Cancer"]).verdict == "fits"
    assert assess("Vandetanib.", papillary, ["Medullary Thyroid Cancer > Treatment Options for MTC"]).verdict \
        == "contradicts"


def test_no_distant_metastases_rules_out_metastatic_lines() -> None:
    """"no distant metastases" without a stage had left metastatic lines "applies if metastatic (not stated)"."""
    fit = assess("For metastatic disease, lenvatinib is an option.", case(THYROID.replace("after total "
                                                                                          "thyroidectomy, ", "")))
    assert fit.verdict == "contradicts" and "without distant metastases" in fit.reason
    assert assess("For metastatic disease, lenvatinib is an option.",
                  case("Papillary thyroid cancer, 3 cm. Options?")).verdict == "unknown"


def test_child_pugh_class_is_judged_for_a_case_that_states_it() -> None:
    """QA session 17: a Child-Pugh B8 HCC case had sorafenib "for ... intact liver function (Child-Pugh class A)"
    released, qualified only by its section's setting."""
    b = case("69-year-old man with hepatocellular carcinoma on cirrhosis, Child-Pugh B8, BCLC C. Systemic therapy?")
    line = "Sorafenib improved survival in patients with intact liver function (Child-Pugh class A)."
    fit = assess(line, b)
    assert fit.verdict == "contradicts" and "the case is Child-Pugh class B" in fit.reason
    # a class that fits rules nothing out (and puts nothing first: below)
    assert assess("Patients with Child-Pugh class B and C cirrhosis can also be treated.", b).verdict == "none"
    assert assess("Child-Pugh class A, B, and C cirrhosis were included.", b).verdict == "none"
    assert assess(line, case("Hepatocellular carcinoma, BCLC C. Systemic therapy?")).verdict != "contradicts"


def test_castration_status_is_judged_for_a_prostate_case_that_states_it() -> None:
    crpc = case("72-year-old man with metastatic castration-resistant prostate cancer. He progressed on abiraterone; "
                "prior docetaxel for castration-sensitive disease 3 years ago. Next-line options?")
    fit = assess("Docetaxel plus ADT improved OS in men with metastatic hormone-sensitive prostate cancer.", crpc)
    assert fit.verdict == "contradicts" and "castration-resistant" in fit.reason
    assert assess("Olaparib is an option for men with mCRPC.", crpc).verdict == "fits"
    assert assess("Chemotherapy for hormone-sensitive or hormone-resistant prostate cancer.", crpc).verdict == "fits"
    hspc = case("Newly diagnosed metastatic hormone-sensitive prostate cancer (mHSPC), bone metastases. Options?")
    assert assess("Cabazitaxel for mCRPC after docetaxel.", hspc).verdict == "contradicts"
    unstated = case("Metastatic prostate cancer to bone. Options?")
    assert assess("Cabazitaxel for mCRPC after docetaxel.", unstated).verdict != "contradicts"


def test_seminoma_and_nonseminoma_are_treated_apart() -> None:
    """QA session 17: a stage IA pure seminoma had "Stage I Nonseminoma" lines (RPLND, chemotherapy) released."""
    seminoma = case("32-year-old man with pure seminoma of the left testis after radical inguinal orchiectomy, stage "
                    "IA (pT1N0M0, S0). What adjuvant management is recommended?")
    line = "RPLND or one or two cycles of chemotherapy reduce the risk of relapse."
    fit = assess(line, seminoma, ["Treatment of Stage I Testicular Cancer > Stage I Nonseminoma"])
    assert fit.verdict == "contradicts" and "the case is seminoma" in fit.reason
    assert assess("Surveillance is preferred.", seminoma,
                  ["Treatment of Stage I Testicular Cancer > Stage I Seminoma"]).verdict == "fits"
    mixed = case("Mixed germ cell tumor of the testis with embryonal carcinoma and seminoma, stage IA. Options?")
    assert assess(line, mixed, ["Treatment of Stage I Testicular Cancer > Stage I Nonseminoma"]).verdict == "fits"


def test_a_later_line_sentence_read_from_its_progression() -> None:
    """"responded to first-line chemotherapy but had their disease progress" (JCOG0605, a second-line trial) had
    been read as first line and dropped for an SCLC case after platinum."""
    sclc = case("Extensive-stage small cell lung cancer, progressed 2 months after carboplatin, etoposide and "
                "atezolizumab. What second-line therapy is recommended?")
    line = ("Patients who responded to first-line chemotherapy but had their disease progress at least 90 days "
            "after completing it were randomly assigned.")
    assert assess(line, sclc).verdict == "fits"
    # and a section for recurrent disease is for a case that progressed
    assert assess("Topotecan is an option.", sclc, ["Treatment of Recurrent SCLC"]).verdict == "fits"


@pytest.mark.parametrize("note, line, verdict", [
    ("Oropharyngeal squamous cell carcinoma, p16-negative, T2N1, heavy smoker. Treatment?",
     "HPV-positive oropharyngeal cancer has a better prognosis and de-escalation is studied.", "contradicts"),
    ("Oropharyngeal squamous cell carcinoma, HPV-positive, T2N1. Treatment?",
     "Cetuximab versus cisplatin in patients with human papillomavirus (HPV)-positive oropharyngeal cancer.", "fits"),
    ("Oropharyngeal squamous cell carcinoma, HPV-negative, T2N1. Treatment?",
     "Cetuximab versus cisplatin in patients with human papillomavirus (HPV)-positive oropharyngeal cancer.",
     "contradicts"),
    ("Oropharyngeal squamous cell carcinoma, HPV-positive, T2N1. Treatment?",
     "HPV-positive oropharyngeal cancer has a better prognosis and de-escalation is studied.", "fits"),
    ("Recurrent high-grade serous ovarian cancer, platinum-resistant, progressed 3 months after carboplatin.",
     "For platinum-sensitive recurrence, carboplatin-based doublets are standard.", "contradicts"),
    ("Recurrent high-grade serous ovarian cancer, initially platinum-sensitive, now platinum-resistant.",
     "Weekly paclitaxel is an option for platinum-resistant disease.", "fits"),
    ("Recurrent ovarian cancer. Options?", "For platinum-sensitive recurrence, carboplatin doublets are standard.",
     "none"),
])
def test_hpv_and_platinum_statuses(note: str, line: str, verdict: str) -> None:
    """QA session 17: an HPV-negative oropharynx case had HPV-positive statements released, a platinum-resistant
    ovarian case platinum-sensitive regimens drafted."""
    assert assess(line, case(note)).verdict == verdict


def test_a_heading_s_status_is_judged_too() -> None:
    section = ("Treatment Option Overview for Oropharyngeal Cancer > Concurrent Chemoradiation Therapy > Cetuximab "
               "versus cisplatin in patients with human papillomavirus (HPV)-positive oropharyngeal cancer")
    fit = assess("Radiation therapy and cisplatin remains the standard of care.",
                 case("Locally advanced HPV-negative squamous cell carcinoma of the oropharynx. Treatment?"), [section])
    assert fit.verdict == "contradicts" and "the case is HPV-negative" in fit.reason


def test_a_fitting_child_pugh_class_does_not_put_a_sentence_first() -> None:
    a = case("Hepatocellular carcinoma with portal vein invasion and lung metastases, Child-Pugh A. Options?")
    assert assess("Eligibility criteria included intact liver function (Child-Pugh class A).", a).verdict == "none"


def test_receptors_joined_by_a_comma_are_one_subgroup() -> None:
    """"Palbociclib plus letrozole is standard for patients with hormone receptor-positive, HER2-negative advanced
    breast cancer" fitted a triple-negative case through its HER2-negative half (read as alternatives)."""
    line = ("Palbociclib plus letrozole is standard for patients with hormone receptor\u2013positive, HER2-negative "
            "advanced breast cancer.")
    tnbc = case("Metastatic triple-negative breast cancer, ER 0%, PR 0%, HER2 0. Options?")
    assert assess(line, tnbc).verdict == "contradicts"
    assert assess(line, case("Metastatic breast cancer, ER-positive, PR-positive, HER2-negative. Options?")).verdict \
        == "fits"
    # items of a longer list stay alternatives
    listed = "Options differ for HER2-positive, HR-positive and triple-negative groups."
    assert assess(listed, tnbc).verdict == "fits"
