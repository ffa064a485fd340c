"""Claim-evidence ledger, release governor and evidence-locked mode: what a clinician would see released."""

from __future__ import annotations

import json
from dataclasses import replace

from engine.governor import decide, govern
from engine.graph import decision
from engine.ledger import build_ledger, split_claim
from engine.safety import locked_labels, locked_schema, parse_locked, passage_sentences, split_sentences, unlabel_locked
from engine.state import Draft, Passage, Recommendation
from tests.fakes import FakeKB, FakeModel, collect, make_engine

P1 = Passage("E1", "c1", "Pancreatic (Demo)", "p.md", "## Metastatic", None,
             "For patients with good performance status, first-line options include FOLFIRINOX, NALIRIFOX, or "
             "gemcitabine with nab-paclitaxel. Gemcitabine alone or best supportive care suits frail patients.",
             0.3, 6.0, True)
P_NOT = Passage("E2", "c2", "Pancreatic (Demo)", "p.md", "## Metastatic", None,
                "FOLFIRINOX is not recommended as first-line treatment for metastatic pancreatic adenocarcinoma, "
                "even with good performance status.", 0.3, 6.0, True)
FAITHFUL = "First-line options include FOLFIRINOX or gemcitabine with nab-paclitaxel for good performance status."
PANCREAS_T1 = "Pancreatic adenocarcinoma, what are the first-line options?"


def ledger_for(*recs: tuple[str, tuple[str, ...]], passages=(P1,), scorer=None, confidence=0.9):
    draft = Draft("Metastatic pancreatic adenocarcinoma.", tuple(Recommendation(t, e) for t, e in recs))
    return govern(build_ledger(draft, passages, scorer), confidence, 0.3)


def states(ledger) -> list[str]:
    return [c.state for c in ledger.claims]


# -- claim split and support ------------------------------------------------------------------------------------
def test_multi_sentence_recommendation_becomes_atomic_claims_each_judged_alone():
    ledger = ledger_for((FAITHFUL + " Give 85 mg/m2 of oxaliplatin every 14 days.", ("E1",)))
    assert [c.id for c in ledger.claims] == ["C1", "C2"] and [c.recommendation for c in ledger.claims] == [1, 1]
    assert states(ledger) == ["supported", "blocked"]  # the invented dose blocks only its own sentence
    assert any(r.startswith("dose") for r in ledger.claims[1].reasons)
    assert split_claim("Use A. Then B; Also C") == ["Use A.", "Then B;", "Also C"]
    assert len(split_claim("Endocrine therapy, e.g. Tamoxifen 20 mg daily.")) == 1


def test_support_score_is_lexical_coverage_and_unsupported_claims_are_blocked():
    ledger = ledger_for(("Consider hyperthermic intraperitoneal perfusion with radioactive microspheres.", ("E1",)))
    [claim] = ledger.claims
    assert claim.state == "blocked" and claim.support < 0.5 and "not supported" in claim.reasons[0]
    assert claim.links[0].verdict == "unsupported" and claim.links[0].cross_encoder is None


def test_partial_support_is_released_only_with_a_qualifier():
    ledger = ledger_for(("FOLFIRINOX suits patients with good performance status and adequate biliary drainage "
                         "and nutrition.", ("E1",)))
    [claim] = ledger.claims
    assert 0.5 <= claim.support < 0.7 and claim.state == "qualified" and "partly supported" in claim.reasons[0]


def test_low_retrieval_confidence_qualifies_an_otherwise_supported_claim():
    assert states(ledger_for((FAITHFUL, ("E1",)), confidence=0.1)) == ["qualified"]


