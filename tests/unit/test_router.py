"""Router: extraction of case facts and the additive score, including the rule we ship for the pancreatic case."""

from __future__ import annotations

import pytest

from engine.config import Settings
from engine.facts import extract_facts
from engine.nodes.router import score_facts

CFG = Settings().router


def route(text: str, override: int | None = None):
    facts = extract_facts(text, genes=CFG.genes, treatment_keywords=CFG.treatment_keywords,
                          rare_cancers=CFG.rare_cancers)
    return facts, score_facts(facts, CFG, override)


def test_pancreatic_stage_iv_kras_brca2_counts_brca2():
    # Shipped rule: germline BRCA2 counts as a mutation: rare 0.40 + stage IV 0.25 + >=2 mutations 0.30.
    facts, r = route("Stage IV pancreatic adenocarcinoma with KRAS G12D and germline BRCA2 mutation.")
    assert facts.genes == ("KRAS", "BRCA2")
    assert r.score == pytest.approx(0.95) and r.tier == 2
    assert {f.name: f.weight for f in r.factors} == {"rare_cancer": 0.40, "stage_iv": 0.25, "multiple_mutations": 0.30}


def test_simple_case_is_tier1():
    facts, r = route("65-year-old woman with stage I hormone receptor-positive breast cancer after lumpectomy?")
    assert facts.cancer_type == "hormone receptor-positive breast cancer"
    assert r.score == 0.0 and r.tier == 1


def test_override_is_honoured_and_recorded():
    _, r = route("Stage I breast cancer", override=2)
    assert (r.auto_tier, r.tier, r.override) == (1, 2, 2)


@pytest.mark.parametrize("text,stage", [
    ("stage IV NSCLC", "IV"), ("stage 4 colon cancer", "IV"), ("stage IIIB lung adenocarcinoma", "III"),
    ("T3N1M1 gastric adenocarcinoma", "IV"), ("pT2N1M0 rectal cancer", "III"), ("stage II breast cancer", "II"),
    ("metastatic melanoma", "IV"), ("non-metastatic prostate cancer", None),
    ("initially stage II, now stage IV after relapse", "IV"), ("extensive-stage small cell lung cancer", "IV"),
])
def test_stages(text, stage):
    assert route(text)[0].stage == stage


@pytest.mark.parametrize("text,expected", [
    ("triple-negative breast cancer", "triple-negative breast cancer"),
    ("breast cancer, now a triple-negative breast cancer recurrence", "triple-negative breast cancer"),
    ("metastatic non-small cell lung cancer", "non-small cell lung cancer"),
    ("small cell lung cancer", "small cell lung cancer"),
    ("uveal melanoma with liver metastases", "uveal melanoma"),
    ("adenocarcinoma of unknown primary", "cancer of unknown primary"),
])
def test_most_specific_cancer_type(text, expected):
    assert route(text)[0].cancer_type == expected


def test_nsclc_is_not_rare_but_sclc_is():
    assert not route("non-small cell lung cancer")[0].rare
    assert route("small cell lung cancer")[0].rare


def test_multiword_markers_and_negative_status():
    facts, r = route("Colon cancer, BRAF V600E, MSI-H, KRAS wild-type, HER2-positive, EGFR exon 19 deletion")
    assert "BRAF V600E" in facts.markers and "MSI-H" in facts.markers and "EGFR exon 19 deletion" in facts.markers
    assert "HER2-positive" in facts.markers
    assert set(facts.genes) == {"BRAF", "HER2", "EGFR"}  # KRAS wild-type is not a mutation; MSI-H is a biomarker
    assert "multiple_mutations" in [f.name for f in r.factors]


def test_unknown_primary_and_prior_treatment_and_negation():
    facts, r = route("Carcinoma, primary site unknown, progressed on carboplatin; ECOG 2")
    assert facts.unknown_primary and facts.performance_status == "ECOG 2"
    assert "carboplatin" in facts.prior_treatments
    names = [f.name for f in r.factors]
    assert "unknown_primary" in names and "prior_treatment" in names
    assert route("stage II colon cancer, no prior chemotherapy")[0].prior_treatments == ()
    assert route("treatment-naive stage II colon cancer after chemo discussion")[0].prior_treatments == ()


