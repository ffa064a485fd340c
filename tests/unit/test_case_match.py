"""Which retrieved passages are about the case's cancer (engine.ledger.case_words / on_case)."""

from __future__ import annotations

import pytest

from engine.ledger import case_words, on_case
from engine.state import Passage


def passage(title: str, section: str = "## Treatment", text: str = "Treatment options are listed below.") -> Passage:
    return Passage("E1", "c1", title, "x.md", section, None, text, 0.2, None, True)


@pytest.mark.parametrize("cancer_type, title, section, expected", [
    # the guideline's title says which cancer it is about, whatever words the chunk itself uses
    ("colon cancer", "Colon Cancer Treatment (PDQ®) - NCI",
     "## Treatment of Stage III Colon Cancer > ### Adjuvant chemotherapy", True),
    ("colon cancer", "Colon Cancer Treatment (PDQ®) - NCI", "## General Information > ### Incidence", True),
    ("colon cancer", "Colorectal Cancer: Treatment Overview (Demo)", "## Treatment by Stage", True),
    ("colon cancer", "Rectal Cancer Treatment (PDQ®) - NCI", "## Treatment of Stage III Rectal Cancer", False),
    ("rectal cancer", "Rectal Cancer Treatment (PDQ®) - NCI", "## Neoadjuvant therapy", True),
    ("colorectal cancer", "Rectal Cancer Treatment (PDQ®) - NCI", "## Neoadjuvant therapy", True),
    ("colorectal cancer", "Anal Cancer Treatment (PDQ®) - NCI", "## Stage I", False),
    ("hepatocellular carcinoma", "Primary Liver Cancer Treatment (PDQ®) - NCI", "## Ablation", True),
    ("hepatocellular carcinoma", "Bile Duct Cancer (Cholangiocarcinoma) Treatment (PDQ®) - NCI", "## X", False),
    ("urothelial carcinoma", "Bladder Cancer Treatment (PDQ®) - NCI", "## Stage IV", True),
    ("urothelial carcinoma", "Renal Cell Cancer Treatment (PDQ®) - NCI", "## Stage IV", False),
    ("urothelial carcinoma", "Gallbladder Cancer Treatment (PDQ®) - NCI", "## Stage IV", False),
    # generic words ("cell", "large", "small", "non") do not make a passage on case
    ("non-small cell lung cancer", "Non-Small Cell Lung Cancer Treatment (PDQ®) - NCI", "## Stage IV", True),
    ("non-small cell lung cancer", "Small Cell Lung Cancer Treatment (PDQ®) - NCI", "## Extensive stage", False),
    ("non-small cell lung cancer", "Renal Cell Cancer Treatment (PDQ®) - NCI", "## Stage IV", False),
    ("non-small cell lung cancer", "Merkel Cell Carcinoma Treatment (PDQ®) - NCI", "## Stage IV", False),
    ("small cell lung cancer", "Non-Small Cell Lung Cancer Treatment (PDQ®) - NCI", "## Stage IV", False),
    ("head and neck squamous cell carcinoma", "Renal Cell Cancer Treatment (PDQ®) - NCI", "## Stage IV", False),
    ("head and neck squamous cell carcinoma", "Oropharyngeal Cancer Treatment (PDQ®) - NCI", "## Stage IV", True),
    ("anal cancer", "Rectal Cancer Treatment (PDQ®) - NCI", "## Analysis of survival", False),
    ("diffuse large B-cell lymphoma", "Aggressive B-Cell Non-Hodgkin Lymphoma Treatment (PDQ®) - NCI",
     "## Treatment of Aggressive, Noncontiguous Stage II/III/IV B-Cell Non-Hodgkin Lymphoma > #### R-CHOP", True),
    ("diffuse large B-cell lymphoma", "Aggressive B-Cell Non-Hodgkin Lymphoma Treatment (PDQ®) - NCI",
     "## Treatment of Diffuse Small Noncleaved-Cell/Burkitt Lymphoma", False),
    ("diffuse large B-cell lymphoma", "Hodgkin Lymphoma Treatment (PDQ®) - NCI", "## Stage III", False),
    ("diffuse large B-cell lymphoma", "Indolent B-Cell Non-Hodgkin Lymphoma Treatment (PDQ®) - NCI", "## X", False),
    ("Hodgkin lymphoma", "Aggressive B-Cell Non-Hodgkin Lymphoma Treatment (PDQ®) - NCI", "## X", False),
    ("Hodgkin lymphoma", "Hodgkin Lymphoma Treatment (PDQ®) - NCI", "## X", True),
    ("ovarian cancer", "Ovarian Epithelial, Fallopian, & Peritoneal Cancer Treatment (PDQ®) - NCI", "## X", True),
    ("ovarian cancer", "Ovarian Germ Cell Tumors Treatment (PDQ®) - NCI", "## X", False),
    ("ovarian cancer", "Ovarian Borderline Tumors Treatment (PDQ®) - NCI", "## X", False),
    ("melanoma", "Melanoma Treatment (PDQ®) - NCI", "## Stage IV", True),
    ("melanoma", "Intraocular (Eye) Melanoma Treatment (PDQ®) - NCI", "## Metastatic", False),
    ("uveal melanoma", "Intraocular (Eye) Melanoma Treatment (PDQ®) - NCI", "## Metastatic", True),
    ("triple-negative breast cancer", "Breast Cancer Treatment (PDQ®) - NCI", "## Stage IV", True),
    ("pancreatic adenocarcinoma", "Pancreatic Neuroendocrine Tumors (Islet Cell Tumors) Treatment (PDQ®) - NCI",
     "## X", False),
    ("pancreatic adenocarcinoma", "Pancreatic Cancer Treatment (PDQ®) - NCI", "## X", True),
])
def test_the_title_names_the_cancer(cancer_type: str, title: str, section: str, expected: bool) -> None:
    assert on_case(passage(title, section), case_words(cancer_type)) is expected


