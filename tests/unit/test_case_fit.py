"""Case fit (engine/casefit.py): guideline sentences whose stated stage or marker contradicts the case are not
offered in evidence-locked mode and are blocked by the governor; unstated conditions are released as qualified.

The three audit cases, with passages worded as the demo set words them (kb/demo/colorectal.md, breast.md,
nsclc.md): a stage III colon case was given "Stage I needs no adjuvant therapy", a HER2-negative breast case the
HER2-positive and triple-negative lines, an EGFR exon 19 deletion NSCLC case the ALK, ROS1 and KRAS G12C lines.
"""

from __future__ import annotations

import json
from dataclasses import replace

from engine.casefit import assess, case_from_facts, conditions, locked_candidates, no_fit_issue
from engine.governor import govern
from engine.ledger import build_ledger
from engine.safety import passage_sentences
from engine.state import CaseFacts, Draft, Passage, Recommendation
from kb.store import Hit
from tests.fakes import FakeKB, FakeModel, collect, make_engine


def passage(pid: str, title: str, section: str, text: str) -> Passage:
    return Passage(pid, f"c-{pid}", title, "demo.md", section, None, text, 0.2, 4.0, True)


COLON_TEXT = (
    "Surgical resection with adequate lymph node harvest is standard. Stage I disease generally needs no adjuvant "
    "therapy. In stage II, adjuvant chemotherapy is discussed for high-risk features, and fluoropyrimidines add "
    "little for dMMR tumours. For stage III, adjuvant fluoropyrimidine with oxaliplatin (FOLFOX or CAPOX) is "
    "standard; a shorter course may be acceptable for lower-risk stage III disease. Neoadjuvant immunotherapy for "
    "dMMR colon cancer is being studied.")
COLON = passage("E1", "Colorectal Cancer: Treatment Overview (Demo)",
                "## Treatment by Stage > ### Early / Resectable Colon Cancer", COLON_TEXT)
COLON_FACTS = CaseFacts(cancer_type="colorectal cancer", stage="III", stage_text="stage III",
                        prior_treatments=("resection",), performance_status="ECOG 0")

BREAST_EARLY = passage("E1", "Breast Cancer: Treatment Overview (Demo)",
                       "## Treatment by Stage > ### Early / Resectable Disease", (
    "Surgery is breast-conserving surgery with radiotherapy or mastectomy, plus sentinel node biopsy or axillary "
    "management as indicated. For HR+/HER2- disease, adjuvant endocrine therapy (tamoxifen or an aromatase "
    "inhibitor, with ovarian function suppression in selected premenopausal patients) is central; genomic "
    "recurrence scores can help decide on chemotherapy. A CDK4/6 inhibitor (abemaciclib or ribociclib) may be added "
    "for higher-risk disease. For HER2-positive tumours above small node-negative size, neoadjuvant chemotherapy "
    "with trastuzumab and pertuzumab is commonly used; residual disease after neoadjuvant therapy is an indication "
    "for trastuzumab emtansine. For stage II–III TNBC, neoadjuvant chemotherapy with pembrolizumab is a standard "
    "option, with capecitabine or olaparib (for germline BRCA carriers) considered after surgery depending on "
    "response."))
BREAST_BIOMARKERS = passage("E2", "Breast Cancer: Treatment Overview (Demo)", "## Biomarkers and Targeted Therapy", (
    "- ER/PR: guide endocrine therapy.\n"
    "- Germline BRCA1/2: PARP inhibitors (olaparib, talazoparib).\n"
    "- ESR1 mutation (often found on circulating tumour DNA at progression): oral SERDs."))
BREAST_FACTS = CaseFacts(cancer_type="breast cancer", stage="II", stage_text="stage II",
                         markers=("HER2-negative", "ER-positive", "PR-positive"))

NSCLC_MARKERS = passage("E1", "Non-Small Cell Lung Cancer: Treatment Overview (Demo)",
                        "## Biomarkers and Targeted Therapy", (
    "- EGFR exon 19 deletion or L858R: osimertinib, alone or with chemotherapy, or amivantamab with lazertinib; "
    "EGFR exon 20 insertions: amivantamab-based therapy.\n"
    "- ALK rearrangement: alectinib, brigatinib or lorlatinib.\n"
    "- ROS1 rearrangement: crizotinib, entrectinib or repotrectinib.\n"
    "- KRAS G12C: sotorasib or adagrasib after prior therapy.\n"
    "- PD-L1 immunohistochemistry guides immunotherapy; driver-positive tumours tend to gain less from checkpoint "
    "inhibitors."))
NSCLC_EARLY = passage("E2", "Non-Small Cell Lung Cancer: Treatment Overview (Demo)",
                      "## Treatment by Stage > ### Early / Resectable Disease", (
    "Adjuvant osimertinib is used for resected EGFR exon 19 deletion or L858R tumours, and adjuvant alectinib for "
    "resected ALK-positive disease. Testing for EGFR and ALK before perioperative immunotherapy is advised."))
EGFR_FACTS = CaseFacts(cancer_type="non-small cell lung cancer", stage="IV", stage_text="Metastatic",
                       markers=("EGFR exon 19 deletion",), genes=("EGFR",), performance_status="ECOG 1")


def sentence_ids(passages: list[Passage], *starts: str) -> list[str]:
    """Ids of the passage sentences beginning with each of ``starts`` (in that order)."""
    sentences = passage_sentences(passages)
    return [next(sid for sid, (_, text) in sentences.items() if text.startswith(s)) for s in starts]


def governed(passages: list[Passage], facts: CaseFacts, *starts: str, confidence: float = 0.9):
    """An evidence-locked draft quoting the sentences beginning with ``starts``, governed against ``facts`` (and
    the passages' sections)."""
    sentences = passage_sentences(passages)
    recs = tuple(Recommendation(sentences[sid][1], (sentences[sid][0],), (sid,))
                 for sid in sentence_ids(passages, *starts))
    ledger = build_ledger(Draft("x", recs), passages, None, evidence_locked=True, cancer_type=facts.cancer_type)
    return govern(ledger, confidence, 0.3, facts, passages)


def by_start(ledger) -> dict[str, tuple[str, str]]:
    return {c.text.split(":")[0].split(",")[0][:24]: (c.state, c.reasons[0]) for c in ledger.claims}


# -- 1. evidence-locked selection: the model is never offered what contradicts the case --------------------------
def test_colon_stage_iii_selection_drops_stage_i_and_ii_and_puts_stage_iii_first():
    offered, dropped = locked_candidates([COLON], COLON_FACTS)
    stage_i, stage_ii, stage_iii, surgery = sentence_ids([COLON], "Stage I", "In stage II", "For stage III",
                                                         "Surgical")
    assert set(dropped) == {stage_i, stage_ii}
    assert "states stage I; the case is stage III" in dropped[stage_i]
    assert list(offered)[0] == stage_iii  # the sentence that fits the case is listed first
    assert surgery in offered  # no condition: unaffected


def test_her2_negative_breast_selection_drops_her2_positive_and_triple_negative_lines():
    offered, dropped = locked_candidates([BREAST_EARLY, BREAST_BIOMARKERS], BREAST_FACTS)
    her2, tnbc, hr = sentence_ids([BREAST_EARLY], "For HER2-positive", "For stage II–III TNBC", "For HR+/HER2-")
    assert set(dropped) == {her2, tnbc}
    assert "states HER2-positive; the case is HER2-negative" in dropped[her2]
    assert "states TNBC; the case is HR-positive" in dropped[tnbc]
    assert list(offered)[0] == hr


