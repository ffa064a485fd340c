"""PHI redactor (engine/phi.py): gaps found after the main suite - month/day dates without a year or cue word,
New York boroughs, pager numbers and phone extensions, Title Case verbs read as names, lower-case employers -
and hand-written oncology notes with identifiers in awkward places."""

from __future__ import annotations

import pytest

from engine.phi import redact


def _gone(text: str, *values: str) -> str:
    out = redact(text).text
    for v in values:
        assert v not in out, f"{v!r} survived in {out!r}"
    return out


def _kept(text: str, *values: str) -> str:
    out = redact(text).text
    for v in values:
        assert v in out, f"{v!r} was redacted in {out!r}"
    return out


# --- 1. a month and day without a year and without a cue word ---

@pytest.mark.parametrize("text,values", [
    ("CT chest 2/11: new 8 mm nodule", ["2/11"]),
    ("seen 3/4, labs 3/18", ["3/4", "3/18"]),
    ("MRI brain 10/2 showed no new lesions.", ["10/2"]),
    ("PET/CT 12/14: FDG-avid right hilar node, SUV 7.2", ["12/14"]),
    ("C1D1 of FOLFOX 6/3, C2D1 6/17; labs 6/16 ok", ["6/3", "6/17", "6/16"]),
    ("Biopsy 4/22 showed adenocarcinoma.", ["4/22"]),
    ("9/30: called pt re path results", ["9/30"]),
    ("- 11/5 admitted for febrile neutropenia", ["11/5"]),
    ("Last chemo 7/9, nadir counts 7/16 and 7/19.", ["7/9", "7/16", "7/19"]),
    ("ED visit 1/28 for dyspnea", ["1/28"]),
    ("C3 AC 3/21, ddT to follow", ["3/21"]),
    ("Telephone encounter 4/17 9:40am: niece called", ["4/17"]),
    ("PROGRESS NOTE 10/22\nSUBJECTIVE: tired", ["10/22"]),
    ("Nurse triage 6/14 @ 14:05 - fever", ["6/14"]),
    ("New RLL nodule, compared with 2/3.", ["2/3"]),
])
def test_month_day_without_year_is_a_date(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("ECOG 0/1, 2/12 cores positive, 1/3 of patients, T1/T2, grade 2/3, 5/5 strength, BP 120/80, HER2 2/3",
     ["0/1", "2/12", "1/3", "T1/T2", "2/3", "5/5", "120/80"]),
    ("Gleason 4+3, 3/12 cores involved, PNI present", ["3/12"]),
    ("Strength 4/5 in the left leg; reflexes 2/4 symmetric.", ["4/5", "2/4"]),
    ("Nodes: 2/14 positive; ENE absent.", ["2/14"]),
    ("Responses were seen in 3/10 patients and 1/2 had stable disease.", ["3/10", "1/2"]),
    ("Take 1/2 tablet at night.", ["1/2"]),
    ("Response was compared with 2/3 of patients in the control arm.", ["2/3"]),
    ("CT grade 1/2 toxicity; pain 3/10 today.", ["1/2", "3/10"]),
    ("Biopsy: 1/3 cores with Gleason 3+3; 2/3 benign.", ["1/3", "2/3"]),
    ("PD-L1 CPS 1/10 per protocol", ["1/10"]),
    ("ER 2/8 Allred, PR 3/8", ["2/8", "3/8"]),
    ("MRI T2/FLAIR hyperintensity", ["T2/FLAIR"]),
    ("Labs: 2/3 tubes hemolyzed", ["2/3"]),
    ("Now cycle 2/6 of FOLFOX; chemo 3/6 given today.", ["2/6", "3/6"]),
    ("XRT 5/28 fx done, RT 12/30 fractions", ["5/28", "12/30"]),
    ("pain med seen 1/2 hour later", ["1/2"]),
    ("CT 5/10 mm nodules, MRI 2/3 cm", ["5/10", "2/3"]),
])
def test_fractions_and_scores_are_not_dates(text, values):
    _kept(text, *values)


# --- 2. New York boroughs ---

@pytest.mark.parametrize("text,values", [
    ("Patient lives in Queens with her daughter.", ["Queens"]),
    ("Address: 41-12 Main St, Flushing, Queens", ["Queens", "Flushing"]),
    ("Moved to the Bronx last year.", ["Bronx"]),
    ("He lives on Staten Island and commutes.", ["Staten Island"]),
    ("Works in Manhattan as a paralegal.", ["Manhattan"]),
    ("Grew up in Brooklyn, retired to Florida.", ["Brooklyn"]),
    ("Son drives her in from Brooklyn for each cycle.", ["Brooklyn"]),
    ("Lives alone in a walk-up in Harlem.", ["Harlem"]),
    ("She is from Flushing, Queens.", ["Flushing", "Queens"]),
    ("Lives in Astoria, Queens with partner.", ["Astoria", "Queens"]),
    ("Brooklyn resident, 3 children.", ["Brooklyn"]),
    ("Queens apartment, 4th floor walk-up", ["Queens"]),
    ("Social hx: lives in the bronx with son", ["bronx"]),
    ("social: from brooklyn, takes the bus from staten island", ["brooklyn", "staten island"]),
])
def test_new_york_boroughs_are_locations(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,value", [
    ("Transportation from Staten Island is difficult.", "Staten Island"),
    ("Social: lives with wife (Bronx), former bus driver.", "Bronx"),
    ("Residence: Staten Island, NY", "Staten Island"),
])
def test_boroughs_are_typed_as_locations(text, value):
    r = redact(text)
    s = text.index(value)
    assert ("LOCATION", s, s + len(value)) in r.spans, r.spans