def test_weights_come_from_config():
    s = Settings().with_overrides({"router.weights": {**CFG.weights, "stage_iv": 0.9}})
    facts = extract_facts("stage IV breast cancer", genes=s.router.genes,
                          treatment_keywords=s.router.treatment_keywords, rare_cancers=s.router.rare_cancers)
    assert score_facts(facts, s.router).score == pytest.approx(0.9)


@pytest.mark.parametrize("text", [
    "stage IV NSCLC, negative for EGFR, ALK and ROS1",
    "Stage IV NSCLC; no EGFR or ALK mutation detected",
    "Stage IV NSCLC, EGFR testing pending",
    "Stage IV NSCLC, EGFR, ALK and ROS1 wild-type",
    "Stage IV NSCLC, EGFR/ALK negative",
    "Stage IV NSCLC, awaiting EGFR and ALK results",
    "Stage IV NSCLC, no mutations in EGFR or ALK; KRAS status unknown; BRAF testing sent",
])
def test_negative_pending_or_unknown_genes_are_not_mutations(text):
    facts, r = route(text)
    assert facts.genes == ()
    assert r.score == pytest.approx(0.25) and r.tier == 1
    # the status travels with the gene, so the retrieval query and the export never show a bare "EGFR"
    assert "EGFR" not in facts.markers and all(" " in m or "-" in m for m in facts.markers if "EGFR" in m)


def test_list_status_reaches_only_genes_without_their_own():
    assert route("EGFR exon 19 deletion, ALK and ROS1 negative")[0].genes == ("EGFR",)
    assert route("EGFR mutation, ALK negative")[0].genes == ("EGFR",)
    assert route("no EGFR mutation, KRAS G12C")[0].genes == ("KRAS",)  # the negation stops at EGFR's own words
    assert route("Negative for EGFR mutation; KRAS G12C positive")[0].genes == ("KRAS",)
    facts = route("negative for EGFR, ALK and ROS1")[0]
    assert facts.markers == ("EGFR negative", "ALK negative", "ROS1 negative")
    # the status follows the name directly: case fitting reads "ALK rearrangement ..." as an alteration
    assert route("no ALK rearrangement; EGFR mutation not detected")[0].markers == ("ALK negative", "EGFR negative")
    assert route("KRAS status unknown")[0].markers == ("KRAS status unknown",)


def test_negative_markers_are_wild_type_for_case_fitting():
    from engine.casefit import case_from_facts
    case = case_from_facts(route("stage IV NSCLC; no ALK rearrangement, negative for EGFR and ROS1")[0])
    assert not case.altered and {"ALK", "EGFR", "ROS1"} <= case.wild_type


@pytest.mark.parametrize("text,genes", [
    ("triple-negative breast cancer with BRCA1 mutation", ("BRCA1",)),  # "negative" alone negates nothing
    ("did not receive osimertinib despite EGFR mutation", ("EGFR",)),  # the negation is about the drug
    ("KRAS G12D, negative margins", ("KRAS",)),
    ("BRCA1/2 negative", ()),
    ("germline BRCA1/2 testing sent", ()),
    ("germline BRCA1/2 mutation", ("BRCA1/2",)),  # one of the two: one mutation, not two
    ("met with the family to discuss MET amplification", ("MET",)),  # the verb "met" is no gene
])
def test_gene_status_edge_cases(text, genes):
    assert route(text)[0].genes == genes


@pytest.mark.parametrize("text,marker", [
    ("stage II hormone receptor-positive breast cancer", "hormone receptor-positive"),
    ("HR-positive, HER2-negative breast cancer", "HR-positive"),
    ("HR+ metastatic breast cancer", "HR+"),
])
def test_hormone_receptor_status_is_a_marker_not_a_mutation(text, marker):
    facts, r = route(text)
    assert marker in facts.markers and facts.genes == ()
    assert "mutation" not in " ".join(f.name for f in r.factors)