def test_egfr_nsclc_selection_drops_other_drivers_and_keeps_the_egfr_lines():
    offered, dropped = locked_candidates([NSCLC_MARKERS, NSCLC_EARLY], EGFR_FACTS)
    alk, ros1, kras, exon20, egfr, adjuvant, testing, pdl1 = sentence_ids(
        [NSCLC_MARKERS, NSCLC_EARLY], "ALK", "ROS1", "KRAS G12C", "EGFR exon 20", "EGFR exon 19",
        "Adjuvant osimertinib", "Testing for EGFR", "PD-L1")
    # another EGFR variant than the case's is dropped too; so is the early (adjuvant, perioperative) setting for a
    # metastatic case, and a clause for ALK-positive disease (judged clause by clause)
    assert set(dropped) == {alk, ros1, kras, exon20, adjuvant, testing}
    assert "states EGFR exon 20 insertions; the case is EGFR exon 19 deletion" in dropped[exon20]
    assert "the case's driver is EGFR exon 19 deletion" in dropped[alk]
    assert {egfr, pdl1} <= set(offered)
    assert list(offered)[0] == egfr


# -- 2. governor: a claim that contradicts the case is blocked, an unstated condition is qualified ----------------
def test_colon_governor_blocks_other_stages_and_supports_stage_iii():
    ledger = governed([COLON], COLON_FACTS, "Stage I", "In stage II", "For stage III", "Surgical")
    states = [(c.state, c.reasons[0]) for c in ledger.claims]
    assert states[0] == ("blocked", "does not apply to this case: states stage I; the case is stage III")
    assert states[1][0] == "blocked" and states[1][1].startswith("does not apply to this case: states stage II;")
    assert [s for s, _ in states[2:]] == ["supported", "supported"]


def test_breast_governor_blocks_her2_positive_and_tnbc_qualifies_brca_and_keeps_hr_positive():
    ledger = governed([BREAST_EARLY, BREAST_BIOMARKERS], BREAST_FACTS, "For HER2-positive", "For stage II–III TNBC",
                      "For HR+/HER2-", "Germline BRCA1/2", "ER/PR")
    got = by_start(ledger)
    assert got["For HER2-positive tumour"] == (
        "blocked", "does not apply to this case: states HER2-positive; the case is HER2-negative")
    assert got["For stage II–III TNBC"][0] == "blocked"
    assert got["For HR+/HER2- disease"][0] == "supported"
    assert got["Germline BRCA1/2"] == ("qualified", "applies if germline BRCA1/2 (not stated for this case)")
    assert got["ER/PR"][0] == "supported"  # names markers without a status: no condition


def test_her2_negative_with_hormone_status_unstated_qualifies_triple_negative_instead_of_blocking():
    facts = CaseFacts(cancer_type="breast cancer", stage="II", stage_text="stage II", markers=("HER2-negative",))
    got = by_start(governed([BREAST_EARLY], facts, "For HER2-positive", "For stage II–III TNBC"))
    assert got["For HER2-positive tumour"][0] == "blocked"
    # "olaparib (for germline BRCA carriers)" qualifies one option, not the sentence
    assert got["For stage II–III TNBC"] == ("qualified", "applies if TNBC (not stated for this case)")


def test_egfr_governor_blocks_alk_ros1_kras_g12c_and_the_adjuvant_line_and_supports_egfr():
    ledger = governed([NSCLC_MARKERS, NSCLC_EARLY], EGFR_FACTS, "ALK", "ROS1", "KRAS G12C", "EGFR exon 19",
                      "Adjuvant osimertinib")
    got = [(c.state, c.reasons[0]) for c in ledger.claims]
    assert got[0] == ("blocked", "does not apply to this case: states ALK rearrangement; the case's driver is EGFR "
                                 "exon 19 deletion")
    assert [s for s, _ in got] == ["blocked", "blocked", "blocked", "supported", "blocked"]


def test_low_confidence_and_unstated_condition_qualifiers_are_both_printed():
    ledger = governed([BREAST_BIOMARKERS], BREAST_FACTS, "Germline BRCA1/2", confidence=0.1)
    [claim] = ledger.claims
    assert claim.state == "qualified" and "applies if germline BRCA1/2" in claim.reasons[0]
    assert "low retrieval confidence" in claim.reasons[0]


def test_without_case_facts_the_governor_judges_nothing_against_the_case():
    sentences = passage_sentences([COLON])
    [sid] = sentence_ids([COLON], "Stage I")
    draft = Draft("x", (Recommendation(sentences[sid][1], ("E1",), (sid,)),))
    assert govern(build_ledger(draft, [COLON], None, True), 0.9, 0.3).claims[0].state == "supported"


# -- the conditions themselves: conservative --------------------------------------------------------------------
def test_only_clear_conditions_are_read():
    assert [c.text for c in conditions("Testing for EGFR and ALK before perioperative immunotherapy is advised.")] == [
        "perioperative"]  # the early, operable setting; the genes named for testing are no condition
    assert conditions("Skin rash with anti-EGFR antibodies is managed early.") == []
    assert conditions("Early palliative care improves quality of life.") == []
    assert conditions("Bevacizumab is given IV every cycle.") == []  # bare "IV" is intravenous, not a stage
    assert [c.text for c in conditions("For stage II–IIIA disease, options include surgery.")] == ["stage II–IIIA"]
    assert [c.text for c in conditions("KRAS/NRAS mutations: predict lack of benefit.")] == ["KRAS/NRAS mutations"]


def test_stage_ranges_sub_stages_and_stage_words():
    iiib = case_from_facts(CaseFacts(stage="III", stage_text="stage IIIB"))
    iii = case_from_facts(CaseFacts(stage="III", stage_text="stage III"))
    metastatic = case_from_facts(CaseFacts(stage="IV", stage_text="metastatic"))
    assert assess("For stage II–IIIA disease, surgery is used.", iiib).verdict == "contradicts"
    assert assess("For stage II–IIIA disease, surgery is used.", iii).verdict == "unknown"  # IIIA or IIIB?
    assert assess("Locally advanced tumours receive chemoradiotherapy.", iii).verdict == "fits"
    assert assess("Locally advanced tumours receive chemoradiotherapy.", metastatic).verdict == "contradicts"
    assert assess("In metastatic disease, pembrolizumab is used.", iii).verdict == "contradicts"
    assert assess("In metastatic disease, pembrolizumab is used.", metastatic).verdict == "fits"
    # no stage stated: a staged sentence is qualified, not released as if it had no condition
    unstaged = assess("Stage I disease needs no adjuvant therapy.", case_from_facts(CaseFacts()))
    assert unstaged.reason == ("applies if stage I and early, operable setting (adjuvant) (not stated for this case)")
    assert assess("In metastatic disease, pembrolizumab is used.", case_from_facts(CaseFacts())).reason == (
        "applies if metastatic (not stated for this case)")


