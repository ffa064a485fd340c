"""PDQ tells a trial over several sentences, and those that name no trial read as advice when offered alone. The
audit's dMMR endometrial case was offered "Afterwards, patients received up to 14 cycles of maintenance therapy with
pembrolizumab or placebo." and "No other predetermined subgroup benefitted from adding pembrolizumab." among the
first, and the model quoted both. Such sentences now rank as the trial narrative they continue."""

from __future__ import annotations

from engine.casefit import locked_candidates, sentence_kind, trial_sentences, trial_stories
from engine.facts import extract_facts
from engine.state import Passage

TEXT = """With the published results of The Cancer Genome Atlas, the use of immunotherapy has been evaluated for the \
treatment of advanced and recurrent endometrial cancer.

2. The double-blind placebo-controlled KEYNOTE-868 study (NCT03914612) included 810 patients with advanced \
endometrial cancer. Afterwards, patients received up to 14 cycles of maintenance therapy with pembrolizumab or placebo.

- After a median follow-up of 24 months, the 2-year DFS rate was 75% in the pembrolizumab group and 76% in the \
placebo group.
- No other predetermined subgroup benefitted from adding pembrolizumab.

Results were significant because they expanded the population of patients who can receive pembrolizumab.

Treatment options for advanced endometrial cancer include:

1. Immunotherapy.

- Pembrolizumab plus lenvatinib, as in the KEYNOTE-775 trial, for disease that progressed after platinum.
- Dostarlimab with carboplatin and paclitaxel for primary advanced or recurrent disease."""
PASSAGE = Passage(id="E1", chunk_id="c1", title="Endometrial Cancer Treatment", source="endometrial.md",
                  section="## Treatment of Stage III, Stage IV, and Recurrent Endometrial Cancer > #### Immunotherapy",
                  page=None, text=TEXT, distance=0.2, rerank_score=3.0, relevant=True)


def test_sentences_that_continue_a_trial_are_trial_narrative():
    # "Afterwards, ...", the trial's results bullet and "No other ... subgroup ..."; not the paragraph after it, nor
    # the options list's bullets (E1.s7, E1.s8): an option's bullet that names a trial tells no trial's story
    assert trial_sentences([PASSAGE]) == {"E1.s3", "E1.s4", "E1.s5"}


def test_a_result_in_a_relative_clause_is_no_recommendation():
    assert sentence_kind("Results were significant because they expanded the population of patients who can receive "
                         "pembrolizumab.") == 1
    assert sentence_kind("Patients with dMMR tumors can receive pembrolizumab.") == 0


def test_the_case_is_offered_what_stands_alone_before_a_trial_s_details():
    kept, _ = locked_candidates([PASSAGE], extract_facts("Stage IVB endometrial cancer, dMMR, untreated. Options?",
                                                         genes=[], treatment_keywords=[], rare_cancers=[]))
    # the option first (E1.s7 is for a later line), then what stands alone, then the trial in passage order
    assert list(kept) == ["E1.s8", "E1.s1", "E1.s6", "E1.s2", "E1.s3", "E1.s4", "E1.s5"]


def test_advice_after_a_summary_of_studies_is_not_a_trial_s_story():
    text = ("Studies have shown that a postoperative course of therapeutic doses of radioiodine 131I results in a "
            "decreased recurrence rate among high-risk patients with papillary and follicular carcinomas. RAI "
            "treatment is optimal after total thyroidectomy with minimal thyroid remnant.")
    assert trial_sentences([Passage(**{**PASSAGE.__dict__, "text": text})]) == set()


def test_a_paragraph_that_goes_on_with_a_numbered_trial_item_is_of_that_trial():
    """PDQ writes FRESCO-2 as a numbered item, its arms in bullets, then paragraphs: "All patients received best
    supportive care." and "A total of 461 patients received fruquintinib ..." had been offered alone, first, to a
    case the trial's population does not fit (session 23)."""
    text = ("1. The phase III FRESCO-2 trial (NCT04322539) included 691 patients with metastatic colorectal cancer.\n"
            "- Fruquintinib (5 mg orally once daily on days 1-21 of a 28-day cycle).\n"
            "- Placebo (orally once daily on days 1-21 of a 28-day cycle).\n\n"
            "All patients received best supportive care.\n\n"
            "A total of 461 patients received fruquintinib, and 230 received placebo.\n\n"
            "Fruquintinib is a standard treatment option for patients with refractory disease.\n\n"
            "Results were significant because they expanded the population of patients who can receive it.")
    p = Passage(id="E1", chunk_id="c1", title="Colon Cancer Treatment", source="colon.md",
                section="## Treatment of Stage IV and Recurrent Colon Cancer", page=None, text=text, distance=0.2,
                rerank_score=3.0, relevant=True)
    stories = trial_stories([p])
    assert stories["E1.s4"] == stories["E1.s5"] == "E1.s1"
    assert "E1.s6" not in stories and "E1.s7" not in stories  # advice or a conclusion after it stands alone
