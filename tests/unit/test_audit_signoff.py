"""Sign-off rules, enforced by the engine: only reviewers sign, no self-approval by default, and what a decision
records."""

from __future__ import annotations

import hashlib

import pytest

from engine.config import ConfigError, Settings
from engine.graph import decision
from engine.signoff import SignOffError
from tests.fakes import PANCREAS_PASSAGE, collect, make_engine

TIER2 = ("58-year-old with stage IV pancreatic adenocarcinoma, KRAS G12D and germline BRCA2 mutation, ECOG 1. "
         "First-line options?")
TEAM = [{"id": "dr.ask", "role": "oncologist"}, {"id": "dr.review", "role": "tumour board chair"}]


def waiting(tmp_path, **overrides):
    engine, _, _ = make_engine(tmp_path, overrides={"hitl.clinician": "dr.ask", "hitl.reviewers": TEAM,
                                                    **overrides})
    collect(lambda: engine.stream("PT-0001", TIER2))
    [item] = engine.store.approvals("pending")
    return engine, item


def test_a_non_reviewer_cannot_sign_and_nothing_is_released(tmp_path):
    engine, item = waiting(tmp_path)
    for action in ("approve", "reject"):
        with pytest.raises(SignOffError, match="dr.intern is not a reviewer.*dr.review \\(tumour board chair\\)"):
            collect(lambda: engine.resume("PT-0001", decision(action, "dr.intern")))
    assert engine.store.approval(item.id).status == "pending"
    assert engine.store.latest("PT-0001").next_node == "__halt__"
    assert [e.kind for e in engine.store.audit.entries()].count("decision") == 0


def test_the_clinician_who_asked_cannot_approve_by_default_but_may_reject(tmp_path):
    engine, item = waiting(tmp_path)
    assert item.clinician == "dr.ask"
    with pytest.raises(SignOffError, match="dr.ask asked for this consult and cannot approve it"):
        collect(lambda: engine.resume("PT-0001", decision("approve", "dr.ask")))
    with pytest.raises(SignOffError, match="cannot approve"):
        collect(lambda: engine.resume("PT-0001", decision("approve_with_edits", "dr.ask", edited_text="x")))
    assert engine.store.approval(item.id).status == "pending"
    final = [e for e in collect(lambda: engine.resume("PT-0001", decision("reject", "dr.ask", "withdrawn")))
             if e.kind == "Final"][0]
    assert final.status == "refused" and engine.store.approval(item.id).status == "rejected"


def test_self_approval_when_configured(tmp_path):
    engine, item = waiting(tmp_path, **{"hitl.allow_self_approval": True})
    final = [e for e in collect(lambda: engine.resume("PT-0001", decision("approve", "dr.ask")))
             if e.kind == "Final"][0]
    assert final.status == "reviewed" and engine.store.approval(item.id).role == "oncologist"


def test_with_no_reviewer_list_anyone_but_the_asker_may_approve(tmp_path):
    engine, _, _ = make_engine(tmp_path, overrides={"hitl.clinician": "dr.ask"})
    collect(lambda: engine.stream("PT-0001", TIER2))
    with pytest.raises(SignOffError, match="cannot approve"):
        collect(lambda: engine.resume("PT-0001", decision("approve", "dr.ask")))
    collect(lambda: engine.resume("PT-0001", decision("approve", "dr.anyone")))
    [item] = engine.store.approvals(None)
    assert item.status == "approved" and item.reviewer == "dr.anyone" and item.role == "reviewer"


def test_the_decision_record_says_who_when_role_what_was_shown_and_the_note(tmp_path):
    engine, item = waiting(tmp_path)
    collect(lambda: engine.resume("PT-0001", decision("approve", "dr.review", "agree with FOLFIRINOX")))
    record = engine.store.decision_record(item.id)
    assert record is not None
    assert (record.reviewer, record.role, record.clinician, record.action, record.note) == (
        "dr.review", "tumour board chair", "dr.ask", "approve", "agree with FOLFIRINOX")
    assert record.at and record.os_user
    assert record.draft_sha256 == hashlib.sha256(item.preview.encode()).hexdigest()
    assert [(p.id, p.sha256) for p in record.evidence] == [
        ("E1", hashlib.sha256(PANCREAS_PASSAGE.encode()).hexdigest())]
    # the same record is chained into the audit log
    [entry] = engine.store.audit.entries(kind="decision")
    assert entry.actor == "dr.review" and entry.data["draft_sha256"] == record.draft_sha256
    assert entry.data["evidence"][0]["sha256"] == record.evidence[0].sha256
    decided = engine.store.approval(item.id)
    assert (decided.status, decided.reviewer, decided.role, decided.note) == (
        "approved", "dr.review", "tumour board chair", "agree with FOLFIRINOX")


def test_an_item_cannot_be_signed_twice(tmp_path):
    engine, item = waiting(tmp_path)
    collect(lambda: engine.resume("PT-0001", decision("approve", "dr.review")))
    with pytest.raises(Exception, match=rf"{item.id} was already decided \(approved by dr.review"):
        collect(lambda: engine.resume("PT-0001", decision("reject", "dr.review")))


def test_reviewer_ids_must_be_unique_in_config():
    with pytest.raises(ConfigError, match="reviewer ids must be unique"):
        Settings().with_overrides({"hitl.reviewers": [{"id": "a"}, {"id": "a", "role": "x"}]})


def test_edits_are_checked_by_the_critic_rules_recorded_and_shown_but_signed_as_written(tmp_path):
    engine, item = waiting(tmp_path)
    edited = ("FOLFIRINOX is a first-line option [E1]. Give niraparib 200 mg daily; it always works. "
              "Discuss at tumour board.")
    final = [e for e in collect(lambda: engine.resume("PT-0001", decision("approve_with_edits", "dr.review",
                                                                          edited_text=edited)))
             if e.kind == "Final"][0]
    assert final.status == "reviewed" and "Give niraparib 200 mg daily" in final.report
    record = engine.store.decision_record(item.id)
    assert record is not None
    assert {f.split(":")[0] for f in record.edit_findings} == {"absolute", "dose", "drug"}
    assert all("sentence 2 " in f for f in record.edit_findings)  # sentences 1 and 3 stay within the evidence
    assert "Checks on the reviewer's text" in final.report and "'niraparib'" in final.report
    [entry] = engine.store.audit.entries(kind="decision")
    assert entry.data["edit_findings"] == list(record.edit_findings)


def test_edits_that_stay_within_the_evidence_have_no_findings(tmp_path):
    engine, item = waiting(tmp_path)
    edited = "FOLFIRINOX is a first-line option for this patient [E1]. Discuss at tumour board."
    final = [e for e in collect(lambda: engine.resume("PT-0001", decision("approve_with_edits", "dr.review",
                                                                          edited_text=edited)))
             if e.kind == "Final"][0]
    assert engine.store.decision_record(item.id).edit_findings == ()
    assert "Checks on the reviewer's text" not in final.report