def test_marker_statuses_both_ways():
    tnbc = case_from_facts(CaseFacts(cancer_type="triple-negative breast cancer"))
    her2 = case_from_facts(CaseFacts(markers=("HER2+",)))
    msi = case_from_facts(CaseFacts(markers=("MSI-H",)))
    mss_kras = case_from_facts(CaseFacts(markers=("MSS", "KRAS G12D"), genes=("KRAS",)))
    assert assess("For HR+/HER2- disease, endocrine therapy is central.", tnbc).verdict == "contradicts"
    assert assess("TNBC options include sacituzumab govitecan.", tnbc).verdict == "fits"
    assert assess("Trastuzumab deruxtecan is also used in HER2-low disease.", her2).verdict == "contradicts"
    assert assess("MSI-H/dMMR: first-line pembrolizumab.", msi).verdict == "fits"
    assert assess("MSI-H/dMMR: first-line pembrolizumab.", mss_kras).verdict == "contradicts"
    assert assess("For RAS wild-type left-sided tumours, an anti-EGFR antibody.", mss_kras).verdict == "contradicts"
    assert assess("KRAS G12C: sotorasib with an anti-EGFR antibody.", mss_kras).verdict == "contradicts"
    egfr = case_from_facts(EGFR_FACTS)
    no_driver = "Without an actionable driver, PD-L1 guides the choice of immunotherapy."
    assert assess(no_driver, egfr).reason == ("does not apply to this case: states without an actionable driver; "
                                              "the case is EGFR exon 19 deletion")
    assert assess(no_driver, case_from_facts(CaseFacts())).verdict == "unknown"


# -- through the engine: selection, critic, refusal --------------------------------------------------------------
def colon_kb(text: str = COLON_TEXT) -> FakeKB:
    kb = FakeKB()
    # FakeKB retrieves by the title's first word ("colon" is in the case); the section names the cancer type
    kb.docs = [Hit("c1", text, "Colon Cancer (Demo)", "colorectal.md", "## Colorectal Cancer > Treatment by Stage",
                   None, 0.2, 4.0)]
    return kb


COLON_CASE = ("67-year-old man, stage III colon adenocarcinoma after resection, node-positive, ECOG 0. "
              "Adjuvant chemotherapy?")


def test_locked_consult_offers_only_fitting_sentences_and_releases_no_other_stage(tmp_path):
    picks = json.dumps({"sentences": ["E1.s2", "E1.s4"]})  # a model ignoring the enum picks Stage I first
    model = FakeModel(outputs=[picks])
    engine, model, _ = make_engine(tmp_path, model=model, kb=colon_kb(),
                                   overrides={"engine.evidence_locked": "on"})
    events = collect(lambda: engine.stream("PT-0004", COLON_CASE))
    prompt = model.prompts[0][-1]["content"]
    # the stage III sentence is listed first (labels follow the listed order); stages I and II are not offered
    assert "[S1] For stage III" in prompt and "Stage I disease" not in prompt and "In stage II" not in prompt
    checked = [e for e in events if e.kind == "CriticChecked"]
    assert not checked[0].passed and "case fit: sentence E1.s2 does not apply" in checked[0].issues[0]
    final = [e for e in events if e.kind == "Final"][0]
    assert "Stage I disease generally needs no adjuvant therapy." not in final.report.split("## Withheld")[0]
    assert "does not apply to this case: states stage I; the case is stage III" in final.report
    assert "For stage III, adjuvant fluoropyrimidine" in final.report


def test_locked_draft_streams_as_the_sentences_picked_not_as_raw_labels(tmp_path):
    # what the chat pane and the CLI show while the model drafts: the picked sentence, not '{"sentences": ["S1"'
    model = FakeModel(outputs=[json.dumps({"sentences": ["S1", "S9"]})])
    engine, model, _ = make_engine(tmp_path, model=model, kb=colon_kb(), overrides={"engine.evidence_locked": "on"})
    events = collect(lambda: engine.stream("PT-0004", COLON_CASE))
    shown = "".join(e.text for e in events if e.kind == "Token")
    assert shown.startswith("\n  S1 [E1] For stage III, adjuvant fluoropyrimidine"), shown
    assert "\n  S9 (not an offered sentence)" in shown
    assert "sentences" not in shown and "{" not in shown


def test_locked_consult_with_no_fitting_sentence_is_refused_without_calling_the_model(tmp_path):
    only_other_stages = ("Stage I disease generally needs no adjuvant therapy. In stage II, adjuvant chemotherapy "
                         "is discussed for high-risk features.")
    model = FakeModel(outputs=[json.dumps({"sentences": ["E1.s1"]})])
    engine, model, _ = make_engine(tmp_path, model=model, kb=colon_kb(only_other_stages),
                                   overrides={"engine.evidence_locked": "on"})
    events = collect(lambda: engine.stream("PT-0004", COLON_CASE))
    final = [e for e in events if e.kind == "Final"][0]
    assert final.status == "refused" and model.calls == 0
    assert "no retrieved guideline sentence applies to this case" in final.report
    assert "schema" not in final.report.split("Reason:")[1].split("\n")[0]


# -- re-audit 3 -------------------------------------------------------------------------------------------------
NSCLC_LOCAL = passage("E3", "Non-Small Cell Lung Cancer: Treatment Overview (Demo)",
                      "## Treatment by Stage > ### Locally Advanced Unresectable Disease", (
    "Concurrent platinum-based chemoradiotherapy is standard for fit patients, followed by durvalumab consolidation "
    "for those without progression. For EGFR-mutant disease, osimertinib after chemoradiotherapy is an option."))
BREAST_METASTATIC = passage("E3", "Breast Cancer: Treatment Overview (Demo)",
                            "## Treatment by Stage > ### Advanced or Metastatic Disease", (
    "Biopsy of a metastatic site is encouraged to confirm receptor status. HR+/HER2- disease is usually treated first "
    "line with endocrine therapy plus a CDK4/6 inhibitor; later lines may use fulvestrant, elacestrant (ESR1 "
    "mutation), alpelisib or capivasertib (PIK3CA/AKT pathway alterations), everolimus, or antibody-drug conjugates. "
    "HER2-positive disease is typically treated with taxane, trastuzumab and pertuzumab, followed by trastuzumab "
    "deruxtecan, tucatinib-based combinations and other HER2-directed agents. TNBC options include chemotherapy with "
    "pembrolizumab for PD-L1-positive tumours, sacituzumab govitecan, and PARP inhibitors for germline BRCA carriers. "
    "Trastuzumab deruxtecan is also used in HER2-low disease. Trials are encouraged at each line."))
BREAST_WORKUP = passage("E4", "Breast Cancer: Treatment Overview (Demo)", "## Staging and Workup", (
    "TNM staging incorporates tumour size, nodal status and, in the current system, biological factors such as grade "
    "and receptor status. Germline BRCA1/2 and broader testing is advised for many patients, notably younger "
    "patients, TNBC or a suggestive family history."))
RECTAL = passage("E5", "Colorectal Cancer: Treatment Overview (Demo)",
                 "## Treatment by Stage > ### Localised Rectal Cancer", "Early tumours may be managed with surgery alone. Locally advanced tumours are treated with "
                 "neoadjuvant therapy, such as long-course chemoradiotherapy.")
PANCREAS_MARKERS = passage("E1", "Pancreatic Adenocarcinoma: Treatment Overview (Demo)",
                           "## Biomarkers and Targeted Therapy", (
    "Germline testing is recommended for all patients with PDAC, and somatic profiling is advised for those with "
    "advanced disease who may receive further therapy.\n"
    "- Germline BRCA1/2 or PALB2: platinum-based chemotherapy is favoured, and maintenance olaparib may be used after "
    "disease control on first-line platinum therapy.\n"
    "- KRAS: mutated in the large majority of tumours. KRAS G12C is rare but may respond to sotorasib or adagrasib; "
    "broader KRAS inhibitors are in clinical trials."))