@pytest.mark.parametrize("text,values", [
    ("Facial flushing after the infusion; Flushing resolved.", ["flushing", "Flushing"]),
    ("Brooklyn Smith is her daughter.", ["is her daughter"]),
])
def test_borough_words_in_other_senses(text, values):
    _kept(text, *values)


def test_borough_trial_name_in_capitals_is_kept():
    _kept("Daratumumab in the MANHATTAN trial (JAMA Oncol 2021).", "MANHATTAN")


# --- 3. pager numbers and phone extensions ---

@pytest.mark.parametrize("text,values", [
    ("Please page fellow, pager 4417, with results.", ["4417"]),
    ("Dr. on call: pgr #2231", ["2231"]),
    ("beeper 555 after hours", ["beeper 555"]),
    ("Call the clinic at x4521 to reschedule.", ["4521"]),
    ("Oncology nurse line ext. 3321", ["3321"]),
    ("transfer to extension 44 for scheduling", ["extension 44"]),
    ("Office 617-555-0134 x204", ["0134", "204"]),
    ("Reach me on ext 7789 or pager: 6612.", ["7789", "6612"]),
])
def test_pager_numbers_and_extensions_are_phones(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Extranodal extension 2 mm; extension 3 cm beyond the capsule.", ["2 mm", "3 cm"]),
    ("ER 95%, PgR 80%, HER2 1+", ["80%"]),
    ("ER H-score 240, PgR 150", ["150"]),
    ("Magnification x400 showed mitoses.", ["x400"]),
    ("WBC 4.5 x10^9/L; dexamethasone 4 mg x3 days", ["x10^9", "x3"]),
])
def test_clinical_numbers_are_not_extensions(text, values):
    _kept(text, *values)


# --- 4. Title Case verbs are no names ---

@pytest.mark.parametrize("text,gone,kept", [
    ("Lives In Springfield, Works At Acme Hardware", ["Springfield", "Acme"], ["Works"]),
    ("Lives In Springfield, Works At Home", ["Springfield"], ["Works", "Home"]),
    ("Patient Lives In Springfield, Sees Dr. Jones, Works At Acme Hardware", ["Springfield", "Jones", "Acme"],
     ["Sees", "Works"]),
    ("Lives In Duluth, Smokes Daily", ["Duluth"], ["Smokes"]),
    ("Lives In Springfield, Enjoys Fishing With Grandson", ["Springfield"], ["Enjoys"]),
    ("Lives In Springfield, Drinks Socially", ["Springfield"], ["Drinks"]),
    ("Lives In Springfield, Denies Alcohol", ["Springfield"], ["Denies"]),
    ("Lives With Wife In Dayton, Attends Church Weekly", ["Dayton"], ["Attends"]),
    ("Retired In Tampa, Plays Golf", ["Tampa"], ["Plays"]),
])
def test_title_case_verbs_after_a_place_are_kept(text, gone, kept):
    _gone(text, *gone)
    _kept(text, *kept)


@pytest.mark.parametrize("text,values", [
    ("Seen with Kowalski, Brandt and Oyelaran.", ["Kowalski", "Brandt", "Oyelaran"]),
    ("Family: Grace Liu, Works Liu", ["Grace", "Liu"]),
    ("Seen with Kowalski and Banks.", ["Kowalski", "Banks"]),
    ("Drs. Kowalski, Banks and Lee", ["Kowalski", "Banks", "Lee"]),
])
def test_real_names_in_lists_still_go(text, values):
    _gone(text, *values)


# --- 5. lower-case employers after "works at/for", "employed by/at" ---

@pytest.mark.parametrize("text,values", [
    ("He works at zillow as a data engineer.", ["zillow"]),
    ("She is employed by walmart, night shifts.", ["walmart"]),
    ("pt works for lockheed martin in procurement", ["lockheed"]),
    ("Social: employed at costco, nonsmoker", ["costco"]),
])
def test_lower_case_employer_after_work_cue(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("He works at home most days.", ["home"]),
    ("She works at night as a nurse.", ["night"]),
    ("works for the city, employed by the state", ["city", "state"]),
    ("employed at a bank, works at a hospital", ["bank", "hospital"]),
    ("works at pace with fatigue; employed by choice", ["pace", "choice"]),
])
def test_lower_case_work_cue_with_ordinary_words_is_kept(text, values):
    _kept(text, *values)


# --- found while writing notes ---

@pytest.mark.parametrize("text,values", [
    ("Pt at Sloan Kettering for 2nd opinion 3/12.", ["Sloan Kettering", "3/12"]),
    ("Dose reduced to 80% (level -1) on C4 (4/30).", ["4/30"]),
    ("CT (2/11): stable", ["2/11"]),
])
def test_more_month_day_dates(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("ORR (2/3) and grade (1/2)", ["2/3", "1/2"]),
    ("responses in 2 (2/10) patients; ECOG (0/1)", ["2/10", "0/1"]),
    ("Onc RN: Pt seen in infusion today. Charge RN aware. Heme NP to follow.", ["Onc RN", "Charge RN", "Heme NP"]),
])
def test_scores_in_brackets_and_services_are_kept(text, values):
    _kept(text, *values)


