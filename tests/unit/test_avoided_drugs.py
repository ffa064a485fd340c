"""Drugs a note stopped for a toxicity or ruled out (engine.facts ``avoided_drugs``) are not offered again (session
21; a clinician review of the long notes found T-DXd offered after T-DXd pneumonitis and ifosfamide offered to a
patient with a solitary kidney)."""

from __future__ import annotations

import pytest

from engine.casefit import case_from_facts, locked_candidates, unusable_drugs, unusable_section
from engine.config import DEFAULT_GENES, DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts, merge_facts
from engine.safety import drug_names
from engine.state import CaseFacts, Passage

HER2_NOTE = ("HER2-positive metastatic breast cancer. First line was paclitaxel, trastuzumab and pertuzumab; second "
             "line trastuzumab deruxtecan was stopped after five cycles because of grade 2 pneumonitis that resolved "
             "on steroids; third line trastuzumab emtansine gave stable disease. New brain metastases. Options?")
SARCOMA_NOTE = ("Metastatic dedifferentiated liposarcoma. He received six cycles of single-agent doxorubicin "
                "(ifosfamide was avoided because of his solitary kidney) with stable disease, now progression.")


def facts(note: str) -> CaseFacts:
    return extract_facts(note, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])


@pytest.mark.parametrize(("note", "avoided"), [
    (HER2_NOTE, ("trastuzumab deruxtecan",)),
    (SARCOMA_NOTE, ("ifosfamide",)),
    ("Carboplatin, paclitaxel and pembrolizumab; pembrolizumab was discontinued for grade 3 colitis.",
     ("pembrolizumab",)),
    ("She is intolerant of capecitabine and allergic to paclitaxel.", ("capecitabine", "paclitaxel")),
    ("Cisplatin is contraindicated given her hearing loss.", ("cisplatin",)),
    ("Stopped T-DXd due to interstitial lung disease.", ("trastuzumab deruxtecan",)),
    # no reason, or not done: nothing is avoided
    ("Oxaliplatin was stopped after six cycles as planned.", ()),
    ("Pembrolizumab was not given.", ()),
    ("We plan to stop nivolumab because of rash.", ()),
    ("Should we stop T-DXd because of the ILD?", ()),
    ("Carboplatin and pembrolizumab; pembrolizumab was discontinued for grade 3 colitis.", ("pembrolizumab",)),
    # stopped because it cannot work (session 22: a long note's D842V GIST had an imatinib plan drafted)
    ("Adjuvant imatinib was started but stopped after four months when mutation testing showed a PDGFRA exon 18 "
     "D842V mutation.", ("imatinib", "sunitinib", "regorafenib", "nilotinib", "sorafenib")),  # the genotype's too
    ("Erlotinib was discontinued because of resistance.", ("erlotinib",)),
    ("Adjuvant imatinib was started and stopped after three years as planned.", ()),
])
def test_drugs_stopped_for_toxicity_or_ruled_out(note: str, avoided: tuple[str, ...]) -> None:
    assert facts(note).avoided_names == avoided


def test_an_antibody_drug_conjugate_is_one_drug_not_its_antibody() -> None:
    assert drug_names("T-DXd after trastuzumab") == {"trastuzumab deruxtecan", "trastuzumab"}
    assert drug_names("ifosfamide and doxorubicin") == {"ifosfamide", "doxorubicin"}


def test_the_reason_is_kept_and_shown_in_what_a_dropped_sentence_says() -> None:
    case = case_from_facts(facts(HER2_NOTE))
    why = unusable_drugs("Trastuzumab deruxtecan improved survival over T-DM1 (DESTINY-Breast03).", [], case)
    assert why.startswith("names trastuzumab deruxtecan (deruxtecan antibody-drug conjugate)")
    assert "grade 2 pneumonitis" in why
    # the class shares the lung toxicity; the antibody alone and the other conjugate stay
    assert unusable_drugs("Datopotamab deruxtecan is an option.", [], case)
    assert not unusable_drugs("Trastuzumab emtansine is an option.", [], case)
    assert not unusable_drugs("Tucatinib, trastuzumab and capecitabine improved survival.", [], case)
    # named as the population's history or a comparator, it is not offered
    assert not unusable_drugs("Tucatinib is an option after trastuzumab deruxtecan.", [], case)
    assert not unusable_drugs("Trastuzumab emtansine was compared with T-DXd.", [], case)
    assert unusable_section("Metastatic HER2-Positive Breast Cancer > Trastuzumab Deruxtecan", case)


def test_a_checkpoint_inhibitor_stopped_for_immune_toxicity_rules_out_its_class() -> None:
    case = case_from_facts(facts("Metastatic melanoma. Pembrolizumab was stopped for grade 3 myocarditis."))
    assert unusable_drugs("Nivolumab is an option.", [], case)
    assert unusable_drugs("Immune checkpoint inhibitors may be considered.", [], case)
    assert not unusable_drugs("Dabrafenib plus trametinib is an option.", [], case)


def passage(pid: str, section: str, text: str) -> Passage:
    return Passage(pid, f"c-{pid}", "Adult Soft Tissue Sarcoma Treatment", "sarcoma.md", section, None, text, 0.2,
                   4.0, True)


def test_a_regimen_with_the_avoided_drug_is_not_offered_but_the_others_are() -> None:
    options = passage("E1", "## Recurrent Soft Tissue Sarcoma > ### Treatment Options", (
        "Doxorubicin plus ifosfamide may be considered for fit patients. Eribulin improved overall survival in "
        "liposarcoma compared with dacarbazine."))
    kept, dropped = locked_candidates([options], facts(SARCOMA_NOTE))
    texts = {sid: text for sid, (_, text) in kept.items()}
    assert any("Eribulin" in t for t in texts.values())
    assert not any("ifosfamide" in t for t in texts.values())
    assert any("solitary kidney" in why for why in dropped.values())
    # without the note's reason, the same regimen is offered
    kept, _ = locked_candidates([options], facts(SARCOMA_NOTE.replace(
        " (ifosfamide was avoided because of his solitary kidney)", "")))
    assert any("ifosfamide" in text for _, text in kept.values())


