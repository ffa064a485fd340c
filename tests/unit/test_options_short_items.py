"""An options list's numbered item with drugs under it is offered however short (session 23: "1. Hedgehog pathway
inhibitors." then "- Vismodegib." was never offered to a locally advanced basal cell carcinoma case, nor "1.
Chemotherapy." then "- Lurbinectedin." to a relapsed small cell lung cancer)."""

from __future__ import annotations

from engine.casefit import bullets_under, list_lead_ins, locked_candidates
from engine.safety import offered_sentences, passage_sentences
from engine.state import CaseFacts, Passage

BCC = ("Treatment options for metastatic BCC of the skin (or locally advanced disease untreatable by local modalities) "
       "include:\n\n1. [Hedgehog pathway inhibitors](/types/skin#_521).\n\n- Vismodegib.\n- Sonidegib.\n"
       "2. [Chemotherapy](/types/skin#_475).")


def test_a_short_options_item_with_drugs_under_it_is_a_sentence() -> None:
    assert offered_sentences(BCC) == ["[Hedgehog pathway inhibitors](/types/skin#_521)."]
    p = Passage("E1", "c-E1", "Skin Cancer Treatment", "skin.md", "Treatment of Metastatic Basal Cell Carcinoma", None,
                BCC, 0.2, 4.0, True)
    assert passage_sentences([p]) == {"E1.s1": ("E1", "[Hedgehog pathway inhibitors](/types/skin#_521).")}
    # shown under its lead-in with the drugs listed under it
    assert bullets_under(p, "E1.s1") == ["Vismodegib.", "Sonidegib."]
    assert list_lead_ins([p])["E1.s1"].startswith("Treatment options for metastatic BCC")
    kept, _ = locked_candidates([p], CaseFacts(cancer_type="skin cancer"))
    assert list(kept) == ["E1.s1"]


def test_other_short_items_stay_out() -> None:
    # no drugs under it ("Chemotherapy." alone), or a list that is not of options
    assert offered_sentences("Treatment options include:\n\n1. [Chemotherapy](/x).\n2. [Surgery](/y).") == []
    assert offered_sentences("Risk factors include:\n\n1. Smoking history.\n- Pack-years.") == []
    assert offered_sentences("Evidence (vismodegib):\n\n1. Phase II.\n- Responses.") == []
    # a paragraph after the list ends it
    assert offered_sentences("Treatment options include:\n\nThe evidence for each option follows below.\n\n1. Hormone therapy.\n"
                             "- Tamoxifen.") == ["The evidence for each option follows below."]