def test_nurse_names_before_credentials_still_go():
    _gone("Signed: Anna Berg RN. Kowalczyk RN to call.", "Anna", "Berg", "Kowalczyk")


# --- 6. districts outside New York: "<Title Case place>, <known city>" after a residence cue ---

@pytest.mark.parametrize("text,values", [
    ("Lives in Dorchester, Boston with wife.", ["Dorchester", "Boston"]),
    ("She is from South Side, Chicago.", ["South Side", "Chicago"]),
    ("Pt lives in Hollywood, Los Angeles.", ["Hollywood", "Los Angeles"]),
    ("Lives in Hackney, London with partner.", ["Hackney", "London"]),
    ("She lives in Hyde Park, Chicago, with her son.", ["Hyde Park", "Chicago"]),
    ("grew up in Little Havana, Miami", ["Little Havana", "Miami"]),
    ("Originally from the South Side of Chicago.", ["South Side", "Chicago"]),
    ("moved here from Roxbury, Boston in 2019", ["Roxbury", "Boston"]),
    ("Social: lives in dorchester, boston with daughter", ["dorchester", "boston"]),
    ("social hx: from south side, chicago; former welder", ["south side", "chicago"]),
])
def test_district_before_a_known_city_is_a_location(text, values):
    r = redact(text)
    for v in values:
        assert v not in r.text, f"{v!r} survived in {r.text!r}"
    assert {t for t, _, _ in r.spans} == {"LOCATION"}, r.spans


@pytest.mark.parametrize("text,values", [
    ("Lives in Boston, works as a teacher.", ["works as a teacher"]),
    ("Treated in London, Ontario per protocol.", ["per protocol"]),
    ("Lives alone, Chicago winters are hard on her.", ["winters"]),
    ("Responses in Stage IV, Boston criteria applied.", ["Stage IV"]),
])
def test_district_rule_keeps_prose(text, values):
    _kept(text, *values)



# --- 9. ranks and titles: the name after them goes, the title word stays (as "Dr." does) ---

@pytest.mark.parametrize("text,gone,kept", [
    ("Spoke with Sgt. Miller re: plan.", ["Miller"], ["Sgt."]),
    ("Lt. Garcia called back.", ["Garcia"], ["Lt."]),
    ("Capt. Brown, Rev. Green and Officer Stone visited.", ["Brown", "Green", "Stone"],
     ["Capt.", "Rev.", "Officer"]),
    ("Seen by Dr. Patel.", ["Patel"], ["Dr."]),
    ("Det. White from the precinct called.", ["White"], ["Det."]),
    ("Chaplain Rivers visited; Pastor Young prayed with family.", ["Rivers", "Young"], ["Chaplain", "Pastor"]),
    ("son is Sgt Marcus Bell, stationed abroad", ["Marcus", "Bell"], ["Sgt"]),
    ("spoke with sgt. miller (son) by phone", ["miller"], ["sgt."]),
])
def test_ranks_keep_the_title_and_lose_the_name(text, gone, kept):
    _gone(text, *gone)
    _kept(text, *kept)
    assert redact(text).spans and all(t == "PERSON" for t, _, _ in redact(text).spans)


@pytest.mark.parametrize("text,values", [
    ("Lt breast mass 2 cm; Lt. axillary node palpable.", ["Lt breast", "axillary"]),
    ("Officer training; police officer by trade.", ["training", "by trade"]),
    ("Annu Rev Med. 2019; Nat Rev Clin Oncol.", ["Med", "Clin Oncol"]),
    ("Chief complaint: cough. Major depression in remission.", ["Chief complaint", "Major depression"]),
])
def test_rank_words_in_other_senses_are_kept(text, values):
    _kept(text, *values)


# --- 7. employers that are English words, after a work cue ---

@pytest.mark.parametrize("text,values", [
    ("He works at target as a cashier.", ["target"]),
    ("He works at Target as a cashier.", ["Target"]),
    ("She is employed by Apple in sales.", ["Apple"]),
    ("works for Amazon in the warehouse", ["Amazon"]),
    ("Pt works at home depot, lifts heavy boxes.", ["home depot"]),
    ("Works part-time at Best Buy.", ["Best Buy"]),
    ("employed by delta as a mechanic", ["delta"]),
    ("son works for Shell on an oil rig", ["Shell"]),
])
def test_english_word_employer_after_work_cue(text, values):
    r = _gone(text, *values)
    assert "[ORGANIZATION_1]" in r, r


@pytest.mark.parametrize("text,values", [
    ("works at home", ["home"]),
    ("works at night", ["night"]),
    ("works at a school", ["a school"]),
    ("works for the city", ["the city"]),
    ("works at grocery store, stands all day", ["grocery store"]),
    ("works at nights and weekends", ["nights", "weekends"]),
    ("He works for himself as a plumber.", ["himself"]),
    ("works at local hospital as RN", ["local hospital"]),
    ("Lives In Springfield, Works At Home", ["Home"]),
])
def test_generic_work_places_are_kept(text, values):
    _kept(text, *values)



# --- 8. hospitals named in religious or charitable style, in any case and without a head noun ---

