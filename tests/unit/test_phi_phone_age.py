"""PHI redactor (engine/phi.py): a labelled phone number at the end of a sentence must not take the age (or count)
that starts the next sentence ("Phone (617) 555-0142. 64F ..."); ages of 89 or under stay in the text."""

from __future__ import annotations

import pytest

from engine.phi import redact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Phone (617) 555-0142. 64F with stage II breast cancer.",
         "Phone [PHONE_1]. 64F with stage II breast cancer."),
        ("Tel 617-555-0142. 64-year-old man", "Tel [PHONE_1]. 64-year-old man"),
        ("Phone 617 555 0142. 64 year old man", "Phone [PHONE_1]. 64 year old man"),
        ("Seen. Pt number 617 555 0142. 64 yo F", "Seen. Pt number [PHONE_1]. 64 yo F"),
        ("Call +44 20 7946 0958. 71 y/o male", "Call [PHONE_1]. 71 y/o male"),
        ("Phone +33 6 12 34 56 78. 64F", "Phone [PHONE_1]. 64F"),
        ("Call +44 (0)20 7946 0958. 64M", "Call [PHONE_1]. 64M"),
        ("PHONE 617-555-0142. 64-YEAR-OLD MAN", "PHONE [PHONE_1]. 64-YEAR-OLD MAN"),
        ("Phone 617 555 0142. 2 cycles given", "Phone [PHONE_1]. 2 cycles given"),
        ("Tel 617-555-0142.\t64 yo", "Tel [PHONE_1].\t64 yo"),
    ],
)
def test_age_after_sentence_end_is_not_part_of_the_phone(text: str, expected: str) -> None:
    r = redact(text)
    assert r.text == expected
    assert [k for k, _, _ in r.spans] == ["PHONE"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Cell: 617 555 0142; 71 yo woman", "Cell: [PHONE_1]; 71 yo woman"),
        ("call 617-555-0142, 64M", "call [PHONE_1], 64M"),
        ("617-555-0142. 64F", "[PHONE_1]. 64F"),
        ("Phone: 617-555-0142.", "Phone: [PHONE_1]."),
    ],
)
def test_other_separators_keep_the_age(text: str, expected: str) -> None:
    assert redact(text).text == expected


@pytest.mark.parametrize(
    ("text", "expected", "phone"),
    [
        ("Tel 617-555-0142 ext. 64", "Tel [PHONE_1]", "617-555-0142 ext. 64"),
        ("Tel 617-555-0142 x64", "Tel [PHONE_1]", "617-555-0142 x64"),
        ("Phone 617-555-0142 ext. 64. 71 yo F", "Phone [PHONE_1]. 71 yo F", "617-555-0142 ext. 64"),
        ("Tel 617-555-0142 x64. 71 yo F", "Tel [PHONE_1]. 71 yo F", "617-555-0142 x64"),
    ],
)
def test_extension_stays_in_the_phone(text: str, expected: str, phone: str) -> None:
    r = redact(text)
    assert r.text == expected
    assert [text[s:e] for k, s, e in r.spans if k == "PHONE"] == [phone]


def test_list_of_phones_then_an_age() -> None:
    text = "Phone 617.555.0199 / +1 617 555 0123. 64F"
    r = redact(text)
    assert r.text == "Phone [PHONE_1] / [PHONE_2]. 64F"
    assert [text[s:e] for k, s, e in r.spans if k == "PHONE"] == ["617.555.0199", "+1 617 555 0123"]