def test_cross_encoder_vetoes_off_topic_passages_and_scoring_errors_defer():
    off_topic = ledger_for((FAITHFUL, ("E1",)), scorer=lambda q, texts: [-9.0] * len(texts))
    assert states(off_topic) == ["blocked"] and off_topic.claims[0].links[0].verdict == "off_topic"
    assert off_topic.method.startswith("cross-encoder")

    def broken(q, texts):
        raise RuntimeError("onnx session died")

    failed = ledger_for((FAITHFUL, ("E1",)), scorer=broken)
    assert states(failed) == ["deferred"] and "could not be scored" in failed.claims[0].reasons[0]
    assert failed.claims[0].links[0].verdict == "unscored"


def test_an_evidence_locked_claim_is_not_vetoed_as_off_topic_by_its_own_passage():
    """A verbatim sentence of the passage it cites ("The FDA approved sotorasib ...") had been blocked because the
    cross-encoder scored the long passage low against it; a free-text claim still is vetoed."""
    sentence = "Gemcitabine alone or best supportive care suits frail patients."
    draft = Draft("Metastatic pancreatic adenocarcinoma.",
                  (Recommendation(sentence, ("E1",), sentence_ids=("E1.s2",)),))
    locked = govern(build_ledger(draft, (P1,), lambda q, texts: [-9.0] * len(texts), evidence_locked=True), 0.9, 0.3)
    assert states(locked) == ["supported"] and locked.claims[0].links[0].verdict == "supports"
    assert locked.claims[0].links[0].cross_encoder == -9.0  # still shown
    free = ledger_for((sentence, ("E1",)), scorer=lambda q, texts: [-9.0] * len(texts))
    assert states(free) == ["blocked"]


def test_a_nan_cross_encoder_score_is_not_on_topic():
    """``nan < CE_ON_TOPIC`` is False: a NaN logit used to leave the claim supported by a passage never judged."""
    nan = ledger_for((FAITHFUL, ("E1",)), scorer=lambda q, texts: [float("nan")] * len(texts))
    assert states(nan) == ["blocked"] and nan.claims[0].links[0].verdict == "off_topic"
    half = ledger_for((FAITHFUL, ("E1", "E2")), passages=(P1, replace(P_NOT, text=P1.text)),
                      scorer=lambda q, texts: [float("nan"), 6.0])
    assert [link.verdict for link in half.claims[0].links] == ["off_topic", "supports"]


def test_contradicted_claim_is_blocked_and_the_contradiction_is_recorded():
    ledger = ledger_for(("FOLFIRINOX is recommended as first-line treatment for metastatic pancreatic "
                         "adenocarcinoma with good performance status.", ("E2",)), passages=(P1, P_NOT))
    assert states(ledger) == ["blocked"] and "states the opposite" in ledger.claims[0].reasons[0]
    [x] = ledger.contradictions
    assert x.claim_id == "C1" and x.other == "E2" and x.strong and "not recommended" in x.detail


def test_a_draft_that_contradicts_itself_is_not_released_as_is():
    ledger = ledger_for((FAITHFUL, ("E1",)),
                        ("FOLFIRINOX is not a first-line option for good performance status.", ("E1",)))
    # C2 says the opposite of its passage (blocked); C1 is supported but conflicts with C2: a reviewer decides
    assert states(ledger) == ["deferred", "blocked"]
    assert {(x.claim_id, x.other) for x in ledger.contradictions} == {("C1", "C2"), ("C2", "E1")}
    assert ledger.claims[0].reasons == ("conflicts with claim C2",)


def test_different_populations_are_not_a_contradiction():
    p = Passage("E1", "c", "Colon", "c.md", "## Adjuvant", None,
                "Adjuvant chemotherapy is recommended for stage III colon cancer. Adjuvant chemotherapy is not "
                "recommended for stage I colon cancer.", 0.3, 5.0, True)
    ledger = ledger_for(("Adjuvant chemotherapy is recommended for stage III colon cancer.", ("E1",)), passages=(p,))
    assert states(ledger) == ["supported"] and not ledger.contradictions