@pytest.mark.parametrize("text,values", [
    ("TRANSFERRED FROM GOOD SAMARITAN HOSPITAL ON 3/4.", ["GOOD", "SAMARITAN"]),
    ("transferred from good samaritan hospital on 3/4.", ["good", "samaritan"]),
    ("Transferred from Good Samaritan Hosp. for w/u.", ["Good", "Samaritan"]),
    ("Records from Good Samaritan reviewed.", ["Good", "Samaritan"]),
    ("seen at Good Samaritan hospital in 2019", ["Good", "Samaritan"]),
    ("admitted to sacred heart hospital", ["sacred heart"]),
    ("Biopsy at Holy Name Medical Center; HOLY CROSS HOSPITAL ED visit.", ["Holy Name", "HOLY CROSS"]),
    ("Pt was at Our Lady of Lourdes Hospital.", ["Our Lady", "Lourdes"]),
    ("Transferred from New Hope Hospital.", ["New Hope"]),
    ("Hospice: Good Shepherd Hospice to follow at home.", ["Good Shepherd"]),
    ("Transferred from Good Samaritan Hospital of Suffern.", ["Good", "Samaritan", "Suffern"]),
])
def test_charitable_hospital_names_go_whole(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("He was a good samaritan to his neighbours.", ["good samaritan"]),
    ("There is hope; the heart is sacred to her.", ["hope", "heart"]),
    ("Good performance status; new hospital policy.", ["Good performance", "new hospital"]),
    ("Protected under the Good Samaritan law.", ["Good Samaritan law"]),
])
def test_charitable_words_in_prose_are_kept(text, values):
    _kept(text, *values)



# --- found while writing the second set of notes ---

@pytest.mark.parametrize("text,values", [
    ("ERCP 3/3 w/ stent exchange", ["3/3"]),
    ("F/u Dr. Oyelowo 3/16.", ["3/16"]),
    ("mammo 8/2 birads 2", ["8/2"]),
    ("now in Jersey City with brother", ["Jersey City"]),
    ("Lives in Palm Springs, retired.", ["Palm Springs"]),
])
def test_more_dates_and_place_names(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Mammo 2/3 BIRADS 4 lesions biopsied; ratio 1/2 birads", ["1/2"]),
    ("Lives in Boston. City council member.", ["City council"]),
])
def test_more_dates_and_place_names_keep_prose(text, values):
    _kept(text, *values)


# a care place is an event of care too: "HOLY CROSS HOSPITAL 4/2" (the event word was four words back)
@pytest.mark.parametrize("text,values", [
    ("TRANSFERRED FROM HOLY CROSS HOSPITAL 4/2. DR. VANTERPOOL TO REVIEW.", ["4/2"]),
    ("admitted to St. Luke's hospital 11/3, transferred 11/5 to hospice 11/9", ["11/3", "11/5", "11/9"]),
])
def test_date_after_a_care_place(text, values):
    _gone(text, *values)


def test_date_after_a_care_place_keeps_fractions():
    _kept("hospital 1/3 of patients; hospice 2/5 pts; rehospitalized 2/3", "1/3", "2/5", "2/3")


# --- found while writing the third set of notes (international patients, dictation, tables) ---

@pytest.mark.parametrize("text,values", [
    ("date of service march fourth she is a 54 yo woman", ["march fourth"]),
    ("seen with granddaughter and again on the fourth of July.", ["fourth of July"]),
    ("On the twenty-first of May, 2023 she started letrozole.", ["twenty-first of May"]),
    ("CT done July the 4th showed progression", ["July the 4th"]),
    ("Seen on Christmas Eve 2023 with fever.", ["Christmas Eve"]),
    ("Thanksgiving 2022 admission for SBO.", ["Thanksgiving 2022"]),
    ("admitted on christmas eve with fever", ["christmas eve"]),
    ("Pain worse since Easter.", ["Easter"]),
])
def test_dates_in_words(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("We may first try dose reduction.", ["may first try"]),
    ("in march second line chemo was started", ["march second line"]),
    ("Started in August first-line FOLFOX.", ["August first-line"]),
    ("Fasting during Ramadan; Labor Day weekend travel.", ["Labor Day weekend"]),
    ("one of may be enough", ["one of may"]),
    ("on the last Sunday before Labor Day we returned", ["before Labor Day"]),
])
def test_dates_in_words_keep_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Port-a-cath placed 1/5, serial PAC-2291-88310.", ["1/5"]),
    ("PICC inserted 3/2 without issue; drain removed 6/14.", ["3/2", "6/14"]),
    ("her number is two eight one five five five zero one four four he has", ["two eight one five"]),
    ("medical record number five five one oh two nine three eight date of service", ["five five one oh"]),
])
def test_procedure_dates_and_numbers_read_out(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("placed 1/2 tab under the tongue; removed 2/3 of the tumor", ["1/2 tab", "2/3 of"]),
    ("count one, two, three, four, five, six, seven, eight", ["one, two, three, four, five, six, seven"]),
    ("grade one two three toxicity", ["one two three"]),
])
def test_procedure_dates_and_numbers_read_out_keep_prose(text, values):
    _kept(text, *values)


