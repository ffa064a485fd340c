"""Tests for the offline PHI redactor (engine/phi.py)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path

import pytest

from engine.phi import PLACEHOLDER_RE, Redaction, evaluate, redact, redact_after

DEV_SET = Path(__file__).resolve().parents[2].parent / "shared" / "eval" / "phi_dev.jsonl"

# Measured on the dev set (see engine/phi.py `evaluate` for the exact rules): recall 0.915 when this test was written,
# 0.991 now; precision 0.962, 0.978 since address blocks keep their line breaks.  The floors leave a small margin
# for harmless rule changes.
DEV_RECALL_FLOOR = 0.98
DEV_PRECISION_FLOOR = 0.97


def _types(r: Redaction) -> list[str]:
    return [t for t, _, _ in r.spans]


def _assert_gone(text: str, *values: str) -> Redaction:
    r = redact(text)
    for v in values:
        assert v not in r.text, f"{v!r} survived in {r.text!r}"
    return r


# --- API shape ---------------------------------------------------------------------------------------

def test_api_shape_and_spans_point_into_original():
    text = "Seen by Dr. Jane Doe on 03/14/2022."
    r = redact(text)
    assert isinstance(r, Redaction)
    assert isinstance(r.counts, dict) and isinstance(r.spans, tuple)
    for typ, s, e in r.spans:
        assert 0 <= s < e <= len(text)
        assert PLACEHOLDER_RE.fullmatch(f"[{typ}_1]")
    # the spans carry offsets only, never the values
    assert all(len(sp) == 3 and isinstance(sp[1], int) for sp in r.spans)
    assert r.counts == {"PERSON": 1, "DATE": 1}
    with pytest.raises(Exception):
        r.text = "x"  # frozen


def test_placeholder_regex():
    assert PLACEHOLDER_RE.fullmatch("[PERSON_1]")
    assert PLACEHOLDER_RE.fullmatch("[ORGANIZATION_12]")
    assert not PLACEHOLDER_RE.fullmatch("[FOO_1]")
    r = redact("Patient: John Smith, MRN 12345678, phone 555-123-4567.")
    assert len(PLACEHOLDER_RE.findall(r.text)) == len(r.spans)


# --- names -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "text, gone",
    [
        ("Seen today by Dr. Jane Doe for follow-up.", ["Jane", "Doe"]),
        ("Pt. Smith tolerated cycle 3 well.", ["Smith"]),
        ("Mrs. O'Neil reports fatigue.", ["O'Neil"]),
        ("Mr. Garcia-Lopez was admitted.", ["Garcia-Lopez"]),
        ("Patient: John Smith\nDOB: 01/02/1950", ["John", "Smith", "01/02/1950"]),
        ("Name: Maria Rossi", ["Maria", "Rossi"]),
        ("Plan discussed with patient.\n— J. Smith, MD", ["Smith"]),
        ("Signed: Anna Berg RN", ["Anna", "Berg"]),
        ("Patient was seen by Dr Whitfield in clinic.", ["Whitfield"]),
        ("My name is Karen Olsen.", ["Karen", "Olsen"]),
        ("Follow up with Matheus Araujo in 3 months.", ["Matheus", "Araujo"]),
        ("Emily Clarke presented with a breast mass.", ["Emily", "Clarke"]),
        ("follow up with patricia desrosiers in a couple of months.", ["patricia", "desrosiers"]),
    ],
)
def test_names_are_redacted(text, gone):
    r = _assert_gone(text, *gone)
    assert "PERSON" in _types(r)


def test_titles_and_credentials_are_kept():
    r = redact("Seen by Dr. Jane Doe. — J. Smith, MD")
    assert r.text.startswith("Seen by Dr. [PERSON_1]")
    assert r.text.endswith(", MD")


def test_stable_placeholders_for_repeated_names():
    r = redact("John Smith was seen today. John Smith reports pain. Smith will return. Jane Roe called.")
    assert r.text.count("[PERSON_1]") == 3
    assert "[PERSON_2]" in r.text
    assert r.counts["PERSON"] == 2


def test_eponyms_are_not_people():
    text = ("History of Hodgkin lymphoma, Ewing sarcoma of the femur, Wilms tumor in childhood, "
            "Merkel cell carcinoma, Burkitt lymphoma and Lynch syndrome.")
    assert redact(text).text == text


# --- dates and ages ----------------------------------------------------------------------------------

@pytest.mark.parametrize("date", ["03/14/2022", "2022-03-14", "March 14, 2022", "14 Mar 2022", "3/14/22",
                                  "14.03.2022", "Mar 14", "March 2022", "2022-03-14 11:34:35"])
def test_date_formats(date):
    r = redact(f"Biopsy performed on {date} at the outside hospital.")
    assert date not in r.text
    assert "[DATE_1]" in r.text
    assert r.counts == {"DATE": 1}


def test_year_and_weekday_survive():
    text = "Diagnosed in 2019, relapsed in 2021; seen on Monday."
    assert redact(text).text == text


def test_age_over_89_redacted_but_not_under():
    r = redact("A 92-year-old woman and her 72-year-old husband.")
    assert "92" not in r.text
    assert "[AGE_1]-year-old" in r.text
    assert "72-year-old" in r.text
    assert redact("Patient aged 95 years.").counts == {"AGE": 1}
    assert redact("Patient aged 65 years.").text == "Patient aged 65 years."


# --- contact details, numbers ------------------------------------------------------------------------

@pytest.mark.parametrize("text, value, typ", [
    ("Call 555-123-4567 with questions.", "555-123-4567", "PHONE"),
    ("Phone: (602) 272-9781", "272-9781", "PHONE"),
    ("Fax: 001-253-366-9781", "366-9781", "PHONE"),
    ("Mobile +44 7700 900123", "7700 900123", "PHONE"),
    ("Email jane.doe@example.org for results.", "jane.doe@example.org", "EMAIL"),
    ("Portal: https://portal.example-hospital.org/patient/123", "portal.example-hospital.org", "URL"),
    ("Login from 192.168.10.24 was recorded.", "192.168.10.24", "IP"),
    ("SSN 123-45-6789 on file.", "123-45-6789", "SSN"),
    ("MRN: 00123456", "00123456", "ID"),
    ("MRN 7788990", "7788990", "ID"),
    ("Chart 88877766 reviewed.", "88877766", "ID"),
    ("Account number: AC-99812377", "99812377", "ID"),
    ("Card 4351 1300 9255 7588 declined", "9255", "ID"),
    ("Insurance policy # XJ7733910", "XJ7733910", "ID"),
])
def test_structured_identifiers(text, value, typ):
    r = redact(text)
    assert value not in r.text, r.text
    assert typ in _types(r)


def test_street_address_and_zip():
    r = _assert_gone("Lives at 123 Main Street, Springfield, IL 62704 with her son.",
                     "123 Main", "Springfield", "62704")
    assert "ADDRESS" in _types(r)
    assert redact("She moved to Ohio.").text == "She moved to Ohio."  # a state alone is not an identifier
    _assert_gone("Address:\n45 Oak Avenue Apt. 3\nBoston, MA 02115", "45 Oak", "Apt. 3", "Boston", "02115")
    _assert_gone("Send records to 26 rue de la Paix, Paris.", "26 rue de la Paix")


def test_hospital_name():
    r = _assert_gone("Transferred from St. Mary's Hospital to Mayo Clinic for surgery.", "Mary's", "Mayo")
    assert _types(r).count("ORGANIZATION") == 2
    r = _assert_gone("Treated at MD Anderson Cancer Center.", "Anderson")
    assert "ORGANIZATION" in _types(r)
    # research bodies / classification systems are not identifying
    text = "Per the National Cancer Institute and Eastern Cooperative Oncology Group criteria."
    assert redact(text).text == text


# --- clinical content must survive -------------------------------------------------------------------

CLINICAL = (
    "Assessment: 64-year-old with stage IIIB NSCLC, T3N1M1, ECOG 1. EGFR exon 19 deletion negative, "
    "KRAS G12C detected, BRAF V600E negative, ALK and ROS1 negative, PD-L1 TPS 50%. BRCA2 germline "
    "variant of uncertain significance. HER2-positive breast cancer in 2015, MSI-H status unknown. "
    "Plan: pembrolizumab 200 mg IV every 21 days, cycle 3 day 1; consider osimertinib 80 mg daily if "
    "progression. Prior FOLFIRINOX then gemcitabine plus nab-paclitaxel 125 mg/m2 on days 1, 8 and 15. "
    "Carboplatin AUC 5, paclitaxel 175 mg/m2. Keytruda and Opdivo discussed. Labs: WBC 4.5, Hgb 10.2 "
    "g/dL, platelets 150,000, creatinine 1.1 mg/dL, CA 19-9 350 U/mL, CEA 12.4. Radiation 45 Gy in 25 "
    "fractions. Gleason score 4+3=7, Ki-67 30%. Hodgkin lymphoma (Ann Arbor stage II) treated with "
    "ABVD in 2010. Ewing sarcoma, Wilms tumor and Merkel cell carcinoma are in the differential. "
    "NCCN guidelines recommend adjuvant chemotherapy. Trial NCT01234567 (KEYNOTE-189) reviewed. "
    "Partial response per RECIST 1.1; restaging CT chest/abdomen/pelvis in 8 weeks. Grade 2 "
    "neuropathy, dose reduced to 75 mg/m2. Seen on Monday; next visit in 3 weeks."
)


def test_clinical_paragraph_unchanged():
    r = redact(CLINICAL)
    assert r.text == CLINICAL, [(t, CLINICAL[s:e]) for t, s, e in r.spans]
    assert r.spans == ()


@pytest.mark.parametrize("term", [
    "pembrolizumab", "FOLFIRINOX", "osimertinib", "nab-paclitaxel", "BRCA2", "KRAS G12C", "BRAF V600E",
    "EGFR exon 19", "HER2-positive", "MSI-H", "PD-L1 TPS 50%", "stage IIIB", "T3N1M1", "ECOG 1",
    "75 mg/m2", "every 21 days", "cycle 3", "Hodgkin lymphoma", "Ewing sarcoma", "Wilms tumor",
    "Merkel cell",
])
def test_clinical_terms_survive_in_context(term):
    text = f"Mr. John Carter (MRN 556677) on 2023-01-05: {term} noted."
    r = redact(text)
    assert term in r.text
    assert "Carter" not in r.text and "556677" not in r.text and "2023-01-05" not in r.text


def test_section_headers_and_clinical_labels_survive():
    text = ("Genomics: PIK3CA H1047R, ESR1 wild type, TMB 4 mut/Mb, MSS.\nImaging: CT shows partial response.\n"
            "Plan: continue Enhertu cycle 7; Zofran 8 mg PRN. Discussed at tumor board.")
    assert redact(text).text == text


def test_mixed_note():
    note = (
        "Patient: Robert Miller\nMRN: 4455667\nDOB: 07/04/1948\n"
        "Referring physician: Dr. Susan Park, Mercy General Hospital\n"
        "Phone: 312-555-0199  Email: rmiller@mail.com\n"
        "Mr. Miller is a 76-year-old man with metastatic pancreatic adenocarcinoma on FOLFIRINOX.\n"
        "— S. Park, MD"
    )
    r = redact(note)
    for v in ["Robert", "Miller", "4455667", "07/04/1948", "Susan", "Park,", "Mercy", "312-555-0199",
              "rmiller@mail.com"]:
        assert v not in r.text, (v, r.text)
    assert "76-year-old" in r.text and "FOLFIRINOX" in r.text and "metastatic pancreatic adenocarcinoma" in r.text
    # same people keep the same placeholder
    assert r.text.count("[PERSON_1]") == 2 and r.text.count("[PERSON_2]") == 2


# --- robustness --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "", " ", "\n\n\t", "a", "Dr.", "Mr", "@", "http://", "::", "1", "9" * 5000, "-" * 10000,
    "Zoë Ångström-Ølsen, née Ñúñez 🙂 vs. 患者 山田太郎", "\x00\x01\ud800", "Dr. " * 2000,
    "(" * 3000 + ")" * 3000, "a@" * 5000, "1/" * 5000, "Apt. " * 3000, "St " * 3000,
    "Name:\n" * 1000, "\u0130stanbul \u0130\u0130\u0130 İİ", "ǅemal ǈubica",
])
def test_never_raises(text):
    r = redact(text)
    assert isinstance(r.text, str)
    for _, s, e in r.spans:
        assert 0 <= s < e <= len(text)


def test_non_string_input_does_not_raise():
    assert redact(None).text == ""  # type: ignore[arg-type]
    assert redact(12345).text == "12345"  # type: ignore[arg-type]


def _cpu_seconds(fn: Callable[[], object]) -> float:
    """CPU time of ``fn`` in this process: other processes on a shared machine slow its wall-clock time, not this
    (the ratio tests below failed at load 4 on 2 cores when timed with ``perf_counter``)."""
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _best_ratio(small: Callable[[], object], large: Callable[[], object], rounds: int) -> tuple[float, float]:
    """The best CPU times of ``small`` and ``large``, run in turns so a busy spell hits both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        times[0].append(_cpu_seconds(small))
        times[1].append(_cpu_seconds(large))
    return min(times[0]), min(times[1])


