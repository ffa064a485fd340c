"""Case facts session 20 added: primary CNS lymphoma read as its own cancer, not as DLBCL of the nodes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from engine.casefit import misfit_filter
from engine.config import DEFAULT_GENES, DEFAULT_TREATMENT_KEYWORDS
from engine.facts import extract_facts
from engine.state import CaseFacts


def facts(note: str) -> CaseFacts:
    return extract_facts(note, genes=DEFAULT_GENES, treatment_keywords=DEFAULT_TREATMENT_KEYWORDS, rare_cancers=[])


@pytest.mark.parametrize(("note", "cancer_type"), [
    ("Stereotactic biopsy shows diffuse large B-cell lymphoma confined to the brain, HIV negative. Induction?",
     "primary CNS lymphoma"),
    ("Primary CNS lymphoma, KPS 70, 68 years old. First-line treatment?", "primary CNS lymphoma"),
    ("PCNSL relapsed after high-dose methotrexate.", "primary CNS lymphoma"),
    ("DLBCL limited to the CNS, no systemic disease on PET.", "primary CNS lymphoma"),
    ("Stage IV DLBCL with marrow involvement, IPI 4.", "diffuse large B-cell lymphoma"),
])
def test_primary_cns_lymphoma(note: str, cancer_type: str) -> None:
    assert facts(note).cancer_type == cancer_type


def test_a_brain_lymphoma_case_keeps_its_own_summary_and_sets_aside_nodal_dlbcl() -> None:
    misfit = misfit_filter(facts("Diffuse large B-cell lymphoma confined to the brain, KPS 80. Induction treatment?"))
    own = SimpleNamespace(title="Primary CNS Lymphoma Treatment (PDQ®) - NCI", text="High-dose methotrexate ...",
                          section="## Treatment of Primary Central Nervous System Lymphoma > ### Induction therapy")
    nodal = SimpleNamespace(title="Aggressive B-Cell Non-Hodgkin Lymphoma Treatment (PDQ®) - NCI", text="R-CHOP ...",
                            section="## Treatment of Aggressive, Noncontiguous Stage II, III, and IV B-Cell NHL")
    assert not misfit(own)
    assert misfit(nodal)