def test_an_ungoverned_claim_is_never_released():
    raw = build_ledger(Draft("x", (Recommendation(FAITHFUL, ("E1",)),)), [P1], None)
    assert states(raw) == ["blocked"]  # the default is the safe one
    assert decide(raw.claims[0], raw, 0.9, 0.3)[0] == "supported"


# -- evidence-locked mode ---------------------------------------------------------------------------------------
def test_locked_schema_enumerates_sentence_ids_and_parse_quotes_them_verbatim():
    ids = list(passage_sentences([P1, P_NOT]))
    assert ids == ["E1.s1", "E1.s2", "E2.s1"]
    schema = locked_schema(ids)
    assert schema["properties"]["sentences"]["items"]["enum"] == ids and schema["required"] == ["sentences"]
    draft, why = parse_locked('{"sentences": ["E1.s2", "E1.s1", "E1.s2"]}', [P1, P_NOT])
    assert why == "" and [r.sentence_ids for r in draft.recommendations] == [("E1.s2",), ("E1.s1",)]
    assert draft.recommendations[0].text == split_sentences(P1.text)[1]  # verbatim
    assert parse_locked('{"sentences": ["E9.s1"]}', [P1])[0] is None
    assert parse_locked('{"sentences": []}', [P1])[0] is None
    assert parse_locked('{"assessment": "free text", "recommendations": []}', [P1])[0] is None


def test_locked_labels_number_sentences_as_offered_and_map_back_to_ids():
    """The model picks labels numbered in the offered order (best fit first); the draft quotes the sentence ids."""
    labels = locked_labels(["E7.s1", "E1.s2", "E3.s4"])
    assert labels == {"S1": "E7.s1", "S2": "E1.s2", "S3": "E3.s4"}
    assert json.loads(unlabel_locked('{"sentences": ["S2", "S1"]}', labels)) == {"sentences": ["E1.s2", "E7.s1"]}
    # an id that is no label is kept for the parser to judge; text that is no locked answer is left as it is
    assert json.loads(unlabel_locked('{"sentences": ["S9", "E1.s2"]}', labels)) == {"sentences": ["S9", "E1.s2"]}
    assert unlabel_locked("I think S1.", labels) == "I think S1."
    assert parse_locked(unlabel_locked('{"sentences": ["S9"]}', labels), [P1])[0] is None  # unknown: rejected


def test_locked_consult_releases_only_quoted_guideline_sentences(tmp_path):
    model = FakeModel(outputs=['{"sentences": ["S1"]}'])
    engine, model, _ = make_engine(tmp_path, model=model, overrides={"engine.evidence_locked": "auto"})
    events = collect(lambda: engine.stream("PT-0001", PANCREAS_T1))
    final = [e for e in events if e.kind == "Final"][0]
    assert final.status == "released"
    # the case states no stage and the quoted line is for metastatic disease: released qualified (engine/casefit.py)
    assert "[E1.s1] — **qualified:** applies if metastatic" in final.report
    assert "Evidence-locked answer" in final.report
    sentence = split_sentences(FakeKB().docs[0].text)[0]
    assert sentence in final.report  # quoted verbatim
    prompt = model.prompts[0][-1]["content"]
    assert f"[S1] {sentence}" in prompt and "<sentences>" in prompt
    state = engine.store.latest("PT-0001").state
    assert state.evidence_locked and state.ledger.evidence_locked  # checkpointed with the state


def test_locked_mode_follows_the_profile_flag_unless_forced(tmp_path):
    from engine.config import Settings
    from engine.nodes.specialist import evidence_locked

    s = Settings()
    assert evidence_locked(s, "smollm2") and evidence_locked(s, "qwen-coder")  # tiny embedded tiers: on
    assert not evidence_locked(s.with_overrides({"engine.evidence_locked": "off"}), "smollm2")
    big = s.with_overrides({"models.profiles.big": {"backend": "openai", "base_url": "http://127.0.0.1:1/v1"}})
    assert not evidence_locked(big, "big") and evidence_locked(big.with_overrides({"engine.evidence_locked": "on"}),
                                                               "big")