def test_large_note_redacts_in_linear_time():
    """A 200 KB note is redacted whole and in time proportional to its length. A ratio of CPU times against a
    quarter of the text, not a wall-clock bound: the machines are shared and noisy (200 KB took 0.5 s idle and
    1.2 s at load 3 on 2 cores)."""
    chunk = (CLINICAL + "\nPatient: John Smith, MRN 12345678, seen 03/14/2022 at Mercy Hospital, "
             "phone 555-123-4567, 123 Main Street, Springfield, IL 62704.\n")
    big = (chunk * (200_000 // len(chunk) + 1))[:200_000]
    redact(big[:5000])  # warm caches
    assert "John Smith" not in redact(big).text
    small, large = _best_ratio(lambda: redact(big[:50_000]), lambda: redact(big), rounds=2)
    assert large < 8 * max(small, 0.02), (small, large)  # linear gives about 4x


@pytest.mark.parametrize("unit", ["1 ", "a1-", "A. ", "x", "Mr Smith ", "Dear John ", "lives in Boston ",
                                  "John, Mary and Sue ", "(555) ", "12/", "Apt 1 ", "@a.", "::1 "])
def test_pathological_inputs_stay_fast(unit):
    """Redaction time grows linearly with a repeated pattern: catastrophic backtracking or a quadratic loop would
    make 4x the text take 16x the time or more. A ratio of CPU times, not a wall-clock bound: the machines are
    shared and noisy (absolute figures: bench/, README)."""
    small_text, large_text = unit * (7_500 // len(unit)), unit * (30_000 // len(unit))
    small, large = _best_ratio(lambda: redact(small_text), lambda: redact(large_text), rounds=3)
    assert large < 8 * max(small, 0.02), (small, large)  # linear gives about 4x


# --- evaluation --------------------------------------------------------------------------------------

def test_evaluate_small():
    recs = [
        {"text": "Hello, this is Dr. Kyle Kuefer.", "spans": [
            {"type": "PERSON", "start": 19, "end": 30, "value": "Kyle Kuefer"},
            {"type": "TITLE", "start": 15, "end": 18, "value": "Dr."}]},
        {"text": "Founded in 1971 on Monday.", "spans": [
            {"type": "DATE_TIME", "start": 11, "end": 15, "value": "1971"},
            {"type": "DATE_TIME", "start": 19, "end": 25, "value": "Monday"}]},
        {"text": "He just turned 72 years old", "spans": [
            {"type": "AGE", "start": 15, "end": 17, "value": "72"}]},
    ]
    res = evaluate(recs)
    assert res["recall"] == 1.0 and res["support"] == 1
    assert res["by_type"]["PERSON"] == {"recall": 1.0, "precision": 1.0, "support": 1, "removed": 1,
                                        "redacted_chars": len("Kyle Kuefer")}
    assert res["by_label"] == {"PERSON": {"recall": 1.0, "support": 1, "removed": 1}}
    assert sum(res["excluded"].values()) == 4


def test_dev_set_recall():
    if not DEV_SET.exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"dev set missing: {DEV_SET}")
        pytest.skip(f"dev set not present: {DEV_SET}")
    with DEV_SET.open(encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    res = evaluate(records)
    assert res["recall"] >= DEV_RECALL_FLOOR, res
    assert res["precision"] >= DEV_PRECISION_FLOOR, res
    bt = res["by_type"]
    for typ in ("DATE", "EMAIL", "SSN", "IP", "URL", "ID"):
        assert bt[typ]["recall"] >= 0.97, (typ, bt[typ])
    assert bt["PHONE"]["recall"] >= 0.95
    assert bt["PERSON"]["recall"] >= 0.95
    assert bt["ADDRESS"]["recall"] >= 0.95
    # tuned on the first 700 records only: the last 300 must hold up too
    held_out = evaluate(records[700:])
    assert held_out["recall"] >= 0.93 and held_out["by_type"]["PERSON"]["recall"] >= 0.94, held_out


# --- behaviour added with the census name lists and address tails -------------------------------------

@pytest.mark.parametrize("text, gone", [
    ("Tumor board: Castellano and Whitfield agree; Johnson reports fatigue.", ["Castellano", "Whitfield", "Johnson"]),
    ("Our 3 founders: Quarnby, Graves and Reed.", ["Quarnby", "Graves", "Reed"]),  # eponyms beside a name
    ("The note says Dale and White were present.", ["Dale", "White"]),
])
def test_lone_and_coordinated_surnames(text, gone):
    r = redact(text)
    for g in gone:
        assert g not in r.text, r.text


def test_words_that_are_surnames_stay_without_a_name_beside_them():
    text = "Head and neck cancer; Graves disease; white cells and brown fat; Black box warning."
    assert redact(text).text == text


def test_address_keeps_going_over_place_particles_and_country():
    text = "Mail it to 370 Fourth Avenue Apt. 39, Mora de Rubielos, Spain 16200 please."
    r = redact(text)
    assert r.text == "Mail it to [ADDRESS_1] please.", r.text


def test_existing_placeholders_keep_their_numbers():
    r = redact("Dr. [PERSON_1] agreed. Spoke with Dr. Quennell at (617) 555-0142.")
    assert r.text == "Dr. [PERSON_1] agreed. Spoke with Dr. [PERSON_2] at [PHONE_1]."


@pytest.mark.parametrize("text, gone", [
    ("The scan was reviewed with Szczepanowski before the visit.", "Szczepanowski"),
    ("Results were faxed to Ogunbanjo yesterday.", "Ogunbanjo"),
    ("Her maiden name is Key", "Key"),  # an ordinary word after a naming cue
])
def test_unknown_capitalised_word_inside_a_sentence_is_a_name(text, gone):
    assert gone not in redact(text).text


def test_brand_drugs_devices_and_procedures_survive_mid_sentence():
    text = ("Started Keytruda; prior Opdivo, Herceptin and Perjeta. Consider Tagrisso, Lynparza, Ibrance, Xeloda, "
            "Gleevec, Avastin, Erbitux, Rituxan, Revlimid, Imbruvica, Zofran, Decadron, Neulasta, Ativan, "
            "Compazine, Emend, Lomotil, Tylenol, Lasix, Lovenox, Eliquis and Xarelto. Foley catheter, Mohs "
            "surgery, Whipple procedure and Mediport placement; pT1a Tis N0; Hedgehog pathway inhibitors; "
            "Disclaimer and Illustrations removed; Thymectomy planned.")
    r = redact(text)
    assert r.text == text, [text[s:e] for _, s, e in r.spans]


def test_ancestry_and_nationality_survive():
    text = ("Ashkenazi Jewish ancestry (BRCA founder variants); of Croatian descent; a Pakistani woman; "
            "Hispanic female; Japanese patient.")
    assert redact(text).text == text


@pytest.mark.parametrize("text, gone", [
    ("Mail: 638 2229 Wolmarans St\nCaxias do Sul, RS 24893, thanks", ["Caxias", "Sul"]),
    ("Address: 590 Edington Drive\nToronto\n, ON\n Canada 27539", ["Toronto", "ON", "27539"]),
    ("User: 6108 Friedhofstrasse 33 Suite 979 BIBER Upper Austria", ["BIBER", "Upper"]),
])
def test_address_block_tails(text, gone):
    r = redact(text)
    for g in gone:
        assert g not in r.text, r.text


def test_states_are_not_people_but_people_named_after_states_are():
    assert redact("Moved from Georgia to North Carolina.").text == "Moved from Georgia to North Carolina."
    r = redact("Dr. Virginia Hale called; Georgia Brooks agreed.")
    assert "Virginia" not in r.text and "Hale" not in r.text and "Georgia" not in r.text


def test_places_with_a_prefix_word_are_removed_whole():
    r = redact("She flew to New Westminster, then back to Port Paien.")
    assert "Westminster" not in r.text and "Paien" not in r.text and "New" not in r.text, r.text


def test_phone_after_a_calling_cue():
    r = redact("They're not answering at 99 668472; you can reach her at 0412 88 9301.")
    assert "668472" not in r.text and "9301" not in r.text
    assert redact("Call me at 3 pm; reached at 12 weeks.").text == "Call me at 3 pm; reached at 12 weeks."


def test_firm_names():
    r = redact("Thomas and Sons, Gradiant Research LLC and Allstate Insurance Group replied; "
               "Lopez, Santos and Coleman is a design agency.")
    assert r.text == ("[ORGANIZATION_1], [ORGANIZATION_2] and [ORGANIZATION_3] replied; "
                      "[ORGANIZATION_4] is a design agency."), r.text
    # people with a title keep one placeholder each
    assert redact("Drs. Smith, Jones and Lee agreed.").text == "Drs. [PERSON_1], [PERSON_2] and [PERSON_3] agreed."


def test_region_code_after_a_city_in_capitals():
    r = redact("I once lived in 416 Kiannonkatu 98 Apt. 934 OULU NO. Now elsewhere.")
    assert "OULU" not in r.text and " NO." not in r.text and r.text.endswith("Now elsewhere."), r.text


def test_recipient_of_a_giving_verb_is_a_person():
    assert redact("The nurse gave Grace her medication.").text == "The nurse gave [PERSON_1] her medication."
    assert redact("He gave Zofran his approval.").text == "He gave Zofran his approval."


def test_common_surnames_that_are_words_and_credentials():
    r = redact("Smith reports fatigue; seen with Miller and Turner. J. Smith, MD. Signed Grace Walker, NP.")
    for g in ("Smith", "Miller", "Turner", "Grace", "Walker"):
        assert g not in r.text, r.text
    # an English phrase before an ambiguous credential is not a person ("CNS" = central nervous system)
    text = "The Histiocyte Society CNS LCH Committee met; Ph+ ALL; p.Cys525Alafs; | Tisb | DCIS |"
    assert redact(text).text == text


def test_speaker_label_after_a_naming_question_is_not_the_name():
    r = redact("Bot: What's the name on the account? User: Ingeborg Halvorsen")
    assert r.text == "Bot: What's the name on the account? User: [PERSON_1]", r.text


def test_eponyms_with_common_surnames_survive():
    text = ("Baker cyst on ultrasound. Bell palsy resolved. Bence Jones protein positive. Glasgow Coma Scale 15. "
            "Wilson disease excluded. Hickman line placed; Ommaya reservoir. Richter transformation. Virchow node. "
            "Breslow thickness 2 mm, Clark level IV. Nottingham grade 2; Bloom-Richardson score 7. Auer rods seen.")
    r = redact(text)
    assert r.text == text, [text[s:e] for _, s, e in r.spans]
    assert redact("Seen by Dr. Baker; Mr. Bell called.").text == "Seen by Dr. [PERSON_1]; Mr. [PERSON_2] called."


def test_double_barrelled_surnames_but_not_eponym_pairs():
    r = redact("Ramsey-Johnson agreed; Ms. Garcia-Roberson called.")
    assert "Ramsey" not in r.text and "Roberson" not in r.text
    text = "Lambert-Eaton syndrome; Bloom-Richardson score 7; Stevens-Johnson; Kaplan-Meier; Mann-Whitney."
    assert redact(text).text == text


# --- date intervals ----------------------------------------------------------------------------------

def _tokens_of(value: str) -> set[str]:
    import re
    return set(re.findall(r"\w+", value))


@pytest.mark.parametrize("first, second", [
    ("03/04/2021", "05/06/2021"),                 # US m/d/y
    ("2021-03-04", "2021-05-06"),                 # ISO
    ("March 4, 2021", "May 6, 2021"),
    ("4 Mar 2021", "6 May 2021"),
    ("4th of March, 2021", "May 6th, 2021"),
    ("04.03.2021", "06.05.2021"),                 # European d.m.y
    ("2021-03-04 09:15", "May 6, 2021"),          # mixed formats, time ignored
])
def test_interval_survives(first, second):
    r = redact(f"Diagnosed {first}, progression on {second}.")
    assert r.text == "Diagnosed [DATE_1], progression on [DATE_2 (+63 days)]."
    assert r.counts == {"DATE": 2}


def test_negative_offset_and_singular():
    r = redact("Surgery 05/06/2021. Biopsy had been done 05/04/2021, CT 05/05/2021.")
    assert r.text == "Surgery [DATE_1]. Biopsy had been done [DATE_2 (-2 days)], CT [DATE_3 (-1 day)]."


def test_month_precision_offsets_in_months():
    r = redact("Diagnosed March 2021; relapse 09/2021; last seen Feb 2020; scan on 06/15/2021.")
    assert r.text == ("Diagnosed [DATE_1]; relapse [DATE_2 (+6 months)]; last seen [DATE_3 (-13 months)]; "
                      "scan on [DATE_4 (+3 months)].")


def test_unparseable_dates_keep_plain_placeholder_and_anchor_is_named():
    # no year / two-digit year: not parsed; the first parseable date (DATE_3) is the anchor
    r = redact("Seen Mar 14 and on 3/14/22; diagnosed 01/10/2021, treated 01/20/2021.")
    assert r.text == ("Seen [DATE_1] and on [DATE_2]; diagnosed [DATE_3], "
                      "treated [DATE_4 (+10 days from DATE_3)].")


def test_impossible_us_reading_falls_back_to_day_first():
    # 12/03 is read as December 3 (US order); 13/03 can only be March 13
    r = redact("Seen 12/03/2021 and 13/03/2021.")
    assert r.text == "Seen [DATE_1] and [DATE_2 (-265 days)]."


def test_repeated_date_is_stable_across_spellings():
    r = redact("Started FOLFOX 03/04/2021. On 05/06/2021 progression. FOLFOX had begun March 4, 2021; "
               "restaged 05/06/2021.")
    assert r.text.count("[DATE_1]") == 2 and r.text.count("[DATE_2 (+63 days)]") == 2
    assert r.counts == {"DATE": 2}


def test_no_original_date_token_survives():
    dates = ["March 4, 2021", "07/19/2021", "2022-01-02", "Sept 30th, 2021", "November 2022"]
    text = "Timeline: " + "; ".join(dates) + "."
    r = redact(text)
    assert "2021" not in r.text and "2022" not in r.text
    out_tokens = _tokens_of(r.text)
    for d in dates:
        assert not (_tokens_of(d) & out_tokens), (d, r.text)
    assert r.text == ("Timeline: [DATE_1]; [DATE_2 (+137 days)]; [DATE_3 (+304 days)]; "
                      "[DATE_4 (+210 days)]; [DATE_5 (+20 months)].")


def test_existing_interval_placeholders_are_kept_and_numbered_after():
    first = redact("Diagnosed 03/04/2021, progression on 05/06/2021.").text
    assert PLACEHOLDER_RE.fullmatch("[DATE_2 (+63 days)]")
    assert PLACEHOLDER_RE.fullmatch("[DATE_4 (-3 months from DATE_3)]")
    r = redact(first + " Reviewer: restaged 07/01/2021 and 07/11/2021.")
    assert r.text == ("Diagnosed [DATE_1], progression on [DATE_2 (+63 days)]. Reviewer: restaged [DATE_3] "
                      "and [DATE_4 (+10 days from DATE_3)].")
    assert redact(r.text).text == r.text  # idempotent
    assert len(PLACEHOLDER_RE.findall(r.text)) == 4


def test_interval_placeholders_do_not_confuse_fact_extraction():
    from engine.facts import extract_facts
    text = ("Stage IIA breast cancer diagnosed 03/04/2021, stage unchanged on 05/06/2021 [note 4 of 12]. "
            "ECOG 1. HER2-negative. Progression 04/04/2024; PD-L1 22% on 04/05/2024.")
    red = redact(text).text
    assert "[DATE_2 (+63 days)]" in red and "[DATE_3 (+1127 days)]" in red
    f = extract_facts(red, genes=["HER2", "BRCA2"], treatment_keywords=["chemotherapy"], rare_cancers=[])
    assert f.stage == "II" and f.performance_status == "ECOG 1"
    assert f.cancer_type == "breast cancer"
    assert all("day" not in m for m in f.markers) and "PD-L1 22%" in f.markers


# --- street-address grammar (made-up addresses) -------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    # a crossing: the cross street joined by "and" / "&" belongs to the address
    ("Deliver to Tamsin and 14 Corbel Road.", "Deliver to [ADDRESS_1]."),
    ("Meet me at Orrin & Vellastraat 9 at noon.", "Meet me at [ADDRESS_1] at noon."),
    # street-type words written as a separate word after the name (Hungarian, Estonian, Latvian)
    ("The studio is at Kálvária u. 27, Szeged.", "The studio is at [ADDRESS_1]."),
    ("Mail it to Vaarika tee 12, Tartu.", "Mail it to [ADDRESS_1]."),
    ("Her flat is on Kalnciema iela 40, near the river.", "Her flat is on [ADDRESS_1], near the river."),
    # a lower-case non-English word inside the street name
    ("We met at Bajcsy zsilinszky út 14 last May.", "We met at [ADDRESS_1] last May."),
    # a return address: the street is the tail of the words before the number
    ("Please return it to Marbury and Quillon 58 if undelivered.",
     "Please return it to [ADDRESS_1] if undelivered."),
    # house number + name + unit, the street type left out (the number pair is not a phone number)
    ("Ship to 88120 4471 Wrenfield Suite 12, Dover.", "Ship to [ADDRESS_1]."),
    # a line that opens with a unit: the line above is the street line
    ("Orvath 22 Melk Dam\nSuite 301\nStavanger\nNorway 4011", "[ADDRESS_1]\n[ADDRESS_1]\n[ADDRESS_1]\n[ADDRESS_1]"),
    # an initial inside a street name (lower-case text)
    ("send to 77 rua carlos b teixeira 4 apt 2", "send to [ADDRESS_1]"),
])
def test_street_address_grammar(text, expected):
    assert redact(text).text == expected


def test_address_starts_at_the_street_name_not_at_the_sentence():
    r = redact("Brannigan lives on Ostergasse 4 with his dog.")
    assert r.text == "[PERSON_1] lives on [ADDRESS_1] with his dog.", r.text
    assert redact("Mail goes to 12 Oak St. in town").text == "Mail goes to [ADDRESS_1] in town"


@pytest.mark.parametrize("text", [
    "Tumors measuring 2 cm; GISTs measuring 3 cm; tumors bearing 9p loss.",
    "Days 1 to 21 of a 28-day cycle; days 1 to 5 of a 28 day cycle.",
    "In 2 CheckMate 651 arms; 177 Lu-DOTA 0 Tyr3 octreotate; study 2003 CL 001 closed.",
    "Returned to clinic 2 weeks later; is on Keytruda 200 mg; returned to Texas 3 years ago.",
    "Plan:\n2 cycles of FOLFOX 4\nThen restage.",
])
def test_clinical_numbers_are_not_addresses(text):
    assert redact(text).text == text


# --- organisations and places named by their context (made-up names) ----------------------------------

@pytest.mark.parametrize("text, expected", [
    # letterhead: the nearest line above the street that is not already redacted is the company
    ("Maren Ostby\nField engineer\nQuillfeather\n14 Larch Road\nBergen",
     "[PERSON_1]\nField engineer\n[ORGANIZATION_1]\n[ADDRESS_1]\n[ADDRESS_1]"),
    ("Maren Ostby\nQuillfeather\nMaren Ostby\n14 Larch Road\nBergen",
     "[PERSON_1]\n[ORGANIZATION_1]\n[PERSON_1]\n[ADDRESS_1]\n[ADDRESS_1]"),
    # a job title made of ordinary words is not a company
    ("Maren Ostby\nHead nurse\n14 Larch Road\nBergen", "[PERSON_1]\nHead nurse\n[ADDRESS_1]\n[ADDRESS_1]"),
    # a venue named right before an address
    ("Meet at Brimblecombe, 22 Ash Road, Leeds", "Meet at [ORGANIZATION_1], [ADDRESS_1]"),
    # an employer after "work for / employed by"; "works at home" is not one
    ("She worked for Zentrovix as a clerk.", "She worked for [ORGANIZATION_1] as a clerk."),
    ("Patient works at Walmart; previously employed by Kroger.",
     "Patient works at [ORGANIZATION_1]; previously employed by [ORGANIZATION_2]."),
    ("She works at home on Fridays.", "She works at home on Fridays."),
    # "X is a ... company"
    ("Quorvane is a logistics company.", "[ORGANIZATION_1] is a logistics company."),
    # lower-case text with a company suffix
    ("he is from brackenridge dynamics inc. and likes golf", "he is from [ORGANIZATION_1] and likes golf"),
    # bodies named by their kind keep the kind: the name is what identifies
    ("The Halvorsen Orchestra played.", "The [ORGANIZATION_1] Orchestra played."),
    ("The Berg, Ruiz and Tamm Orchestra played.", "The [ORGANIZATION_1] Orchestra played."),
    # a district in brackets after a place; a state in brackets stays with the state rule
    ("She lives in Brookvale (Harbor) now.", "She lives in [LOCATION_1] now."),
    ("Moved to Ohio (USA) in 2010.", "Moved to Ohio (USA) in 2010."),
])
def test_context_organisations_and_places(text, expected):
    assert redact(text).text == expected


def test_place_after_in_within_prose_after_a_capitalised_common_word():
    # "Global" before "in" looks like a Title Case heading; the comma after the place says prose
    assert "Tarsvik" not in redact("A year at Brenwick Global in Tarsvik, which later merged.").text


@pytest.mark.parametrize("text", [
    "The drug is a kinase inhibitor; the clinic is a teaching hospital; Medicare is a federal insurer.",
    "Further Evidence to Tip the Scales.",
    "Per the National Cancer Institute and Eastern Cooperative Oncology Group criteria.",
    "pdq: works for the nci and nih.",
])
def test_clinical_prose_is_not_an_organisation(text):
    assert redact(text).text == text


# --- dates of birth and intervals that could show an age over 89 ------------------------------------

def test_date_of_birth_has_no_interval_and_is_never_the_anchor():
    r = redact("Patient Harold Finch, DOB 02/03/1929, seen 04/05/2025 and 04/19/2025. He is 96 years old.")
    assert r.text == ("Patient [PERSON_1], DOB [DATE_1], seen [DATE_2] and [DATE_3 (+14 days from DATE_2)]. "
                      "He is [AGE_1] years old.")


@pytest.mark.parametrize("cue", ["DOB", "DOB:", "D.O.B.:", "date of birth", "Date of Birth (mm/dd/yyyy):",
                                 "birth date", "born on", "born", "b."])
def test_birth_cues(cue):
    r = redact(f"Visit 2021-03-04. {cue} 05/06/1950. Next visit 2021-05-06.")
    assert r.text.endswith("[DATE_2]. Next visit [DATE_3 (+63 days)].")  # DOB: plain; intervals from the visit


def test_date_of_birth_repeated_without_cue_stays_plain():
    r = redact("Seen 04/05/2025. DOB 02/03/1949. Birthday 02/03/1949 celebrated; seen again 04/06/2025.")
    assert r.text == "Seen [DATE_1]. DOB [DATE_2]. Birthday [DATE_2] celebrated; seen again [DATE_3 (+1 day)]."


@pytest.mark.parametrize("text", ["Born in 1929, seen 04/05/2025.", "DOB: 1929. Seen 04/05/2025.",
                                  "Year of birth 1929; seen 04/05/2025."])
def test_year_of_birth_is_redacted(text):
    r = redact(text)
    assert "1929" not in r.text and r.counts["DATE"] == 2


def test_bare_years_without_a_birth_cue_stay():
    assert redact("Diagnosed in 2019, born in Ohio.").text == "Diagnosed in 2019, born in Ohio."


def test_unlabelled_birth_date_cannot_become_an_age_interval():
    # a date of birth the cues miss is the anchor: dates 96 years later get no interval from it, but keep
    # their own intervals among themselves
    r = redact("Harold Finch 02/03/1929. Visit 04/05/2025, CT 06/05/2025.")
    assert r.text == "[PERSON_1] [DATE_1]. Visit [DATE_2], CT [DATE_3 (+61 days from DATE_2)]."
    assert "days)" not in r.text.split("[DATE_2]")[0]


def test_intervals_never_span_more_than_89_years_together():
    # each within 89 years of the anchor, but 1930 and 2025 are 95 years apart: the later one stays plain
    r = redact("Events: 01/01/1975; 01/01/1930; 01/01/2025.")
    assert r.text == "Events: [DATE_1]; [DATE_2 (-16436 days)]; [DATE_3]."


def test_a_kept_age_shortens_the_intervals():
    # 85 years old plus an interval of ten years would be an age of 95
    r = redact("85-year-old woman, diagnosed 01/05/2010, relapse 03/09/2020, seen 04/01/2020, CT 01/06/2010.")
    assert r.text == ("85-year-old woman, diagnosed [DATE_1], relapse [DATE_2], "
                      "seen [DATE_3 (+23 days from DATE_2)], CT [DATE_4 (+1 day)].")
    younger = redact("62-year-old woman, diagnosed 01/05/2010, relapse 03/09/2020.")
    assert younger.text == "62-year-old woman, diagnosed [DATE_1], relapse [DATE_2 (+3716 days)]."


# --- hospital short names, lower-case titles, initials -----------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("Transferred from Mass General after the biopsy.", "Transferred from [ORGANIZATION_1] after the biopsy."),
    ("Seen at Mass General Hospital and Toronto General.", "Seen at [ORGANIZATION_1] and [ORGANIZATION_2]."),
    ("Second opinion at Mass General Brigham.", "Second opinion at [ORGANIZATION_1]."),
])
def test_hospital_named_general(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text", [
    "The Surgeon General warned about tobacco. General Information About Stage IV.",
    "Treatment Option Overview General Approach", "In General, patients do well.",
    "A pelvic mass. General appearance fine.",
])
def test_general_in_prose_is_not_an_organisation(text):
    assert redact(text).text == text


