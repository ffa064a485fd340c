"""Zero-PHI proof: consults on notes full of identifiers leave no identifier anywhere the product writes or sends.

Consults run through the real ``Engine`` (a recording fake model and an in-memory knowledge base stand in
for the backends).  After a Tier 1 consult, a Tier 2 consult that halts for review and is approved through
``engine.resume``, a follow-up on the same patient and an export, no identifier string may appear in:
every prompt the model saw, every query the knowledge base saw, every log record (all loggers, DEBUG),
every emitted event, every row of every table in the SQLite database (tables are enumerated from
``sqlite_master``, so tables added later are covered too), the stored checkpoints, the exported file, and
the raw bytes of every file under the data directory (the database, its journal/WAL, exports).

The notes are invented for this test.
"""

from __future__ import annotations

import dataclasses
import json
import re
import logging
import sqlite3
import zlib

import pytest

from oncotui.export import export_consult
from tests.fakes import FakeModel, collect, make_engine

TIER2_NOTE = """ONCOLOGY CONSULT NOTE
Patient: Harriet Quellwood      MRN: 00482913      Acct #: A-77120934
DOB: 04/17/1951      SSN: 123-45-6789
Address: 1187 Wexley Court, Apt 4B, Brookline, MA 02446
Phone: (617) 555-0142      Email: hquellwood@example.org
Referred by Dr. Tobias Renwick (St. Elsbeth Memorial Hospital) on March 3, 2024.

Pt. Quellwood has stage IV pancreatic adenocarcinoma with KRAS G12D and a germline BRCA2 mutation.
CT on 2024-02-27 showed liver metastases. Seen at Cobblestone Cancer Center on 14-Mar-2024 with her
daughter, Mrs. O'Neil. Her husband José Núñez can be reached at 617.555.0199 or jnunez@example.net.
ECOG 1. CA 19-9 1,250 U/mL. What are the first-line options?

Electronically signed: Marguerite Vasquez-Tillman, MD 03/15/2024 14:32
"""

TIER1_NOTE = """Mr. Bartholomew Fairweather, 58, seen 5/2/24 at Harborview Oncology Clinic,
22 Quarry Hill Rd, Salem, OR 97301 (fax 503-555-0101, MRN#: 7781-2231, licence D4471902).
Early hormone receptor-positive breast cancer, ER+/PR+, HER2-negative, T1cN0M0, stage IA after
lumpectomy on March 3rd, 2024. Adjuvant endocrine therapy: tamoxifen or an aromatase inhibitor? Wife
Ingrid Fairweather prefers calls on Tuesdays. Record 01/06/2025 reviewed by Nurse Pemberton. Pt. Smith
(roommate) also attended on 2024/11/05 at 09:30. Portal https://mychart.example.org/p/88231, device IP
10.2.33.41, pacemaker serial PM-4471-XQ. Last seen 5 Jan 2025 and Jan. 19, 2025. Account no. 4410-88-2231.
— J. Okafor, RN
"""

FOLLOW_UP = ("Follow-up for Mrs. Quellwood (MRN 00482913) on 04/02/2024: Dr. Renwick asks whether olaparib "
             "maintenance fits her pancreatic adenocarcinoma after platinum.")

REVIEWER_NOTE = "Discussed with Dr. Renwick by phone (617) 555-0142; agree."

# Each string must not appear anywhere; they are chosen to be distinctive (no clinical text contains them).
IDENTIFIERS = [
    "Harriet", "Quellwood", "00482913", "77120934", "04/17/1951", "123-45-6789", "1187 Wexley", "Wexley",
    "Brookline", "02446", "555-0142", "hquellwood@example.org", "Tobias", "Renwick", "Elsbeth", "March 3",
    "2024-02-27", "Cobblestone", "14-Mar-2024", "O'Neil", "José", "Núñez", "555-0199", "jnunez@example.net",
    "Marguerite", "Vasquez-Tillman", "Tillman", "03/15/2024", "Bartholomew", "Fairweather", "5/2/24",
    "Harborview", "Quarry Hill", "Salem", "97301", "555-0101", "7781-2231", "D4471902", "Ingrid",
    "01/06/2025", "Pemberton", "04/02/2024", "March 3rd", "Smith", "2024/11/05", "mychart.example.org", "88231",
    "10.2.33.41", "PM-4471-XQ", "5 Jan 2025", "Jan. 19", "4410-88-2231", "Okafor",
]
# clinical content that must survive redaction (so the test also shows the consult stayed useful)
CLINICAL = ["stage IV pancreatic adenocarcinoma", "KRAS G12D", "BRCA2", "ECOG 1", "CA 19-9 1,250 U/mL",
            "T1cN0M0", "HER2-negative", "tamoxifen", "olaparib", "Tuesdays", "stage IA"]


def _variants(needle: str) -> list[str]:
    """The string as written and as JSON escapes it (json.dumps writes non-ASCII as \\uXXXX)."""
    return list({needle, json.dumps(needle)[1:-1], json.dumps(needle, ensure_ascii=True)[1:-1]})


def _found(needle: str, text: str) -> bool:
    """A digits-only identifier (a ZIP code, an MRN) counts standing alone, not inside a longer run of digits or hex:
    "02446" turned up once inside a hash or a timestamp's microseconds in the audit log. Anything else: anywhere."""
    if needle.isdigit():
        return re.search(rf"(?<![0-9A-Fa-f]){needle}(?![0-9A-Fa-f])", text) is not None
    return any(v in text for v in _variants(needle))


