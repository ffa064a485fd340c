"""PDQ's lip and oral cavity summary runs through the sites paragraph by paragraph: "Early lesions of the upper
gingiva or hard palate ... can be treated ..." then "Advanced infiltrative and ulcerating lesions should be treated by
a combination of radiation therapy and surgery.", which names no site. The audit's oral tongue case was offered that
sentence first. A sentence is now judged by the site its paragraph is about there, for a case that names its site."""

from __future__ import annotations

from engine.casefit import locked_candidates, paragraph_sites
from engine.facts import extract_facts
from engine.governor import govern
from engine.state import Claim, Ledger, Passage

TEXT = """Early lesions (T1 and T2) of the anterior tongue may be managed by surgery or by radiation therapy alone. \
Large lesions generally require combined surgical and radiation treatment.

Early lesions of the upper gingiva or hard palate without bone involvement can be treated with equal effectiveness \
by surgery or radiation therapy alone. Advanced infiltrative and ulcerating lesions should be treated by a combination \
of radiation therapy and surgery.

Patients who smoke while receiving radiation therapy appear to have lower response rates."""
PASSAGE = Passage(id="E1", chunk_id="c1", title="Lip and Oral Cavity Cancer Treatment", source="lip.md",
                  section="## Treatment Option Overview for Lip and Oral Cavity Cancer", page=None, text=TEXT,
                  distance=0.2, rerank_score=3.0, relevant=True)


def facts(case: str):
    return extract_facts(case, genes=[], treatment_keywords=[], rare_cancers=[])


def test_a_sentence_naming_no_site_is_about_the_site_its_paragraph_last_named():
    assert paragraph_sites([PASSAGE]) == {"E1.s1": "tongue", "E1.s2": "tongue",
                                          "E1.s3": "upper gingiva or hard palate",
                                          "E1.s4": "upper gingiva or hard palate"}  # s5: a new paragraph names none


def test_a_tongue_case_is_not_offered_the_hard_palate_paragraph():
    kept, dropped = locked_candidates([PASSAGE], facts("Oral tongue squamous cell carcinoma T2N0, 2.5 cm. Primary "
                                                       "treatment?"))
    assert list(kept)[:2] == ["E1.s1", "E1.s2"] and "E1.s5" in kept
    assert "E1.s3" not in kept and "E1.s4" not in kept
    assert dropped["E1.s4"] == ("does not apply to this case: its paragraph is about the upper "
                                "gingiva or hard palate (the case's site is tongue)")
    # a case that names no site within the oral cavity: nothing is judged by site
    kept, _ = locked_candidates([PASSAGE], facts("Oral cavity squamous cell carcinoma T2N0. Primary treatment?"))
    assert {"E1.s3", "E1.s4"} <= set(kept)


def test_the_governor_blocks_a_claim_quoting_another_site_s_paragraph():
    claim = Claim(id="C1", recommendation=1, text="Advanced infiltrative and ulcerating lesions should be treated by "
                  "a combination of radiation therapy and surgery.", evidence=("E1",), sentence_ids=("E1.s4",),
                  support=1.0)
    f = facts("Lateral oral tongue SCC, 1.5 cm, clinically N0. Primary treatment?")
    ledger = govern(Ledger(claims=(claim,)), 0.9, 0.5, f, (PASSAGE,))
    assert ledger.claims[0].state == "blocked" and "hard palate" in ledger.claims[0].reasons[0]
    same = Claim(**{**claim.__dict__, "sentence_ids": ("E1.s2",), "text": "Large lesions generally require combined "
                    "surgical and radiation treatment."})
    assert govern(Ledger(claims=(same,)), 0.9, 0.5, f, (PASSAGE,)).claims[0].state != "blocked"
