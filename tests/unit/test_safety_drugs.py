"""The critic's drug rule: a drug named in a draft must be in a passage it cites, including drugs whose names carry
no telltale suffix (the curated ``ONCOLOGY_DRUGS``), multi-word names and synonyms; verbatim guideline quotes pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.safety import ONCOLOGY_DRUGS, critique, drug_names, split_sentences, unbacked_drugs
from engine.state import Passage

PANCREAS = Passage("E1", "c1", "Pancreatic (Demo)", "p.md", "## Metastatic", None,
                   "FOLFIRINOX or gemcitabine plus nab-paclitaxel are first-line options for metastatic pancreatic "
                   "adenocarcinoma with good performance status.", 0.3, 3.0, True)
ROOT = Path(__file__).resolve().parents[2]

# oncology drugs a draft may name; before the curated list the rule missed every one without a known suffix
DRUGS = ["arsenic trioxide", "all-trans retinoic acid", "cisplatin", "tamoxifen", "letrozole", "anastrozole",
         "lenalidomide", "thalidomide", "methotrexate", "fluorouracil", "capecitabine", "docetaxel", "carboplatin",
         "cyclophosphamide", "doxorubicin", "bleomycin", "vincristine", "prednisone", "dexamethasone", "leuprolide",
         "abiraterone", "enzalutamide", "etoposide", "temozolomide", "vinorelbine", "fulvestrant", "exemestane",
         "goserelin", "everolimus", "venetoclax", "azacitidine", "cytarabine", "melphalan", "pemetrexed"]


def drug_issues(text: str, passages: list[Passage]) -> list[str]:
    draft = {"assessment": "Metastatic pancreatic adenocarcinoma.", "caveats": [], "missing_information": [],
             "recommendations": [{"text": text, "evidence": ["E1"]}]}
    return [i for i in critique(json.dumps(draft), passages).issues if i.startswith("drug")]


@pytest.mark.parametrize("drug", DRUGS)
def test_a_drug_absent_from_the_cited_passage_is_caught_whatever_its_name_looks_like(drug):
    issues = drug_issues(f"Metastatic pancreatic adenocarcinoma may be treated with {drug} with good performance "
                         "status.", [PANCREAS])
    assert issues == [f"drug: recommendation 1 names '{drug}', absent from its cited passages"]


def test_capitalised_and_hyphenated_forms_are_caught_too():
    issues = drug_issues("Arsenic Trioxide and cyclophosphamide-based chemotherapy are first-line options for "
                         "metastatic pancreatic adenocarcinoma.", [PANCREAS])
    assert [i.split("'")[1] for i in issues] == ["Arsenic Trioxide", "cyclophosphamide"]


def test_a_drug_the_cited_passage_names_passes_across_line_breaks_hyphens_and_synonyms():
    apl = Passage("E1", "c1", "APL", "a.md", "## Induction", None,
                  "Induction with ATRA and arsenic\ntrioxide is standard for low-risk APL; infusional 5-FU with "
                  "leucovorin follows.", 0.2, 3.0, True)
    text = ("Induction with all-trans retinoic acid and arsenic trioxide is standard for low-risk APL; "
            "fluorouracil with leucovorin follows.")
    assert unbacked_drugs(text, apl.text) == []
    assert drug_issues(text, [apl]) == []
    assert unbacked_drugs("Add vincristine and prednisone.", apl.text) == ["vincristine", "prednisone"]
    # one name per drug, whichever synonym is written: the ledger compares drugs of two sentences with it
    assert drug_names("5-FU") == drug_names("5-fluorouracil") == drug_names("fluorouracil") == {"fluorouracil"}
    assert drug_names("tretinoin (ATRA)") == {"all-trans retinoic acid"}


def test_a_drug_named_only_in_another_passage_is_still_absent_from_the_cited_one():
    other = Passage("E2", "c2", "Breast (Demo)", "b.md", "## Early", None,
                    "Adjuvant chemotherapy may include doxorubicin and cyclophosphamide.", 0.4, 2.0, True)
    issues = drug_issues("Cyclophosphamide is a first-line option for metastatic pancreatic adenocarcinoma.",
                         [PANCREAS, other])
    assert [i.split("'")[1] for i in issues] == ["Cyclophosphamide"]


def test_the_curated_list_has_one_entry_per_name():
    names = [" ".join(n.lower().replace("-", " ").split()) for names in ONCOLOGY_DRUGS for n in names]
    assert len(names) == len(set(names))


PDQ = ROOT.parent / "shared" / "corpus" / "pdq"
# drug-heavy summaries, quick enough for every run: APL (arsenic trioxide, ATRA), breast and prostate (endocrine
# therapy), adult ALL (vincristine, prednisone, dexamethasone, cyclophosphamide)
PDQ_SAMPLE = ("types-leukemia-hp-adult-aml-treatment-pdq.md", "types-breast-hp-breast-treatment-pdq.md",
              "types-prostate-hp-prostate-treatment-pdq.md", "types-leukemia-hp-adult-all-treatment-pdq.md")


def quotes_failing_the_drug_rule(files: list[Path]) -> list[tuple[str, str, list[str]]]:
    """Evidence-locked answers quote sentences verbatim: each must pass when it cites the text it is from."""
    failing = []
    for f in files:
        for section in f.read_text(encoding="utf-8").split("\n#"):  # a passage never spans a heading
            for sentence in split_sentences(section):
                if missing := unbacked_drugs(sentence, section):
                    failing.append((f.name, sentence[:80], missing))
    return failing


def test_no_verbatim_demo_or_sampled_pdq_sentence_fails_the_drug_rule():
    files = sorted((ROOT / "kb" / "demo").glob("*.md")) + [PDQ / n for n in PDQ_SAMPLE if (PDQ / n).exists()]
    assert quotes_failing_the_drug_rule(files) == []


@pytest.mark.slow
def test_no_verbatim_pdq_sentence_fails_the_drug_rule():
    files = sorted(PDQ.glob("*.md"))
    if not files:
        pytest.skip("../shared/corpus/pdq is not here")
    assert quotes_failing_the_drug_rule(files) == []