def test_score_is_capped_at_one_but_factors_keep_every_weight():
    facts, r = route("Stage IV pancreatic adenocarcinoma, primary site unknown, KRAS G12D and BRCA2 mutation, "
                     "progressed on FOLFIRINOX")
    weights = {f.name: f.weight for f in r.factors}
    assert weights == {"rare_cancer": 0.40, "unknown_primary": 0.30, "stage_iv": 0.25, "multiple_mutations": 0.30,
                       "prior_treatment": 0.10}
    assert sum(weights.values()) == pytest.approx(1.35)
    assert r.score == 1.0 and r.tier == 2


def test_tier_uses_the_uncapped_sum_when_the_threshold_is_above_one():
    s = Settings().with_overrides({"router.threshold": 1.2})
    facts = route("Stage IV pancreatic adenocarcinoma, primary site unknown, KRAS G12D and BRCA2 mutation, "
                  "progressed on FOLFIRINOX")[0]
    r = score_facts(facts, s.router)
    assert r.score == 1.0 and r.auto_tier == 2


@pytest.mark.parametrize("text,markers,genes", [
    # a bare gene takes the next status in its list; a later finding does not undo it
    ("stage IV NSCLC, EGFR/ALK negative, KRAS G12C", ("EGFR negative", "ALK negative", "KRAS G12C"), ("KRAS",)),
    ("EGFR and ALK negative, KRAS G12C", ("EGFR negative", "ALK negative", "KRAS G12C"), ("KRAS",)),
    ("EGFR, KRAS G12C and ALK negative", ("EGFR negative", "KRAS G12C", "ALK negative"), ("KRAS",)),
    # generic words between the last gene and its status
    ("ALK fusion absent", ("ALK negative",), ()),
    ("EGFR mutation absent", ("EGFR negative",), ()),
    ("EGFR and ALK mutation testing pending", ("EGFR pending", "ALK pending"), ()),
    ("KRAS G12C testing pending", ("KRAS G12C",), ("KRAS",)),  # a variant is a finding
    # a bare "BRCA" is the BRCA1/2 slot, and the negation reaches the gene after it
    ("no germline BRCA or PALB2 mutation", ("BRCA negative", "PALB2 negative"), ()),
    ("no BRCA mutation", ("BRCA negative",), ()),
    ("germline BRCA mutation", ("BRCA mutation",), ("BRCA1/2",)),
    ("germline BRCA mutation, BRCA2 confirmed", ("BRCA mutation", "BRCA2"), ("BRCA2",)),
    # HGVS protein notation and "ex19del" are variants too
    ("KRAS p.G12C, EGFR negative", ("KRAS p.G12C", "EGFR negative"), ("KRAS",)),
    ("EGFR ex19del", ("EGFR ex19del",), ("EGFR",)),
])
def test_list_statuses_reach_the_right_genes(text, markers, genes):
    facts = route(text)[0]
    assert facts.markers == markers and facts.genes == genes


@pytest.mark.parametrize("text,markers", [
    ("ER/PR/HER2 negative", {"ER negative", "PR negative", "HER2 negative"}),
    ("HER2/ER/PR-negative invasive ductal carcinoma", {"HER2 negative", "ER negative", "PR-negative"}),
    ("ER and PR positive, HER2 negative", {"ER positive", "PR positive", "HER2 negative"}),
    ("ER/PR/HER2-", {"ER negative", "PR negative", "HER2-"}),
    ("stage II breast cancer, triple-negative", {"triple-negative"}),
    ("triple negative breast cancer", {"triple-negative"}),
])
def test_receptor_lists_and_triple_negative_are_receptor_markers(text, markers):
    facts = route(text)[0]
    assert set(facts.markers) == markers and facts.genes == ()