KRAS_FACTS = CaseFacts(cancer_type="non-small cell lung cancer", stage="IV", stage_text="Metastatic",
                       markers=("KRAS G12C", "EGFR negative", "ALK negative"), genes=("KRAS",),
                       prior_treatments=("carboplatin", "pembrolizumab"), performance_status="ECOG 1")
HR_METASTATIC_FACTS = CaseFacts(cancer_type="breast cancer", stage="IV", stage_text="metastatic",
                                markers=("HER2-negative", "ER-positive", "PR-positive"))
COMPOUND = "Adjuvant osimertinib is used for resected EGFR exon 19 deletion or L858R tumours, and adjuvant alectinib"


def test_compound_adjuvant_sentence_is_early_setting_and_judged_clause_by_clause():
    stage_iv = assess(NSCLC_EARLY.text.split(". ")[0], case_from_facts(EGFR_FACTS))
    assert stage_iv.verdict == "contradicts"
    assert "states the early, operable setting (adjuvant); the case is stage IV (metastatic)" in stage_iv.reason
    assert "states resected or resectable disease; the case is stage IV (metastatic)" in stage_iv.reason
    assert "states ALK-positive; the case's driver is EGFR exon 19 deletion" in stage_iv.reason
    # resected stage IB EGFR: the EGFR clause fits, the ALK clause does not, and the sentence is quoted whole
    ib = CaseFacts(cancer_type="non-small cell lung cancer", stage="I", stage_text="stage IB",
                   markers=("EGFR exon 19 deletion",), genes=("EGFR",))
    assert by_start(governed([NSCLC_EARLY], ib, COMPOUND))["Adjuvant osimertinib is "] == (
        "blocked", "does not apply to this case: states ALK-positive; the case's driver is EGFR exon 19 deletion")
    # no driver stated: each clause's condition is an alternative, not both required
    ii = CaseFacts(cancer_type="non-small cell lung cancer", stage="II", stage_text="stage II")
    assert by_start(governed([NSCLC_EARLY], ii, COMPOUND))["Adjuvant osimertinib is "] == (
        "qualified", "applies if EGFR exon 19 deletion or L858R or ALK-positive (not stated for this case)")
    # a list of receptor groups is no coordination of clauses: one fitting group is enough
    overview = ("Breast cancer is managed according to three core receptor groups: hormone receptor-positive/"
                "HER2-negative (HR+/HER2-), HER2-positive, and triple-negative (TNBC; lacking ER, PR and HER2).")
    assert assess(overview, case_from_facts(BREAST_FACTS)).verdict == "fits"
    # resected liver metastases are stage IV surgery, not the early setting
    liver = ("Resectable or potentially resectable liver or lung metastases should be reviewed by a hepatobiliary or "
             "thoracic surgeon; perioperative chemotherapy and ablation may be used.")
    assert [c.family for c in conditions(liver)] == []


def test_sentences_inherit_the_stage_of_their_section():
    offered, dropped = locked_candidates([BREAST_METASTATIC], BREAST_FACTS)  # stage II, HR+/HER2-
    [tdxd] = sentence_ids([BREAST_METASTATIC], "Trastuzumab deruxtecan is also")
    assert dropped[tdxd] == ("does not apply to this case: comes from the section “Advanced or Metastatic Disease”; "
                             "the case is stage II")
    assert offered == {}
    got = by_start(governed([BREAST_METASTATIC], BREAST_FACTS, "Trastuzumab deruxtecan is also"))
    assert got["Trastuzumab deruxtecan i"][0] == "blocked"
    stage_iii = CaseFacts(cancer_type="colorectal cancer", stage="III", stage_text="stage III")
    early, local = sentence_ids([RECTAL], "Early tumours", "Locally advanced")
    offered, dropped = locked_candidates([RECTAL], stage_iii)
    assert dropped[early] == "does not apply to this case: states early tumours; the case is stage III"
    assert local in offered
    # "osimertinib after chemoradiotherapy": the locally advanced unresectable section, not stage IV
    [osi] = sentence_ids([NSCLC_LOCAL], "For EGFR-mutant")
    assert "Locally Advanced Unresectable Disease" in locked_candidates([NSCLC_LOCAL], EGFR_FACTS)[1][osi]
    iiib = replace(EGFR_FACTS, stage="III", stage_text="stage IIIB")
    assert osi in locked_candidates([NSCLC_LOCAL], iiib)[0]
    # a sentence that states its own stage is judged on it alone; a section without a stage gives none
    assert assess("Stage I disease needs no adjuvant therapy.", case_from_facts(stage_iii),
                  ("## Treatment by Stage > ### Advanced or Metastatic Disease",)).reason.endswith(
        "states stage I; the case is stage III")
    assert assess("Trials are encouraged.", case_from_facts(stage_iii), ("## Biomarkers",)).verdict == "none"


def test_options_examples_and_test_targets_are_not_requirements():
    got = by_start(governed([BREAST_METASTATIC], HR_METASTATIC_FACTS, "HR+/HER2- disease", "TNBC options"))
    assert got["HR+/HER2- disease is usu"] == ("supported", "supported by E3 (100% of its key words)")
    assert got["TNBC options include che"][0] == "blocked"
    tnbc = CaseFacts(cancer_type="triple-negative breast cancer", stage="IV", stage_text="metastatic")
    assert assess(BREAST_METASTATIC.text.split(". ")[3], case_from_facts(tnbc)).verdict == "fits"
    # germline testing advice listing its indications ("notably ... TNBC or ...") is not conditioned on each
    got = by_start(governed([BREAST_WORKUP], BREAST_FACTS, "Germline BRCA1/2 and broader"))
    assert got["Germline BRCA1/2 and bro"][0] == "supported"
    kras_wt = "KRAS wild-type tumours should be tested for fusions (NTRK, RET, NRG1) and BRAF alterations."
    assert [c.text for c in conditions(kras_wt)] == ["KRAS wild-type", "BRAF alterations"]
    assert assess(kras_wt, case_from_facts(CaseFacts(stage="IV"))).unknown == ("KRAS wild-type",)


def test_her2_zero_and_brca_negative_cases():
    zero = replace(HR_METASTATIC_FACTS, markers=("HER2-negative (IHC 0)", "ER-positive", "PR-positive"))
    fit = assess("Trastuzumab deruxtecan is also used in HER2-low disease.", case_from_facts(zero))
    assert fit.reason == "does not apply to this case: states HER2-low; the case is HER2-zero"
    assert assess("HER2-negative disease: endocrine therapy.", case_from_facts(zero)).verdict == "fits"
    assert case_from_facts(CaseFacts(markers=("HER2 IHC 1+",))).receptors["HER2"] == "low"
    assert case_from_facts(CaseFacts(markers=("HER2-negative (IHC 0-1+)",))).receptors["HER2"] == "negative"
    # "germline BRCA2 mutation negative" (fact extraction: "BRCA2 negative"): BRCA1/2 tested together
    brca_neg = CaseFacts(cancer_type="breast cancer", stage="II", stage_text="Stage II",
                         markers=("HER2-", "BRCA2 negative", "HR+"))
    got = by_start(governed([BREAST_BIOMARKERS], brca_neg, "Germline BRCA1/2"))
    assert got["Germline BRCA1/2"] == ("blocked", "does not apply to this case: states germline BRCA1/2; the case "
                                                  "is BRCA2 negative")
    tnbc_neg = replace(brca_neg, cancer_type="triple-negative breast cancer", markers=("BRCA2 negative",))
    got = by_start(governed([BREAST_EARLY], tnbc_neg, "For stage II–III TNBC"))
    assert got["For stage II–III TNBC"] == ("qualified", "the option for germline BRCA carriers does not apply (the "
                                                         "case is BRCA2 negative)")
    # "Germline BRCA1/2 or PALB2": PALB2 is an alternative, so BRCA2 negative alone leaves it open
    panc = CaseFacts(cancer_type="pancreatic adenocarcinoma", stage="IV", stage_text="metastatic",
                     markers=("KRAS G12D", "BRCA2 negative"), genes=("KRAS",))
    assert by_start(governed([PANCREAS_MARKERS], panc, "Germline BRCA1/2 or"))["Germline BRCA1/2 or PALB"] == (
        "qualified", "applies if germline BRCA1/2 or PALB2 (not stated for this case)")
    panc = replace(panc, markers=("KRAS G12D", "BRCA2 negative", "PALB2 negative"))
    assert by_start(governed([PANCREAS_MARKERS], panc, "Germline BRCA1/2 or"))["Germline BRCA1/2 or PALB"] == (
        "blocked", "does not apply to this case: states germline BRCA1/2 or PALB2; the case is BRCA2 negative, "
                   "PALB2 negative")