@pytest.mark.parametrize("text, expected", [
    ("Discussed with dr. kowalski today.", "Discussed with dr. [PERSON_1] today."),
    ("Reviewed with dr. anna kowalski and mr. smith.", "Reviewed with dr. [PERSON_1] and mr. [PERSON_2]."),
    ("Later dr. kowalski agreed; Kowalski called.", "Later dr. [PERSON_1] agreed; [PERSON_1] called."),
])
def test_lower_case_title_and_name_in_mixed_case_text(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text", [
    "Plan per Dr. Smith: dr. said ok, dr. will call back.", "Tremor onset 5 ms. after the stimulus.",
])
def test_lower_case_title_before_prose_is_kept(text):
    out = redact(text).text
    assert "dr. said" in out or "ms. after" in out


@pytest.mark.parametrize("text, expected", [
    ("Patient was seen by MT on rounds.", "Patient was seen by [PERSON_1] on rounds."),
    ("pt MT reports fatigue.", "pt [PERSON_1] reports fatigue."),
    ("Discussed with JRT; per Dr. MT the plan stands.",
     "Discussed with [PERSON_1]; per Dr. [PERSON_2] the plan stands."),
])
def test_initials_after_a_person_cue(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text", [
    "Seen by PT and OT today; discussed with IR; pt NPO after midnight; per NCCN; pt HER2+ ER+.",
    "Confirmed by CT and treated with RT. Lymphopenia is seen with HIV infection.",
    "An independent review committee (IRC) reported responses; response per IRC assessment.",
])
def test_clinical_capitals_after_cues_are_not_initials(text):
    assert redact(text).text == text


