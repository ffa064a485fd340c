"""Options lists PDQ writes in other shapes than "... include:" then numbered items (kb/outline.py): a lead-in with a
citation after its colon, in bold, "Treatment options:" alone, "The standard treatment option for ... is the
following:", and lists of bullets. A list of factors, trials or results under another lead-in is never read."""

from __future__ import annotations

import pytest

from kb.outline import item_key, lead_in, option_item

CITED = """Treatment options for stages I and II mycosis fungoides include the following:[[5](#cit/section_5.5)]

1. [Photodynamic therapy](/mf#_1).
2. [Radiation therapy](/mf#_2).
- [Total-skin electron-beam radiation therapy](/mf#_3)."""

BOLD = """**Treatment options for patients with ovarian germ cell tumors include:**

- Surgery.
- [Combination chemotherapy with BEP](/o#_1).
- Radiation therapy."""

BULLETS = """Treatment options for men with locally advanced breast cancer include:[[1](#cit/section_3.1)]

- [Neoadjuvant chemotherapy](/mb#_1).
- [Surgery with or without radiation therapy](/mb#_2)."""

BARE = """Treatment options for patients with bulky tumors:

1. Radical inguinal orchiectomy followed by combination chemotherapy.
2. [Radiation therapy to the retroperitoneal lymph nodes](/t#_1)."""

STANDARD = """The standard treatment option for stages II through IV clear cell sarcoma of the kidney is the following:

1. [Surgery, chemotherapy, and radiation therapy](/k#_1).[[16](#cit/section_5.16)]"""


@pytest.mark.parametrize("text, heading, item", [
    (CITED, "#### Radiation therapy", "2. [Radiation therapy](/mf#_2).\n- [Total-skin electron-beam radiation therapy]"
                                      "(/mf#_3)."),
    (BULLETS, "#### Neoadjuvant chemotherapy", "- [Neoadjuvant chemotherapy](/mb#_1)."),
    (BOLD, "#### Combination chemotherapy with BEP", "- [Combination chemotherapy with BEP](/o#_1)."),
    (BARE, "#### Radiation therapy to the retroperitoneal lymph nodes",
     "2. [Radiation therapy to the retroperitoneal lymph nodes](/t#_1)."),
    (STANDARD, "#### Surgery, chemotherapy, and radiation therapy",
     "1. [Surgery, chemotherapy, and radiation therapy](/k#_1).[[16](#cit/section_5.16)]"),
])
def test_other_shapes_of_an_options_list_are_read(text, heading, item):
    got = option_item(text, heading)
    assert got is not None, heading
    first, listed = got.split("\n\n")
    assert listed == item
    assert first == text.split("\n", 1)[0].strip("*")  # the lead-in as written; a bold wrapper is dropped


def test_a_bullet_of_a_bulleted_list_is_one_item_and_its_id_names_it():
    assert option_item(BULLETS, "#### Surgery with or without radiation therapy").endswith("(/mb#_2).")
    assert "Neoadjuvant" not in option_item(BULLETS, "#### Surgery with or without radiation therapy")
    assert item_key("6. [ALK inhibitors](/x#_7) (for patients with *ALK* translocations).") == "6"
    assert item_key("- [Neoadjuvant chemotherapy](/mb#_1).") == "neoadjuvant-chemotherapy"


@pytest.mark.parametrize("line", [
    "Treatment options also depend on the site of recurrence, as follows:",
    "Drug treatment options for patients with recurrent disease are subdivided as follows:",
    "Other risk factors for breast cancer include:",
    "Prognostic factors include the following:",
    "The following chemotherapy regimens have **not** shown benefit:",
    "Evidence (pembrolizumab after progression on platinum-based treatment):",
    "The lead reviewers for Bladder Cancer Treatment are:",
    "Treatment selection depends on the following factors:",
    "2. Conservative ocular salvage approaches when the eye and vision can be saved:",
    "Treatment options for patients with low-risk, single-system or multisystem disease depend on the site of "
    "involvement, as follows:",
    # the options word is in the sentence before, which ends in a citation marker
    "Tumors are treated by type and treatment options vary by site.[[5](#cit/section_1.5)] In this "
    "subclassification, gastrointestinal anatomical locations include:",
])
def test_other_lists_are_not_options(line):
    assert lead_in(line) is None
    text = f"{line}\n\n- [Radiation therapy](/x#_1).\n1. [Radiation therapy to the lymph nodes](/x#_2)."
    assert option_item(text, "#### Radiation therapy") is None
    assert option_item(text, "#### Radiation therapy to the lymph nodes") is None


def test_the_lead_ins_already_read_still_are():
    for line in ("Treatment options for patients with newly diagnosed [stage IV](/x#_1) disease include:",
                 "Standard treatment options for localized Ewing sarcoma include the following:",
                 "Treatment options under clinical evaluation include:", "Treatment options:",
                 "Standard treatment options for stage I disease are:"):
        assert lead_in(line) == line


def test_the_lead_in_is_the_last_sentence_of_its_paragraph():
    """A paragraph naming a regimen and ending "Results from this study include the following:" opens a list of
    results; one ending "Treatment options include:" opens options whatever came before."""
    results = ("The induction regimen employed in the EURO-EWING-INTERGROUP-EE99 trial was VIDE. Results from this "
               "study include the following:")
    assert lead_in(results) is None
    assert option_item(f"{results}\n\n1. Patients assigned to the most favorable risk stratum, R1, were patients "
                       "with localized disease.", "#### Patients assigned to the most favorable risk stratum") is None
    options = ("Approximately 50% of colon cancer patients will be diagnosed with hepatic metastases. Treatment "
               "options include:")
    assert lead_in(options) == options