def test_passages_about_another_cancer_are_not_offered():
    lung = replace(NSCLC_MARKERS, id="E2")
    offered, dropped = locked_candidates([PANCREAS_MARKERS, lung], KRAS_FACTS)
    assert offered and not any(sid.startswith("E1.") for sid in offered)
    pancreatic = [why for sid, why in dropped.items() if sid.startswith("E1.")]
    assert len(pancreatic) == 4 and set(pancreatic) == {
        "does not apply to this case: its passage E1 is about another cancer than the case's (non-small cell lung "
        "cancer)"}
    [kras] = sentence_ids([lung], "KRAS G12C")
    assert list(offered)[0] == kras
    offered, dropped = locked_candidates([PANCREAS_MARKERS], KRAS_FACTS)
    assert offered == {} and "its passage E1 is about another cancer" in no_fit_issue(dropped)


def test_locked_consult_with_only_another_cancers_passages_is_refused_without_calling_the_model(tmp_path):
    kb = FakeKB()
    kb.docs = [Hit("c1", PANCREAS_MARKERS.text, "Kras Pancreatic Adenocarcinoma (Demo)", "pancreatic.md",
                   "## Biomarkers and Targeted Therapy", None, 0.2, 4.0)]
    model = FakeModel(outputs=[json.dumps({"sentences": ["E1.s1"]})])
    engine, model, _ = make_engine(tmp_path, model=model, kb=kb, overrides={"engine.evidence_locked": "on"})
    case = ("64-year-old, metastatic non-small cell lung cancer, KRAS G12C, EGFR negative, ALK negative, progressed "
            "on carboplatin and pembrolizumab, ECOG 1. Next line?")
    final = [e for e in collect(lambda: engine.stream("PT-0001", case)) if e.kind == "Final"][0]
    assert final.status == "refused" and model.calls == 0
    assert "is about another cancer than the case's" in final.report


# -- gene lists, HER2 scores and other precise readings ---------------------------------------------------------
def case_of(text: str):
    from engine.config import DEFAULT_GENES, DEFAULT_RARE_CANCERS, DEFAULT_TREATMENT_KEYWORDS
    from engine.facts import extract_facts
    return case_from_facts(extract_facts(text, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS,
                                         rare_cancers=DEFAULT_RARE_CANCERS))


def test_a_list_of_genes_is_a_list_of_alternatives():
    olaparib = "Olaparib is recommended for patients with germline BRCA1, BRCA2 or PALB2 mutations."
    [c] = conditions(olaparib)
    assert (c.text, c.genes, c.altered) == ("germline BRCA1, BRCA2 or PALB2 mutations", ("BRCA1", "BRCA2", "PALB2"),
                                            True)
    panc = "Metastatic pancreatic adenocarcinoma, "
    assert assess(olaparib, case_of(panc + "germline PALB2 mutation.")).verdict == "fits"
    assert assess(olaparib, case_of(panc + "germline BRCA2 mutation.")).verdict == "fits"
    assert assess(olaparib, case_of(panc + "germline BRCA2 negative.")).verdict == "unknown"  # PALB2 not stated
    none = assess(olaparib, case_of(panc + "no germline BRCA1, BRCA2 or PALB2 mutation."))
    assert none.reason == ("does not apply to this case: states germline BRCA1, BRCA2 or PALB2 mutations; the case "
                           "is BRCA1 negative, BRCA2 negative, PALB2 negative")
    # drivers: one listed driver fitting is enough; each listed driver excluded by the case's contradicts
    either = "For EGFR or ALK alterations, a targeted agent is used first."
    assert [c.genes for c in conditions(either)] == [("EGFR", "ALK")]
    assert assess(either, case_of("Metastatic NSCLC, ALK rearrangement.")).verdict == "fits"
    assert assess(either, case_of("Metastatic NSCLC, KRAS G12C.")).verdict == "contradicts"
    wild = "KRAS, NRAS and BRAF wild-type tumours may receive an anti-EGFR antibody."
    assert [(c.genes, c.altered) for c in conditions(wild)] == [(("KRAS", "NRAS", "BRAF"), False)]
    assert assess(wild, case_of("Metastatic colon cancer, KRAS, NRAS and BRAF wild-type.")).verdict == "fits"
    assert assess(wild, case_of("Metastatic colon cancer, KRAS and NRAS wild-type.")).verdict == "unknown"
    # a variant belongs to its own gene, not to the list; a list named for testing is no condition
    assert [c.text for c in conditions("EGFR or KRAS G12C: see below.")] == ["KRAS G12C"]
    assert conditions("Germline BRCA1, BRCA2 and PALB2 testing is advised.") == []


def test_her2_ihc_scores_in_the_case_and_in_the_sentence():
    tdxd = "Trastuzumab deruxtecan is also used in HER2-low disease."
    endocrine = "HER2-negative disease: endocrine therapy."
    trastuzumab = "For HER2-positive tumours, trastuzumab and pertuzumab are used."
    mbc = "Metastatic breast cancer, ER-positive, "
    three, amplified = case_of(mbc + "HER2 3+."), case_of(mbc + "HER2 IHC 2+ with ISH amplification.")
    one, two_neg, zero = case_of(mbc + "HER2 1+."), case_of(mbc + "HER2 2+, ISH-negative."), case_of(
        mbc + "HER2-negative (IHC 0).")
    for case in (three, amplified):
        assert assess(trastuzumab, case).verdict == "fits"
        assert assess(tdxd, case).verdict == assess(endocrine, case).verdict == "contradicts"
    for case in (one, two_neg):  # HER2-low: HER2-negative for HER2-targeted therapy, eligible for HER2-low therapy
        assert assess(tdxd, case).verdict == assess(endocrine, case).verdict == "fits"
        assert assess(trastuzumab, case).verdict == "contradicts"
    assert assess(tdxd, zero).reason == "does not apply to this case: states HER2-low; the case is HER2-zero"
    assert assess(endocrine, zero).verdict == "fits"
    assert assess(tdxd, case_of(mbc + "HER2 2+, FISH pending.")).verdict == "unknown"  # equivocal
    # the scores written in the sentence itself
    assert assess("HER2 IHC 1+ or 2+/ISH-negative disease: trastuzumab deruxtecan.", one).verdict == "fits"
    assert assess("HER2 IHC 1+ or 2+/ISH-negative disease: trastuzumab deruxtecan.", zero).verdict == "contradicts"
    assert assess("HER2 3+ or 2+ with ISH amplification: trastuzumab.", amplified).verdict == "fits"
    assert assess("HER2 3+ or 2+ with ISH amplification: trastuzumab.", one).verdict == "contradicts"
    assert assess("HER2-zero (IHC 0) disease: chemotherapy.", zero).verdict == "fits"
    assert assess("HER2-zero (IHC 0) disease: chemotherapy.", one).verdict == "contradicts"
    assert assess("HER2-zero (IHC 0) disease: chemotherapy.", case_from_facts(BREAST_FACTS)).verdict == "unknown"
    assert [c.text for c in conditions("HER2-low (IHC 1+ or 2+/ISH-negative) disease: T-DXd.")] == [
        "HER2-low (IHC 1+ or 2+/ISH-negative)"]  # the reason quotes it with its closing parenthesis
    # a plain "HER2-negative" marker does not undo the score another marker gives
    assert case_from_facts(CaseFacts(markers=("HER2-negative (IHC 0)", "HER2-negative"))).receptors["HER2"] == "zero"