# a pasted EHR table: the labels head the columns, the values sit in the rows below
@pytest.mark.parametrize("text,values", [
    ("Name: | MRN: | DOB: | Attending:\nAbdullah Al-Rashidi | 7730451 | 11/23/1948 | Fitzpatrick\n"
     "Dx: metastatic urothelial ca", ["7730451", "Al-Rashidi", "Fitzpatrick"]),
    ("| Patient | MRN | Phone |\n|---|---|---|\n| Quellwood, Harriet | 55102938 | 718 555 0101 |\n"
     "| Tran Thi Mai | 0918273 | 212-555-0147 |", ["Quellwood", "Harriet", "55102938", "Tran Thi Mai", "0918273"]),
    ("Pt name\tAcct #\tAdmit date\nmaria lopez\t884120\t3/4\n", ["maria", "lopez", "884120", "3/4"]),
])
def test_pasted_table_columns(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Drug | Dose | Day\nCisplatin | 75 mg/m2 | 1\nEtoposide | 100 mg/m2 | 1-3", ["Cisplatin", "75 mg/m2", "1-3"]),
    ("Patient | Arm | Response\n58M | Pembrolizumab | PR", ["58M", "Pembrolizumab", "PR"]),
])
def test_pasted_table_columns_keep_clinical(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Attending: Dr. Haddad | Fellow: Nwachukwu | RN: Ximena", ["Ximena"]),
    ("Pharmacist: Olamide Bankole", ["Olamide", "Bankole"]),
    ("HCP: Marguerite Achterberg (niece)", ["Marguerite", "Achterberg"]),
    ("rn: ximena at bedside", ["ximena"]),
])
def test_care_team_labels(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Chaplain: Visited, pt requested prayer.", ["Visited"]),
    ("RN: Tolerated C2 well, no CINV.", ["Tolerated"]),
    ("MD: Seen and examined. Agree with plan.", ["Seen"]),
])
def test_care_team_labels_keep_notes(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("PATIENT: PARK, JI-HOON   MRN 00918273\nReferring: KIM, SOO-YEON MD\nGastric adenoCA", ["JI-HOON", "SOO-YEON"]),
    ("ok so his wife is ngozi her number is on file", ["ngozi"]),
    ("her sister is adaeze and she drives", ["adaeze"]),
])
def test_names_after_a_label_comma_or_kin_is(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Pt: SMITH, STABLE overnight", ["STABLE"]),
    ("his wife is wonderful; her son is deployed; mother is deceased", ["wonderful", "deployed", "deceased"]),
])
def test_names_after_a_label_comma_or_kin_is_keep_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("lives on RR 2 Box 118, Pella, Iowa 50219. Daughter Anneke.", ["Box 118", "Pella", "50219"]),
    ("Mailing address: HC 63 Box 20, Grundy, VA 24614.", ["Box 20", "Grundy", "24614"]),
    ("Rural Route 3, Box 45, Hazard, KY 41701", ["Route 3", "Box 45", "Hazard", "41701"]),
    ("RR 1 Site 5 Comp 12, Bragg Creek AB T0L 0K0", ["Site 5", "Comp 12", "Bragg Creek", "T0L 0K0"]),
    ("Snowbird from Toronto ON M5G 2M9, wintering in FL.", ["Toronto", "M5G 2M9"]),
    ("Halifax, NS B3H 1V7", ["Halifax", "B3H 1V7"]),
    ("Moved from London SW1A 1AA last year.", ["SW1A 1AA"]),
    ("Springfield, Illinois 62704", ["62704"]),
])
def test_rural_routes_state_names_and_foreign_postcodes(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("RR 2.1 (95% CI 1.4-3.0); RR 2, p=0.04", ["RR 2.1", "RR 2, p"]),
    ("T1N 0M0 disease; DEX D1 8MG", ["T1N 0M0", "D1 8MG"]),
])
def test_rural_routes_and_postcodes_keep_clinical(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("pt tweets as @linhpham58 about treatment", ["@linhpham58", "linhpham58"]),
    ("Instagram @maria.lopez.77", ["maria.lopez"]),
    ("GoFundMe shared by @jdoe_1960", ["jdoe_1960"]),
])
def test_social_media_handles(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("f/u @ 9am; labs @C1D1; at home @MSK; pt @3pm", ["@ 9am", "@C1D1", "@MSK", "@3pm"]),
])
def test_social_media_handles_keep_shorthand(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("portable +33 6 12 34 56 78.", ["+33 6", "12 34 56 78"]),
    ("Sister in Berlin, +49 30 12345678.", ["+49 30", "12345678"]),
    ("Medicare no. 2123 45670 1, mobile on file", [" 1, mobile"]),
    ("Pt: GARCIA LOPEZ, MARIA DEL CARMEN", ["MARIA", "DEL CARMEN"]),
    ("Name: Lopez, Jose Luis", ["Jose", "Luis"]),
])
def test_foreign_phones_id_issue_digit_and_given_names(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("HR 88, +1 2 3 edema; MRN 1234 5678 2 days ago", ["+1 2 3", "2 days ago"]),
    ("Pt: SMITH, JOHN STABLE OVERNIGHT", ["STABLE OVERNIGHT"]),
])
def test_foreign_phones_id_issue_digit_and_given_names_keep_prose(text, values):
    _kept(text, *values)



# --- fourth round: clinical words read as names, residence, vague birth years, shouted postcodes, care team ---