def test_breast_cancer_then_triple_negative_is_tnbc_for_case_fitting():
    from engine.casefit import case_from_facts
    facts = route("stage II breast cancer, triple-negative")[0]
    assert facts.cancer_type == "triple-negative breast cancer"
    for text in ("stage II breast cancer, triple-negative", "ER/PR/HER2 negative breast cancer"):
        receptors = case_from_facts(route(text)[0]).receptors
        assert {k: receptors.get(k) for k in ("ER", "PR", "HER2")} == {"ER": "negative", "PR": "negative",
                                                                     "HER2": "negative"}
    case = case_from_facts(route("stage IV NSCLC, EGFR/ALK negative, KRAS G12C")[0])
    assert {"EGFR", "ALK"} <= case.wild_type and set(case.altered) == {"KRAS"}


@pytest.mark.parametrize("text,markers,genes", [
    # HER2 by its IHC score (ASCO/CAP): 3+ or 2+ with ISH amplification is positive (and counts, as "HER2-positive"
    # does); 1+ or 2+ without amplification is HER2-low, 0 HER2-zero (neither counts); the score stays in the marker
    ("HER2 3+ breast cancer", ("HER2-positive (IHC 3+)",), ("HER2",)),
    ("HER2 IHC 2+ with ISH amplification", ("HER2-positive (IHC 2+, ISH-positive)",), ("HER2",)),
    ("HER2 2+ ISH-positive", ("HER2-positive (IHC 2+, ISH-positive)",), ("HER2",)),
    ("HER2 1+", ("HER2-low (IHC 1+)",), ()),
    ("HER2: 2+, not amplified by FISH", ("HER2-low (IHC 2+, ISH-negative)",), ()),
    ("HER2-low breast cancer", ("HER2-low",), ()),
    ("HER2-negative (IHC 0)", ("HER2-negative (IHC 0)",), ()),
    ("HER2 IHC 0", ("HER2-negative (IHC 0)",), ()),
    ("HER2 2+, FISH pending", ("HER2 equivocal (IHC 2+, ISH pending)",), ()),
    ("HER2-negative (IHC 3+)", ("HER2 discordant (stated negative, IHC 3+)",), ()),  # no guess either way
    ("ER/PR negative, HER2 1+", ("HER2-low (IHC 1+)", "ER negative", "PR negative"), ()),
])
def test_her2_ihc_scores(text, markers, genes):
    facts = route(text)[0]
    assert facts.markers == markers and facts.genes == genes


@pytest.mark.parametrize("text,markers", [
    # PD-L1 keeps its status or whole value; mismatch repair in its usual wordings (biomarkers, never mutations)
    ("PD-L1 TPS 1-49%", ("PD-L1 TPS 1-49%",)),
    ("PD-L1 negative, MSS", ("PD-L1 negative", "MSS")),
    ("PD-L1 expression of at least 50%", ("PD-L1 expression of at least 50%",)),
    ("PD-L1 positive (TPS 30%)", ("PD-L1 positive (TPS 30%)",)),
    ("colon cancer, microsatellite instability-high", ("microsatellite instability-high",)),
    ("mismatch repair deficient, MMR proteins intact", ("mismatch repair deficient", "MMR proteins intact")),
])
def test_pdl1_and_mismatch_repair_markers(text, markers):
    facts = route(text)[0]
    assert facts.markers == markers and facts.genes == ()


@pytest.mark.parametrize("text,markers", [
    # ER/PR by percentage or Allred score (ASCO/CAP: 1-10% is ER-low; Allred 0-2 negative); a disagreeing word
    # gives no status rather than a guess
    ("ER 95%, PR 0%", ("ER-positive (95%)", "PR-negative (0%)")),
    ("ER weakly positive (5%), PgR <1%", ("ER-low (5%)", "PR-negative (<1%)")),
    ("ER positive (Allred 7/8), PR negative", ("ER-positive (Allred 7)", "PR negative")),
    ("ER-positive (Allred 2)", ("ER discordant (stated positive, Allred 2)",)),
    ("ER-low breast cancer", ("ER-low",)),
    ("NSCLC, achieved PR (45% reduction)", ()),  # a partial response, not the progesterone receptor
])
def test_hormone_receptor_scores(text, markers):
    facts = route(text)[0]
    assert facts.markers == markers and facts.genes == ()


