"""Released text reads as prose (no Markdown plumbing), and a bare list header is never released."""

from __future__ import annotations

from engine.governor import govern
from engine.ledger import build_ledger
from engine.nodes.formatter import recommendation_lines, withheld_lines
from engine.safety import passage_sentences
from engine.state import ConsultState, Draft, Passage, Recommendation

TEXT = ("Adjuvant FOLFOX is standard for [stage III colon cancer](/types/colorectal/hp/colon-treatment-pdq) after "
        "resection (*P* = .02).[[54](#cit/section_11.54)][[Level of evidence A1](/Common/PopUps/popDefinition.aspx"
        "?id=810017&version=HealthProfessional&language=English)]\n\n"
        "Options for adjuvant treatment of stage III colon cancer include:\n\n"
        "- FOLFOX for six months after resection of the primary tumor.")
COLON = Passage("E1", "c1", "Colon Cancer Treatment (PDQ®) - NCI", "colon.md", "## Stage III Colon Cancer", None,
                TEXT, 0.2, 4.0, True)


def governed(*quotes: str):
    recs = tuple(Recommendation(q, ("E1",)) for q in quotes)
    ledger = build_ledger(Draft("x", recs), [COLON], None, cancer_type="colon cancer")
    return govern(ledger, 0.9, 0.3)


def test_a_released_sentence_shows_link_text_without_targets_or_citation_markers():
    quote = TEXT.split("\n\n")[0]
    ledger = governed(quote)
    assert ledger.claims[0].state == "supported" and ledger.claims[0].text == quote  # the ledger keeps it verbatim
    [line] = recommendation_lines(ConsultState("t", "c", ledger=ledger))
    assert line.startswith("1. Adjuvant FOLFOX is standard for stage III colon cancer after resection (P = .02). [E1]")
    assert "#cit" not in line and "PopUps" not in line and "](" not in line and "*" not in line.split(" — ")[0]


def test_a_bare_list_header_is_not_offered_nor_released():
    header = "Options for adjuvant treatment of stage III colon cancer include:"
    offered = [t for _, t in passage_sentences([COLON]).values()]
    assert header not in offered and "FOLFOX for six months after resection of the primary tumor." in offered
    ledger = governed(header)
    assert ledger.claims[0].state == "blocked" and "list header" in ledger.claims[0].reasons[0]
    state = ConsultState("t", "c", ledger=ledger)
    assert recommendation_lines(state) == ["_No recommendation could be released._"]
    assert any("list header" in line for line in withheld_lines(state))
