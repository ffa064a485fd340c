"""Recurrent disease: a treatment section for recurrent disease only ("Treatment of Recurrent Bladder Cancer") is
qualified for a case that does not say it recurred, and does not apply to a newly diagnosed one. The audit's
newly staged muscle-invasive bladder case was answered from the recurrent-bladder erdafitinib passage as if it
applied without condition."""

import pytest

from engine.casefit import assess, case_from_facts, locked_candidates
from engine.facts import extract_facts, merge_facts
from engine.state import Passage

AUDIT = ("64-year-old man with muscle-invasive urothelial carcinoma of the bladder, cT2N0M0, cisplatin eligible, "
         "ECOG 0. What is the recommended treatment?")
RECURRENT = "## Treatment of Recurrent Bladder Cancer > ### Treatment Options for Recurrent Bladder Cancer"
SENTENCE = "The response rate by independent radiological review was 34%."


def facts(text: str):
    return extract_facts(text, genes=["FGFR3"], treatment_keywords=["cisplatin"], rare_cancers=[])


def fit(text: str, section: str = RECURRENT):
    return assess(SENTENCE, case_from_facts(facts(text)), [section])


def test_a_recurrent_only_section_is_qualified_for_a_case_that_does_not_say_it_recurred():
    result = fit(AUDIT)
    assert result.verdict == "unknown"
    assert "recurrent disease" in result.reason and "Recurrent Bladder Cancer" in result.reason


def test_it_does_not_apply_to_a_newly_diagnosed_case_and_fits_a_recurrent_one():
    result = fit("Newly diagnosed muscle-invasive bladder cancer, cT2N0M0. Treatment?")
    assert result.verdict == "contradicts" and "newly diagnosed" in result.reason
    assert fit("Recurrent urothelial carcinoma of the bladder after cystectomy, FGFR3 mutation. Options?").verdict \
        == "fits"
    assert fit("Bladder cancer that recurred in the pelvis after cystectomy. Options?").verdict == "fits"


def test_a_heading_naming_the_disease_recurrent_under_a_treatment_section_is_one_too():
    # the audit's newly found 2 cm papillary thyroid carcinoma was offered "Local and regional recurrences detected
    # by 131I scan ... can be treated with 131I ablation ..." first, with no condition, above its own section's lines
    thyroid = ("## Papillary and Follicular Thyroid Cancer > ### Treatment Options for Papillary and Follicular "
               "Thyroid Cancer > #### Recurrent papillary and follicular thyroid cancer")
    assert fit(AUDIT, thyroid).verdict == "unknown"
    assert "recurrent disease" in fit(AUDIT, thyroid).reason
    assert fit("Newly diagnosed papillary thyroid carcinoma, 2 cm. Treatment?", thyroid).verdict == "contradicts"


def test_recurrent_sections_go_after_other_unstated_conditions_unless_the_case_recurred():
    head = ("## Papillary and Follicular Thyroid Cancer > ### Treatment Options for Papillary and Follicular Thyroid "
            "Cancer")
    local = Passage("E1", "c1", "Thyroid Cancer Treatment", "t.md",
                    f"{head} > #### Localized/regional papillary and follicular thyroid cancer", None,
                    "Radioactive iodine is given after total thyroidectomy to selected patients.", 0.2, 4.0, True)
    recurrent = Passage("E2", "c2", "Thyroid Cancer Treatment", "t.md",
                        f"{head} > #### Recurrent papillary and follicular thyroid cancer", None,
                        "Local recurrences detected by scan can be treated with radioiodine ablation.", 0.2, 4.0, True)
    new = extract_facts("Papillary thyroid carcinoma, 2 cm, no lymph node involvement. Is radioactive iodine "
                        "indicated?", genes=[], treatment_keywords=[], rare_cancers=[])
    offered, _ = locked_candidates([recurrent, local], new)
    assert [pid for pid, _ in offered.values()] == ["E1", "E2"]  # both kept, the recurrence last
    back = extract_facts("Papillary thyroid carcinoma that recurred in the neck two years after thyroidectomy. "
                         "Is radioactive iodine indicated?", genes=[], treatment_keywords=[], rare_cancers=[])
    assert back.recurrent
    offered, dropped = locked_candidates([recurrent, local], back)
    assert next(iter(offered.values()))[0] == "E2"


