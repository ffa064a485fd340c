"""engine.facts reads any node-positive M0 TNM as stage III for routing; for case fit that guess is used only
where every such case is stage III (colon, rectum, melanoma, anus, Merkel cell; bladder by its own staging). A
"T2N1M0" breast cancer is IIB: its stage II lines were withheld as contradicting "stage III"."""

import pytest

from engine.casefit import assess, case_from_facts
from engine.facts import extract_facts


def case(text: str):
    return case_from_facts(extract_facts(text, genes=["KRAS", "BRAF"], treatment_keywords=[], rare_cancers=[]))


@pytest.mark.parametrize("note", [
    "Breast cancer, TxN1M0, ER-positive.",  # no group (breast TNM is read by its own table: test_facts_qa16)
    "Pancreatic adenocarcinoma, pT2N1M0, resected.",  # IIB
    "Gastric adenocarcinoma, cT1N1M0.",  # IB
    "Prostate cancer, cT2N1M0.",  # IVA
    "Papillary thyroid cancer, T2N1M1, age 40.",  # II under 55
])
def test_a_routing_only_stage_is_not_judged(note):
    c = case(note)
    # no group from TNM; where stage IV means M1 (breast, pancreas) an M0 case is known to be stage 0 to III
    assert c.stage is None or c.stage == (0, 39)
    assert assess("Stage II disease: surgery is standard.", c).verdict == "unknown"


@pytest.mark.parametrize("note, stage", [
    ("Squamous cell carcinoma of the anal canal, T2N0M0, HIV negative.", (20, 29)),  # IIA
    ("Anal cancer, T4N0M0.", (30, 39)),  # IIIB
    ("Colon adenocarcinoma, pT3N0M0.", (20, 29)),  # IIA
    ("Rectal cancer, cT2N0M0.", (10, 19)),  # I
])
def test_node_negative_tnm_gives_the_group_where_t_settles_it(note, stage):
    """The audit's anal canal T2N0M0 case had no stage, so the "Stages I, II, and III" chemoradiation line was
    only qualified."""
    c = case(note)
    assert c.stage == stage and c.metastatic is False
    assert assess("Chemoradiation is the standard of care for stages I, II, and III.", c).verdict == "fits"


@pytest.mark.parametrize("note, verdict", [
    ("Breast cancer, T2N1M0, ER-positive.", "contradicts"),  # M0: never stage IV there
    ("Non-small cell lung cancer, T2aN0M0.", "contradicts"),
    ("Head and neck squamous cell carcinoma, T4aN0M0.", "unknown"),  # stage IVA holds M0 there
    ("Renal cell carcinoma, T4N0M0.", "unknown"),  # T4 M0 is stage IV
])
def test_m0_is_not_stage_iv_only_where_stage_iv_means_m1(note, verdict):
    assert assess("Treatment options for stage IV disease include systemic therapy.", case(note)).verdict == verdict


@pytest.mark.parametrize("note, stage", [
    ("Colon cancer, pT3N1M0.", (30, 39)), ("Rectal cancer, cT3N1M0.", (30, 39)), ("Melanoma, pT2aN1aM0.", (30, 39)),
    ("Breast cancer, T2N1M1.", (40, 49)),  # M1: stage IV
    ("Breast cancer, cT2N1M0, stage IIB.", (22, 22)),  # stated
    ("Urothelial carcinoma of the bladder, cT2N1M0.", (30, 39)),  # bladder staging: IIIA
])
def test_trusted_tnm_stages(note, stage):
    assert case(note).stage == stage
    if stage == (30, 39):
        assert assess("Stage II disease: surgery is standard.", case(note)).verdict == "contradicts"


@pytest.mark.parametrize("note, group, fine", [
    ("Supraglottic SCC T3N1M0, 60-year-old.", "III", (30, 39)),
    ("Oral tongue SCC T2N0M0.", "II", (20, 29)),
    ("Squamous cell carcinoma of the larynx, T4aN2cM0.", "IV", (40, 49)),  # IVA: not distant
    ("Pyriform sinus carcinoma T1N3M0.", "IV", (40, 49)),  # IVB
    ("Oral cavity SCC TxN1M0.", None, None),
    ("Oropharyngeal SCC T2N1M0, p16 unknown.", "III", None),  # HPV-positive groups differ: routing only
])
def test_head_and_neck_tnm_is_staged_by_its_own_table(note, group, fine):
    """The audit's "Supraglottic SCC T3N1M0" (stage III) was offered the stage I and II laryngeal passages as if its
    stage were unknown."""
    facts = extract_facts(note, genes=[], treatment_keywords=[], rare_cancers=[])
    assert facts.stage == group
    c = case_from_facts(facts)
    assert c.stage == fine
    if group == "IV":
        assert c.metastatic is False  # IVA/IVB from M0