def test_all_capitals_notes_have_no_initials_rule():
    text = "PT SEEN BY OT. PT HAS PAIN. PER DR. ABC THE PLAN IS OK."
    assert "[PERSON" not in redact(text).text.split("DR.")[0]


# --- re-audit 3: capitalised title before a lower-case name, nurse, particles, ages, hospitals, years --------

@pytest.mark.parametrize("text, expected", [
    ("Seen by Dr. o'brien on rounds.", "Seen by Dr. [PERSON_1] on rounds."),
    ("Dr. kowalski reviewed the scan.", "Dr. [PERSON_1] reviewed the scan."),
    ("Discussed with nurse j. smith today.", "Discussed with nurse [PERSON_1] today."),
    ("Call back from Nurse kowalski re labs.", "Call back from Nurse [PERSON_1] re labs."),
    ("Seen by dr. van der berg on Monday.", "Seen by dr. [PERSON_1] on Monday."),
    ("Dr. de la cruz saw her in clinic.", "Dr. [PERSON_1] saw her in clinic."),
])
def test_title_before_a_lower_case_name_in_mixed_case_text(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text", [
    "The nurse navigator called. Nurse said the CT was fine. The nurse practitioner saw him.",
    "Plan per Dr. Smith: Dr. said ok, dr. will call back.",
    "Dr. van agreed",  # a particle with nothing name-like after it
])
def test_title_before_prose_is_kept(text):
    out = redact(text).text
    assert "nurse navigator" in out or "said ok" in out or "van agreed" in out
    assert "Nurse said" in out or "Dr. said" in out or "van agreed" in out