@pytest.mark.parametrize("text,values", [
    ("Pt MRN: 4481920; pt DOB on file", ["MRN", "DOB"]),
    ("Pharmacist Jane Doe reviewed; Clinical Pharmacist Smith; Dietitian Lee", ["Pharmacist", "Dietitian"]),
    ("Referred to Geri onc; geri onc consult; Geri Onc clinic", ["Geri onc", "geri onc", "Geri Onc"]),
])
def test_roles_and_labels_are_no_names(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Pt MRN: 4481920", ["4481920"]),
    ("Pharmacist Jane Doe reviewed; Clinical Pharmacist Smith", ["Jane", "Doe", "Smith"]),
    ("Geri Smith, daughter, at bedside", ["Geri", "Smith"]),
])
def test_roles_and_labels_are_no_names_names_still_go(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("DOB sometime in 1930, per daughter.", ["1930"]),
    ("born around 1929 in a village; date of birth: approx. 1931", ["1929", "1931"]),
    ("RETIRED TO LONDON SE5 9NR. SON IN TORONTO ON M5V 3L9.", ["SE5 9NR", "M5V 3L9"]),
])
def test_vague_birth_years_and_shouted_postcodes(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("DOB in chart; diagnosed in 2019 with NSCLC. Born in the US, moved 1990.", ["2019", "1990"]),
    ("PT STAGED T1N 0M0; DEX D1 8MG; PSA 4.1", ["T1N 0M0", "D1 8MG"]),
])
def test_vague_birth_years_and_shouted_postcodes_keep_clinical(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("She lives in Flushing with her son.", ["Flushing"]),
    ("He resides in Independence, MO since 1990; she lives in Normal.", ["Independence", "Normal"]),
    ("Nurse: Rose\nPharmacist: Jane Doe", ["Rose", "Jane", "Doe"]),
    ("RN: Grace, called at 14:00. Chaplain: Joy Smith", ["Grace", "Joy", "Smith"]),
])
def test_english_word_as_town_or_care_team_name(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("She lives in fear of recurrence; lives in a nursing home.", ["fear", "nursing home"]),
    ("She Lives In Fear Of Recurrence; Lives In Skilled Nursing", ["Fear", "Skilled Nursing"]),
    ("Lives in Denial about prognosis per daughter", ["Denial"]),
    ("Nurse: Will call back tomorrow.", ["Will call"]),
    ("RN: Hope for discharge Friday", ["Hope for"]),
])
def test_english_word_as_town_or_care_team_name_keep_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Nurse Rose to call; Sister Grace visited", ["Rose", "Grace"]),
    ("DOB: sometime around the spring of 1930", ["1930"]),
])
def test_word_name_after_a_title_and_longer_vague_birth_year(text, values):
    _gone(text, *values)


def test_word_name_after_a_title_keeps_prose():
    _kept("Nurse Will call back; pt Hope for discharge", "Will call", "Hope for")


# --- fifth round: cities that are words, shouted residence, word-names after a role, birth decades, lower-case
#     employers, a hospital named by one word, saints' hospitals ---

@pytest.mark.parametrize("text,values", [
    ("Pt lives in Mobile, AL with her husband.", ["Mobile"]),
    ("He resides in Mobile, Alabama since 2001.", ["Mobile"]),
    ("Lives in Normal, Illinois; works nights.", ["Normal"]),
    ("living in Reading, PA with his son", ["Reading"]),
])
def test_city_that_is_a_word_before_its_state(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Pt lives in mobile home park, AL resident", ["mobile home"]),
    ("Phone: mobile, AL area code unknown", ["mobile"]),
])
def test_city_that_is_a_word_before_its_state_keeps_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("SHE LIVES IN FLUSHING WITH HER SON.", ["FLUSHING"]),
    ("PT RESIDES IN INDEPENDENCE, MO.", ["INDEPENDENCE"]),
    ("SOCIAL: LIVES IN MOBILE, AL. RETIRED.", ["MOBILE"]),
    ("she lives in flushing with her son.", ["flushing"]),
])
def test_shouted_or_lower_case_residence_cue(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("SHE LIVES IN FEAR OF RECURRENCE. LIVES IN A NURSING HOME.", ["FEAR", "NURSING HOME"]),
    ("PT LIVES IN ASSISTED LIVING; LIVES IN SUBSIDIZED HOUSING", ["ASSISTED LIVING", "SUBSIDIZED HOUSING"]),
    ("LIVES IN DENIAL. LIVES IN PAIN. LIVES IN SHELTER.", ["DENIAL", "PAIN", "SHELTER"]),
    ("lives in poverty; living in rural areas; lives in housing with her son", ["poverty", "rural areas",
                                                                              "housing"]),
])
def test_shouted_or_lower_case_residence_cue_keeps_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Pharmacist Rose reviewed the list.", ["Rose"]),
    ("Therapist Grant called back; Chaplain Will visited.", ["Grant", "Will"]),
    ("Social worker Joy met the family. Case manager Hope arranged transport.", ["Joy", "Hope"]),
    ("Dietitian Faith to follow; pharmacist Grace said ok", ["Faith", "Grace"]),
    ("Seen with interpreter Ruby.", ["Ruby"]),
    ("Fellow: Grant.", ["Grant"]),
    ("RN: Hope", ["Hope"]),
])
def test_word_name_after_a_role(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Pharmacist reviewed the list.", ["Pharmacist reviewed"]),
    ("Pharmacist Will review interactions; social worker may call.", ["Will review", "may call"]),
    ("Case manager Hope for discharge Friday", ["Hope for"]),
    ("Chaplain visited; therapist summer schedule", ["Chaplain visited", "summer schedule"]),
])
def test_word_name_after_a_role_keeps_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("DOB: early 1930s per daughter", ["1930s"]),
    ("born in the late 1940s in a village", ["1940s"]),
    ("Born in the '20s, she is the oldest in clinic.", ["'20s"]),
])
def test_birth_decade_is_a_date(text, values):
    out = _gone(text, *values)
    assert "[DATE_" in out