def test_a_site_within_the_larynx_or_oral_cavity_rules_out_the_others_sections():
    """PDQ treats laryngeal cancer by stage, then by site ("Supraglottis", "Glottis", "Subglottis"), and oral cavity
    cancer by site ("... Small Lesions of the Floor of the Mouth"): the audit's supraglottic case was offered the
    subglottis passages."""
    supraglottic = case("Supraglottic SCC T3N1M0, 60-year-old. Larynx preservation?")
    stage_iii = "## Treatment of Stage III Laryngeal Cancer > ### "
    assert assess("Radiation therapy is used.", supraglottic, [stage_iii + "Subglottis"]).verdict == "contradicts"
    assert assess("Radiation therapy is used.", supraglottic, [stage_iii + "Supraglottis"]).verdict == "fits"
    tongue = case("SCC of the lateral oral tongue, T1N0M0.")
    small = "## Treatment of Stage I Lip and Oral Cavity Cancer > ### Treatment Options for Small "
    assert assess("Surgery.", tongue, [small + "Anterior Tongue Lesions"]).verdict == "fits"
    assert assess("Surgery.", tongue, [small + "Lesions of the Floor of the Mouth"]).verdict == "contradicts"
    # a case naming no site: each site's section is qualified, none ruled out
    assert assess("Surgery.", case("Oral cavity SCC T1N0M0."), [small + "Lesions of the Lip"]).verdict == "unknown"
    # the whole summary's name is no site
    from engine.casefit import section_conditions
    assert not [c for c in section_conditions("## Treatment of Metastatic and Recurrent Lip and Oral Cavity Cancer")
                if c.kind == "subsite"]
    assert [c.value for c in section_conditions("### Treatment Options for Small Lesions of the Lip")
            if c.kind == "subsite"] == ["lip"]


def test_the_export_names_the_site_the_case_was_fitted_to(tmp_path):
    from oncotui.export import consult_markdown
    from tests.fakes import collect, make_engine

    engine, _, _ = make_engine(tmp_path)
    collect(lambda: engine.stream("PT-0001", "Supraglottic SCC T3N1M0. Larynx preservation?"))
    md = consult_markdown(engine.store, "PT-0001")
    assert "- Site: supraglottis" in md and "- Stage: III (T3N1M0)" in md
    collect(lambda: engine.stream("PT-0002", "Metastatic pancreatic adenocarcinoma. Options?"))
    assert "- Site:" not in consult_markdown(engine.store, "PT-0002")


@pytest.mark.parametrize("note, group", [
    ("Right hemicolectomy for a pT3N1a adenocarcinoma, pMMR. Adjuvant therapy?", "III"),
    ("Sigmoid colon adenocarcinoma pT3N0, resected.", "II"),
    ("Rectal adenocarcinoma, ypT2N0 after chemoradiation.", "I"),
    ("Squamous cell carcinoma of the anal canal, T2N1.", "III"),
    ("Colon adenocarcinoma pT4N2b with liver metastases.", "IV"),  # the metastases decide
    ("Colon adenocarcinoma pTxN1.", "III"),  # any node-positive M0 colon cancer is stage III
    ("Sigmoid colon adenocarcinoma T2N0 MSI-high.", "I"),  # "MSI" after it is no M
    ("Breast cancer, pT2N1, ER-positive.", None),  # IIA-IIIA by T: no guess
    ("Pancreatic adenocarcinoma resected by Whipple, pT2N1.", None),
])
def test_a_resection_reports_t_and_n_stage_colorectal_and_anal_cancer(note, group):
    """The audit's "Right hemicolectomy for a pT3N1a adenocarcinoma" (stage III colon cancer) had no stage: a
    pathology report gives T and N, rarely M."""
    facts = extract_facts(note, genes=[], treatment_keywords=[], rare_cancers=[])
    assert facts.stage == group, facts
    if group == "III":
        assert assess("Stage II disease: surgery alone is standard.", case_from_facts(facts)).verdict == "contradicts"


def test_a_sentence_naming_m0_or_m1_states_the_extent():
    # the audit's metastatic kidney case was offered "Radical nephrectomy (for T4, M0 lesions)." second
    metastatic = case("Metastatic clear cell renal cell carcinoma, intermediate risk, untreated. First-line options?")
    localised = case("Stage III renal cell carcinoma. Options?")
    nephrectomy = "Radical nephrectomy (for T4, M0 lesions)."
    assert assess(nephrectomy, metastatic).reason == (
        "does not apply to this case: states M0; the case is stage IV (metastatic)")
    assert assess(nephrectomy, localised).verdict == "fits"
    cytoreductive = "Cytoreductive nephrectomy (for any T, M1 lesions in patients with good-risk disease)."
    unstated_risk = case("Metastatic clear cell renal cell carcinoma, untreated. First-line options?")
    assert assess(cytoreductive, unstated_risk).verdict != "contradicts"
    assert assess(cytoreductive, localised).verdict == "contradicts"
    # an IMDC intermediate-risk case is not the good-risk population (session 17: risk groups)
    assert assess(cytoreductive, metastatic).reason == (
        "does not apply to this case: states good-risk; the case is intermediate-risk")
    # the FAB subtype of AML is no M category
    for text in ("AML with minimal differentiation (FAB classification M0).",
                 "Leukemias that do not express myeloperoxidase include M0 AML and M7 AML."):
        assert assess(text, metastatic).verdict == "none", text


def test_without_metastatic_disease_is_non_metastatic():
    # the audit's metastatic kidney case had "In patients without metastatic disease, resection of the primary
    # tumor, when feasible, is standard practice." offered first, read as a metastatic line that fits
    metastatic = case("Clear cell renal carcinoma with multiple lung metastases. First-line systemic therapy?")
    for text in ("In patients without metastatic disease, resection of the primary tumor, when feasible, is standard.",
                 "Patients with no evidence of metastatic disease are candidates for surgery."):
        assert assess(text, metastatic).verdict == "contradicts", text
        assert assess(text, case("Stage III renal cell carcinoma. Options?")).verdict == "fits", text