def test_a_negated_gene_condition_is_wild_type():
    sentence = "In patients without EGFR or ALK alterations, pembrolizumab with chemotherapy is used."
    [c] = conditions(sentence)
    assert (c.text, c.genes, c.altered) == ("without EGFR or ALK alterations", ("EGFR", "ALK"), False)
    assert assess(sentence, case_from_facts(EGFR_FACTS)).reason == (
        "does not apply to this case: states without EGFR or ALK alterations; the case is EGFR exon 19 deletion")
    assert assess(sentence, case_from_facts(KRAS_FACTS)).verdict == "fits"  # EGFR and ALK negative
    assert [c.altered for c in conditions("For tumours with no sensitizing EGFR mutation, chemotherapy.")] == [False]
    # a negated variant is not the gene wild-type: no condition rather than a wrong one
    assert conditions("Tumours without an EGFR exon 19 deletion respond less.") == []


def test_pdl1_values_and_ranges():
    pembro = "For PD-L1 TPS ≥50%, pembrolizumab monotherapy is an option."
    combo = "For PD-L1 1-49%, chemotherapy with pembrolizumab is preferred."
    nsclc = "Metastatic NSCLC, no driver, "
    high, mid, below50 = case_of(nsclc + "PD-L1 TPS 80%."), case_of(nsclc + "PD-L1 TPS 1-49%."), case_of(
        nsclc + "PD-L1 TPS <50%.")
    negative = case_of(nsclc + "PD-L1 negative.")
    assert assess(pembro, high).verdict == "fits"
    assert assess(pembro, mid).reason == ("does not apply to this case: states PD-L1 TPS ≥50%; the case is PD-L1 TPS "
                                          "1-49%")
    assert assess(pembro, below50).verdict == "contradicts"  # "<50%" was read as 50
    assert assess(pembro, negative).verdict == "contradicts"  # "PD-L1 negative" was read as no PD-L1 statement
    assert assess(combo, mid).verdict == "fits" and assess(combo, high).verdict == "contradicts"
    assert assess(combo, below50).verdict == "unknown"  # 0-49 may be below 1
    assert assess("PD-L1-high tumours: pembrolizumab.", case_of(nsclc + "PD-L1 positive.")).verdict == "unknown"
    # TPS and CPS are different scores
    assert assess("For PD-L1 CPS ≥10, pembrolizumab is added.", high).verdict == "unknown"
    assert assess("For PD-L1 CPS ≥10, pembrolizumab is added.", case_of("PD-L1 CPS 5")).verdict == "contradicts"
    assert case_of("PD-L1 TPS 1-49%").pdl1 == (1, 49)


def test_mismatch_repair_wordings():
    msi = "MSI-H/dMMR: first-line pembrolizumab."
    for text in ("microsatellite instability-high", "mismatch repair deficient", "MMR-deficient", "dMMR"):
        assert assess(msi, case_of("Metastatic colon cancer, " + text + ".")).verdict == "fits", text
    for text in ("microsatellite stable", "MMR proteins intact", "pMMR"):
        assert assess(msi, case_of("Metastatic colon cancer, " + text + ".")).verdict == "contradicts", text
    assert [c.value for c in conditions("MMR-deficient tumours respond to pembrolizumab.")] == ["deficient"]


def test_hormone_receptor_scores():
    endocrine = "ER-positive disease: endocrine therapy."
    mbc = "Metastatic breast cancer, HER2 0, "
    assert assess(endocrine, case_of(mbc + "ER 90%, PR 0%.")).verdict == "fits"
    assert assess(endocrine, case_of(mbc + "ER 0%, PR 0%.")).verdict == "contradicts"
    # ER-low (1-10%) and a score the word disagrees with are neither: qualified, not supported nor blocked
    assert assess(endocrine, case_of(mbc + "ER 5%, PR 0%.")).verdict == "unknown"
    assert assess(endocrine, case_of(mbc + "ER-positive (Allred 2), PR negative.")).verdict == "unknown"
    assert assess("ER-low tumours behave like TNBC.", case_of(mbc + "ER 5%.")).verdict == "fits"


def test_hgvs_and_short_variant_names():
    g12c, g12d = case_of("Metastatic NSCLC, KRAS p.G12C."), case_of("Metastatic NSCLC, KRAS p.G12D.")
    assert assess("KRAS G12C: sotorasib or adagrasib after prior therapy.", g12c).verdict == "fits"
    assert assess("KRAS G12C: sotorasib or adagrasib after prior therapy.", g12d).verdict == "contradicts"
    assert assess("EGFR exon 19 deletion or L858R: osimertinib.", case_of("Metastatic NSCLC, EGFR ex19del.")
                  ).verdict == "fits"
    assert assess("EGFR p.L858R: osimertinib.", case_from_facts(EGFR_FACTS)).verdict == "contradicts"


# PDQ's section paths (full PDQ store audit): subgroup headings, en-dash receptor wording, stage lists
PDQ_HER2_POS = ("## Systemic Therapy for Stages I, II, and III Breast Cancer > ### Stages I, II, and III HER2-Positive "
                "Breast Cancer > #### Postoperative therapy for HER2-positive breast cancer > ##### Trastuzumab")
PDQ_HR_POS = ("## Systemic Therapy for Stages I, II, and III Breast Cancer > ### Stages I, II, and III HER2-Negative "
              "Hormone Receptor\u2013Positive Breast Cancer > #### Timing of postoperative chemotherapy > ##### Tamoxifen")
PDQ_GBRCA = ("## Systemic Therapy for Stages I, II, and III Breast Cancer > ### Adjuvant PARP Inhibitors for Patients "
             "with Germline *BRCA1* and *BRCA2* Variants")
PDQ_RESECTED = ("## Treatment of Stage IIIA NSCLC > ### Treatment Options for Resected/Resectable Stage IIIA NSCLC > "
                "#### Adjuvant therapy > ##### Adjuvant immunotherapy")
PDQ_EGFR = ("## Treatment of Newly Diagnosed Stage IV, Relapsed, and Recurrent NSCLC > #### EGFR tyrosine kinase "
            "inhibitors (TKIs) with or without chemotherapy (for patients with *EGFR* variants) > ##### Gefitinib")