def test_locked_mode_with_a_free_text_answer_fails_closed(tmp_path):
    model = FakeModel(outputs=[json.dumps({"assessment": "x", "recommendations": [
        {"text": "Give wonderdrugumab 500 mg.", "evidence": ["E1"]}], "caveats": [], "missing_information": []})])
    engine, _, _ = make_engine(tmp_path, model=model, overrides={"engine.evidence_locked": "on"})
    final = [e for e in collect(lambda: engine.stream("PT-0001", PANCREAS_T1)) if e.kind == "Final"][0]
    assert final.status == "refused" and "wonderdrugumab" not in final.report


# -- governor in the graph --------------------------------------------------------------------------------------
def test_blocked_claims_never_appear_as_recommendations_but_are_listed_as_withheld(tmp_path):
    text = ("FOLFIRINOX or gemcitabine plus nab-paclitaxel are first-line options for metastatic pancreatic "
            "adenocarcinoma with good performance status. Add wonderdrugumab 500 mg weekly.")
    raw = json.dumps({"assessment": "Metastatic pancreatic adenocarcinoma.", "caveats": [],
                      "missing_information": [], "recommendations": [{"text": text, "evidence": ["E1"]}]})
    engine, model, _ = make_engine(tmp_path, model=FakeModel(outputs=[raw]))
    events = collect(lambda: engine.stream("PT-0001", PANCREAS_T1))
    final = [e for e in events if e.kind == "Final"][0]
    assert model.calls == 3  # the critic asked for fixes first
    assert final.status == "released"
    recs = final.report.split("## Recommendations")[1].split("##")[0]
    assert "FOLFIRINOX" in recs and "wonderdrugumab" not in recs
    withheld = final.report.split("## Withheld (not released)")[1].split("##")[0]
    assert "C2 (from the draft's recommendation 1; not in the list above) — blocked" in withheld
    state = engine.store.latest("PT-0001").state
    assert [c.state for c in state.ledger.claims] == ["qualified", "blocked"]  # no stage stated; the line is metastatic


def test_every_claim_blocked_is_a_safe_refusal_naming_the_rules(tmp_path):
    raw = json.dumps({"assessment": "x", "caveats": [], "missing_information": [], "recommendations": [
        {"text": "Wonderdrugumab always cures pancreatic cancer.", "evidence": ["E1"]}]})
    engine, _, _ = make_engine(tmp_path, model=FakeModel(outputs=[raw]))
    final = [e for e in collect(lambda: engine.stream("PT-0001", PANCREAS_T1)) if e.kind == "Final"][0]
    assert final.status == "refused" and "blocked by the release governor" in final.report
    assert "absolute" in final.report


def test_deferred_claim_waits_for_a_reviewer_with_the_reason(tmp_path):
    from engine.graph import decision

    raw = json.dumps({"assessment": "Metastatic pancreatic adenocarcinoma.", "caveats": [],
                      "missing_information": [], "recommendations": [
                          {"text": "FOLFIRINOX or gemcitabine plus nab-paclitaxel are first-line options for "
                                   "metastatic pancreatic adenocarcinoma.", "evidence": ["E1"]},
                          {"text": "FOLFIRINOX is not a first-line option for metastatic pancreatic "
                                   "adenocarcinoma.", "evidence": ["E1"]}]})
    engine, _, _ = make_engine(tmp_path, model=FakeModel(outputs=[raw]))
    events = collect(lambda: engine.stream("PT-0001", PANCREAS_T1))
    [hitl] = [e for e in events if e.kind == "HitlRequired"]
    assert any(r.startswith("Claim C1 deferred") for r in hitl.reasons)
    assert not any(e.kind == "Final" for e in events)
    [item] = engine.store.approvals()
    assert "deferred to a reviewer (not released)" in item.preview
    final = [e for e in collect(lambda: engine.resume("PT-0001", decision("approve", "dr.review")))
             if e.kind == "Final"][0]
    assert "deferred, released by reviewer dr.review" in final.report