@pytest.mark.parametrize("text,values", [
    ("in the 1990s trials showed benefit; born in the US in a small town", ["1990s", "born in the US"]),
    ("Regimens of the 1980s; DOB in chart.", ["1980s"]),
])
def test_birth_decade_keeps_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("He works at general motors on the line.", ["general motors"]),
    ("retired from bank of america in 2010.", ["bank of america"]),
    ("works for general electric as a machinist", ["general electric"]),
    ("retired from verizon after 30 years; retired from Ford in 2015", ["verizon", "Ford"]),
])
def test_lower_case_multi_word_employer(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("retired from teaching; retired from the army; retired from nursing in 2015", ["teaching", "army",
                                                                                   "nursing"]),
    ("works at home of her sister; works at general store", ["home of her sister", "general store"]),
    ("retired from work; works at night; retired from police force", ["work", "night", "police force"]),
])
def test_lower_case_multi_word_employer_keeps_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("admitted to Mercy last week", ["Mercy"]),
    ("transferred from Mercy on 3/4", ["Mercy"]),
    ("Admitted to Mercy hospital yesterday", ["Mercy"]),
    ("pt was admitted to mercy with sepsis", ["mercy"]),
    ("transferred to Presbyterian for ICU care", ["Presbyterian"]),
])
def test_hospital_named_by_one_word(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("she asked for mercy; Mercy of God", ["mercy", "Mercy"]),
    ("admitted to ICU; transferred to hospice", ["ICU", "hospice"]),
])
def test_hospital_named_by_one_word_keeps_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,name", [
    ("Seen at St. Luke's hospital for a second opinion.", "St. Luke's hospital"),
    ("Seen at St. Mary's for chemo.", "St. Mary's"),
    ("Referred to St. Jude for trial.", "St. Jude"),
    ("She went to St. Vincent's ED.", "St. Vincent's"),
    ("Admitted to St. Luke's Hospital on 3/4.", "St. Luke's Hospital"),
])
def test_saints_hospital_is_one_organization(text, name):
    r = redact(text)
    s = text.index(name)
    assert ("ORGANIZATION", s, s + len(name)) in r.spans, r.spans


def test_saints_hospital_keeps_the_herb():
    _kept("Takes St. John's wort; St. John's wort interacts with irinotecan.", "St. John's wort")


# --- found while writing notes 64-78 ---

@pytest.mark.parametrize("text,values", [
    ("74F from Mobile, AL, previously treated at Providence in Mobile.", ["Mobile"]),
    ("LIVED IN INDEPENDENCE, MO UNTIL 2019.", ["INDEPENDENCE"]),
    ("PT IS FROM SUNNYVIEW SNF; discharged to Oak Grove Skilled Nursing Facility", ["SUNNYVIEW", "Oak Grove"]),
    ("advised ED at Methodist; seen at Children's Mercy in Kansas City", ["Methodist", "Mercy", "Kansas"]),
    ("born in the 1910s in County Cork", ["Cork"]),
])
def test_word_towns_care_homes_and_one_word_hospitals(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("pt resides in reading, pa with daughter.", ["pt resides in"]),
    ("Discharged to SNF; to a local skilled nursing facility. SWI/SNF complex.", ["SNF", "skilled nursing",
                                                                              "SWI/SNF"]),
    ("The ED at night is busy; mercy of the court", ["ED at night", "mercy"]),
    ("Hematology County Medical Society; in Table 2, OR 1.5", ["County Medical", "OR 1.5"]),
])
def test_word_towns_care_homes_and_one_word_hospitals_keep_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Case manager Hope Delgado arranged home infusion.", ["Hope", "Delgado"]),
    ("SON (GRANT) IS HCP, CELL 816-555-0172.", ["GRANT"]),
    ("spoke with husband (Dale) re fever", ["Dale"]),
    ("his wife is hope, cell 517 555 0161", ["hope"]),
])
def test_word_names_with_a_surname_in_brackets_or_after_kin_is(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("her son is young, his wife is white; son (adopted) lives nearby", ["young", "white", "adopted"]),
    ("Daughter (HCP) present.", ["HCP"]),
])
def test_word_names_with_a_surname_in_brackets_or_after_kin_is_keep_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("pt lives with daughter faith. chaplain grace to visit.", ["faith", "grace"]),
    ("works at general motors in lansing on the line", ["lansing"]),
    ("funeral home: kowalczyk & sons.", ["kowalczyk"]),
    ("Proband works at state farm in Bloomington.", ["state farm"]),
])
def test_lower_case_kin_word_names_places_after_an_employer_and_firms(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Pt speaks Haitian Creole; needs Cape Verdean Creole interpreter.", ["Haitian Creole", "Cape Verdean Creole"]),
    ("Speaks Tagalog. Amharic interpreter, Tigrinya backup. Fluent in Yoruba and Igbo.",
     ["Speaks Tagalog", "Tigrinya", "Yoruba", "Igbo"]),
    ("Speaks English.", ["Speaks English"]),
    ("seen by dr. okafor in sales; pt lives with daughter in clinic", ["in sales", "in clinic"]),
    ("the jones and sons effect; works at state of the art lab", ["state of the art"]),
])
def test_languages_are_no_names(text, values):
    _kept(text, *values)