def test_sentences_inherit_the_subgroup_of_their_section():
    her2_low = case_from_facts(CaseFacts(cancer_type="breast cancer", stage="II", stage_text="stage II",
                                         markers=("ER-positive", "HER2-low (IHC 1+)")))
    tnbc = case_from_facts(CaseFacts(cancer_type="triple-negative breast cancer", stage="II", stage_text="stage II",
                                     markers=("triple-negative",)))
    gbrca_neg = case_from_facts(CaseFacts(cancer_type="breast cancer", stage="II", stage_text="stage II",
                                          markers=("ER-positive", "HER2-negative", "germline BRCA1/2 negative")))
    line = "1 year of trastuzumab (n = 1,694) was compared with observation."
    assert assess(line, her2_low, (PDQ_HER2_POS,)).reason == (
        "does not apply to this case: comes from the section “Stages I, II, and III HER2-Positive Breast Cancer > "
        "Postoperative therapy for HER2-positive breast cancer”; the case is HER2-low")
    assert assess(line, her2_low, (PDQ_HR_POS,)).verdict == "fits"  # HER2-low is HER2-negative, and HR-positive
    assert assess(line, tnbc, (PDQ_HR_POS,)).reason.endswith("the case is HR-negative")
    assert assess(line, gbrca_neg, (PDQ_GBRCA,)).reason.endswith("the case is germline BRCA1/2 negative")
    assert assess(line, her2_low, (PDQ_GBRCA,)).reason == (
        "applies if the subgroup of its section “Adjuvant PARP Inhibitors for Patients with Germline BRCA1 and BRCA2 "
        "Variants” (not stated for this case)")
    # the sentence's own receptor overrides its section's; a driver section contradicts another driver
    assert assess("In HER2-low disease, trastuzumab deruxtecan is used.", her2_low, (PDQ_HER2_POS,)).verdict == "fits"
    alk = case_from_facts(CaseFacts(cancer_type="non-small cell lung cancer", stage="IV", stage_text="stage IV",
                                    markers=("ALK rearrangement",), genes=("ALK",)))
    assert assess("Gefitinib improved response rates.", alk, (PDQ_EGFR,)).reason == (
        "does not apply to this case: comes from the section “EGFR tyrosine kinase inhibitors (TKIs) with or without "
        "chemotherapy (for patients with EGFR variants)”; the case's driver is ALK rearrangement")
    # a claim citing passages of two sections inherits only what both name
    assert assess(line, tnbc, (PDQ_HR_POS, "## Treatment > ### Stage II")).verdict != "contradicts"


def test_en_dash_and_spelled_out_receptor_wording():
    # side by side: one subgroup, both required
    assert [c.receptors for c in conditions("HER2-Negative Hormone Receptor\u2013Positive Breast Cancer")] == [
        (("HER2", "negative"), ("HR", "positive"))]
    for dash in "\u2010\u2011\u2012\u2013\u2014":
        assert [c.receptors for c in conditions(f"hormone receptor{dash}positive disease")] == [(("HR", "positive"),)]
    # a comma between two statuses that end no longer list is one subgroup too (session 17)
    assert [c.receptors for c in conditions("estrogen receptor-positive, progesterone receptor\u2013negative")] == [
        (("ER", "positive"), ("PR", "negative"))]
    assert [c.receptors for c in conditions("ER\u2013positive tumours")] == [(("ER", "positive"),)]
    assert [c.text for c in conditions("ER\u2013positive tumours")] == ["ER\u2013positive"]  # shown as written
    case = case_from_facts(CaseFacts(cancer_type="hormone receptor\u2013positive breast cancer"))
    assert case.receptors["HR"] == "positive"


def test_stage_lists_and_ranges_in_sentences_and_headings():
    spans_ = {t: [(c.lo, c.hi) for c in conditions(t) if c.family == "stage"] for t in (
        "Stages I, II, and III HER2-Positive Breast Cancer", "stage I, II, or III", "stages II\u2013III",
        "stages II and III", "For stage III, 3 months of CAPOX is used.")}
    assert spans_ == {"Stages I, II, and III HER2-Positive Breast Cancer": [(10, 39)], "stage I, II, or III": [(10, 39)],
                      "stages II\u2013III": [(20, 39)], "stages II and III": [(20, 39)],
                      "For stage III, 3 months of CAPOX is used.": [(30, 39)]}
    iii = case_from_facts(CaseFacts(stage="III", stage_text="stage III"))
    assert assess("Trastuzumab is given.", iii, (PDQ_HER2_POS,)).verdict != "contradicts"


def test_surgery_named_as_the_treatment_does_not_apply_to_an_unresectable_case():
    # the audit's unresectable mesothelioma case was offered the localized disease's surgery sentences
    meso = case_from_facts(CaseFacts(cancer_type="mesothelioma", stage_text="unresectable"))
    operable = case_from_facts(CaseFacts(cancer_type="mesothelioma"))
    solitary = ("Solitary mesotheliomas are treated with surgical resection en bloc including contiguous structures "
                "to ensure wide disease-free margins.")
    assert assess(solitary, meso).reason == (
        "does not apply to this case: names surgery as the treatment (treated with surgical resection); the case is "
        "unresectable")
    for text in ("Intracavitary mesotheliomas are treated with extrapleural pneumonectomy.",
                 "Intracavitary chemotherapy after resection (under clinical evaluation).",
                 "Surgery is the treatment of choice for these small tumors."):
        assert assess(text, meso).verdict == "contradicts", text
    # not an alternative, not negated, not surgery after something else
    for text in ("Early lesions may be managed by surgery or by radiation therapy alone.",
                 "These tumours cannot be treated with surgery.",
                 "Nonoperative management instead of immediate surgical resection is the standard approach.",
                 "Patients were treated with chemotherapy followed by surgery.",
                 # about unresectable disease itself, or disease that came back after the surgery
                 "T-VEC is approved for intralesional injection into unresectable cutaneous lesions in patients with "
                 "melanoma that recurs after initial surgery.",
                 "Melanoma that recurs after initial surgery may be treated with T-VEC.",
                 "Chemotherapy with or without surgery (for unresectable progressive disease after surgery).",
                 "The trial included 166 patients with HCC (after prior resection or ablation).",
                 "Patients who have not received previous systemic therapy are candidates for first-line "
                 "chemotherapy, chemoimmunotherapy, or dual immune checkpoint inhibition."):
        assert assess(text, meso).verdict != "contradicts", text
    # for any other case it is no condition at all: neither a fit (which would rank it first) nor a qualifier
    assert assess(solitary, operable).verdict == "none"
    assert conditions(solitary)[0].family == "surgery"