def test_caveat_naming_an_invented_drug_is_withheld(tmp_path):
    from tests.fakes import GOOD_DRAFT

    data = json.loads(GOOD_DRAFT)
    data["caveats"] = ["Add wonderdrugumab 500 mg if the response is poor."]
    engine, _, _ = make_engine(tmp_path, model=FakeModel(outputs=[json.dumps(data)]))
    final = [e for e in collect(lambda: engine.stream("PT-0001", PANCREAS_T1)) if e.kind == "Final"][0]
    assert final.status == "released" and "wonderdrugumab" not in final.report
    assert "caveat/missing-information line(s)" in final.report


def test_export_lists_every_claim_with_its_state(tmp_path):
    from oncotui.export import consult_markdown

    text = ("FOLFIRINOX or gemcitabine plus nab-paclitaxel are first-line options for metastatic pancreatic "
            "adenocarcinoma with good performance status. Add wonderdrugumab 500 mg weekly.")
    raw = json.dumps({"assessment": "Metastatic pancreatic adenocarcinoma.", "caveats": [],
                      "missing_information": [], "recommendations": [{"text": text, "evidence": ["E1"]}]})
    engine, _, _ = make_engine(tmp_path, model=FakeModel(outputs=[raw]))
    collect(lambda: engine.stream("PT-0001", PANCREAS_T1))
    md = consult_markdown(engine.store, "PT-0001")
    claims = md.split("## Claims")[1].split("## Evidence")[0]
    assert "| C1 | **qualified** | 1.00 | E1 |" in claims  # no stage stated; the line is for metastatic disease
    assert "| C2 | **blocked** |" in claims and "drug: claim C2 names 'wonderdrugumab'" in claims


def test_a_true_sentence_about_another_cancer_is_not_released_for_this_case():
    melanoma = Passage("E2", "c9", "Cutaneous Melanoma: Treatment Overview (Demo)", "m.md", "## Advanced", None,
                       "First-line immunotherapy is preferred for most patients regardless of BRAF status: "
                       "nivolumab with ipilimumab.", 0.27, 2.8, True)
    quote = "First-line immunotherapy is preferred for most patients regardless of BRAF status: nivolumab with " \
            "ipilimumab."
    draft = Draft("x", (Recommendation(FAITHFUL, ("E1",)), Recommendation(quote, ("E2",))))
    pancreatic = govern(build_ledger(draft, [P1, melanoma], None, cancer_type="pancreatic adenocarcinoma"), 0.9, 0.3)
    assert states(pancreatic) == ["supported", "blocked"]
    assert "another cancer" in pancreatic.claims[1].reasons[0] and not pancreatic.claims[1].links[0].on_case
    unknown = govern(build_ledger(draft, [P1, melanoma], None, cancer_type=None), 0.9, 0.3)
    assert states(unknown) == ["supported", "supported"]  # no case type: nothing to compare with


def test_an_uncited_passage_that_says_the_opposite_defers_the_claim():
    """Citing only the agreeing passage does not hide the one that disagrees: a reviewer decides."""
    ledger = ledger_for(("FOLFIRINOX is a first-line option for metastatic pancreatic adenocarcinoma with good "
                         "performance status.", ("E1",)), passages=(P1, P_NOT))
    assert states(ledger) == ["deferred"] and "possible contradiction with E2" in ledger.claims[0].reasons[0]
    assert [(x.other, x.strong) for x in ledger.contradictions] == [("E2", False)]


