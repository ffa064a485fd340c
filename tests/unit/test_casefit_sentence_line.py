"""Line of therapy stated in a sentence or a list item's label, not only in a heading. An audit consult (treatment-
naive metastatic BRAF V600E melanoma, asking for first-line therapy) was offered the sentences of PDQ's
"1. **Previously treated patients.** One study included ..." trial items."""

import pytest

from engine.casefit import assess, case_from_facts, conditions, locked_candidates, sentence_labels
from engine.facts import extract_facts
from engine.state import Passage

GENES = ["EGFR", "ALK", "KRAS", "BRAF"]
MELANOMA_SECTION = ("## Treatment of Unresectable Stage III, Stage IV, and Recurrent Melanoma > #### Signal "
                    "transduction inhibitors > ##### BRAF inhibitors > ###### Vemurafenib")
# PDQ melanoma summary, the chunk the audit consult retrieved (citations shortened)
VEMURAFENIB = (
    "2. **Previously treated patients.** A multicenter phase II trial included 132 patients with *BRAF* V600E or "
    "*BRAF* V600K pathogenic variants. Patients received vemurafenib (960 mg by mouth twice a day). Of the enrolled "
    "patients, 61% had stage M1c disease, and 49% had an elevated LDH level. All patients had received one or more "
    "previous therapies for advanced disease. Median follow-up was 12.9 months.[[22](#cit/section_10.22)]")
FIRST_LINE_ITEM = (
    "1. **Previously untreated.** An international, open-label, phase III trial included 704 previously untreated "
    "patients with metastatic melanoma and *BRAF* V600 pathogenic variants. Patients were randomly assigned to "
    "receive standard doses of either the combination of dabrafenib plus trametinib or vemurafenib.\n"
    "- The median OS was 25.6 months in the combination arm.\n\n"
    "2. **Previously treated patients.** A phase II trial included 57 patients with *BRAF* V600 variants. Patients "
    "received the combination of dabrafenib plus trametinib.")
NAIVE = ("58-year-old woman with treatment-naive metastatic melanoma, BRAF V600E, ECOG 0. Recommended first-line "
         "therapy?")
PROGRESSED = "Metastatic melanoma, BRAF V600E, progressed on nivolumab and ipilimumab. Next options?"


def facts(text: str):
    return extract_facts(text, genes=GENES, treatment_keywords=["nivolumab", "chemotherapy"], rare_cancers=[])


def passage(pid: str, text: str, section: str = MELANOMA_SECTION) -> Passage:
    return Passage(id=pid, chunk_id=pid, title="Melanoma Treatment (PDQ\u00ae) - NCI", source="melanoma.md",
                   section=section, page=None, text=text, distance=0.1, rerank_score=1.0, relevant=True)


def lines(text: str) -> list[str]:
    return [c.value for c in conditions(text) if c.kind == "line"]


@pytest.mark.parametrize("text, want", [
    ("In patients whose disease progressed after first-line chemotherapy, docetaxel is an option.", ["later"]),
    ("For patients who had received prior anti-PD-1 therapy, ipilimumab may be considered.", ["later"]),
    ("Ramucirumab is approved as second-line therapy.", ["later"]),
    ("After progression on osimertinib, platinum-based chemotherapy is standard.", ["later"]),
    ("Regorafenib is an option for heavily pretreated patients.", ["later"]),
    ("Patients with platinum-refractory disease may receive pembrolizumab.", ["later"]),
    ("For cisplatin-ineligible patients who progressed after chemotherapy, enfortumab vedotin is an option.",
     ["later"]),  # a patient's fitness is no eligibility statement
    ("Pembrolizumab is a standard option in the first-line setting.", ["first"]),
    ("For previously untreated patients, nivolumab plus ipilimumab is an option.", ["first"]),
    ("The trial included 502 patients who were untreated for metastatic disease.", ["first"]),
    ("Patients who had not received prior systemic therapy were randomly assigned to two arms.", ["first"]),
    ("The combination is approved for first- and second-line treatment.", ["first", "later"]),  # either
    # PDQ phrasings met when measuring the rule on the corpus
    ("The GRID trial included 199 patients with advanced GISTs who did not respond to previous imatinib and "
     "sunitinib therapy.", ["later"]),  # "not respond to" is no negated prior therapy
    ("The POLO trial included patients whose cancer had not progressed after 16 weeks of first-line "
     "platinum-based chemotherapy.", ["first"]),
])
def test_line_stated_in_a_sentence(text, want):
    assert lines(text) == want