def test_a_title_naming_no_cancer_falls_back_to_the_section_then_the_text() -> None:
    colon = case_words("colon cancer")
    assert on_case(passage("ESMO Guidelines 2024", "## Colon cancer > ### Adjuvant"), colon)
    assert not on_case(passage("ESMO Guidelines 2024", "## Gastric cancer > ### Adjuvant",
                               "Unlike colon cancer, ..."), colon)
    assert on_case(passage("Local protocol", "## Adjuvant", "For resected stage III colon cancer, give FOLFOX."), colon)
    assert not on_case(passage("Local protocol", "## Adjuvant", "A colonoscopy analysis of 40 cells."), colon)
    # an umbrella title ("GI Cancers") names no one cancer: the section decides
    assert on_case(passage("ESMO GI Cancers Pocket Guide", "## Colon cancer > ### Adjuvant"), colon)
    assert not on_case(passage("ESMO GI Cancers Pocket Guide", "## Anal cancer > ### Adjuvant"), colon)
    # a whole word, not a substring: "anal" is not in "analysis", "cell" is not lung cancer
    assert not on_case(passage("Local protocol", "## X", "An analysis of outcomes."), case_words("anal cancer"))
    nsclc = case_words("non-small cell lung cancer")
    assert not on_case(passage("Local protocol", "## X", "Basal cell lesions."), nsclc)


def test_an_unknown_type_puts_every_passage_on_case_and_an_unlisted_type_uses_its_distinctive_words() -> None:
    assert case_words(None) is None and case_words("  ") is None
    assert on_case(passage("Melanoma Treatment"), case_words(None))
    penile = case_words("penile cancer")
    assert on_case(passage("Penile Cancer Treatment (PDQ®) - NCI"), penile)
    assert not on_case(passage("Vulvar Cancer Treatment (PDQ®) - NCI", text="Penile and vulvar ..."), penile)
