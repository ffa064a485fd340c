"""bench/phi_pdq.py: the PHI redactor over guideline text; --compare lists spans new and gone since a saved run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "phi_pdq.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def test_skips_cleanly_without_the_corpus(tmp_path):
    proc = run("--corpus", str(tmp_path / "none"))
    assert proc.returncode == 0 and proc.stdout.startswith("skipped:")


def test_compare_names_the_spans_a_rule_change_added_or_removed(tmp_path):
    corpus = tmp_path / "pdq"
    corpus.mkdir()
    (corpus / "a.md").write_text("Reviewed by Dr. Amelia Hartwell on 03/14/2021. Cisplatin is given.\n")
    saved = tmp_path / "spans.json"
    first = run("--corpus", str(corpus), "--jobs", "1", "--save", str(saved))
    assert first.returncode == 0, first.stderr
    assert "PERSON" in first.stdout and "DATE" in first.stdout
    spans = json.loads(saved.read_text())
    # pretend the earlier run had a false span and missed the date
    spans["a.md"] = [s for s in spans["a.md"] if s[0] != "DATE"] + [["PERSON", "Cisplatin"]]
    saved.write_text(json.dumps(spans))
    second = run("--corpus", str(corpus), "--jobs", "1", "--compare", str(saved))
    assert "1 new spans, 1 gone" in second.stdout
    assert "+ a.md: DATE '03/14/2021'" in second.stdout and "- a.md: PERSON 'Cisplatin'" in second.stdout