@pytest.mark.parametrize("text", [
    "He is 94 and lives alone.", "she's 96, frail.", "The patient is now 91.", "aged 94", "94 yo man",
    "94-year-old man", "age: 94", "Age 94.", "a ninety-four-year-old woman", "aged ninety-one", "pt is 102.",
    "94-y-o man", "age 94y",
])
def test_ages_over_89_in_every_common_phrasing(text):
    r = redact(text)
    assert not any(n in r.text for n in ("94", "96", "91", "102", "ninety")), r.text
    assert r.counts.get("AGE") == 1


@pytest.mark.parametrize("text", [
    "He is 94 kg.", "She is 95% adherent.", "The MAP is 94.", "he is 90/60 today", "she is 98.6 F",
    "A 72-year-old man; he is 72.",
])
def test_numbers_that_are_no_age_over_89_stay(text):
    assert redact(text).text == text


@pytest.mark.parametrize("text, expected", [
    ("Referred from Brigham and Women's; follow-up at MGH.",
     "Referred from [ORGANIZATION_1]; follow-up at [ORGANIZATION_2]."),
    ("Seen at Brigham and Women's Hospital, then BWH clinic.", "Seen at [ORGANIZATION_1], then [ORGANIZATION_2] clinic."),
    ("Second opinion at Dana-Farber and UCSF.", "Second opinion at [ORGANIZATION_1] and [ORGANIZATION_2]."),
])
def test_well_known_hospitals_without_a_head_noun(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text", [
    "MSK pain after R-CHOP; MSKCC risk group intermediate.",
    "The IFM/DFCI 2009 trial; mgh is not a word here.",
])
def test_clinical_abbreviations_are_no_hospitals(text):
    assert redact(text).text == text


@pytest.mark.parametrize("text, year", [
    ("Diagnosed at age 40 in 1960.", "1960"), ("In 1961, aged 40, she had TB.", "1961"),
    ("Nephrectomy in 1962 (age 40).", "1962"),
])
def test_a_year_given_with_the_age_then_is_a_year_of_birth(text, year):
    r = redact(text)
    assert year not in r.text and r.counts["DATE"] == 1 and "40" in r.text


def test_bare_years_stay_as_the_docstring_says():
    import engine.phi as phi
    text = "Diagnosed in 1960 with TB; relapse in 2019; osimertinib approved in 2015."
    assert redact(text).text == text
    assert "a bare year standing alone" in phi.__doc__ and "no calendar date keeps its year" in phi.__doc__


def test_our_demo_titles_are_not_names():
    # "Demo" is also a surname; a reviewer's edited answer quotes "Treatment Overview (Demo)" titles
    assert redact("Breast Cancer: Treatment Overview (Demo)").text == "Breast Cancer: Treatment Overview (Demo)"
    assert "[PERSON_1]" in redact("Seen by Dr. Demo today.").text


