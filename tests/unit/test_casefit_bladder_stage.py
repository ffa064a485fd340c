"""Stage from TNM without a stated stage group, for bladder cancer (AJCC 8th edition), and "muscle-invasive" as
stage II or higher. An audit case ("muscle-invasive urothelial carcinoma of the bladder, cT2N0M0") had no stage, so
stage 0/I bladder passages (TURBT and intravesical BCG) were only qualified rather than withheld."""

import pytest

from engine.casefit import assess, case_from_facts
from engine.facts import extract_facts, merge_facts

AUDIT = ("64-year-old man with muscle-invasive urothelial carcinoma of the bladder, cT2N0M0, cisplatin eligible, "
         "ECOG 0. What is the recommended treatment?")
STAGE_0_I = ("Treatment options for stage 0 and stage I bladder cancer include transurethral resection with "
             "fulguration followed by intravesical BCG.")
STAGE_II = "Radical cystectomy with neoadjuvant cisplatin-based chemotherapy is a standard option for stage II disease."
MUSCLE_INVASIVE = "Neoadjuvant cisplatin-based chemotherapy before cystectomy improves survival in MIBC."


def facts(text: str):
    return extract_facts(text, genes=["FGFR3"], treatment_keywords=["cisplatin"], rare_cancers=[])


def case(text: str):
    return case_from_facts(facts(text))


def test_audit_case_is_stage_ii():
    f = facts(AUDIT)
    assert (f.cancer_type, f.stage) == ("urothelial carcinoma", "II")
    c = case_from_facts(f)
    fit = assess(STAGE_0_I, c)
    assert fit.verdict == "contradicts" and "stage II" in fit.reason
    assert assess(STAGE_II, c).verdict == "fits"
    assert assess(MUSCLE_INVASIVE, c).verdict == "fits"
    assert assess("Stage I disease: TURBT alone.", c, ["Treatment of Stage I Bladder Cancer"]).verdict == "contradicts"


@pytest.mark.parametrize("tnm, stage", [
    ("TaN0M0", "0"), ("Tis N0 M0", "0"), ("cT1N0M0", "I"), ("cT2N0M0", "II"), ("pT2bN0M0", "II"),
    ("pT3aN0M0", "III"), ("cT4aN0M0", "III"), ("cT1N1M0", "III"), ("pT4aN1M0", "III"), ("cT2N2M0", "III"),
    ("cT3bN3M0", "III"), ("cT4bN0M0", "IV"), ("cT4bN2M0", "IV"), ("cT2N0M1a", "IV"), ("cT3N1M1b", "IV"),
    ("ypT2N0M0", "II"),
    ("cT4N1M0", None),  # T4a (IIIA) or T4b (IVA): no guess
    ("cT2N0Mx", None), ("cTxN0M0", None),
])
def test_bladder_tnm_stage_groups(tnm, stage):
    assert facts(f"Urothelial carcinoma of the bladder, {tnm}.").stage == stage


def test_tnm_is_read_by_bladder_staging_only_for_the_bladder():
    # the renal pelvis and ureter are staged otherwise (T2N0M0 is II there too, but T4aN0M0 is IV): not mapped
    assert facts("Upper tract urothelial carcinoma, T2N0M0.").stage is None
    assert facts("Urothelial carcinoma, cT2N0M0.").stage is None  # no bladder cue: the routing rule (N0M0: none)
    assert facts("Rectal cancer, cT3N1M0.").stage == "III"  # the routing approximation is unchanged elsewhere
    assert facts("Bladder cancer, cT2N0M0, stage IIIA per the surgeon.").stage == "III"  # a stated stage wins


def test_muscle_invasive_without_tnm_is_stage_ii_or_higher():
    c = case("Muscle-invasive urothelial carcinoma of the bladder. Options?")
    assert c.stage == (20, 49)
    fit = assess(STAGE_0_I, c)
    assert fit.verdict == "contradicts" and "muscle-invasive (stage II or higher)" in fit.reason
    assert assess("Radical cystectomy is the standard treatment of MIBC.", c).verdict == "fits"
    assert assess(MUSCLE_INVASIVE, c).verdict == "unknown"  # neoadjuvant: the case may be metastatic
    # "II or higher" does not contradict stage III/IV lines, nor fit them for sure
    assert assess(STAGE_II, c).verdict == "unknown"
    assert assess("Stage IV disease: platinum-based chemotherapy.", c).verdict == "unknown"
    assert assess("For stage II and stage III disease, radical cystectomy is standard.", c).verdict == "unknown"
    # stage classes read every group the case may be in, not the interval's low end only
    for line in ("Metastatic disease: enfortumab vedotin plus pembrolizumab.",
                 "Advanced disease is treated with chemotherapy.",
                 "Locally advanced disease: chemoradiation.",
                 "Early-stage disease: bladder-sparing trimodality therapy.",
                 "Non-metastatic disease: radical cystectomy."):
        assert assess(line, c).verdict == "unknown", line
    assert assess("Stage II, III and IV disease: see below.", c).verdict == "fits"
    # non-muscle-invasive words in a sentence still contradict by invasion
    assert assess("NMIBC is treated with TURBT and BCG.", c).verdict == "contradicts"


def test_t4b_m0_is_stage_iv_but_not_metastatic():
    c = case("Urothelial carcinoma of the bladder, cT4bN0M0, fixed to the pelvic wall.")
    assert c.stage == (40, 49) and c.metastatic is False
    assert assess("Metastatic disease: enfortumab vedotin plus pembrolizumab.", c).verdict == "contradicts"
    assert assess("Stage IV disease: chemotherapy.", c).verdict == "fits"
    m1 = case("Urothelial carcinoma of the bladder, cT3N1M1b.")
    assert m1.metastatic is True
    assert assess("Metastatic disease: enfortumab vedotin plus pembrolizumab.", m1).verdict == "fits"


def test_a_stated_stage_in_a_later_turn_replaces_the_tnm_one():
    merged = merge_facts(facts("Bladder cancer, cT2N0M0."), facts("Staging now says stage IIIA."))
    assert merged.stage == "III"