def _leaks(where: str, text: str) -> list[str]:
    return [f"{where}: {n!r}" for n in IDENTIFIERS if _found(n, text)]


def _cell_text(value: object) -> str:
    if isinstance(value, bytes):
        try:
            value = zlib.decompress(value)
        except zlib.error:
            pass
        value = value.decode("utf-8", errors="ignore")
    text = str(value)
    try:  # JSON cells: also check the decoded form (escapes undone)
        text += "\n" + json.dumps(json.loads(text), ensure_ascii=False)
    except (ValueError, TypeError):
        pass
    return text


def _event_text(event: object) -> str:
    data = dataclasses.asdict(event) if dataclasses.is_dataclass(event) else vars(event)
    return type(event).__name__ + json.dumps(data, ensure_ascii=False, default=str)


@pytest.fixture
def every_logger_at_debug(caplog):
    """Root and every existing logger at DEBUG for the test; their levels come back afterwards (torch's loggers
    write at interpreter exit, and must not find DEBUG and pytest's closed capture stream)."""
    caplog.set_level(logging.DEBUG)  # root at DEBUG: every logger's records are captured
    loggers = [logging.getLogger(name) for name in list(logging.root.manager.loggerDict)]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.DEBUG)
    yield caplog
    for lg, level in zip(loggers, levels):
        lg.setLevel(level)


def test_no_identifier_reaches_a_model_log_event_database_checkpoint_or_export(tmp_path, every_logger_at_debug):
    caplog = every_logger_at_debug
    from engine.graph import decision

    data_dir = tmp_path / "data"
    engine, model, kb = make_engine(data_dir, model=FakeModel())
    events: list = []

    # Tier 1 consult
    events += collect(lambda: engine.stream("PT-0001", TIER1_NOTE))
    # Tier 2 consult: halts for a reviewer, then approved (with a note that names people) through resume
    t2 = collect(lambda: engine.stream("PT-0002", TIER2_NOTE))
    events += t2
    names = [type(e).__name__ for e in t2]
    assert "HitlRequired" in names and "Final" not in names, names  # it really halted at the gate
    events += collect(lambda: engine.resume("PT-0002", decision("approve", "reviewer-7", note=REVIEWER_NOTE)))
    finals = [e for e in events if type(e).__name__ == "Final"]
    assert finals and finals[-1].thread_id == "PT-0002" and finals[-1].status == "reviewed"
    # a follow-up on the same patient: earlier turns travel as history into the prompt
    events += collect(lambda: engine.stream("PT-0002", FOLLOW_UP))
    export = export_consult(engine.store, "PT-0002", data_dir / "exports",
                            consult_id=finals[-1].consult_id)

    # the redactor did its work without destroying the clinical content the model needs
    prompts = ["\n".join(str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in p)
               for p in model.prompts]
    assert prompts, "the model was never called"
    seen = "\n".join(prompts)
    for term in CLINICAL:
        assert term in seen, f"clinical content lost before the model: {term!r}"
    assert "[PERSON_" in seen and "[DATE_" in seen

    leaks: list[str] = []
    for i, p in enumerate(prompts):
        leaks += _leaks(f"prompt {i}", p)
    for q in kb.queries:
        leaks += _leaks("knowledge-base query", q)
    for rec in caplog.records:
        leaks += _leaks(f"log {rec.name}", rec.getMessage() + (rec.exc_text or ""))
    for e in events:
        leaks += _leaks(f"event {type(e).__name__}", _event_text(e))

    # every row of every table, whoever added the table
    conn = sqlite3.connect(engine.settings.db_path)
    try:
        tables = [r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")]
        assert {"checkpoints", "consults", "approvals"} <= set(tables), tables
        rows_seen = 0
        for table in tables:
            for row in conn.execute(f'select * from "{table}"'):
                rows_seen += 1
                for cell in row:
                    leaks += _leaks(f"table {table}", _cell_text(cell))
        assert rows_seen > 10
    finally:
        conn.close()

    # checkpoints through the store's own reader (every consult, latest state)
    for thread in ("PT-0001", "PT-0002"):
        for consult in engine.store.consults(thread):
            cp = engine.store.latest(thread, consult["id"])
            assert cp is not None
            leaks += _leaks(f"checkpoint {thread}", json.dumps(cp.state.to_dict(), ensure_ascii=False))

    text = export.read_text(encoding="utf-8")
    assert "## Approval record" in text and "[PERSON_" in text
    leaks += _leaks("export", text)

    # raw bytes of every file the product wrote (database pages, journal/WAL, exports)
    files = [f for f in data_dir.rglob("*") if f.is_file()]
    assert any(f.suffix == ".db" for f in files)
    for f in files:
        leaks += _leaks(f"file {f.relative_to(data_dir)}", f.read_bytes().decode("utf-8", errors="ignore"))

    assert not leaks, "identifiers leaked:\n" + "\n".join(sorted(set(leaks)))


def test_redaction_of_the_test_notes_keeps_them_readable():
    """The notes above are redacted with typed, stable placeholders: the same person keeps one number."""
    from engine.phi import redact

    r = redact(TIER2_NOTE)
    assert "Patient: [PERSON_1]" in r.text and "Pt. [PERSON_1] has stage IV" in r.text
    assert "Mrs. [PERSON_" in r.text and "Dr. [PERSON_" in r.text and "[SSN_1]" in r.text
    for term in CLINICAL[:5]:
        assert term in r.text