# --- a verb after a name is not part of it ------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("dr. smith saw her on 3/4", "dr. [PERSON_1] saw her on [DATE_1]"),  # a month and day is a date
    ("dr. smith said she is fine.", "dr. [PERSON_1] said she is fine."),
    ("dr. john smith saw her today.", "dr. [PERSON_1] saw her today."),
    ("dr. o'brien recommended surgery.", "dr. [PERSON_1] recommended surgery."),
    ("nurse j. smith called the patient.", "nurse [PERSON_1] called the patient."),
    ("dr. van der berg notes improvement.", "dr. [PERSON_1] notes improvement."),
    ("mr. elliott flew to clinic on friday.", "mr. [PERSON_1] flew to clinic on friday."),
    ("dr. melamed tolerated the call.", "dr. [PERSON_1] tolerated the call."),  # -ed surname, then a verb
    ("my father retired at the age of 45.", "my father retired at the age of 45."),
])
def test_lower_case_note_keeps_the_verb_after_a_name(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text, expected", [
    ("Dr. Smith Recommended adjuvant chemo.", "Dr. [PERSON_1] Recommended adjuvant chemo."),
    ("Dr. Smith Saw Her On 3/4.", "Dr. [PERSON_1] Saw Her On [DATE_1]."),
    ("Dr Smith Notes Improvement.", "Dr [PERSON_1] Notes Improvement."),
    ("Dr. Smith Agrees With Plan.", "Dr. [PERSON_1] Agrees With Plan."),
    ("Mr. Jones Tolerated Cycle 3 Well. Mrs. Jones Denies Pain.", "Mr. [PERSON_1] Tolerated Cycle 3 Well. "
     "Mrs. [PERSON_1] Denies Pain."),
    ("Dr. Patel Consulted For Neutropenic Fever; Dr. Lee Notified, Dr. Kim Aware.",
     "Dr. [PERSON_1] Consulted For Neutropenic Fever; Dr. [PERSON_2] Notified, Dr. [PERSON_3] Aware."),
    ("Nurse Kim Administered Cycle 2.", "Nurse [PERSON_1] Administered Cycle 2."),
    ("Dr. Kowalski Plan: Continue FOLFOX.", "Dr. [PERSON_1] Plan: Continue FOLFOX."),
    # after "Dr." a clinical noun does not make the name an eponym: the name used to survive whole
    ("Per Dr. Kowalski Tumor Board Recommends Surgery.", "Per Dr. [PERSON_1] Tumor Board Recommends Surgery."),
    # a census surname that is also a verb is still a name when capitalised
    ("Dr. Ahmed Said reviewed the scan.", "Dr. [PERSON_1] reviewed the scan."),
    ("Dr. Saw reviewed the scan.", "Dr. [PERSON_1] reviewed the scan."),
])
def test_title_case_verb_after_a_name_is_kept(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text, expected", [
    # the cancer center is one organisation, never "MD [PERSON_1]" (MD is no title or credential here)
    ("Second opinion at MD Anderson in May.", "Second opinion at [ORGANIZATION_1] in May."),
    ("Referred to M.D. Anderson; Dr. Anderson agreed.", "Referred to [ORGANIZATION_1]; Dr. [PERSON_1] agreed."),
    ("second opinion at md anderson.", "second opinion at [ORGANIZATION_1]."),
    ("Treated at MD Anderson Cancer Center.", "Treated at [ORGANIZATION_1]."),
    # its scales and prognostic models are clinical content and stay whole
    ("MD Anderson Symptom Inventory score 4; M. D. Anderson Dysphagia Inventory 60.",
     "MD Anderson Symptom Inventory score 4; M. D. Anderson Dysphagia Inventory 60."),
    ("Risk by the MD Anderson prognostic score.", "Risk by the MD Anderson prognostic score."),
])
def test_md_anderson_is_redacted_whole_or_kept_whole(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text, expected", [
    # ALL-CAPS titles and names: the name goes (it used to survive, or "DR" went as initials), the words after stay
    ("DR SMITH TO FOLLOW UP IN 2 WEEKS.", "DR [PERSON_1] TO FOLLOW UP IN 2 WEEKS."),
    ("Seen by DR SMITH today.", "Seen by DR [PERSON_1] today."),
    ("Discussed with DR. SMITH, who agrees.", "Discussed with DR. [PERSON_1], who agrees."),
    ("PT SEEN BY DR JOHN KOWALSKI, RECOMMENDED CHEMO.", "PT SEEN BY DR [PERSON_1], RECOMMENDED CHEMO."),
    ("DR KOWALSKI RECOMMENDED ADJUVANT CHEMO", "DR [PERSON_1] RECOMMENDED ADJUVANT CHEMO"),
    ("NURSE J. SMITH CALLED. MRS. JONES REPORTS PAIN.", "NURSE [PERSON_1] CALLED. MRS. [PERSON_2] REPORTS PAIN."),
    ("DR. VAN DER BERG SAW PATIENT.", "DR. [PERSON_1] SAW PATIENT."),
    ("Dr. SMITH reviewed the scan.", "Dr. [PERSON_1] reviewed the scan."),
    # a label that names a person takes an ALL-CAPS name (the label list had been lost in a comment)
    ("NAME: JOHN SMITH", "NAME: [PERSON_1]"),
    ("Patient name: JOHN SMITH. SEEN TODAY.", "Patient name: [PERSON_1]. SEEN TODAY."),
])
def test_all_capitals_titles_and_labels(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text", ["DR. CT SCAN TODAY.", "MS FLARE. MR GRADE 2.", "DR. REVIEWED THE SCAN."])
def test_all_capitals_title_before_clinical_words_is_kept(text):
    assert redact(text).text == text


@pytest.mark.parametrize("text, expected", [
    # a multi-line address block keeps its line breaks and the quoting or list markers of its lines: one address,
    # one placeholder on each of its lines
    ("> Alma Jensen\n> 91215 Harjukuja 54\n> Suite 318\n> SEINÄJOKI\n> Finland 38524\n\nThanks for all.",
     "> [PERSON_1]\n> [ADDRESS_1]\n> [ADDRESS_1]\n> [ADDRESS_1]\n> [ADDRESS_1]\n\nThanks for all."),
    ("Ship to:\n    12 Oak Street,\n    Springfield, IL 62704\nCall first.",
     "Ship to:\n    [ADDRESS_1],\n    [ADDRESS_1]\nCall first."),
])
def test_multi_line_address_keeps_the_layout(text, expected):
    r = redact(text)
    assert r.text == expected and r.counts["ADDRESS"] == 1


def test_windows_line_ends_redact_like_unix_ones():
    # with "\r\n" the address block used to fall apart: "Springfield" became a person and parts could survive
    note = ("Patient: Harriet Quellwood\nDOB: 04/17/1951\nAddress:\n  44 Larkspur Lane, Apt 3\n  Duluth, MN 55802\n"
            "> Alma Jensen\n> 91215 Harjukuja 54\n> Suite 318\n> SEINÄJOKI\n> Finland 38524\n\nSeen 2024-05-02.")
    unix = redact(note)
    windows = redact(note.replace("\n", "\r\n"))
    assert windows.text == unix.text.replace("\n", "\r\n")
    assert windows.counts == unix.counts == {"PERSON": 2, "DATE": 2, "ADDRESS": 2}


@pytest.mark.parametrize("text, expected", [
    # a double first name is no clinical compound ("T-cell"): the whole name used to survive
    ("Seen by Dr. Mary-Ann O'Neil today.", "Seen by Dr. [PERSON_1] today."),
    ("seen by dr. mary-ann o'neil today.", "seen by dr. [PERSON_1] today."),
    # a middle initial after a lower-case or ALL-CAPS first name: the surname used to survive
    ("Seen by dr. john a. smith today.", "Seen by dr. [PERSON_1] today."),
    ("SEEN BY DR. JOHN A. SMITH TODAY", "SEEN BY DR. [PERSON_1] TODAY"),
    ("T-cell lymphoma, Non-Hodgkin, Ph-positive ALL.", "T-cell lymphoma, Non-Hodgkin, Ph-positive ALL."),
])
def test_double_first_names_and_middle_initials_after_a_title(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text, expected", [
    # an ALL-CAPS name after a label that does not say "name" (it used to survive), and a census surname that
    # is also a rare word after a first name ("DOE")
    ("PATIENT: HARRIET QUELLWOOD DOB: 04/17/1951", "PATIENT: [PERSON_1] DOB: [DATE_1]"),
    ("CONTACT: JANE DOE (DAUGHTER)", "CONTACT: [PERSON_1] (DAUGHTER)"),
    ("seen by dr. jane doe today", "seen by dr. [PERSON_1] today"),
    ("PATIENT: STABLE, AFEBRILE. PATIENT: CT SCAN TODAY.", "PATIENT: STABLE, AFEBRILE. PATIENT: CT SCAN TODAY."),
])
def test_all_capitals_name_after_a_label(text, expected):
    assert redact(text).text == expected


def test_all_capitals_note_is_read_like_a_lower_case_one():
    # an ALL-CAPS note used to keep nearly every name (dev set in capitals: recall 0.36)
    text = ("HARRIET QUELLWOOD PRESENTED WITH COUGH. SEEN BY DR. TOBIAS RENWICK AT MGH ON 03/14/2024. "
            "PT SEEN BY OT. CAUSED BY HL; FOLLOWED BY IFRT AND BEACOPP. F/U WITH DR PATEL IN 3 MO.")
    assert redact(text).text == (
        "[PERSON_1] PRESENTED WITH COUGH. SEEN BY DR. [PERSON_2] AT [ORGANIZATION_1] ON [DATE_1]. "
        "PT SEEN BY OT. CAUSED BY HL; FOLLOWED BY IFRT AND BEACOPP. F/U WITH DR [PERSON_3] IN 3 MO.")
    assert redact(CLINICAL.upper()).text == CLINICAL.upper()