def test_a_negation_giving_a_reason_is_not_a_contradiction():
    """The audit's rectal answer was deferred: a quoted sentence saying why an approach was studied ("because many
    patients do not receive ...") was read as saying the opposite of "... is also an option"."""
    from engine.ledger import CONTRADICTION_OVERLAP, conflict
    option = "Total neoadjuvant therapy (chemotherapy followed by chemoradiation) is also an option."
    reason = ("The total neoadjuvant approach was studied in clinical trials because data showed that many patients do "
              "not receive all of the recommended chemotherapy when given after surgery.")
    assert conflict(reason, option) == 0.0
    # a negation in the main clause still is one, with or without a reason after it
    assert conflict("Total neoadjuvant therapy is not an option because of toxicity.", option) >= CONTRADICTION_OVERLAP
    assert conflict("If tolerated, total neoadjuvant therapy is not an option.", option) >= CONTRADICTION_OVERLAP


def test_another_cancers_passage_does_not_contradict_the_claim():
    """The audit's CML consult was deferred: "possible contradiction" with a sentence of the AML summary."""
    cml = Passage("E1", "c", "Chronic Myeloid Leukemia Treatment (PDQ®) - NCI", "cml.md", "## Chronic Phase", None,
                  "Imatinib is recommended as initial therapy for chronic phase disease.", 0.2, 5.0, True)
    aml = Passage("E2", "a", "Acute Myeloid Leukemia Treatment (PDQ®) - NCI", "aml.md", "## Induction", None,
                  "Imatinib is not recommended as initial therapy for this disease.", 0.3, 4.0, True)
    draft = Draft(assessment="", recommendations=(Recommendation(
        "Imatinib is recommended as initial therapy for chronic phase disease.", ("E1",)),))
    on = build_ledger(draft, (cml, aml), None, cancer_type="chronic myeloid leukemia")
    assert not on.contradictions
    # without a known cancer type every passage still counts
    assert build_ledger(draft, (cml, aml), None).contradictions


def test_never_smokers_is_no_negation():
    """The audit's EGFR case was deferred: "(particularly those from East Asia, never smokers, ...) may benefit from
    EGFR TKIs" was read as the opposite of the quoted EGFR TKI options item."""
    from engine.ledger import CONTRADICTION_OVERLAP, conflict, negative
    benefit = ("Patients with sensitizing variants in exon 19 or exon 21 of EGFR (particularly those from East Asia, "
               "never smokers, and those with adenocarcinoma) may benefit from EGFR tyrosine kinase inhibitors.")
    assert not negative(benefit) and not negative("A never-smoker with adenocarcinoma.")
    assert conflict("EGFR tyrosine kinase inhibitors (for patients with EGFR variants).", benefit) == 0.0
    assert negative("EGFR inhibitors should never be given with this drug.")
    assert conflict("EGFR tyrosine kinase inhibitors are never beneficial for patients with EGFR variants.",
                    "EGFR tyrosine kinase inhibitors are beneficial for patients with EGFR variants.") >= \
        CONTRADICTION_OVERLAP


def test_the_export_of_a_consult_waiting_for_a_reviewer_labels_its_claims_a_draft(tmp_path):
    """Its claims table read "**supported**" under "## Claims" with nothing saying they were not released."""
    from oncotui.export import consult_markdown

    engine, _, _ = make_engine(tmp_path)
    collect(lambda: engine.stream("PT-0001", "58-year-old with stage IV pancreatic adenocarcinoma, KRAS G12D "
                                             "and germline BRCA2 mutation, ECOG 1. First-line options?"))
    [item] = engine.store.approvals("pending")
    md = consult_markdown(engine.store, "PT-0001")
    assert "## Draft claims, NOT YET RELEASED" in md and "\n## Claims\n" not in md
    collect(lambda: engine.resume("PT-0001", decision("approve", "dr.review", "ok"), item.consult_id))
    md = consult_markdown(engine.store, "PT-0001")
    assert "\n## Claims\n" in md and "NOT YET RELEASED" not in md