@pytest.mark.parametrize("text", [
    "Relapsed disease is treated with combination chemotherapy.",  # relapsed alone: first-line treatment of it
    "Recurrent disease after resection may be treated with chemotherapy.",
    "Adjuvant therapy after resection is standard for stage III disease.",  # a bare "after" is no line
    "Disease progression after surgery occurred in 20% of the patients.",
    "Patients with untreated brain metastases should receive radiation therapy first.",  # a lesion, not a patient
    "Patients with previously treated brain metastases may receive immunotherapy.",
    "Prior adjuvant therapy with interferon was common among the patients enrolled.",  # adjuvant: no line
    "Benefit was seen regardless of prior therapy in the subgroup analysis.",
    "One previous treatment (biological or chemotherapy) was allowed in the trial.",  # eligibility: mixed
    "Previous therapy for melanoma had been received by 53% of the patients.",  # a share: mixed population
    "Olaparib maintenance after disease control on first-line platinum is an option.",  # maintenance: first line
    "Dental status evaluation should be performed prior to therapy to prevent late sequelae.",
    "Previous treatment for cancer increases the risk of a second malignancy.",  # a risk factor
    "The study included 517 patients who had received zero to one prior systemic therapy.",  # mixed
    "Most patients (76%) had experienced disease progression while receiving sorafenib or lenvatinib.",  # a share
    "Time to progression on subsequent therapy was also longer with rucaparib.",
    "In the same group, 37% of patients received trabectedin as their second-line treatment.",  # a share
    "Patients with recurrent endobronchial obstruction previously treated by EBRT may receive brachytherapy.",
])
def test_phrasings_that_are_no_later_line(text):
    assert "later" not in lines(text)


def test_later_line_sentence_does_not_apply_to_an_untreated_case():
    naive, progressed = case_from_facts(facts(NAIVE)), case_from_facts(facts(PROGRESSED))
    sentence = "For patients who had received prior anti-PD-1 therapy, ipilimumab may be considered."
    fit = assess(sentence, naive)
    assert fit.verdict == "contradicts" and "later line of therapy" in fit.reason and "untreated" in fit.reason
    assert assess(sentence, progressed).verdict == "fits"
    # the asymmetry of the heading rule: a first-line sentence only qualifies a progressed case
    first = "For previously untreated patients, nivolumab plus ipilimumab is an option."
    assert assess(first, naive).verdict == "fits"
    assert assess(first, progressed).verdict == "unknown"
    # a case that names no line: the sentence's line is not judged (as before), a heading's still qualifies
    unstated = case_from_facts(facts("Metastatic melanoma, BRAF V600E."))
    assert assess(sentence, unstated).verdict == "none"


def test_the_sentence_line_overrides_its_heading():
    naive = case_from_facts(facts(NAIVE))
    first_heading = "Treatment Options (First-Line Therapy)"
    assert assess("After progression on ipilimumab, nivolumab is an option.", naive,
                  [first_heading]).verdict == "contradicts"
    later_heading = "Second-Line Therapy"
    assert assess("Patients who relapse late may be retreated as in the first-line setting.", naive,
                  [later_heading]).verdict == "fits"


def test_a_label_scopes_its_item():
    vem, both = passage("E1", VEMURAFENIB), passage("E2", FIRST_LINE_ITEM)
    labels = sentence_labels([vem, both])
    assert labels["E1.s2"] == "Previously treated patients." and labels["E1.s5"] == "Previously treated patients."
    assert labels["E2.s1"] == labels["E2.s3"] == "Previously untreated."  # the bullet under the item too
    assert labels["E2.s4"] == labels["E2.s5"] == "Previously treated patients."  # the next item's own


def test_audit_melanoma_case_gets_no_previously_treated_sentences():
    kept, dropped = locked_candidates([passage("E1", VEMURAFENIB), passage("E2", FIRST_LINE_ITEM)], facts(NAIVE))
    assert {"E1.s1", "E1.s2", "E1.s3", "E1.s4", "E1.s5", "E2.s4", "E2.s5"} <= set(dropped)
    assert "under the label \u201cPreviously treated patients.\u201d" in dropped["E1.s2"]
    assert list(kept)[:3] == ["E2.s1", "E2.s2", "E2.s3"]  # the first-line trial's lines fit, and come first
    # a progressed case keeps them all
    kept, dropped = locked_candidates([passage("E1", VEMURAFENIB)], facts(PROGRESSED))
    assert not dropped and len(kept) == 5