def test_dev_set_in_capitals_and_with_windows_line_ends():
    if not DEV_SET.exists():
        pytest.skip(f"dev set not present: {DEV_SET}")
    with DEV_SET.open(encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    shouted = [{"text": "".join(c.upper() if len(c.upper()) == 1 else c for c in r["text"]), "spans": r["spans"]}
               for r in records]
    res = evaluate(shouted)  # measured 0.877 / 0.981 (lower-case text: 0.890 / 0.968)
    assert res["recall"] >= 0.85 and res["precision"] >= 0.95, res
    crlf = []
    for r in records:  # the same labels, shifted by one for each "\n" before them
        t = r["text"]
        shift = list(accumulate((c == "\n" for c in t), initial=0))  # "\n"s before each offset
        crlf.append({"text": t.replace("\n", "\r\n"),
                     "spans": [{**sp, "start": sp["start"] + shift[sp["start"]], "end": sp["end"] + shift[sp["end"]]}
                               for sp in r["spans"]]})
    assert evaluate(crlf)["recall"] == evaluate(records)["recall"]


# --- text read with an already redacted context (a reviewer's note stored with the case) -------------------

CASE_CONTEXT = ("Patient [PERSON_1], DOB [DATE_1], seen by Dr. [PERSON_2] on [DATE_2]; visit "
                "[DATE_3 (+14 days from DATE_2)]. MRN [ID_1].")


def test_redact_after_numbers_new_placeholders_after_the_context():
    note = ("Discussed with Johnathan Smithers (MRN 12345678) and his wife Margaret at 617-555-0199 on 01/07/2025; "
            "seen again 01/10/2025 and March 2025")
    r = redact_after(note, CASE_CONTEXT)
    assert r.text == ("Discussed with [PERSON_3] (MRN [ID_2]) and his wife [PERSON_4] at [PHONE_1] on [DATE_4]; "
                      "seen again [DATE_5 (+3 days from DATE_4)] and [DATE_6 (+2 months from DATE_4)]")
    assert redact(note).text.startswith("Discussed with [PERSON_1] (MRN [ID_1]) and his wife [PERSON_2]")
    assert r.counts == redact(note).counts and r.spans == redact(note).spans


def test_redact_after_takes_several_contexts_and_keeps_copied_placeholders():
    r = redact_after("[PERSON_2] agrees; call John Smith, DOB 02/03/1950, on 04/05/2025.",
                     [CASE_CONTEXT, "Draft: ask [PERSON_5] and [DATE_7]"])
    # a copied placeholder keeps its meaning; a date of birth never anchors an interval
    assert r.text == "[PERSON_2] agrees; call [PERSON_6], DOB [DATE_8], on [DATE_9]."
    assert redact_after("Seen by Dr. Smith.", "").text == redact("Seen by Dr. Smith.").text == "Seen by Dr. [PERSON_1]."
    assert redact_after("", CASE_CONTEXT).text == ""
    # the new numbers also come after the text's own placeholders
    assert redact_after("[PERSON_9] and Jane Doe", CASE_CONTEXT).text == "[PERSON_9] and [PERSON_10]"


def test_redact_after_counts_an_age_the_context_keeps():
    # an 80-year-old in the case: no interval in the note may span 9 years or more (80 + 9 would be over 89)
    note = "Seen 01/07/2005 and again 01/10/2025."
    assert redact_after(note, "Patient [PERSON_1], DOB [DATE_1].").text == \
        "Seen [DATE_2] and again [DATE_3 (+7308 days from DATE_2)]."
    assert redact_after(note, "An 80-year-old, [PERSON_1], DOB [DATE_1].").text == "Seen [DATE_2] and again [DATE_3]."


# --- licence numbers after their state, Medicare / Medicaid numbers ------------------------------------------

@pytest.mark.parametrize("text,value", [
    ("License MA S1234567", "S1234567"),
    ("DL# CA D1234567", "D1234567"),
    ("license no. NY 123-456-789", "123-456-789"),
    ("Driver's license: TX 12345678", "12345678"),
    ("Nursing lic. MA 123456", "123456"),
    ("driver license ma s1234567 renewed", "s1234567"),
    ("Medicare number 1EG4-TE5-MK73", "1EG4-TE5-MK73"),
    ("MBI 1EG4TE5MK73", "1EG4TE5MK73"),
    ("Insurance: Medicare 1EG4-TE5-MK73, secondary BCBS", "1EG4-TE5-MK73"),
    ("Medicare HICN 123-45-6789A", "123-45-6789A"),
    ("Medicaid #: YH12345A", "YH12345A"),
    ("Her medicaid number is ab12345c.", "ab12345c"),
    ("Medi-Cal ID 90000000A", "90000000A"),
    ("Driver's License (MA): S1234567", "S1234567"),
    ("License state: MA, number: S1234567", "S1234567"),
    ("Medicare ID 1EG4 TE5 MK73", "TE5 MK73"),
])
def test_state_licences_and_medicare_medicaid_numbers(text, value):
    r = _assert_gone(text, value)
    assert "[ID_1]" in r.text or "[SSN_1]" in r.text, r.text
    for state in ("MA", "CA", "NY", "TX"):  # the issuing state alone is no identifier
        if f" {state} " in text:
            assert f" {state} " in r.text


@pytest.mark.parametrize("text", ["Her license in 2019 lapsed.", "ID IN 2019", "Medicare covers 80% of it.",
                                  "License (MA): 2019", "License state: MA, expires 2027",
                                  "Medicaid expansion in 2014 widened access."])
def test_licence_and_medicare_words_without_a_number_stay(text):
    assert redact(text).text == text


@pytest.mark.parametrize("text, expected", [
    # the city and state between a street and a ZIP code already claimed used to survive:
    # "[ADDRESS_1], Boston MA [LOCATION_1]"
    ("Lives at 123 Main St, Boston MA 02118", "Lives at [ADDRESS_1]"),
    ("123 Main St., Boston, MA 02118", "[ADDRESS_1]"),
    ("Address: 123 Main St Boston MA 02118.", "Address: [ADDRESS_1]."),
    ("She lives at 12 Oak Ave, New York NY 10001 with her son.", "She lives at [ADDRESS_1] with her son."),
    ("Ship to:\n  45 Elm Road,\n  Springfield IL 62704\nCall first.",
     "Ship to:\n  [ADDRESS_1],\n  [ADDRESS_1]\nCall first."),
])
def test_city_and_state_before_a_zip_join_the_address(text, expected):
    r = redact(text)
    assert r.text == expected and r.counts == {"ADDRESS": 1}


@pytest.mark.parametrize("text, expected", [
    ("He was treated in Houston last year.", "He was treated in [LOCATION_1] last year."),
    ("She was seen in Denver and near Galveston.", "She was seen in [LOCATION_1] and near [LOCATION_2]."),
    # a person cue elsewhere, a possessive, a citation or a listed first name keep PERSON
    ("Dr. Amy Houston saw her in Houston.", "Dr. [PERSON_1] saw her in [PERSON_1]."),
    ("Discussed in Johnson's clinic.", "Discussed in [PERSON_1]'s clinic."),
    ("She confided in Maria about the diagnosis.", "She confided in [PERSON_1] about the diagnosis."),
])
def test_a_lone_name_word_after_in_is_a_place(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text, expected", [
    # a time or place of care after a capitalised preposition in Title Case writing is no town
    ("Dr. Patel At Bedside", "Dr. [PERSON_1] At Bedside"),
    ("Discussed With Dr. Patel At Noon Today", "Discussed With Dr. [PERSON_1] At Noon Today"),
    # a closing line after an address block is no city
    ("Address: 12 Oak Street\nThanks", "Address: [ADDRESS_1]\nThanks"),
    ("Please send to 12 Oak Street,\nThanks!", "Please send to [ADDRESS_1],\nThanks!"),
    ("12 Oak Street\nKind regards,\nAnna Berg", "[ADDRESS_1]\nKind regards,\n[PERSON_1]"),
    # the city line itself still joins the block
    ("Address: 12 Oak Street\nSpringfield\nThanks", "Address: [ADDRESS_1]\n[ADDRESS_1]\nThanks"),
])
def test_title_case_care_words_and_closing_lines_are_kept(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text, expected", [
    # a city right before a state and a ZIP code, without a street, used to survive ("Duluth MN [LOCATION_1]")
    ("Duluth MN 55802", "[LOCATION_1] MN [LOCATION_2]"),
    ("Springfield, IL 62704", "[LOCATION_1], IL [LOCATION_2]"),
    ("Fort Worth TX 76104", "[LOCATION_1] TX [LOCATION_2]"),
    ("Ann Arbor, MI 48109", "[LOCATION_1], MI [LOCATION_2]"),  # the city, not the staging
    ("Ann Arbor stage IIB", "Ann Arbor stage IIB"),
    ("Dr. Houston, TX 77030", "Dr. [PERSON_1], TX [LOCATION_1]"),  # a title keeps the person
])
def test_city_before_a_state_and_zip(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text, expected", [
    ("123 Main St, Boston MA 02118-1234", "[ADDRESS_1]"),  # was "[ADDRESS_1] [PHONE_1]"
    ("Springfield IL 62704-1234", "[LOCATION_1] IL [LOCATION_2]"),
    ("call 12345-6789", "call [PHONE_1]"),  # without a state before it, still a phone
])
def test_zip_plus_four_after_a_state_is_no_phone(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text, expected", [
    # a labelled number written in digit groups used to lose only its first group ("DL [ID_1] 5678 9012")
    ("DL 1234 5678 9012", "DL [ID_1]"),
    ("MRN 1234 5678", "MRN [ID_1]"),
    ("License MA 1234 5678", "License MA [ID_1]"),
    # not over a dose or a count
    ("Case 1234 500 mg", "Case [ID_1] 500 mg"),
    ("MRN 12345678 2 cycles later", "MRN [ID_1] 2 cycles later"),
])
def test_labelled_numbers_in_digit_groups(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text, expected", [
    # a Title Case note kept the town: a capitalised common word before "In" read as a heading
    ("Patient Treated In Reading Last Year", "Patient Treated In [LOCATION_1] Last Year"),
    ("Patient Was Seen In Duluth On 03/04/2024", "Patient Was Seen In [LOCATION_1] On [DATE_1]"),
    ("Follow-Up in Duluth Next Week", "Follow-Up in [LOCATION_1] Next Week"),
    ("Follow-Up In Houston With Dr. Patel", "Follow-Up In [LOCATION_1] With Dr. [PERSON_1]"),
    # the organisation starts after the capitalised preposition, not at the start of the note
    ("Seen At Springfield Clinic For Follow-Up", "Seen At [ORGANIZATION_1] For Follow-Up"),
    ("Transferred From Bangor To Portland Medical Center",
     "Transferred From [LOCATION_1] To [ORGANIZATION_1]"),
    # ordinary capitalised words and headings stay
    # an English word after another verb is no town; a cooperative group after a number word is no organisation
    ("Patient Interested In Reading Materials", "Patient Interested In Reading Materials"),
    ("Results From Two Nordic Lymphoma Group Trials", "Results From Two Nordic Lymphoma Group Trials"),
])
def test_title_case_notes_lose_the_town(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text", [
    "Prognostic Factors in Folliculotropic Mycosis Fungoides",
    "Antibody Response to Ganglioside Vaccine",
    "Further Evidence to Tip the Scales.",
    "Seen In Clinic Today. Continue Treatment At Home.",
])
def test_title_case_headings_keep_their_clinical_words(text):
    assert redact(text).text == text