def test_languages_keep_names_after_a_title():
    _gone("Mr. Speaks is here.", "Speaks")


@pytest.mark.xfail(strict=True, reason="known gap: a hospital named by an unlisted English word in a lower-case note")
def test_known_gap_unlisted_one_word_hospital_in_lower_case():
    _gone("admitted to sparrow last month for dvt", "sparrow")


@pytest.mark.parametrize("text,values", [
    ("Lives in Mobile with her daughter.", ["Mobile"]),
    ("Interpreter Angel present.", ["Angel"]),
    ("She was at St. Mary's in Rochester; transferred to the St. Joseph's ICU", ["Mary", "Joseph"]),
    ("born ~1930s; Born in the thirties in Ohio; DOB unknown, late 1920s per family", ["1930s", "thirties",
                                                                                     "1920s"]),
    ("PHARMACIST ROSE REVIEWED MEDS. SOCIAL WORKER JOY MET WITH FAMILY.", ["ROSE", "JOY"]),
    ("CASE MANAGER HOPE DELGADO ARRANGED HOME INFUSION.", ["HOPE", "DELGADO"]),
])
def test_more_word_towns_role_names_saints_and_birth_decades(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("resident will call back. fellow may review. pharmacist reviewed.", ["will call", "may review"]),
    ("case manager hope for discharge friday; born in the us; in the sixties trials", ["hope for", "sixties"]),
])
def test_more_word_towns_role_names_saints_and_birth_decades_keep_prose(text, values):
    _kept(text, *values)


def test_saints_hospital_after_was_at_is_one_organization():
    text = "She was at St. Mary's in Rochester."
    s = text.index("St. Mary's")
    assert ("ORGANIZATION", s, s + len("St. Mary's")) in redact(text).spans


@pytest.mark.parametrize("text,values", [
    ("Daughter Hope Johnson is HCP.", ["Hope", "Johnson"]),
    ("Son Will is HCP; sister Grace called.", ["Will", "Grace"]),
])
def test_word_name_after_a_relative(text, values):
    _gone(text, *values)


def test_word_name_after_a_relative_keeps_prose():
    _kept("Son Will be there tomorrow. Mother Rose early in the morning.", "Will be", "Rose early")


def test_shouted_residence_cue_keeps_an_adverb():
    _kept("LESIONS RESIDING IN HISTOLOGICALLY AND FUNCTIONALLY NORMAL KIDNEY TISSUE.", "HISTOLOGICALLY")


@pytest.mark.parametrize("text,values", [
    ("Attending Dr. Will Hope; Dr. Will saw pt; Mrs. May called.", ["Will", "Hope", "May"]),
    ("Pt is employed as a cashier at kroger; working as an aide for walmart", ["kroger", "walmart"]),
    ("works nights at waffle house", ["waffle house"]),
])
def test_function_word_names_after_a_title_and_employers_after_a_job(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Dr. will call back; Dr. Will call back", ["will call", "Will call"]),
    ("works as a nurse at home; worked as a teacher for the city; works nights at home", ["at home", "the city"]),
])
def test_function_word_names_after_a_title_and_employers_after_a_job_keep_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("PCP Dr. Hope in Tupelo.", ["Hope", "Tupelo"]),
    ("Admitted to Baptist Memorial on 6/3.", ["Baptist", "Memorial"]),
])
def test_town_after_a_name_and_one_word_hospital_with_its_kind(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Her daughter, Amber, is the HCP. Granddaughter April helps with meds.", ["Amber", "April"]),
    ("Retired from walmart home office; works at kroger warehouse", ["walmart", "kroger"]),
    ("She moved here from Independence in 2019.", ["Independence"]),
])
def test_word_names_after_kin_employers_before_a_workplace_and_moved_from(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Pt moved to Hospice yesterday; moved to Oncology floor; works at grocery store", ["Hospice", "Oncology",
                                                                                    "grocery store"]),
    ("Lives with her daughter, Hope for recovery is low. Her son, Will be there.", ["Hope for", "Will be"]),
])
def test_word_names_after_kin_employers_before_a_workplace_and_moved_from_keep_prose(text, values):
    _kept(text, *values)


@pytest.mark.parametrize("text,values", [
    ("born in '29; born during the 1930s depression", ["'29", "1930s"]),
    ("Pt's employer: general dynamics; Employer: Acme Corp", ["general dynamics", "Acme"]),
])
def test_two_digit_birth_year_and_employer_label(text, values):
    _gone(text, *values)


@pytest.mark.parametrize("text,values", [
    ("Employer: self-employed. Employer: retired. Employer: none. works at home", ["self-employed", "retired",
                                                                               "none", "at home"]),
    ("in '29 the trial opened; DOB in chart, '29 cohort", ["'29 the", "'29 cohort"]),
])
def test_two_digit_birth_year_and_employer_label_keep_prose(text, values):
    _kept(text, *values)