def test_a_follow_up_turn_keeps_what_was_avoided() -> None:
    merged = merge_facts(facts(HER2_NOTE), facts("What about second line now?"))
    assert merged.avoided_names == ("trastuzumab deruxtecan",)


def test_an_avoided_drug_is_not_offered_even_among_alternatives() -> None:
    """A clinician QA pass graded "Agents such as ifosfamide or gemcitabine may be used" unsafe for this case."""
    case = case_from_facts(facts(SARCOMA_NOTE))
    assert unusable_drugs("Agents such as ifosfamide or gemcitabine may be used at progression.", [], case)
    assert unusable_drugs("Doxorubicin and ifosfamide may be used at progression.", [], case)
    assert not unusable_drugs("Gemcitabine may be used at progression.", [], case)


def test_the_reason_may_come_first_and_the_clause_shown_is_the_drugs_own() -> None:
    note = ("Because of poorly controlled diabetes with painful neuropathy, enfortumab vedotin was not used, and "
            "because of a creatinine clearance of 45 mL/min he was cisplatin-ineligible, so he received "
            "gemcitabine and carboplatin.")
    assert facts(note).avoided_drugs == ("enfortumab vedotin: Because of poorly controlled diabetes with painful "
                                         "neuropathy, enfortumab vedotin was not used",)
    assert facts("Because of grade 3 colitis, ipilimumab was stopped.").avoided_names == ("ipilimumab",)


def test_a_drug_the_question_asks_about_is_weighed_not_ruled_out() -> None:
    note = "Metastatic melanoma. Pembrolizumab was stopped for grade 2 colitis, now resolved."
    assert facts(note).avoided_names == ("pembrolizumab",)
    assert facts(note + " Can she be rechallenged with pembrolizumab?").avoided_names == ()
    assert facts(note + " Is nivolumab an option?").avoided_names == ()  # the same class
    assert facts(note + " Is dabrafenib an option?").avoided_names == ("pembrolizumab",)


@pytest.mark.parametrize(("note", "avoided"), [
    ("LVEF 55% after a cumulative doxorubicin dose of 450 mg/m2.", ("anthracycline",)),
    ("Cumulative anthracycline exposure 420 mg/m2.", ("anthracycline",)),
    ("Cumulative doxorubicin dose of 240 mg/m2 so far.", ()),
    ("Cumulative epirubicin dose of 600 mg/m2.", ()),  # epirubicin's limit is 900 mg/m2
])
def test_a_lifetime_anthracycline_dose_rules_out_the_class(note: str, avoided: tuple[str, ...]) -> None:
    assert facts(note).avoided_names == avoided
    if avoided:
        case = case_from_facts(facts(note))
        assert unusable_drugs("Pegylated liposomal doxorubicin is an option.", [], case)
        assert unusable_drugs("Epirubicin is an option.", [], case)
        assert not unusable_drugs("Eribulin is an option.", [], case)


@pytest.mark.parametrize(("note", "avoided"), [
    ("She has grade 2 neuropathy from taxanes and mild dry eye.", ("taxane",)),
    ("Grade 3 colitis on ipilimumab, resolved with steroids.", ("ipilimumab",)),
    ("Grade 1 neuropathy from paclitaxel.", ()),  # grade 1: not ruled out
    ("Because of severe ulcerative colitis her team avoided checkpoint inhibitors.", ("PD-1/PD-L1",)),
])
def test_a_toxicity_a_drug_caused_or_a_class_the_note_avoided(note: str, avoided: tuple[str, ...]) -> None:
    """A clinician QA pass found weekly paclitaxel offered after grade 2 taxane neuropathy and pembrolizumab after
    checkpoint inhibitors were avoided for ulcerative colitis."""
    assert facts(note).avoided_names == avoided


def test_a_class_avoided_rules_out_each_of_its_drugs() -> None:
    taxane = case_from_facts(facts("She has grade 2 neuropathy from taxanes."))
    assert unusable_drugs("Weekly paclitaxel is an option.", [], taxane)
    assert unusable_drugs("Docetaxel has shown activity.", [], taxane)
    assert not unusable_drugs("Pegylated liposomal doxorubicin is an option.", [], taxane)
    colitis = case_from_facts(facts("Because of severe ulcerative colitis her team avoided checkpoint inhibitors."))
    assert unusable_drugs("Pembrolizumab plus chemotherapy improved event-free survival.", [], colitis)
    assert not unusable_drugs("Capecitabine improved survival in residual disease.", [], colitis)


def test_a_class_the_question_asks_about_is_weighed_not_ruled_out() -> None:
    note = "Because of mild ulcerative colitis her team avoided checkpoint inhibitors."
    assert facts(note).avoided_names == ("PD-1/PD-L1",)
    assert facts(note + " Could immune checkpoint inhibitors be given now?").avoided_names == ()


def test_a_drug_the_question_names_as_history_stays_avoided() -> None:
    """"What second-line agent ... after anthracycline therapy?" asks for something else: the lifetime dose still
    rules the anthracyclines out (the long note's liposarcoma case had pegylated liposomal doxorubicin back)."""
    note = ("Liposarcoma, LVEF 55% after a cumulative doxorubicin dose of 450 mg/m2. What second-line agent has shown "
            "a survival advantage after anthracycline therapy?")
    assert facts(note).avoided_names == ("anthracycline",)