@pytest.mark.parametrize("text", [
    # PDQ prose in capitals lost its acronyms, regimens, trial names and adjectives as names: after a bare "by",
    # as a listed first name, or as an abbreviation the text defines in brackets
    "LOSS OF HETEROZYGOSITY (LOH) AT 11P15 IS COMMON. GENES ON 16Q, AS EVIDENCED BY LOH FOR THESE REGIONS.",
    "FOLFIRI FOLLOWED BY FOLFOX6 OR THE REVERSE SEQUENCE IN ADVANCED COLORECTAL CANCER.",
    "A COMPLETE RESPONSE BY SIOPEN AND CURIE SCORING. UPDATE BY CALGB ON TRIAL C9741.",
    "MYCOSIS FUNGOIDES MARKED BY FOLLICULOTROPIC, RATHER THAN EPIDERMOTROPIC, INFILTRATES.",
    "WHOLE-EXOME SEQUENCING (WES) FROM AMPLIFIED DNA. WES FROM NATIVE DNA.",
    "1. IN A PHASE III TRIAL ([KATHERINE](/CLINICALTRIALS/NCT01772472) [NCT01772472]), 1,486 PATIENTS.",
    "THE PHASE III NEOADJUVANT HERCEPTIN (NOAH) STUDY RANDOMLY ASSIGNED PATIENTS.",
    "STUDY 10, ARIEL2 AND ARIEL3 ENROLLED PATIENTS; THE PATRICIA STUDY DID NOT.",
    "PROLACTIN-PRODUCING, ALSO KNOWN AS LACTOTROPH, ADENOMAS.",
    # and English prose as street addresses
    "THE MAXIMUM DURATION OF PEMBROLIZUMAB WAS 24 MONTHS. THE PRIMARY END POINT WAS OS.",
    "5-FU ADMINISTERED VIA AMBULATORY PUMP OVER 46 H EVERY 2 WK.",
    "675 PATIENTS VIA THE COBAS 4800 TEST. RECURRENCES THAT TAKE PLACE WITHIN 6 MONTHS.",
    "CHROMOSOME 11 REPRESENTS A COMMON MECHANISM.",
])
def test_pdq_prose_in_capitals_is_kept(text):
    assert redact(text).text == text


@pytest.mark.parametrize("text, gone", [
    # the same rules still take names in capitals
    ("SEEN BY KOWALSKI. A SONG (NOT BY LUIZA GOMES).", ["KOWALSKI", "LUIZA", "GOMES"]),
    ("MET WITH DAUGHTER LAURA. THE LAURA TRIAL WAS DISCUSSED.", ["DAUGHTER LAURA"]),
    ("PT SEEN WITH DAUGHTER (MARIA) AT BEDSIDE. ENROLLED ON ARIEL2 TRIAL.", ["MARIA"]),
    ("PT LIVES AT 123 MAIN STREET, SPRINGFIELD IL 62704.", ["123", "MAIN"]),
    ("THE RESTAURANT IS AT 5521 119 COUNTESS CLOSE", ["COUNTESS"]),
])
def test_names_and_streets_in_capitals_still_go(text, gone):
    _assert_gone(text, *gone)


@pytest.mark.parametrize("text, expected", [
    # organisations typed in lower case had no rule but a company suffix (lower-cased dev set: ORG recall 0.32)
    ("pt seen at mercy hospital, then transferred to st. mary's medical center.",
     "pt seen at [ORGANIZATION_1], then transferred to [ORGANIZATION_2]."),
    ("referred from springfield memorial hospital to the university of iowa hospitals and clinics.",
     "referred from [ORGANIZATION_1] to the [ORGANIZATION_2] and clinics."),
    ("she is followed at mayo clinic; her husband works at allstate insurance group.",
     "she is followed at [ORGANIZATION_1]; her husband works at [ORGANIZATION_2]."),
    ("coden is a design agency based in naantali.", "[ORGANIZATION_1] is a design agency based in [LOCATION_1]."),
    ("the garmin orchestra was founded in 1971.", "the [ORGANIZATION_1] orchestra was founded in 1971."),
])
def test_lower_case_organisations(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text", [
    "the control group and a support group met at the local hospital, a community hospital and the cancer center.",
    "a teaching hospital; the veterans hospital; patients in the treatment group received care at the clinic.",
    "the drug is a kinase inhibitor; medicare is a federal insurer.",
    "PATIENTS IN THE FOLFOX GROUP HAD LONGER PFS THAN THE ECX GROUP; NATIONAL CANCER INSTITUTE OF CANADA TRIALS.",
])
def test_lower_case_kinds_of_hospital_and_groups_stay(text):
    assert redact(text).text == text


@pytest.mark.parametrize("text, expected", [
    # leaks found on hand-written oncology notes
    ("Bx by Dr. Yusuf Al-Khatib (IR) today.", "Bx by Dr. [PERSON_1] (IR) today."),  # "Al-" read as a clinical compound
    ("Insulin pump SN: NG1234567H; S/N 4471-22.", "Insulin pump SN: [ID_1]; S/N [ID_2]."),
    ("Records from Dr. Fenwick's office (Kettering Health Network).",
     "Records from Dr. [PERSON_1]'s office ([ORGANIZATION_1])."),
    ("Follow up on 4/2; stable since 11/14.", "Follow up on [DATE_1]; stable since [DATE_2]."),
    ("Patient lives at 77 Beacon St, Boston. Emergency contact: Marla.",
     "Patient lives at [ADDRESS_1]. Emergency contact: [PERSON_1]."),
    ("Lives at 77 Beacon St in Boston.", "Lives at [ADDRESS_1] in [LOCATION_1]."),
])
def test_leaks_on_hand_written_notes(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text", [
    "Continue on 1/2 tab daily; responded on 1/3 of patients; score on 3/4 items; ratio 4/2.",
    "Al-Anon meeting weekly. El-Nino effects.",
])
def test_fractions_and_hyphenated_words_stay(text):
    assert redact(text).text == text


@pytest.mark.parametrize("text, expected", [
    ("Fax cover sheet. Pt: HOLLOWAY, RUTH A.", "Fax cover sheet. Pt: [PERSON_1]."),
    ("Patient: Garcia, Maria L. DOB 1/2/1950", "Patient: [PERSON_1]. DOB [DATE_1]"),
    ("Patient portal username: hquimby1931", "Patient portal username: [ID_1]"),
    # not a patient, an employer or a city: physical therapy, a mechanism, a list of stages in capitals
    ("PT: Ambulating 100 ft with walker. Pt: stable, afebrile.",
     "PT: Ambulating 100 ft with walker. Pt: stable, afebrile."),
    ("It works by blocking CYP17.", "It works by blocking CYP17."),
    ("Stage table. PATIENTS WITH PATHOLOGICAL T3, T4, OR NODE-POSITIVE DISEASE (E.G., CT).",
     "Stage table. PATIENTS WITH PATHOLOGICAL T3, T4, OR NODE-POSITIVE DISEASE (E.G., CT)."),
    ("Mixed note. 5-FU ADMINISTERED VIA AMBULATORY PUMP OVER 22 H.",
     "Mixed note. 5-FU ADMINISTERED VIA AMBULATORY PUMP OVER 22 H."),
])
def test_labels_usernames_and_capitals_in_mixed_notes(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text, expected", [
    ("REFERRING: DR. NWACHUKWU, OBIORA\nCC: breast mass", "REFERRING: DR. [PERSON_1]\nCC: breast mass"),
    ("Seen by Dr. Okafor, Chidi (fellow).", "Seen by Dr. [PERSON_1] (fellow)."),
    ("Hub MAC 00:1A:2B:3C:4D:5E.", "Hub MAC [ID_1]."),
    ("Signed on 2025-03-09T14:22:07Z", "Signed on [DATE_1]"),
    ("PET/CT scheduled 2/25; labs drawn 3/1.", "PET/CT scheduled [DATE_1]; labs drawn [DATE_2]."),
])
def test_more_leaks_on_hand_written_notes(text, expected):
    assert redact(text).text == expected


@pytest.mark.parametrize("text", [
    "Dr. Smith, Oncology, agreed. Completed 2/3 of planned doses. Time 12:30:45.",
])
def test_department_after_a_doctor_and_fractions_stay(text):
    text_out = redact(text).text
    assert "Oncology" in text_out and "2/3" in text_out and "12:30:45" in text_out


def test_a_list_of_surnames_after_drs_stays_one_placeholder_each():
    r = redact("Tumor board: Drs. Feldman, Okonkwo, Lindqvist (rad onc), Chen (path).")
    assert r.text == "Tumor board: Drs. [PERSON_1], [PERSON_2], [PERSON_3] (rad onc), [PERSON_4] (path)."


def test_caseless_text_keeps_specialties_study_arms_and_imaging():
    text = ("UROLOGY CLINIC VISITS IN NONFEDERAL U.S. HOSPITALS; THE CO-OPERATIVE GROUP; PSMA-TARGETED PET IMAGING; "
            "ECX GROUP VERSUS EGFR TKI GROUP.")
    assert redact(text).text == text
    assert redact("SEEN AT MERCY HOSPITAL.").text == "SEEN AT [ORGANIZATION_1]."
