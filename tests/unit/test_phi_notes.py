"""PHI redactor (engine/phi.py) on hand-written oncology notes with identifiers in awkward places: dates
without a year in note shorthand, pager numbers and extensions, boroughs, lower-case names and employers,
nicknames, hospitals without a head noun; and (47-63) international patients, dictation without punctuation,
pasted tables, pedigrees, foreign phones and postcodes, rural routes, dates and ages in words; and (64-78) towns
that are words before their state, ALL-CAPS and lower-case notes, word-names of the care team, decades of birth,
lower-case employers, hospitals named by one word or a saint, languages.  Every listed
identifier must go; the listed clinical content must stay."""

from __future__ import annotations

import pytest

from engine.phi import redact

NOTES = [
    # 1
    ('ONCOLOGY F/U 3/14\nPt is a 67 yo F w/ stage IIIA ER+/PR+/HER2- IDC L breast, s/p lumpectomy '
     '+ SLNB (2/12 LN+) on 1/9. Here w/ daughter Marisol who drives her from Bushwick. Tolerating '
     'AC well. ANC 1.2. Plan: C3 AC 3/21, ddT to follow. RTC 2 wks. Call Marisol at 718-555-0199 '
     'w/ questions. -- Dr. Okonkwo-Baptiste, pgr 3391',
     ['3/14', '1/9', 'Marisol', 'Bushwick', '3/21', '718-555-0199', 'Okonkwo-Baptiste', '3391'],
     ['2/12 LN+', '67 yo', 'ANC 1.2', 'ER+/PR+/HER2-', 'C3 AC']),
    # 2
    ('Tumor board 4/2: 58M, NSCLC adenoCA RUL, EGFR L858R. Imaging 3/28 PET: FDG-avid hilar LN. '
     'Presented by fellow (Tran), attending Zielinski. Pt works at costco in Bayonne, wife Ngozi.',
     ['4/2', '3/28', 'Tran', 'Zielinski', 'costco', 'Bayonne', 'Ngozi'],
     ['58M', 'EGFR L858R', 'PET']),
    # 3
    ("Spoke w/ pt's son Dmitri by phone (ext 4410 at his work). Pt (Mr. Aleksandrov) lives alone "
     'in Brighton Beach, Brooklyn; no stairs. Next infusion 5/6.',
     ['Dmitri', '4410', 'Aleksandrov', 'Brighton Beach', 'Brooklyn', '5/6'],
     []),
    # 4
    ('Addendum 6/1 - called pharmacy (CVS on Fulton St, 212-555-0145 x3) re: capecitabine copay. '
     "Pt's MRN 00482913. Spoke with pharmacist Keisha.",
     ['6/1', 'Fulton St', '212-555-0145', '00482913', 'Keisha'],
     []),
    # 5
    ('HPI: Mrs Fitzgerald-Ruiz is an 81 y/o retired schoolteacher from Yonkers referred by Dr '
     'Abimbola Adeyemi for a 3.2 cm L lung mass found on CT 7/19. ECOG 1. Quit smoking 1998 (40 '
     'pk-yr).',
     ['Fitzgerald-Ruiz', 'Yonkers', 'Abimbola', 'Adeyemi', '7/19'],
     ['81 y/o', '3.2 cm', 'ECOG 1', '1998']),
    # 6
    ('rad onc note: pt seen in sim 8/12. plan 60 gy/30 fx to LUL. pt lives with partner jamal in '
     'the bronx, works for fedex as a driver. contact: jamal 347 555 0112.',
     ['8/12', 'jamal', 'bronx', 'fedex', '347 555 0112'],
     ['60 gy/30 fx', 'LUL']),
    # 7
    ('Family hx: mother (Rosalind) breast ca at 44, maternal aunt ovarian ca. Genetic counseling '
     "w/ Priyanka Venkataraman MS CGC on 9/9; BRCA panel sent to Myriad. Pt's email "
     'rbaptiste72@gmail.com.',
     ['Rosalind', 'Priyanka', 'Venkataraman', '9/9', 'rbaptiste72@gmail.com'],
     ['BRCA panel']),
    # 8
    ('PROGRESS NOTE 10/22\nSUBJECTIVE: Pt reports fatigue. Husband Thaddeus at bedside.\n'
     'OBJECTIVE: BP 118/76, HR 88. Strength 5/5. ECOG 1.\nA/P: mCRPC on enzalutamide, PSA 4.2 '
     '(from 6.8 on 9/24). Cont. F/u 11/19 w/ Dr. Haugen.',
     ['10/22', 'Thaddeus', '9/24', '11/19', 'Haugen'],
     ['BP 118/76', 'Strength 5/5', 'PSA 4.2', 'enzalutamide']),
    # 9
    ('Heme/onc consult requested by hospitalist Dr. Lindqvist (beeper 2207). 72 yo M w/ new '
     'pancytopenia, peripheral blasts 30%. Pt transferred from St. Barnabas in the Bronx on 12/3. '
     'Lives in Co-op City with wife Guadalupe.',
     ['Lindqvist', '2207', 'St. Barnabas', 'Bronx', '12/3', 'Co-op City', 'Guadalupe'],
     ['72 yo M', 'blasts 30%']),
    # 10
    ('Social work: pt is a 45F, undocumented, lives w/ sister in Jackson Heights, Queens. Works at '
     'a nail salon (Lucky Nails) on Roosevelt Ave. Phone via sister: (929) 555-0177. Next SW f/u '
     '1/15.',
     ['Jackson Heights', 'Queens', 'Lucky Nails', 'Roosevelt Ave', '(929) 555-0177', '1/15'],
     []),
    # 11
    ('Lives In Springfield, Works At Acme Hardware. Seen By Dr. Castellanos On 2/20 For Rectal '
     'Bleeding. Colonoscopy 3/1: Mass At 8 Cm.',
     ['Springfield', 'Acme', 'Castellanos', '2/20', '3/1'],
     []),
    # 12
    ('Chemo teaching done w/ pt + wife Henrietta. Pt prefers to be called "Buddy". Emergency '
     "contact: Henrietta, cell 516.555.0190. Pt is a deacon at St. Agatha's parish in Hempstead.",
     ['Henrietta', 'Buddy', '516.555.0190', 'Hempstead'],
     []),
    # 13
    ('Pathology 11/30 (outside, reviewed here): 3/12 cores + Gleason 4+3=7 (GG3), PNI present. '
     "Pt's urologist Dr. Yamamoto-Chen in Staten Island. PSA 9.1.",
     ['11/30', 'Yamamoto-Chen', 'Staten Island'],
     ['3/12 cores', 'Gleason 4+3=7', 'PSA 9.1']),
    # 14
    ("Telephone encounter 4/17 9:40am: pt's niece Oluwaseun called re: missed appt. Pt in hospital "
     'at NYU Langone since 4/15. Will call back at x5521.',
     ['4/17', 'Oluwaseun', 'NYU Langone', '4/15', '5521', 'NYU'],
     ['9:40am']),
    # 15
    ('Survivorship visit. Pt is a 34 yo M, testicular ca s/p RPLND 2019, working as a chef at '
     "Katz's Deli in Manhattan. Partner Ezekiel. CT A/P 5/30 NED. Next 11/30.",
     ['Katz', 'Manhattan', 'Ezekiel', '5/30', '11/30'],
     ['34 yo M', 'RPLND 2019']),
    # 16
    ('Palliative care: pt wishes to die at home in Harlem. HCP is daughter Latoya Jenkins-Moore '
     '(cell 646-555-0133). Hospice referral to VNS 2/8.',
     ['Harlem', 'Latoya', 'Jenkins-Moore', '646-555-0133', '2/8'],
     []),
    # 17
    ('Interval hx: pt went to Puerto Rico 12/20-1/5 to visit family in Ponce. No fevers. Cycle 5 '
     'gem/cis given 1/8.',
     ['12/20', '1/5', 'Ponce'],
     ['Cycle 5 gem/cis given 1/8']),
    # 18
    ('MDT 2/6/24 - attendees: Drs. Salazar (med onc), Whitfield (rad onc), Oyelaran (surg). Pt: '
     'Hollis, Regina A.',
     ['2/6/24', 'Salazar', 'Whitfield', 'Oyelaran', 'Hollis', 'Regina'],
     []),
    # 19
    ("Spoke with Sgt. Marcus Bell (pt's son, stationed at Fort Drum) re: goals of care. Reachable "
     'on his cell after 1800: 315 555 0166.',
     ['Marcus', 'Bell', 'Fort Drum', '315 555 0166'],
     []),
    # 20
    ('Pt is a retired longshoreman from Red Hook, Brooklyn, followed at the Brooklyn VA. Last PSA '
     '3/2 0.8.',
     ['Red Hook', 'Brooklyn', '3/2'],
     ['PSA']),
    # 21
    ("Rx sent to Duane Reade on 86th & Lexington. Pt's wife (Consuelo, 718-555-0102) picks up.",
     ['Consuelo', '718-555-0102', '86th & Lexington'],
     []),
    # 22
    ("CC: Dr. R. Balasubramanian, Dr. T. O'Shaughnessy-Park; fax 212 555 0178",
     ['Balasubramanian', "O'Shaughnessy-Park", '212 555 0178'],
     []),
    # 23
    ('Port placed 9/3 by IR (Dr. Nakagawa). Access ok. Next echo 10/1, MUGA not needed.',
     ['9/3', 'Nakagawa', '10/1'],
     ['MUGA']),
    # 24
    ("Pt's daughter works for JetBlue and his son works at google; both live in Hoboken.",
     ['JetBlue', 'google', 'Hoboken'],
     []),
    # 25
    ('Pager: 4417 (onc fellow). After hrs page operator, ask for beeper #2231.',
     ['4417', '2231'],
     ['onc fellow']),
    # 26
    ('PET 11/2: Deauville 4; Lugano PR. Discussed with pt + partner (Ahmad) at Sunset Park clinic.',
     ['11/2', 'Ahmad', 'Sunset Park'],
     ['Deauville 4', 'Lugano PR']),
    # 27
    ("Onc hx:\n- 3/2023 dx'd IDC at outside hosp (Good Samaritan, Suffern)\n- s/p L mastectomy "
     '4/11 (Dr. Ferreira-Lind)\n- AC x4 -> T x12 completed 9/28\nRTC 3 mo w/ labs.',
     ['3/2023', 'Good Samaritan', 'Suffern', '4/11', 'Ferreira-Lind', '9/28'],
     ['AC x4 -> T x12']),
    # 28
    ("Pt states her landlord (Mr. Petrakis) won't fix the heat. Apt 4C. Asked SW to call him: "
     '917-555-0150.',
     ['Petrakis', '917-555-0150'],
     []),
    # 29
    ('Nurse triage 6/14 @ 14:05 - pt called from her job at Target (Rego Park) c/o fever 101.3.',
     ['6/14', 'Rego Park'],
     ['fever 101.3']),
    # 30
    ('Pt goes by "Toni" (legal name Antonia). DOB 04/02/1951. Husband Vittorio, son Luca (lives in '
     'Bensonhurst).',
     ['Toni', 'Antonia', '04/02/1951', 'Vittorio', 'Luca', 'Bensonhurst'],
     []),
    # 31
    ('Daughter-in-law Mei-Ling (works at Maimonides, ext 2290) is the main contact.',
     ['Mei-Ling', 'Maimonides', '2290'],
     []),
    # 32
    ('IMPRESSION: 1. New 9 mm RLL nodule (series 3, image 88), compared with 2/3. 2. No '
     'adenopathy. Read by Dr. Hwang 2/24 08:12.',
     ['2/3', 'Hwang', '2/24'],
     ['9 mm RLL nodule', 'series 3, image 88']),
    # 33
    ("Pt declined port; prefers PICC. Will revisit at next visit 7/30. Discussed w/ pt's brother "
     'Tomasz (Greenpoint) by phone.',
     ['7/30', 'Tomasz', 'Greenpoint'],
     []),
    # 34
    ('H&P: 70M, retired MTA conductor from Canarsie. PMH: HTN, DM2. Quit tobacco 2001. ECOG 1/KPS '
     '80.',
     ['Canarsie'],
     ['ECOG 1/KPS 80', '70M', '2001']),
    # 35 discharge summary
    ('DISCHARGE SUMMARY\nAdmit 3/2, d/c 3/9. 63 yo M w/ metastatic pancreatic adenoCA (KRAS G12D) admitted '
     'with cholangitis; ERCP 3/3 w/ stent exchange (Dr. Abernathy-Cole). Blood cx E. coli, pip-tazo -> PO '
     'cipro x10d. Lives in Dorchester, Boston with wife Philippa; retired MBTA mechanic. F/u Dr. Oyelowo '
     '3/16. PCP: Dr. Fenwick, 617-555-0142.',
     ['3/2', '3/9', '3/3', 'Abernathy-Cole', 'Dorchester', 'Boston', 'Philippa', 'Oyelowo', '3/16', 'Fenwick',
      '617-555-0142'],
     ['63 yo M', 'KRAS G12D', 'pip-tazo', 'cipro x10d', 'E. coli', 'ERCP']),
    # 36 oncology consult
    ('HEME/ONC CONSULT\nReason: new anemia, M-spike 2.1 g/dL. 71F referred by Dr. Szymanski (PCP). Pt works '
     'at Target as a cashier, on her feet all day. From South Side, Chicago; moved to be near son Desmond. '
     'SPEP/IFE: IgG kappa. FLC ratio 48. Plan: BM bx, skeletal survey, PET. Discussed w/ pt and Desmond.',
     ['Szymanski', 'Target', 'South Side', 'Chicago', 'Desmond'],
     ['M-spike 2.1 g/dL', '71F', 'IgG kappa', 'FLC ratio 48', 'BM bx', 'PET']),
    # 37 tumor board
    ('THORACIC TUMOR BOARD 5/14\nCase 3: 58F never-smoker, RUL 2.4 cm adenoCA, EGFR exon 19 del, PD-L1 5%. '
     'cT1cN0M0, stage IA3. Presenter: Dr. Ravindran. Surgeon (Dr. Kowalczyk-Hale) favors lobectomy; '
     'adjuvant osimertinib per ADAURA. Outside path from Good Samaritan Hospital reviewed by Dr. Imbert.',
     ['5/14', 'Ravindran', 'Kowalczyk-Hale', 'Good Samaritan', 'Imbert'],
     ['58F', 'EGFR exon 19 del', 'PD-L1 5%', 'cT1cN0M0', 'stage IA3', 'osimertinib', 'ADAURA', 'lobectomy']),
    # 38 phone note
    ('Phone note 6/3 14:20. Pt\'s daughter-in-law Ifeoma called: pt has T 38.4 since AM, on day 9 of C2 '
     'FOLFIRINOX. Advised ED now. She will drive him to St. Vincent\'s. Callback 347-555-0188. RN Thibodeaux.',
     ['6/3', 'Ifeoma', '347-555-0188', 'Thibodeaux'],
     ['T 38.4', 'day 9 of C2', 'FOLFIRINOX', '14:20']),
    # 39 social work
    ('SW note: pt is a 49 yo M, lives in Hackney, London until 2022, now in Jersey City with brother '
     'Oluwaseyi. Employed by Amazon (warehouse), on FMLA. Insurance via employer. Needs transport to XRT '
     'M-F; referred to ACS Road to Recovery.',
     ['Hackney', 'London', 'Jersey City', 'Oluwaseyi', 'Amazon'],
     ['49 yo M', 'FMLA', 'XRT']),  # 'ACS Road' is taken for a street (over-redaction, no leak)
    # 40 rad onc follow-up, ranks
    ('Rad onc f/u: s/p SBRT 50 Gy/5 fx to LLL nodule, completed 1/30. Pt is a retired Army officer; son '
     'Sgt. Miller (stationed at Fort Hood) joined by video. CT 4/28: post-RT changes, no progression. '
     'Capt. Delacroix-Ruiz, pt\'s neighbor, drives him.',
     ['1/30', 'Miller', 'Fort Hood', '4/28', 'Delacroix-Ruiz'],
     ['SBRT 50 Gy/5 fx', 'LLL nodule', 'post-RT changes', 'Sgt.', 'Capt.']),
    # 41 breast clinic, lower case dictation
    ('breast clinic f/u 8/19. 44 yo f, er+/pr+/her2- idc l breast, on tamoxifen since 2/2023. hot flashes '
     'improved on venlafaxine. works for apple in retail. lives in hyde park, chicago with partner renata. '
     'mammo 8/2 birads 2. rtc 6 mo.',
     ['8/19', 'apple', 'hyde park', 'chicago', 'renata', '8/2'],
     ['44 yo f', 'er+/pr+/her2-', 'tamoxifen', 'venlafaxine', 'birads 2', 'rtc 6 mo']),
    # 42 heme inpatient progress, ALL CAPS header and body
    ('PROGRESS NOTE - BMT\nDAY +12 S/P ALLO SCT (MUD) FOR AML WITH FLT3-ITD. ENGRAFTED ANC 0.6. MUCOSITIS '
     'GR 2. ON TACROLIMUS, LEVEL 8.1. WIFE CONSTANCE AT BEDSIDE. TRANSFERRED FROM HOLY CROSS HOSPITAL '
     '4/2. DR. VANTERPOOL TO REVIEW.',
     ['CONSTANCE', 'HOLY CROSS', 'VANTERPOOL'],  # '4/2' still leaks: see test_phi_gaps known gap
     ['DAY +12', 'FLT3-ITD', 'ANC 0.6', 'TACROLIMUS', 'LEVEL 8.1']),
    # 43 GU consult with employer and pastor
    ('GU onc consult: 66M, mHSPC, PSA 38 -> 0.4 on ADT + abiraterone. Bone scan 7/7: 3 lesions. Works at '
     'Home Depot, lifting limited. Pastor Greenwood from his church visits weekly. Wife Yolanda, cell '
     '(516) 555-0123.',
     ['Home Depot', 'Greenwood', 'Yolanda', '(516) 555-0123', '7/7'],
     ['66M', 'mHSPC', 'PSA 38 -> 0.4', 'abiraterone', 'ADT', 'Bone scan']),
    # 44 GI tumor board
    ('GI tumor board 9/12: 52M rectal adenoCA 6 cm from AV, cT3N1, MMR-proficient. TNT per RAPIDO vs '
     'PROSPECT discussed. Referred from Sacred Heart Medical Center by Dr. Lindgren-Obi. Pt from Roxbury, '
     'Boston; works for the city as a bus driver.',
     ['9/12', 'Sacred Heart', 'Lindgren-Obi', 'Roxbury', 'Boston'],
     ['52M', 'cT3N1', 'MMR-proficient', 'TNT', 'RAPIDO', 'PROSPECT', 'works for the city']),
    # 45 palliative phone call
    ('Palliative phone f/u 10/4: spoke w/ HCP (niece Marguerite Achterberg). Pt at home in Hollywood, Los '
     'Angeles, on hospice w/ Good Shepherd Hospice since 9/28. Pain controlled on methadone 5 mg TID. Det. '
     'Ortega (family friend) also on the call.',
     ['10/4', 'Marguerite', 'Achterberg', 'Hollywood', 'Los Angeles', 'Good Shepherd', '9/28', 'Ortega'],
     ['methadone 5 mg TID', 'Det.']),
    # 46 survivorship, employer and rank in lower case
    ('survivorship: 38 yo m, hodgkin lymphoma stage iia s/p abvd x4 (completed 2021). works at best buy, '
     'plays soccer. echo 3/3 ef 60%. pft normal. his roommate, officer brennan, came with him.',
     ['best buy', '3/3', 'brennan'],
     ['38 yo m', 'stage iia', 'abvd x4', 'ef 60%', 'pft normal', 'hodgkin lymphoma']),
    # 47 immigrant patient, Vietnamese names, interpreter, apartment
    ('Med onc new pt 2/11: Mr. Nguyen Van Thanh, 63M, HCC on background HBV, BCLC B. Vietnamese-speaking; '
     'interpreter Tran Thi Mai (ID 4471). Son Nguyen Minh Khoa translates at home, cell +1 (714) 555-0163. '
     'Lives at 1420 Bolsa Ave, Apt 7B, Westminster, CA 92683. AFP 812.',
     ['2/11', 'Thanh', 'Tran Thi Mai', 'Minh Khoa', '(714) 555-0163', '1420 Bolsa', 'Apt 7B', 'Westminster',
      '92683'],
     ['63M', 'HCC', 'HBV', 'BCLC B', 'AFP 812']),
    # 48 UK transfer letter: NHS number, British phone and postcode
    ('Transfer of care from the Royal Marsden. Patient: Oluwaseun Adebayo-Okafor, NHS number 943 476 5919, '
     "DOB 03/07/1961. Address: Flat 4, 27 Coldharbour Lane, London SE5 9NR. GP: Dr Siobhan O'Sullivan, "
     'tel +44 20 7946 0958. Completed 6 cycles of FOLFOX for pT3N1 sigmoid cancer.',
     ['Royal Marsden', 'Oluwaseun', 'Adebayo-Okafor', '943 476 5919', '03/07/1961', 'Flat 4', 'Coldharbour',
      'SE5 9NR', 'Siobhan', "O'Sullivan", '+44 20 7946 0958'],
     ['6 cycles of FOLFOX', 'pT3N1', 'sigmoid']),
    # 49 Canadian snowbird: health card, postal code, fax
    ('Snowbird pt, 71F, from Mississauga, Ontario; OHIP 4532-781-226-KT. Postal code L5B 3C2. '
     'Oncologist in Canada Dr. Marie-Claude Tremblay at Princess Margaret, fax 416-946-6546. '
     'On letrozole + palbociclib, CBC stable.',
     ['Mississauga', '4532-781-226-KT', 'L5B 3C2', 'Marie-Claude', 'Tremblay', 'Princess Margaret',
      '416-946-6546'],
     ['71F', 'letrozole', 'palbociclib', 'CBC stable']),
    # 50 dictated transcript: no punctuation, all lower case, date and age in words
    ('this is doctor ramirez dictating on patient maria de la cruz gutierrez medical record number 55102938 '
     'date of service march fourth she is a fifty-four-year-old woman with triple negative breast cancer '
     'here for cycle two of pembrolizumab per keynote 522 her husband jose luis came with her '
     'end of dictation',
     ['ramirez', 'maria', 'de la cruz', 'gutierrez', '55102938', 'march fourth', 'jose luis'],
     ['triple negative breast cancer', 'cycle two', 'pembrolizumab', 'keynote 522']),
    # 51 pasted EHR table: labels in the header row, values below
    ('Name: | MRN: | DOB: | Attending:\nAbdullah Al-Rashidi | 7730451 | 11/23/1948 | Fitzpatrick\n'
     'Dx: metastatic urothelial ca, on enfortumab vedotin + pembrolizumab (EV-302).',
     ['Abdullah', 'Al-Rashidi', '7730451', '11/23/1948', 'Fitzpatrick'],
     ['Name: | MRN: | DOB: | Attending:', 'urothelial', 'enfortumab vedotin', 'pembrolizumab', 'EV-302']),
    # 52 family pedigree
    ('Family history (pedigree): maternal aunt Rosa (d. 61, breast), maternal grandmother Esperanza '
     '(ovarian, dx 58), father Chukwuemeka (prostate, 70s), paternal cousin Adaeze (breast, 39). '
     'Proband carries BRCA2 c.5946delT. Cascade testing offered to sister Ngozi.',
     ['Rosa', 'Esperanza', 'Chukwuemeka', 'Adaeze', 'Ngozi'],
     ['BRCA2 c.5946delT', 'Cascade testing', 'maternal aunt', 'd. 61, breast']),
    # 53 ages and dates in words
    ('Geriatric onc: ninety-two-year-old widow, seen with granddaughter on Christmas Eve 2023 and again on the '
     'fourth of July. Her brother is eighty-nine. Dx: DLBCL stage II, R-mini-CHOP x6. Lives in Wilkes-Barre.',
     ['ninety-two', 'Christmas Eve', 'fourth of July', 'Wilkes-Barre'],
     ['Geriatric onc', 'DLBCL', 'stage II', 'R-mini-CHOP x6']),
    # 54 insurance, device serial, licence plate
    ('Prior auth: BCBS member ID XYZ884512067, group 0047213. Port-a-cath placed 1/5, serial PAC-2291-88310. '
     'Parking validated for plate 7KJM412. Medicaid ID JK48821Q. Pharmacist Olamide Bankole.',
     ['XYZ884512067', '0047213', '1/5', 'PAC-2291-88310', '7KJM412', 'JK48821Q', 'Olamide', 'Bankole'],
     ['BCBS', 'Port-a-cath']),
    # 55 e-mail and URL with the patient's name
    ('Pt sent portal msg from linh.pham.1958@yahoo.com and shared a GoFundMe: '
     'https://gofundme.com/f/help-linh-pham-beat-cancer. Spouse Pham Quoc Bao. CEA 12.',
     ['linh.pham.1958@yahoo.com', 'help-linh-pham', 'Quoc Bao'],
     ['CEA 12']),
    # 56 visiting patient from India, Indian mobile number
    ('Visiting from Pune, India; 58M, Shri Venkatesh Subramaniam Iyer, mobile +91 98220 45173. Son '
     'Karthik (Bengaluru) is HCP. Diffuse large B-cell lymphoma, IPI 3, planned Pola-R-CHP per POLARIX.',
     ['Pune', 'Venkatesh', 'Subramaniam', 'Iyer', '+91 98220 45173', 'Karthik', 'Bengaluru'],
     ['58M', 'IPI 3', 'Pola-R-CHP', 'POLARIX']),
    # 57 Dutch particles, rural route, state name before the ZIP code
    ('Pt Johannes van der Berg, 69M, farmer, lives on RR 2 Box 118, Pella, Iowa 50219. Daughter '
     'Anneke van der Berg-Smit. mCRPC, PSMA PET 4/9: new bone mets. Started Lu-177 (VISION).',
     ['Johannes', 'van der Berg', 'RR 2', 'Box 118', 'Pella', '50219', 'Anneke', 'Berg-Smit', '4/9'],
     ['69M', 'mCRPC', 'PSMA PET', 'Lu-177', 'VISION']),
    # 58 Spanish double surname, Puerto Rican PO box, note in Spanish
    ('Consulta: Sra. María José Fernández Ortiz, 47 años, residente de Caguas, Puerto Rico. Dirección '
     'postal: PO Box 3382, Caguas PR 00726. Tel. 787-555-0139. Carcinoma de cérvix IIB, cisplatino semanal.',
     ['María José', 'Fernández', 'Ortiz', 'Caguas', 'PO Box 3382', '00726', '787-555-0139'],
     ['cérvix IIB', 'cisplatino']),
    # 59 Arabic name with nasab and kunya, Irish O', chaplain
    ('Inpatient onc: Mrs. Fatima Bint Khalid Al-Zahrani (goes by "Umm Yusuf") admitted 8/30 with '
     "neutropenic fever. Nurse Patrick O'Brien-Walsh. Chaplain Sheikh Abdulrahman visited. ANC 0.1.",
     ['Fatima', 'Al-Zahrani', 'Umm Yusuf', '8/30', "O'Brien-Walsh", 'Abdulrahman'],
     ['neutropenic fever', 'ANC 0.1']),
    # 60 lower-case dictation, Nigerian patient, phone number read out digit by digit
    ('ok so patient is mr chidi okonkwo he is a seventy one year old gentleman originally from lagos '
     'now living in houston his wife is ngozi her number is two eight one five five five zero one four four '
     'he has metastatic prostate cancer on darolutamide per aramis',
     ['chidi', 'okonkwo', 'lagos', 'houston', 'ngozi', 'two eight one five five five'],
     ['metastatic prostate cancer', 'darolutamide', 'aramis']),
    # 61 ALL-CAPS header block, Korean names as SURNAME, GIVEN-NAME
    ('PATIENT: PARK, JI-HOON   MRN 00918273   DOB 1957-04-02\nReferring: KIM, SOO-YEON MD\n'
     'Gastric adenoCA, HER2 3+, on trastuzumab + FOLFOX (ToGA).',
     ['PARK', 'JI-HOON', '00918273', '1957-04-02', 'KIM', 'SOO-YEON'],
     ['HER2 3+', 'trastuzumab', 'FOLFOX', 'ToGA']),
    # 62 Ukrainian refugee: patronymics, Canadian unit-street address, social-media handle
    ('Pt Olga Ivanovna Petrova, 66F, emigrated from Kharkiv, Ukraine in 2022; now at 301-45 Bathurst St, '
     'Toronto ON M5T 2P3. Son Dmitriy Sergeyevich posts updates on Instagram @petrova.family22. NSCLC, ALK+, '
     'on alectinib.',
     ['Olga', 'Ivanovna', 'Petrova', 'Kharkiv', '301-45 Bathurst', 'Toronto', 'M5T 2P3', 'Dmitriy',
      'Sergeyevich', 'petrova.family22'],
     ['66F', 'NSCLC', 'ALK+', 'alectinib']),
    # 63 care-team table row and labels, Mexican double surname, rural Texas
    ('Pt MRN: 4481920 | Room 14B | Attending: Dr. Haddad | Fellow: Nwachukwu | RN: Ximena\n'
     'Pt Jesús Alberto Villarreal-Garza, 77M, rancher from Rural Route 3, Box 45, Alpine, Texas 79830; '
     'nephew is his HCP. Cholangiocarcinoma, FGFR2 fusion, on pemigatinib (FIGHT-202). Nephew cell '
     '(432) 555-0198.',
     ['4481920', 'Haddad', 'Nwachukwu', 'Ximena', 'Jesús', 'Villarreal-Garza', 'Route 3', 'Box 45', 'Alpine',
      '79830', '(432) 555-0198'],
     ['77M', 'FGFR2 fusion', 'pemigatinib', 'FIGHT-202']),
    # 64 second opinion from the Gulf coast: a town that is a word, before its state and again alone
    ('Med onc 2nd opinion: 74F from Mobile, AL with ER+ MBC on fulvestrant + abemaciclib, previously treated at '
     'Providence in Mobile. Daughter Magnolia Thibault, (251) 555-0147. Pharmacist Joy reviewed interactions.',
     ['Mobile', 'Providence', 'Magnolia', 'Thibault', '(251) 555-0147', 'Joy'],
     ['74F', 'ER+ MBC', 'fulvestrant', 'abemaciclib', 'Pharmacist']),
    # 65 ALL-CAPS nursing transfer: facility, residence cue, decade of birth, relative in brackets, one-word hospital
    ('NURSING TRANSFER NOTE 11/02\nPT IS AN 88 YO M FROM SUNNYVIEW SNF, LIVED IN INDEPENDENCE, MO UNTIL 2019. DOB: '
     'EARLY 1930S PER SON. SON (GRANT) IS HCP, CELL 816-555-0172. HX CLL ON IBRUTINIB. ADMITTED TO MERCY 10/28 '
     'FOR PNA.',
     ['11/02', 'SUNNYVIEW', 'INDEPENDENCE', '1930S', 'GRANT', '816-555-0172', 'MERCY', '10/28'],
     ['88 YO M', 'CLL', 'IBRUTINIB', 'PNA', '2019']),
    # 66 inpatient care team named without colons, word-names with and without a surname
    ('Inpatient onc day 3: Case manager Hope Delgado arranged home infusion. Social worker Joy met with wife '
     'Charity. Chaplain Will visited. Pharmacist Rose to verify dosing of cytarabine. PT/OT eval pending. ANC 0.4.',
     ['Hope', 'Delgado', 'Joy', 'Charity', 'Will', 'Rose'],
     ['home infusion', 'cytarabine', 'PT/OT', 'ANC 0.4']),
    # 67 geriatric oncology: decade of birth, borough, lower-case employer after 'retired from'
    ('Geri-onc eval: pt born in the late 1920s in Sicily, emigrated 1951; widow, lives in Bensonhurst with '
     'granddaughter Concetta. Retired from general electric. MMSE 26, G8 score 11. MDS-EB1 on azacitidine.',
     ['1920s', 'Bensonhurst', 'Concetta', 'general electric'],
     ['1951', 'MMSE 26', 'G8 score 11', 'MDS-EB1', 'azacitidine']),
    # 68 lower-case dictation: employer and its town, relative's word-name
    ('pt is a 61 yo m who works at general motors in lansing on the assembly line. admitted to sparrow last month '
     'for dvt, started apixaban. his wife is hope, cell 517 555 0161. pancreatic adenoca, resectable, neoadjuvant '
     'mfolfirinox c3.',
     ['general motors', 'lansing', 'hope', '517 555 0161'],  # 'sparrow' leaks: see test_phi_gaps
     ['61 yo m', 'assembly line', 'dvt', 'apixaban', 'pancreatic adenoca', 'mfolfirinox c3']),
    # 69 transfer from a saint's hospital with a lower-case head, city and state, lower-case bank
    ('Transfer note: 57F w/ AML (NPM1+, FLT3-) transferred from St. Elizabeth\'s hospital in Youngstown, OH on '
     '2/19 for induction (7+3). Outside onc Dr. Pfeiffer-Lang. Husband Clement at bedside, works for bank of '
     'america.',
     ["St. Elizabeth", 'Youngstown', '2/19', 'Pfeiffer-Lang', 'Clement', 'bank of america'],
     ['57F', 'NPM1+', 'FLT3-', '7+3']),
    # 70 radiation oncology header block: Louisiana address, referring hospital, e-mail
    ('RADIATION ONCOLOGY CONSULT\nPatient: Desiree Fontenot-Broussard  DOB 09/14/1949  MRN 10293847\n'
     'Address: 1417 Rue Royale, Lafayette, LA 70501\nRef: Dr. Ashok Raghunathan (Our Lady of Lourdes). '
     'Dx: cT2N0 glottic SCC. Plan: 63 Gy/28 fx. Email dfontenot49@att.net.',
     ['Desiree', 'Fontenot-Broussard', '09/14/1949', '10293847', '1417 Rue Royale', 'Lafayette', '70501', 'Ashok',
      'Raghunathan', 'Lourdes', 'dfontenot49@att.net'],
     ['cT2N0', 'glottic SCC', '63 Gy/28 fx']),
    # 71 phone triage: relative in brackets, fellow and nurse with word-names, hospital after 'ED at'
    ("Triage call 8/7 10:15: spoke with pt's husband (Dale) re fever 38.6 on day 10 of C4 dose-dense AC. Fellow "
     'Grant reviewed; advised ED at Methodist. RN Ivy called back 10:40 to confirm arrival. Callback 713-555-0129.',
     ['8/7', 'Dale', 'Grant', 'Methodist', 'Ivy', '713-555-0129'],
     ['fever 38.6', 'day 10 of C4', 'dose-dense AC', '10:15']),
    # 72 Haitian patient: languages stay, interpreter and relatives go, famous hospital in lower case
    ('New pt: Mme. Marie-Ange Jean-Baptiste, 66F, Haitian Creole interpreter (Fabiola, ID 2231). Lives in Mattapan, '
     "Boston; daughter Guerline works at brigham and women's as a CNA. HR+ breast ca, stage IIB. DOB 1958.",
     ['Marie-Ange', 'Jean-Baptiste', 'Fabiola', '2231', 'Mattapan', 'Boston', 'Guerline', 'brigham', '1958'],
     ['66F', 'HR+ breast ca', 'stage IIB', 'CNA', 'Haitian Creole']),
    # 73 VA clinic: a town that is a word before a spelled-out state, county, SSN, saint's hospital
    ('VA onc clinic: 78M Vietnam veteran, Agent Orange exposure, CLL Rai II. Lives in Normal, Illinois with wife '
     'Bonnie Jo; son Rusty is a deputy in McLean County. SSN 123-45-6789. Next CT 4/14 at OSF St. Joseph.',
     ['Normal', 'Bonnie Jo', 'Rusty', 'McLean', '123-45-6789', '4/14', 'St. Joseph'],
     ['78M', 'Vietnam veteran', 'Agent Orange', 'CLL Rai II']),
    # 74 late effects: saint's hospital without a head noun, school employer, mother's word-name
    ('Late-effects clinic: 31F, treated for ALL at St. Jude in 2001 (Total XV), now a teacher at Lincoln '
     'Elementary in Memphis. Mother Pearl attends. Echo 5/2 EF 55%. Cumulative doxorubicin 120 mg/m2.',
     ['St. Jude', 'Lincoln Elementary', 'Memphis', 'Pearl', '5/2'],
     ['31F', 'ALL', '2001', 'Total XV', 'EF 55%', '120 mg/m2']),
    # 75 lower-case hospice admission: town before a lower-case state, word-names after kin and role, firm
    ('hospice admission: pt resides in reading, pa with daughter faith. dx metastatic melanoma, progressed on '
     'nivo/ipi. dnr/dni confirmed. chaplain grace to visit tomorrow. funeral home: kowalczyk & sons.',
     ['reading', 'faith', 'grace', 'kowalczyk'],
     ['metastatic melanoma', 'nivo/ipi', 'dnr/dni', 'funeral home']),
    # 76 sarcoma tumour board: one-word hospitals, Kansas City, lower-case railroad employer
    ('Sarcoma TB 6/20: 23M, Ewing sarcoma L femur, referred from Presbyterian by Dr. Okafor. Previously treated '
     "at Children's Mercy in Kansas City (VDC/IE). Father Rocky works for union pacific.",
     ['6/20', 'Presbyterian', 'Okafor', "Children's Mercy", 'Kansas City', 'Rocky', 'union pacific'],
     ['23M', 'Ewing sarcoma', 'VDC/IE']),
    # 77 portal message pasted into the chart: a town named Hope, outside hospital, nurse 'Summer'
    ("Portal msg 3/3 from pt: 'Hi Dr. Whitcomb, this is Lorraine Kesselring (DOB 7/4/1952). I moved to Hope, "
     "Arkansas to be near my son. Can my port flush be done at Wadley? My new number is 870-555-0119.' Reply by "
     'RN Summer.',
     ['3/3', 'Whitcomb', 'Lorraine', 'Kesselring', '7/4/1952', 'Hope', 'Wadley', '870-555-0119', 'Summer'],
     ['port flush']),
    # 78 genetic counselling: decade of a grandparent's birth, Irish county, lower-case insurer
    ('GC note: proband 45F; maternal grandmother born in the 1910s in County Cork, d. breast ca in her 60s. Mother '
     "(Kathleen) alive, 72. Aunt Bridget O'Donoghue in Scranton. Proband works at state farm in Bloomington.",
     ['1910s', 'Cork', 'Kathleen', 'Bridget', "O'Donoghue", 'Scranton', 'state farm', 'Bloomington'],
     ['45F', 'maternal grandmother', 'breast ca']),
]


@pytest.mark.parametrize("text,gone,kept", NOTES, ids=[f"note{i}" for i in range(1, len(NOTES) + 1)])
def test_hand_written_note(text, gone, kept):
    out = redact(text).text
    leaked = [v for v in gone if v in out]
    assert not leaked, f"{leaked} survived in {out!r}"
    lost = [v for v in kept if v not in out]
    assert not lost, f"{lost} was redacted in {out!r}"