@pytest.mark.parametrize("section", [
    "## Treatment of Stage IV and Recurrent Colon Cancer",  # recurrent among alternatives
    "## Treatment of Newly Diagnosed Stage IV, Relapsed, and Recurrent NSCLC",
    "## Follow-up > ### Detection of Recurrence",  # not a treatment section
    "## Treatment Options > #### Recurrent, Refractory, or Progressive Childhood LCH",
    "## Treatment of Metastatic or Recurrent Pancreatic Cancer",
])
def test_sections_naming_recurrence_among_alternatives_set_no_condition(section: str):
    assert fit("Newly diagnosed cancer. Treatment?", section).verdict != "contradicts"
    assert "recurrent disease" not in fit(AUDIT, section).reason


def test_a_relapsed_or_refractory_section_is_for_a_case_that_had_treatment():
    """Refractory need not have relapsed, but it has been treated: a newly diagnosed case that states no treatment
    is neither (session 19: a QA pass's new AML case was offered "Treatment of Refractory or Recurrent AML")."""
    section = "## Treatment of Relapsed or Refractory Multiple Myeloma"
    assert fit("Newly diagnosed cancer. Treatment?", section).verdict == "contradicts"
    assert fit("Newly diagnosed multiple myeloma, refractory to VRd induction. Next?", section).verdict == "fits"
    assert fit(AUDIT, section).verdict == "unknown"


@pytest.mark.parametrize("note, recurrent", [
    ("Recurrent colon cancer in the liver 2 years after resection.", True),
    ("Relapsed DLBCL after R-CHOP.", True),
    ("Local recurrence at the anastomosis.", True),
    ("De novo metastatic breast cancer.", False),
    ("Newly diagnosed stage III colon cancer.", False),
    # a score, a risk, a negation, something else that recurs: nothing stated
    ("ER-positive breast cancer, Oncotype DX recurrence score 12.", None),
    ("Stage II colon cancer, low risk of recurrence.", None),
    ("No evidence of recurrence on CT.", None),
    ("Hoarseness from recurrent laryngeal nerve palsy.", None),
    ("Recurrent pleural effusions drained twice.", None),
    ("Five-year recurrence-free survival was discussed.", None),
])
def test_the_note_says_recurrent_or_new(note: str, recurrent: bool | None):
    assert facts(note).recurrent is recurrent


def test_a_follow_up_turn_keeps_what_the_thread_said():
    first = facts("Recurrent bladder cancer after cystectomy.")
    assert merge_facts(first, facts("What about second line?")).recurrent is True
    assert merge_facts(facts("Bladder cancer."), first).recurrent is True


def test_the_qualifier_joins_the_sentences_and_the_sections_conditions_with_and():
    """Both must hold: the sentence's FGFR3 condition and its section's recurrence (it read "FGFR3 variant or
    recurrent disease", as if either were enough)."""
    c = case_from_facts(facts(AUDIT))
    erdafitinib = "## Treatment of Recurrent Bladder Cancer > ### Targeted therapy > #### Erdafitinib"
    reason = assess("Patients were required to have tumors with an FGFR3 variant.", c, [erdafitinib]).reason
    assert reason.startswith("applies if FGFR3 variant and recurrent disease"), reason
    # clauses that are alternatives stay alternatives, in brackets, before the section's condition
    two = ("Osimertinib is given for resected EGFR-mutated tumours, and adjuvant alectinib is given for resected "
           "ALK-positive disease.")
    assert assess(two, c, [erdafitinib]).reason.startswith(
        "applies if (EGFR-mutated or ALK-positive) and recurrent disease")
