"""`oncotui redact` and `oncotui eval phi` as a person runs them (subprocesses, exit codes, messages).

All texts here are invented for the tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

NOTES = """Patient: Harriet Quellwood   MRN: 00482913   DOB: 04/17/1951
Seen 12 March 2024 by Dr. Tobias Renwick at 44 Larkspur Lane, Duluth, MN 55802.
Phone (218) 555-0143, email h.quellwood@example.org.
Stage IIIA NSCLC, EGFR exon 19 deletion; osimertinib 80 mg daily.
----
Pt. Okonkwo, 91 years old, followed up on 2024-05-02; SSN 123-45-6789.
"""
IDENTIFIERS = ["Harriet", "Quellwood", "00482913", "04/17/1951", "12 March 2024", "Tobias", "Renwick",
               "Larkspur", "Duluth", "55802", "555-0143", "h.quellwood@example.org", "Okonkwo", "2024-05-02",
               "123-45-6789", "91 years"]


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "oncotui", *args], cwd=ROOT, env=env, input=stdin,
                          capture_output=True, text=True, timeout=300)


def test_redact_file_with_several_notes_removes_identifiers_and_keeps_the_clinic(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text(NOTES, encoding="utf-8")
    out = cli("redact", "--file", str(f))
    assert out.returncode == 0, out.stderr
    for ident in IDENTIFIERS:
        assert ident not in out.stdout, ident
    for kept in ("Stage IIIA NSCLC", "EGFR exon 19 deletion", "osimertinib 80 mg daily", "----"):
        assert kept in out.stdout
    # typed, stable placeholders: both notes are in the output, the first person is PERSON_1
    assert "Patient: [PERSON_1]" in out.stdout and "[SSN_1]" in out.stdout
    assert out.stdout.count("\n") == NOTES.count("\n")


def test_redact_reads_stdin():
    out = cli("redact", stdin="Called Mrs. O'Neil on 3/4/2024 about her letrozole.")
    assert out.returncode == 0, out.stderr
    assert "O'Neil" not in out.stdout and "3/4/2024" not in out.stdout and "letrozole" in out.stdout


def test_redact_missing_file_is_a_clear_error(tmp_path):
    out = cli("redact", "--file", str(tmp_path / "absent.txt"))
    assert out.returncode == 2 and "absent.txt" in out.stderr and "Traceback" not in out.stderr


def _write_set(path: Path) -> None:
    rows = []
    for text, spans in (
            ("Seen by Dr. Agnes Pelletier on 05/06/2023.", [("PERSON", "Agnes Pelletier"), ("DATE_TIME", "05/06/2023")]),
            ("Call me at 617-555-0199 or mail a.b@example.com", [("PHONE_NUMBER", "617-555-0199"),
                                                                 ("EMAIL_ADDRESS", "a.b@example.com")]),
            ("Nothing to find in 2019, on Tuesday.", [("DATE_TIME", "2019"), ("DATE_TIME", "Tuesday")])):
        labs = [{"type": t, "start": text.index(v), "end": text.index(v) + len(v), "value": v} for t, v in spans]
        rows.append(json.dumps({"text": text, "spans": labs}))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_eval_phi_json_reports_recall_precision_by_type(tmp_path):
    f = tmp_path / "set.jsonl"
    _write_set(f)
    out = cli("eval", "phi", "--set", str(f), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["recall"] == 1.0 and data["precision"] == 1.0
    # the bare year and the weekday are not identifiers under Safe Harbor: not counted
    assert data["support"] == 4 and data["by_type"]["DATE"]["support"] == 1
    assert data["by_type"]["PERSON"] == {"recall": 1.0, "precision": 1.0, "support": 1, "removed": 1,
                                         "redacted_chars": len("Agnes Pelletier")}


def test_eval_phi_counts_a_surviving_name_as_missed(tmp_path):
    text = "Thanks to the Granite lab."  # labelled a name, but an ordinary word with no cue: the redactor keeps it
    f = tmp_path / "set.jsonl"
    f.write_text(json.dumps({"text": text, "spans": [{"type": "PERSON", "start": 14, "end": 21}]}) + "\n")
    data = json.loads(cli("eval", "phi", "--set", str(f), "--json").stdout)
    assert data["by_type"]["PERSON"]["recall"] == 0.0 and data["recall"] == 0.0


def test_eval_phi_table_for_people(tmp_path):
    f = tmp_path / "set.jsonl"
    _write_set(f)
    out = cli("eval", "phi", "--set", str(f))
    assert out.returncode == 0, out.stderr
    assert "PERSON" in out.stdout and "overall" in out.stdout and "1.000" in out.stdout


def test_eval_phi_bad_files_are_clear_errors(tmp_path):
    missing = cli("eval", "phi", "--set", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "no such file" in missing.stderr and "Traceback" not in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok", "spans": []}\n{not json\n')
    out = cli("eval", "phi", "--set", str(bad))
    assert out.returncode == 2 and "bad.jsonl:2" in out.stderr and "Traceback" not in out.stderr


def test_redact_removes_what_an_audit_found_kept():
    """State-prefixed licences, Medicare/Medicaid numbers and the city between a street and its ZIP code used to
    reach the model and the database through `oncotui redact`."""
    text = ("License MA S1234567; DL# CA D1234567; license no. NY 123-456-789.\n"
            "Medicare number 1EG4-TE5-MK73, MBI 1EG4TE5MK73, Medicaid # YH12345A.\n"
            "Lives at 123 Main St, Boston MA 02118; mail to 9 Elm Rd., Dedham, MA 02026.\n"
            "Treated in Houston in 2019.\n")
    out = cli("redact", stdin=text)
    assert out.returncode == 0, out.stderr
    for ident in ("S1234567", "D1234567", "123-456-789", "1EG4-TE5-MK73", "1EG4TE5MK73", "YH12345A", "Main St",
                  "Boston", "02118", "Elm", "Dedham", "02026", "Houston"):
        assert ident not in out.stdout, ident
    assert "Treated in [LOCATION_" in out.stdout and "in 2019" in out.stdout
