"""A reviewer's note and edits are redacted with numbers after the case's and the draft's placeholders, so a
placeholder in the note can never be read as one of the case (the same record holds both)."""

from __future__ import annotations

from engine.graph import decision
from engine.phi import PLACEHOLDER_RE
from tests.fakes import collect, make_engine

# the case names the patient, a doctor and the date of birth
CASE = ("Patient Harriet Quellwood, DOB 03/04/1961, seen by Dr. Anna Kowalski on 02/11/2025. 58-year-old with "
        "stage IV pancreatic adenocarcinoma, KRAS G12D and germline BRCA2 mutation, ECOG 1. First-line options?")
NOTE = ("Discussed with Johnathan Smithers (MRN 12345678) and his wife Margaret at 617-555-0199 on 01/07/2025 "
        "and again on 01/10/2025")
RAW = ("Johnathan", "Smithers", "12345678", "Margaret", "617-555-0199", "01/07/2025", "01/10/2025")


def _max(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in PLACEHOLDER_RE.finditer(text):
        out[m.group(1)] = max(out.get(m.group(1), 0), int(m.group(2)))
    return out


def _waiting(tmp_path):
    engine, _, _ = make_engine(tmp_path)
    collect(lambda: engine.stream("PT-0001", CASE))
    [item] = engine.store.approvals("pending")
    case_text = engine.store.latest("PT-0001").state.case_text
    assert "Quellwood" not in case_text and "Kowalski" not in case_text and "03/04/1961" not in case_text
    assert "[PERSON_2]" in case_text and "[DATE_1]" in case_text  # the doctor, the date of birth
    return engine, item, case_text + "\n" + item.preview


def _new_numbers_only(text: str, seen: dict[str, int]) -> None:
    for m in PLACEHOLDER_RE.finditer(text):
        assert int(m.group(2)) > seen.get(m.group(1), 0), (m.group(), text)


def test_the_approve_note_is_numbered_after_the_case(tmp_path):
    engine, item, shown = _waiting(tmp_path)
    seen = _max(shown)
    collect(lambda: engine.resume("PT-0001", decision("approve", "dr.review", NOTE)))
    record = engine.store.decision_record(item.id)
    stored = engine.store.approval(item.id).note
    for text in (record.note, stored):
        assert not any(r in text for r in RAW), text
        _new_numbers_only(text, seen)
    p, d = seen["PERSON"], seen["DATE"]
    assert record.note == (f"Discussed with [PERSON_{p + 1}] (MRN [ID_{seen.get('ID', 0) + 1}]) and his wife "
                           f"[PERSON_{p + 2}] at [PHONE_{seen.get('PHONE', 0) + 1}] on [DATE_{d + 1}] and again "
                           f"on [DATE_{d + 2} (+3 days from DATE_{d + 1})]")


def test_edited_text_is_numbered_after_the_case_the_draft_and_the_note(tmp_path):
    engine, item, shown = _waiting(tmp_path)
    edited = "FOLFIRINOX is a first-line option [E1]. Confirmed with Dr. Olaf Brennerman on 01/08/2025."
    events = collect(lambda: engine.resume("PT-0001", decision("approve_with_edits", "dr.review", NOTE,
                                                               edited_text=edited)))
    [final] = [e for e in events if e.kind == "Final"]
    record = engine.store.decision_record(item.id)
    _new_numbers_only(record.note, _max(shown))
    before = _max(shown + "\n" + record.note)
    assert "Brennerman" not in final.report and "01/08/2025" not in final.report
    [released] = [line for line in final.report.splitlines() if "Confirmed with" in line]
    _new_numbers_only(released, before)
    assert f"Dr. [PERSON_{before['PERSON'] + 1}] on [DATE_{before['DATE'] + 1}]." in released, released


def test_lines_of_the_draft_left_as_they_were_are_not_redacted_again(tmp_path):
    """Re-redacting the whole edited text had turned the footer's "Qwen2.5" and PDQ's "Roswell Park regimen"
    into [PERSON_n] though the reviewer never touched them; only the lines they changed or added are
    redacted."""
    engine, item, shown = _waiting(tmp_path)
    kept = "Per the Roswell Park regimen, leucovorin is given weekly [E1]."
    # as if the draft shown had quoted it (the redactor reads "Roswell Park" as a name)
    with engine.store.db.conn:
        engine.store.db.conn.execute("UPDATE approvals SET preview = ? WHERE id = ?",
                                     (item.preview + "\n" + kept, item.id))
    edited = item.preview + "\n" + kept + "\nConfirmed with Dr. Olaf Brennerman on 01/08/2025."
    events = collect(lambda: engine.resume("PT-0001", decision("approve_with_edits", "dr.review", "ok",
                                                               edited_text=edited)))
    [final] = [e for e in events if e.kind == "Final"]
    assert kept in final.report
    assert "Brennerman" not in final.report and "01/08/2025" not in final.report