def test_unstated_stage_is_qualified_and_extent_settings_are_judged():
    unstaged = case_from_facts(CaseFacts(cancer_type="colon cancer"))
    assert assess("For stage III, adjuvant FOLFOX is standard.", unstaged).reason == (
        "applies if stage III and early, operable setting (adjuvant) (not stated for this case)")
    # resected/resectable lines do not apply to an unresectable case, even when the stage fits
    unresectable = case_from_facts(CaseFacts(cancer_type="non-small cell lung cancer", stage="III",
                                             stage_text="stage IIIA, unresectable"))
    impower = "Atezolizumab after adjuvant chemotherapy improved disease-free survival (IMpower010)."
    assert assess(impower, unresectable, (PDQ_RESECTED,)).reason.endswith(  # after its own "adjuvant"'s reason
        "comes from the section “Treatment Options for Resected/Resectable Stage IIIA "
        "NSCLC”; the case is stage IIIA, unresectable")
    assert assess(impower, case_from_facts(CaseFacts(stage="III", stage_text="stage IIIA")),
                  (PDQ_RESECTED,)).verdict == "fits"
    # adjuvant or postoperative treatment follows surgery: not for an unresectable case (the audit's unresectable
    # IIIA case was offered the resected chest wall tumours' "Adjuvant chemotherapy is recommended, ..."), unless
    # it follows (chemo)radiation
    chest_wall = "Adjuvant chemotherapy is recommended, and radiation therapy is reserved for unclear resection margins."
    assert assess(chest_wall, unresectable).reason == (
        "does not apply to this case: states the early, operable setting (adjuvant); the case is stage IIIA, "
        "unresectable")
    assert assess(chest_wall, case_from_facts(CaseFacts(stage="III", stage_text="stage IIIA"))).verdict == "fits"
    assert assess("Adjuvant treatment after chemoradiation therapy.", unresectable).verdict == "fits"
    assert assess("Neoadjuvant chemotherapy was given.", unresectable).verdict == "fits"  # before surgery: not ruled out
    # muscle-invasive vs non-muscle-invasive bladder cancer
    mibc = case_from_facts(CaseFacts(cancer_type="urothelial carcinoma", stage_text="muscle-invasive"))
    nmibc = case_from_facts(CaseFacts(cancer_type="urothelial carcinoma", stage_text="non\u2013muscle-invasive"))
    bcg = "For non-muscle-invasive tumours, intravesical BCG is standard."
    cystectomy = "Muscle-invasive disease is treated with neoadjuvant chemotherapy and radical cystectomy."
    assert assess(bcg, mibc).reason == "does not apply to this case: states non-muscle-invasive; the case is muscle-invasive"
    assert assess(cystectomy, nmibc).verdict == "contradicts"
    assert assess(bcg, nmibc).verdict == "fits"


def test_markdown_emphasis_around_a_gene_is_read():
    text = "Patients with metastatic NSCLC and *EGFR* variants (*EGFR* exon 19 deletion or *EGFR* L858R) benefit."
    assert [c.text for c in conditions(text)] == ["metastatic", "EGFR variants", "EGFR exon 19 deletion", "EGFR L858R"]
    assert [c.text for c in conditions("*KRAS*-altered tumours")] == ["KRAS-altered"]
    alk = case_from_facts(CaseFacts(cancer_type="non-small cell lung cancer", stage="IV", stage_text="stage IV",
                                    markers=("ALK rearrangement",), genes=("ALK",)))
    assert assess(text, alk).verdict == "contradicts"


def test_a_lone_therapy_for_a_subgroup_states_the_sentences_condition():
    """'<therapy> for <condition>' is one option's condition only beside other options; alone it is the sentence's
    ("Trastuzumab for HER2-positive disease is standard" had been kept for a HER2-zero case with a note, and
    "Neoadjuvant immunotherapy for dMMR colon cancer ..." fitted a case whose MMR status is not stated)."""
    from engine.casefit import assess, case_from_facts
    from engine.facts import extract_facts

    def case(text: str):
        return case_from_facts(extract_facts(text, genes=["HER2", "BRCA1", "BRCA2"], treatment_keywords=[],
                                             rare_cancers=[]))

    her2_zero = case("Metastatic breast cancer, HER2 IHC 0, ER positive. First line?")
    assert assess("Trastuzumab for HER2-positive disease is standard.", her2_zero).verdict == "contradicts"
    assert assess("Olaparib for germline BRCA carriers is an option.", her2_zero).verdict == "unknown"
    colon = case("Stage III colon cancer after resection. Adjuvant?")
    assert assess("Neoadjuvant immunotherapy for dMMR colon cancer is being studied.", colon).verdict == "unknown"
    # beside another option it stays that option's condition
    listed = assess("Options include endocrine therapy, or trastuzumab for HER2-positive disease.", her2_zero)
    assert listed.verdict == "none" and "the option for HER2-positive does not apply" in listed.note


def test_pdq_pathogenic_variant_wording_and_codon_level_variants():
    """PDQ writes "pathogenic variant" (223 times) and often a codon without its substitution ("BRAF V600 pathogenic
    variants"). The options item "BRAF inhibitors (for patients who test positive for the BRAF V600 pathogenic
    variant)" had no condition, so a V600E melanoma case ranked it below trial demographics."""
    v600e = case_of("Metastatic cutaneous melanoma, BRAF V600E mutation, ECOG 0.")
    item = ("[BRAF inhibitors](/x#_701) (for patients who test positive for the *BRAF* V600 pathogenic variant).")
    assert assess(item, v600e).verdict == "fits"  # V600 covers V600E
    assert assess("Dabrafenib is for *BRAF* V600E pathogenic variants.", v600e).verdict == "fits"
    assert assess("Binimetinib is for *NRAS* Q61 pathogenic variants.", v600e).verdict == "contradicts"  # drivers
    assert assess("Vemurafenib is for *BRAF* V600K pathogenic variants.", v600e).verdict == "contradicts"
    wild = case_of("Metastatic melanoma, BRAF wild-type.")
    assert assess(item, wild).verdict == "contradicts"
    # the case names only the codon: a sentence asking for one substitution is not contradicted, nor known to fit
    codon = case_of("Metastatic melanoma with a BRAF V600 mutation.")
    assert assess("Vemurafenib is for *BRAF* V600E pathogenic variants.", codon).verdict == "unknown"
    assert assess(item, codon).verdict == "fits"
    assert assess("Olaparib is for germline *BRCA2* pathogenic variants.", case_of(
        "Metastatic pancreatic cancer, germline BRCA2 mutation.")).verdict == "fits"


def test_a_sentences_own_setting_does_not_lift_its_sections_stage_group():
    """"Treatment options for stage I bladder cancer include: 1. TUR with fulguration followed by an immediate
    postoperative instillation of intravesical chemotherapy." The item's "postoperative" (a setting) had replaced
    its section's stage I, so a stage II case was offered it first (audit, muscle-invasive cT2N0M0). A setting still
    overrides a section's extent in words ("Advanced or Metastatic Disease")."""
    item = ("[Transurethral resection (TUR) with fulguration followed by an immediate postoperative instillation of "
            "intravesical chemotherapy](/types/bladder/hp/bladder-treatment-pdq#_69).")
    stage_ii = case_from_facts(CaseFacts(cancer_type="urothelial carcinoma", stage="II",
                                         stage_text="cT2N0M0, muscle-invasive"))
    fit = assess(item, stage_ii, ("## Treatment of Stage I Bladder Cancer > ### Treatment Options for Stage I "
                                  "Bladder Cancer",))
    assert fit.verdict == "contradicts" and "Stage I Bladder Cancer" in fit.reason
    stage_i = case_from_facts(CaseFacts(cancer_type="urothelial carcinoma", stage="I", stage_text="stage I"))
    assert assess(item, stage_i, ("## Treatment of Stage I Bladder Cancer",)).verdict == "fits"
    # the sentence's own setting still speaks for it under a section named by its extent in words
    colon_iii = case_from_facts(CaseFacts(cancer_type="colon cancer", stage="III", stage_text="stage III"))
    assert assess("Adjuvant FOLFOX improved survival after resection.", colon_iii,
                  ("## Treatment by Stage > ### Advanced or Metastatic Disease",)).verdict != "contradicts"