@pytest.mark.parametrize("text,stage,stage_text", [
    ("cT2N1M0 stage IIB breast cancer", "II", "stage IIB"),  # stated stage wins over N1 -> III
    ("pT3N2M0, stage IIIB rectal cancer", "III", "stage IIIB"),
    ("T2N1M0 breast cancer", "II", "T2N1M0"),  # TNM only when no stage is stated (breast: AJCC, IIB)
    ("T3N1M0 gastric adenocarcinoma", "III", "T3N1M0"),  # elsewhere the routing rule: N1-3 is III
    ("stage IIIA NSCLC, unresectable, after chemoradiation", "III", "stage IIIA, unresectable"),
    ("muscle-invasive bladder cancer", None, "muscle-invasive"),
    ("non\u2013muscle-invasive bladder cancer", None, "non-muscle-invasive"),
])
def test_stated_stage_wins_over_tnm_and_extent_is_kept(text, stage, stage_text):
    facts = route(text)[0]
    assert (facts.stage, facts.stage_text) == (stage, stage_text)


def test_a_stated_stage_in_a_later_turn_replaces_a_tnm_guess():
    from engine.facts import merge_facts
    notes = ("cT3N1M0 breast cancer", "It is stage IIB.", "Now metastatic.")
    tnm, stated, later_iv = (route(t)[0] for t in notes)
    assert (merge_facts(tnm, stated).stage, merge_facts(tnm, stated).stage_text) == ("II", "stage IIB")
    assert merge_facts(stated, later_iv).stage == "IV"  # progression still raises it
    assert merge_facts(stated, tnm).stage == "III"  # between a stated and a later guess: the higher


@pytest.mark.parametrize("text,expected", [
    ("rectal adenocarcinoma, cT3N1", "rectal cancer"), ("stage III colon cancer", "colon cancer"),
    ("adenocarcinoma of the rectum", "rectal cancer"), ("metastatic colorectal cancer", "colorectal cancer"),
    ("hormone receptor\u2013positive breast cancer", "hormone receptor-positive breast cancer"),
    ("estrogen receptor-positive breast cancer", "hormone receptor-positive breast cancer"),
])
def test_colon_and_rectal_cancer_are_told_apart_and_dashes_are_hyphens(text, expected):
    assert route(text)[0].cancer_type == expected


def test_receptor_wordings_with_dashes_are_markers():
    assert route("ER\u2013positive, PR\u2011negative, HER2 1+ breast cancer")[0].markers == (
        "HER2-low (IHC 1+)", "ER-positive", "PR-negative")
    assert route("estrogen receptor-positive breast cancer")[0].markers == ("estrogen receptor-positive",)


@pytest.mark.parametrize("text", [
    "Urothelial carcinoma, cisplatin eligible.", "Urothelial carcinoma, cisplatin-ineligible.",
    "Stage II rectal cancer, candidate for surgery.", "He would prefer surgery over radiation.",
])
def test_eligibility_and_wishes_are_not_prior_treatment(text):
    assert route(text)[0].prior_treatments == ()


def test_reported_treatment_is_still_prior_treatment():
    assert route("Stage IV NSCLC, progressed on carboplatin after surgery.")[0].prior_treatments == (
        "surgery", "carboplatin", "progressed on")


def test_combined_modalities_and_common_drugs_count_as_prior_treatment():
    facts, r = route("Stage IIIA NSCLC, unresectable, completed concurrent chemoradiation. Consolidation?")
    assert facts.prior_treatments == ("chemoradiation",) and "prior_treatment" in [f.name for f in r.factors]
    assert "pemetrexed" in route("Stage IV lung adenocarcinoma, progressed on pemetrexed maintenance")[0].prior_treatments
