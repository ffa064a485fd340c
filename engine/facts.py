"""Case-fact extraction from (already redacted) clinical text, for the Router and the prompts.

Rules, each tested:
- Cancer type: every phrase in CANCER_TYPES is searched; the longest match wins (the most specific: "triple-negative
  breast cancer" over "breast cancer"), ties go to the earliest. "small cell lung" never matches inside "non-small".
- Stage: roman ("stage IIIB"), arabic ("stage 4"), "extensive-stage" (IV) as stated; TNM only when no stage is
  stated ("cT2N1M0 stage IIB" is IIB): for bladder cancer (urothelial carcinoma with a bladder cue) by AJCC 8th
  edition (``bladder_stage``: "cT2N0M0" -> II, "T3aN0M0"/"T1-4aN1M0" -> III, "N2-3M0" -> III, "T4bN0M0" -> IV,
  M1 -> IV; "T4N1M0" (T4a or T4b) or an "x" -> none rather than a guess), otherwise a routing-only
  approximation ("T3N1M1": M1 -> IV, else N1-3 -> III) since true stage groups differ by cancer; a pathological T
  and N without M ("pT3N1a") only for colorectal and anal cancer (N1-3 -> III, N0 by T); "metastatic"
  without "non-" implies IV when neither is there (so "cT2N0M0 ... metastatic" stays II: the TNM wins). Several stages
  of one kind mentioned -> the highest (disease progresses; routing must not under-call it). The extent words
  "unresectable", "inoperable", "muscle-invasive", "non-muscle-invasive" are added to stage_text for case fit
  ("stage IIIA, unresectable"), and so is "resected" ("resectable") when resection is stated as done (or now
  possible) and no unresectable mention stands: "initially unresectable, now resected after conversion
  chemotherapy" is "resected" (the latest state); "primary resected; liver metastases unresectable" stays
  unresectable. Dashes (U+2010-2014, U+2212) are read as hyphens throughout.
- Cancer type: colon and rectal cancer are told apart ("colon cancer", "rectal cancer"); "colorectal cancer" only
  when the text says "colorectal" or "CRC".
- Markers: genes from the configured list with an optional variant or status ("BRAF V600E", "EGFR exon 19 deletion",
  "HER2-positive"), plus biomarkers (MSI-H, dMMR, TMB-high, PD-L1, ER/PR and hormone-receptor status; biomarkers
  are markers, never counted mutations). Mismatch repair in its usual wordings (``MMR_RE``: "microsatellite
  instability-high", "mismatch repair deficient", "MMR proteins intact"), negated ("not MSI-H", "non-MSI-H/dMMR",
  "MSI-H negative": MSS/pMMR; ``mmr_readings``) or not yet known ("MSI-H testing pending": no status); PD-L1
  with its status or whole value (``PDL1_RE``: "PD-L1 negative", "PD-L1 TPS 1-49%", "PD-L1 expression of at least
  50%"), never cut to "PD-L1 TPS 1".
  ER/PR with a percentage or Allred score are read by it (``hormone_score``): "ER 95%" -> "ER-positive (95%)", "ER
  5%" / "ER-low" -> "ER-low (5%)", "PR Allred 2" -> "PR-negative (Allred 2)", "ER-positive (Allred 2)" -> "ER
  discordant (stated positive, Allred 2)" (no status); not "PR (45% reduction)" (a partial response).
  A gene counts as altered unless its status says otherwise: negative / wild-type / not detected, or not yet known
  (pending, unknown, sent, ordered, not tested). The status may sit on the gene ("ALK negative"), after a list of
  genes ("EGFR, ALK and ROS1 wild-type", "EGFR testing pending") or before it ("negative for EGFR, ALK and ROS1",
  "no EGFR or ALK mutation detected"). A leading negation covers the bare
  genes at the start of the list and the first gene with a generic word ("mutation", "amplification": "no HER2
  amplification" is HER2 negative), not a later gene with its own
  finding ("no EGFR mutation, KRAS G12C": KRAS counts). A trailing status covers only genes without a status or
  variant of their own ("EGFR exon 19 deletion, ALK negative": EGFR counts); a bare gene takes the next status in its
  list, so a later finding does not undo it ("EGFR/ALK negative, KRAS G12C": EGFR negative, KRAS counts). The last
  gene of a list may carry generic words before its status ("ALK fusion absent", "EGFR mutation testing pending"),
  never a variant ("KRAS G12C" stays a finding). "BRCA1/2" is one gene slot ("a BRCA1 or BRCA2 mutation" is one
  mutation), and so is a bare "BRCA" ("no germline BRCA or PALB2 mutation": both negative). Receptor lists share
  their status ("ER/PR/HER2 negative": ER negative, PR negative, HER2 negative); "triple-negative" is a marker, and
  "breast cancer, triple-negative" is triple-negative breast cancer. A gene that is not altered gets its status in
  its marker, right after the name ("EGFR negative", "ALK negative" for "no ALK rearrangement"), so the retrieval
  query, the export and case fitting never read a bare or "rearrangement" gene that was in fact negative.
  HER2 with an IHC score is read by the score and keeps it (ASCO/CAP; ``her2_score``): "HER2 3+" / "HER2 IHC 2+ with
  ISH amplification" -> "HER2-positive (IHC ...)", which counts like "HER2-positive"; "HER2 1+" / "2+, ISH-negative"
  -> "HER2-low (IHC ...)"; "HER2 IHC 0" / "HER2-negative (IHC 0)" -> "HER2-negative (IHC 0)" (case fit: HER2-zero);
  "2+" without an ISH result -> "HER2 equivocal (IHC 2+)"; a word the score disagrees with -> "HER2 discordant
  (...)". HER2 by ISH alone (``her2_ish``, ASCO/CAP dual-probe groups): "HER2/CEP17 ratio 2.4, copy number 5.1"
  (group 1) or "HER2 FISH amplified" -> "HER2-positive (ISH ...)"; "ratio 1.3, copy number 3.1" (group 5), "HER2 not
  amplified" -> "HER2-negative (ISH ...)"; groups 2-4, or a ratio without a copy number -> "HER2 ISH unclassified
  (...)" (no status). IHC 2+ followed by ISH numbers ("HER2 IHC 2+, FISH ratio 1.4, copy number 2.6") is read
  together: group 1 -> "HER2-positive (IHC 2+, ISH-positive: ...)", group 5 -> "HER2-low (IHC 2+, ISH-negative:
  ...)", other groups stay "HER2 equivocal (IHC 2+)". "HER2-low", "HER2-ultralow", "HER2-zero" are kept as
  written. None of these but positive counts.
- Fitness (``fitness_readings``, shared with case fit): "not a candidate for intensive chemotherapy", "transplant-
  ineligible", "cisplatin-ineligible", "fit for autologous stem cell transplant", "frail", kept as written outside
  questions ("Is he a transplant candidate?" asks); each names a target (intensive, transplant, cisplatin,
  chemotherapy, general) and fit or unfit. Eligibility for surgery, radiation or a trial is not fitness. A
  creatinine clearance below 60 mL/min ("CrCl 35 mL/min") is cisplatin-ineligible, the usual criterion.
- Age: the first "78-year-old", "78 yo", "aged 78", "age: 78"; a redacted one ("[AGE_1]-year-old", over 89) is 90.
- Prior treatment: a configured keyword not preceded (within a few words) by a negation ("no prior chemotherapy"),
  outside questions ("Is FOLFIRINOX an option?" asks, it does not report), not named for eligibility or a wish
  ("cisplatin-eligible", "cisplatin ineligible", "candidate for surgery", "would prefer surgery").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from engine.safety import drug_spans
from engine.state import CaseFacts

# "squamous cell carcinoma of the (left lateral) ...", "SCC of the ...": a head and neck site follows
_SCC_OF = r"(?:squamous (?:cell )?carcinoma|(?-i:SCC)) of the (?:\w+ ){0,2}?"
# APL's fusion (PML-RARA, t(15;17)), unless reported absent ("PML-RARA negative": then no APL)
_APL_FUSION = (r"(?:PML\s*[-:/]{0,2}\s*RARA\b|t\(15;\s*17\)(?:\(q2[24];\s*q\d+(?:\.\d+)?\))?)"
               r"(?![\s:-]*(?:(?:fusion|rearrangement|transcript|gene)s?[\s:-]*)?"
               r"(?:negative|neg\b|not[ ]detected|undetected|absent))")
# (canonical name, regex alternatives). Longest matched span wins, so list generic names freely.
CANCER_TYPES: tuple[tuple[str, str], ...] = (
    ("triple-negative breast cancer", r"triple[- ]negative breast (?:cancer|carcinoma)|\bTNBC\b|breast "
                                      r"(?:cancer|carcinoma)(?:,| -|:)?[ ](?:(?:which|that) is )?triple[- ]negative"),
    ("HER2-positive breast cancer", r"HER2[- ]?(?:positive|\+) breast (?:cancer|carcinoma)"),
    ("hormone receptor-positive breast cancer", r"(?:HR|hormone[- ]receptor|ER|o?estrogen[- ]receptor)[- ]?"
                                                r"(?:positive|\+) breast (?:cancer|carcinoma)"),
    ("breast cancer", r"breast (?:cancer|carcinoma|adenocarcinoma)|(?:invasive )?ductal carcinoma|lobular carcinoma"),
    # PDQ treats it in a summary of its own (a man is given an aromatase inhibitor only with a GnRH agonist); a man's
    # "breast cancer" is read as this too (``extract_facts``)
    ("male breast cancer", r"male breast (?:cancer|carcinoma)|breast (?:cancer|carcinoma) in (?:a )?m[ae]n\b"),
    ("non-small cell lung cancer", r"non[- ]small[- ]cell lung (?:cancer|carcinoma)|\bNSCLC\b|lung adenocarcinoma|"
                                   r"squamous cell (?:carcinoma of the lung|lung (?:cancer|carcinoma))"),
    ("small cell lung cancer", r"(?<!non-)(?<!non )(?<!non)small[- ]cell lung (?:cancer|carcinoma)|\bSCLC\b|"
                               r"(?<!non-)(?<!non )(?<!non)small[- ]cell carcinoma of the lung"),
    ("lung cancer", r"lung (?:cancer|carcinoma|tumou?r)"),
    # Colon and rectal cancer are treated (and written up in PDQ) apart: "colorectal" only when the text says so.
    ("colorectal cancer", r"colorectal (?:cancer|carcinoma|adenocarcinoma)|\bCRC\b"),
    # "adenocarcinoma of the ascending colon", "... of the mid rectum" (a QA pass's two such notes were refused)
    ("colon cancer", r"(?:colon|colonic|sigmoid|caecal|cecal) (?:cancer|carcinoma|adenocarcinoma)|"
                     r"(?:adeno)?carcinoma of the (?:(?:ascending|descending|transverse|sigmoid|right|left|proximal|"
                     r"distal)[- ])?(?:colon|c(?:a)?ecum)"),
    ("rectal cancer", r"(?<!colo)rectal (?:cancer|carcinoma|adenocarcinoma)|(?:adeno)?carcinoma of the "
                      r"(?:(?:upper|mid|middle|lower|low|distal|proximal)[- ]?(?:third of the )?)?rectum"),
    ("pancreatic neuroendocrine tumor", r"pancreatic neuroendocrine (?:tumou?r|neoplasm|carcinoma)|\bpNET\b"),
    ("pancreatic adenocarcinoma", r"pancreatic (?:(?:head|body|tail|uncinate) )?(?:ductal )?(?:adenocarcinoma|cancer|"
                                  r"carcinoma)|\bPDAC\b|(?:adeno)?carcinoma of the (?:(?:head|body|tail) of the )?"
                                  r"pancreas|cancer of the pancreas|adenocarcinoma of the pancreatic (?:head|body|tail)"),
    ("prostate cancer", r"prostate (?:cancer|carcinoma|adenocarcinoma)|\bmCRPC\b|castration[- ]resistant prostate"),
    ("uveal melanoma", r"uveal melanoma|ocular melanoma"),
    ("melanoma", r"melanoma"),
    ("ovarian cancer", r"ovarian (?:cancer|carcinoma)|high[- ]grade serous (?:ovarian )?carcinoma"),
    ("gastric cancer", r"gastric (?:(?:body|antral|antrum|cardia|fundus|fundic|pyloric|signet[- ]ring(?: cell)?|"
                       r"diffuse[- ]type|intestinal[- ]type) )?(?:cancer|carcinoma|adenocarcinoma)|stomach cancer|"
                       r"gastroesophageal junction|"
                       r"(?:adeno)?carcinoma of the stomach"),
    ("esophageal cancer", r"o?esophageal (?:squamous cell )?(?:cancer|carcinoma|adenocarcinoma)|"
                          r"(?:adeno|squamous cell )?carcinoma of the (?:distal |proximal |mid-?)?o?esophagus"),
    ("hepatocellular carcinoma", r"hepatocellular carcinoma|\bHCC\b|liver cancer"),
    ("cholangiocarcinoma", r"cholangiocarcinoma|bile duct cancer|biliary tract cancer"),
    ("gallbladder cancer", r"gallbladder (?:cancer|(?:adeno)?carcinoma)|(?:adeno)?carcinoma of the gallbladder"),
    ("renal cell carcinoma", r"(?:(?:clear|non-clear)[- ]cell |papillary |chromophobe )?renal (?:cell )?(?:carcinoma|"
                             r"cancer)|\bRCC\b|kidney cancer|clear[- ]cell (?:renal|kidney)"),
    ("urothelial carcinoma", r"urothelial (?:carcinoma|cancer)|bladder (?:cancer|carcinoma)|(?:urothelial|"
                             r"transitional[- ]cell) (?:carcinoma|cancer) of the (?:urinary )?bladder"),
    # the renal pelvis and ureter: a PDQ summary of its own, not bladder cancer's
    ("upper tract urothelial carcinoma", r"upper[- ]tract urothelial (?:carcinoma|cancer)|\bUTUC\b|(?:urothelial|"
                                         r"transitional[- ]cell) (?:carcinoma|cancer) of the (?:renal pelvis|ureter)|"
                                         r"(?:renal pelvis|ureteral|ureteric) (?:urothelial |transitional[- ]cell )?"
                                         r"(?:carcinoma|cancer)"),
    ("glioblastoma", r"glioblastoma|\bGBM\b"),
    ("glioma", r"glioma|astrocytoma|oligodendroglioma"),
    ("soft tissue sarcoma", r"(?:soft[- ]tissue )?sarcoma|leiomyosarcoma|liposarcoma"),
    ("gastrointestinal stromal tumor", r"gastrointestinal stromal tumou?r|\bGIST\b"),
    ("mesothelioma", r"mesothelioma"),
    ("neuroendocrine tumor", r"neuroendocrine (?:tumou?r|carcinoma|neoplasm)|carcinoid"),
    # one of the digestive tract, not the pancreas: PDQ's "Gastrointestinal Neuroendocrine Tumors" (a QA pass's
    # ileal NET was answered from the pancreatic NET summary)
    ("gastrointestinal neuroendocrine tumor",
     r"(?:gastrointestinal|GI|small[- ]bowel|small[- ]intestinal|ileal|jejunal|duodenal|appendiceal|midgut|gastric|"
     r"rectal|colonic)(?: \([\w -]{1,20}\))? (?:neuroendocrine (?:tumou?r|carcinoma|neoplasm)|carcinoid|NET)s?|"
     r"(?:neuroendocrine "
     r"(?:tumou?r|carcinoma|neoplasm)|carcinoid|NET)s? (?:(?:\w+[- ]){0,3}\w+ )?(?:of|in|arising in|from) the "
     r"(?:terminal )?(?:ileum|jejunum|duodenum|small (?:bowel|intestine)|appendix|stomach|rectum|colon)"),
    ("diffuse large B-cell lymphoma", r"diffuse large B[- ]cell lymphoma|\bDLBCL\b"),
    # PDQ treats it in a summary of its own ("Primary CNS Lymphoma Treatment"): a held-out case's "diffuse large
    # B-cell lymphoma confined to the brain" had every passage of it set aside as another cancer's
    ("primary CNS lymphoma", r"primary (?:CNS|central nervous system) (?:diffuse large B[- ]cell )?lymphoma|"
                             r"(?-i:\bPCNSL\b)|(?:diffuse large B[- ]cell lymphoma|\bDLBCL|(?:B[- ]cell )?lymphoma),? "
                             r"(?:confined|limited|isolated|restricted) to the (?:brain|CNS|central nervous system)|"
                             r"(?:CNS|brain|cerebral) lymphoma"),
    ("Hodgkin lymphoma", r"(?<!non-)(?<!non )Hodgkin(?:'s)? lymphoma"),
    # PDQ's "Mycosis Fungoides and Other Cutaneous T-Cell Lymphomas", not a lymphoma of the nodes
    ("mycosis fungoides", r"mycosis fungoides|s[ée]zary syndrome|cutaneous T[- ]cell lymphoma|(?-i:\bCTCL\b)"),
    # PDQ's "Indolent B-Cell Non-Hodgkin Lymphoma Treatment" (a follicular lymphoma case had been a "lymphoma" one,
    # and was offered the Hodgkin lymphoma summary)
    ("indolent B-cell lymphoma", r"follicular lymphoma|marginal[- ]zone lymphoma|\bMALT lymphoma|"
                                 r"lymphoplasmacytic lymphoma|indolent (?:B[- ]cell )?(?:non-?[- ]?Hodgkin )?lymphoma"),
    ("lymphoma", r"lymphoma"),
    # PDQ writes each leukemia up apart ("Chronic Myeloid Leukemia Treatment"): a CML case is not an AML one.
    # Acronyms in capitals only ("all patients" is no leukemia).
    # APL is an AML (it had been a generic "leukemia"); "APL" in capitals only ("aPL antibodies")
    ("acute myeloid leukemia", r"acute (?:myeloid|myelogenous|non-?lymphocytic|promyelocytic) leuka?emia|"
                               r"(?-i:\bAML\b|\bAPL\b)|leuka?emia[^.;]{0,40}?" + _APL_FUSION + "|"
                               + _APL_FUSION + r"[^.;]{0,40}?leuka?emia"),
    ("chronic myeloid leukemia", r"chronic (?:myeloid|myelogenous) leuka?emia|(?-i:\bCML\b)"),
    ("chronic lymphocytic leukemia", r"chronic lymphocytic leuka?emia|small lymphocytic lymphoma|(?-i:\bCLL\b)"),
    ("acute lymphoblastic leukemia", r"acute lympho(?:blastic|cytic) leuka?emia|(?-i:\bALL\b)"),
    ("hairy cell leukemia", r"hairy[- ]cell leuka?emia"),
    ("leukemia", r"leuka?emia"),
    ("multiple myeloma", r"(?:multiple )?myeloma"),
    # PDQ writes each head and neck site up apart (lip and oral cavity, oropharynx, larynx, hypopharynx): a site
    # named is that site's cancer; "head and neck" without one stays the whole group
    ("oral cavity cancer", r"(?:oral cavity|oral tongue|(?:mobile )?tongue|floor[- ]of[- ](?:the[- ])?mouth|buccal|"
                           r"gingival|alveolar ridge|hard palate|retromolar|lip) (?:squamous cell )?(?:cancer|"
                           r"carcinoma|(?-i:SCC))|" + _SCC_OF + r"(?:oral cavity|(?<!base of the )(?<!base of )tongue|"
                           r"floor of (?:the )?mouth|buccal mucosa|gingiva|lip|hard palate)"),
    ("oropharyngeal cancer", r"(?:oropharyngeal|tonsil(?:lar)?|base[- ]of[- ](?:the[- ])?tongue|soft palate) "
                             r"(?:squamous cell )?(?:cancer|carcinoma|(?-i:SCC))|" + _SCC_OF
                             + r"(?:oropharynx|tonsil|base of (?:the )?tongue|soft palate)"),
    ("laryngeal cancer", r"(?:laryngeal|(?:supra|sub)?glottic|vocal cord) (?:squamous cell )?(?:cancer|carcinoma|"
                         r"(?-i:SCC))|" + _SCC_OF + r"(?:larynx|supraglottis|glottis|vocal cords?)"),
    ("hypopharyngeal cancer", r"(?:hypopharyngeal|pyriform sinus|piriform sinus|postcricoid) (?:squamous cell )?"
                              r"(?:cancer|carcinoma|(?-i:SCC))|" + _SCC_OF
                              + r"(?:hypopharynx|pyriform sinus|piriform sinus)"),
    ("head and neck squamous cell carcinoma", r"head and neck (?:squamous cell )?(?:cancer|carcinoma)|\bHNSCC\b"),
    ("nasopharyngeal carcinoma", r"nasopharyngeal (?:cancer|carcinoma)|carcinoma of the nasopharynx|\bNPC\b"),
    ("thyroid cancer", r"thyroid (?:cancer|carcinoma)"),
    ("cervical cancer", r"cervical (?:squamous cell )?(?:cancer|carcinoma|adenocarcinoma)|(?:squamous cell |adeno)?"
                        r"carcinoma of the (?:uterine )?cervix|cervix (?:cancer|carcinoma)"),
    ("endometrial cancer", r"endometrial (?:cancer|carcinoma)|uterine (?:cancer|carcinoma)"),
    ("thymic carcinoma", r"thymic carcinoma|thymoma"),
    ("adrenocortical carcinoma", r"adrenocortical carcinoma"),
    ("Merkel cell carcinoma", r"merkel cell carcinoma"),
    ("anal cancer", r"anal (?:canal |margin )?(?:squamous cell )?(?:cancer|carcinoma)|(?:squamous cell )?carcinoma "
                    r"of the (?:anus|anal canal)"),
    ("cancer of unknown primary", r"cancer of unknown primary|carcinoma of unknown primary|\bCUP\b"),
    ("testicular cancer", r"testicular (?:cancer|carcinoma|germ[- ]cell tumou?r|seminoma)|(?:pure |classic )?seminoma|"
                          r"non-?seminomatous germ[- ]cell tumou?r|nonseminoma|germ[- ]cell tumou?r of the testis"),
    ("penile cancer", r"penile (?:squamous cell )?(?:cancer|carcinoma|(?-i:SCC))|(?:squamous cell )?carcinoma of the "
                      r"penis"),
    # a site within the organ may come between ("carcinoma of the upper vagina", "of the left labium majus")
    ("vulvar cancer", r"vulvar (?:squamous (?:cell )?)?(?:cancer|carcinoma)|(?:squamous (?:cell )?)?carcinoma of the "
                      r"(?:\w+ ){0,2}?(?:vulva|lab(?:ium|ia) (?:majus|minus|majora|minora)|clitoris)"),
    ("vaginal cancer", r"vaginal (?:squamous (?:cell )?)?(?:cancer|carcinoma)|(?:squamous (?:cell )?|adeno)?carcinoma "
                       r"of the (?:\w+ ){0,2}?vagina"),
    ("small intestine cancer", r"small (?:intestine|intestinal|bowel) (?:cancer|(?:adeno)?carcinoma)|(?:jejunal|"
                               r"duodenal|ileal) (?:adeno)?carcinoma|(?:adeno)?carcinoma of the (?:small (?:intestine|"
                               r"bowel)|jejunum|duodenum|ileum)"),
    ("Kaposi sarcoma", r"kaposi(?:'s)? sarcoma"),
    ("Ewing sarcoma", r"ewing(?:'s)? sarcoma"),
    # children's solid tumours, each a PDQ summary of its own (a 3-year-old's Wilms tumour "after upfront
    # nephrectomy" had been a renal cell carcinoma, and was released adjuvant pembrolizumab)
    ("Wilms tumor", r"wilms(?:'s)?(?: tumou?r)?|nephroblastoma"),
    ("neuroblastoma", r"(?:ganglio)?neuroblastoma"),
    ("retinoblastoma", r"retinoblastoma"),
    ("rhabdomyosarcoma", r"rhabdomyosarcoma"),
    ("osteosarcoma", r"osteosarcoma|osteogenic sarcoma"),
    ("uterine sarcoma", r"uterine (?:leiomyo|carcino)?sarcoma|(?:leiomyo|carcino)sarcoma of the uterus|"
                        r"endometrial stromal sarcoma"),
    ("myelodysplastic syndrome", r"myelodysplastic syndromes?|(?-i:\bMDS\b)"),
    ("skin cancer", r"basal cell carcinoma|cutaneous squamous cell carcinoma|squamous cell carcinoma of the skin"),
)
_TYPE_RES = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in CANCER_TYPES)
# When a note names no cancer, a cancer-specific operation or score still says which one it is ("right
# hemicolectomy for a pT3N1a adenocarcinoma", "Gleason 3+3"): read only then, as named types are more exact.
IMPLIED_TYPES: tuple[tuple[str, str], ...] = (
    ("colon cancer", r"\b(?:hemi|sigmoid |total |subtotal )?colectomy"),
    ("rectal cancer", r"low anterior resection|abdominoperineal resection|total mesorectal excision|\bTME\b"),
    ("esophageal cancer", r"o?esophagectomy"),
    ("pancreatic adenocarcinoma", r"\bwhipple\b|pancreaticoduodenectomy|distal pancreatectomy"),
    ("prostate cancer", r"\bgleason\b|prostatectomy"),
    # a hormone-receptor status with a value is a breast report's ("ER-negative", "ER 95%, PR 40%"); not "ER visit"
    ("breast cancer", r"mastectomy|lumpectomy|\b(?:ER|PR|estrogen receptor|progesterone receptor)(?:[- ]?(?:positive|"
                      r"negative)\b|\s?[+-](?=[\s,.;:/)]|$)|\s+\d{1,3}\s?%|\s+Allred)"),
    ("urothelial carcinoma", r"\bcystectomy|\bTURBT\b"),
    ("renal cell carcinoma", r"nephrectomy"),
    ("non-small cell lung cancer", r"\bnon[- ]?small[- ]cell carcinoma\b"),  # said of the lung only
    # a small cell carcinoma with a chest finding ("right hilar mass ... biopsy small cell carcinoma")
    ("small cell lung cancer", r"(?<!non-)(?<!non )\bsmall[- ]cell carcinoma\b.{0,200}?\b(?:lung|hilar|hilum|"
                               r"bronch\w*|mediastin\w*)|\b(?:lung|hilar|hilum|bronch\w*|mediastin\w*).{0,200}?"
                               r"(?<!non-)(?<!non )\bsmall[- ]cell carcinoma\b"),
    ("acute myeloid leukemia", _APL_FUSION),  # APL's fusion on its own
    # LI-RADS imaging ("arterially enhancing lesions with washout": a long note that never wrote "HCC")
    ("hepatocellular carcinoma", r"\bLI-?RADS\b|\barterial\w*[- ](?:phase[- ])?(?:hyper)?enhanc\w*[^.]{0,80}?"
                                 r"wash-?out|\bBCLC\b|\bhepatoma\b|"
                                 r"\bcirrho\w*.{0,200}?\b(?:liver|hepatic) (?:mass|lesion|tumou?r)|"
                                 r"\b(?:liver|hepatic) (?:mass|lesion|tumou?r)\b.{0,200}?\bcirrho"),
)
_IMPLIED_RES = tuple((name, re.compile(pattern, re.IGNORECASE | re.DOTALL)) for name, pattern in IMPLIED_TYPES)

_ROMAN = {"0": "0", "1": "I", "2": "II", "3": "III", "4": "IV", "i": "I", "ii": "II", "iii": "III", "iv": "IV"}
_STAGE_ORDER = {"0": 0, "I": 1, "II": 2, "III": 3, "IV": 4}
_STAGE_RE = re.compile(r"\bstage\s*(iv|iii|ii|i|[0-4])(?:[abc]\d?)?\b", re.IGNORECASE)
# The disease's extent beyond its stage, kept in stage_text for case fit ("stage IIIA, unresectable"): resected
# lines do not apply to unresectable disease, nor non-muscle-invasive lines to muscle-invasive bladder cancer.
_EXTENT_RE = re.compile(r"\b(?:unresectable|inoperable|non[- ]?muscle[- ]invasive|muscle[- ]invasive)\b|"
                        # written out, read as "unresectable" (a QA pass's "not resectable" HCC was offered resection)
                        r"\b(?P<not>not\s+(?:surgically\s+)?resectable|not\s+an?\s+(?:surgical|operative)\s+"
                        r"candidate|not\s+a\s+candidate\s+for\s+(?:surgery|resection|surgical\s+resection))\b",
                        re.IGNORECASE)
# Resectability changes over time: "initially unresectable, now resected after conversion chemotherapy" is resected
# (the latest state). An unresectable/inoperable mention is the past when a cue says so ("initially", "originally
# deemed", "at diagnosis"); a resection stated as done ("resected", "R0 resection", "underwent resection") or a
# change ("now resectable") then replaces it. Without such a cue "unresectable" stays ("primary resected; liver
# metastases unresectable": two sites). A resection asked about or possible ("can it be resected?", "could be
# resected") is none.
_UNRESECTABLE_WORDS = ("unresectable", "inoperable")
# the operations that remove a primary tumour: "after lumpectomy", "s/p right hemicolectomy", "excised by
# lumpectomy" is a resection done (an adjuvant line had been "applies if ... (not stated)" for such a case)
_OPERATION = (r"(?:lumpectomy|mastectomy|(?:hemi)?colectomy|gastrectomy|esophagectomy|oesophagectomy|"
              r"pancreatectomy|pancreaticoduodenectomy|whipple(?:[ ]procedure)?|lobectomy|pneumonectomy|"
              r"nephrectomy|prostatectomy|cystectomy|hysterectomy|orchiectomy|hepatectomy|"
              r"wide[ ](?:local[ ])?excision)")
_RESECTION_RE = re.compile(
    r"\b(?P<done>resected|excised|(?:R0|R1|complete|curative|radical)[ ]resection|"
    r"underwent[ ](?:\w+[ ]){0,3}resection|"
    # "finished neoadjuvant chemotherapy and surgery" (the audit's BRCA2 breast case had read as not operated)
    r"(?:after|following|s/p|status[ ]post|underwent|finished|completed)[ ](?:[\w-]+[ ]){0,3}surgery|"
    r"(?:after|following|s/p|status[ ]post|underwent|excised[ ]by|treated[ ]with)[ ](?:\w+[ ]){0,2}"
    + _OPERATION + r")\b|\b(?P<able>(?:now|became|become|converted[ ]to)[ ]resectable|(?<![\w-])resectable)\b|"
    r"\b(?P<border>borderline[ -]resectable)\b", re.IGNORECASE)
_RESECTION_NOT_DONE_RE = re.compile(
    r"\b(?:(?:can|cannot|could|may|might|to|would|should|will)(?:[ ]+not)?[ ]+(?:be|been|get)[ ]+(?:\w+[ ]+)?|"
    r"(?:not|never|if|whether|unless|potentially|possibly)[ ]+(?:\w+[ ]+){0,2})\Z", re.IGNORECASE)
_FORMER_BEFORE_RE = re.compile(r"\b(?:initially|originally|previously|formerly|first|once)\b[^.;,]{0,25}\Z",
                               re.IGNORECASE)
_FORMER_AFTER_RE = re.compile(r"[ \t]*(?:at[ ](?:diagnosis|presentation|baseline)|initially|originally)\b",
                              re.IGNORECASE)
_EXTENT_WORDS = frozenset({"unresectable", "inoperable", "non-muscle-invasive", "muscle-invasive", "resected",
                           "resectable", "borderline resectable", "localized", "limited-stage",
                           "breast-conserving surgery", "mastectomy"})
_BREAST_CONSERVING_RE = re.compile(r"\blumpectomy\b|\bbreast[- ]conserving\s+(?:surgery|therapy)\b|\bBCS\b|"
                                   r"\bpartial\s+mastectomy\b|\bwide\s+local\s+excision\b", re.IGNORECASE)
_MASTECTOMY_RE = re.compile(r"(?<!partial )\bmastectomy\b", re.IGNORECASE)
# ductal carcinoma in situ, stage 0, when nothing invasive is named (not "invasive ductal carcinoma with DCIS")
_DCIS_RE = re.compile(r"\bDCIS\b|\bductal carcinoma in situ\b", re.IGNORECASE)
_INVASIVE_RE = re.compile(r"(?<!non-)(?<!non)(?<!micro)(?<!micro-)\binvasi(?:ve|on)\b|\bIDC\b|\bILC\b",
                          re.IGNORECASE)
# Localized disease when no stage is given ("localized prostate adenocarcinoma", "clinically localised disease",
# "organ-confined"): not metastatic. Not "localized pain", "localized to the liver", "locally advanced", "not
# localized".
_LOCALIZED_RE = re.compile(
    r"(?<!not )(?<!non-)\b(?:clinically\s+)?locali[sz]ed\s+(?:[\w-]+\s+){0,3}?(?:cancer|carcinoma|adenocarcinoma|"
    r"disease|tumou?rs?|melanoma|sarcoma|malignancy)\b|\borgan[- ]confined\b", re.IGNORECASE)
# Dashes written for a hyphen ("hormone receptor\u2013positive", "ER\u2013negative"): read as "-" (same length).
DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2212"})
# T, N and M stated together ("cT2N0M0", "ypT3a N1 M0", "Ta N0 M0"). Shared with case fit (M0: not metastatic).
TNM_RE = re.compile(r"\b(?:y?[cp]|y)?T(?P<t>[0-4x]|is|a)(?P<ts>[a-d])?\s*N(?P<n>[0-3x])[a-c]?\s*M(?P<m>[01x])[a-c]?\b",
                    re.IGNORECASE)
# Bladder cancer's cue beside "urothelial carcinoma" (the renal pelvis and ureter are staged otherwise)
_BLADDER_RE = re.compile(r"\bbladder\b|\bN?MIBC\b|cystectomy|\bTURBT\b", re.IGNORECASE)
# "metastatic potential", "metastatic risk", "propensity for metastatic spread": a tumour's risk, not its stage.
# Shared with case fit.
NOT_A_STAGE = (r"(?![ -](?:potential|propensity|capacity|ability|risk|rates?|spread|failures?|"
               r"behaviou?r)\b)")
_METASTATIC_RE = re.compile(
    r"(?<!non-)(?<!non )\b(?:metastatic" + NOT_A_STAGE + r"|metastases|metastasis|metastasi[sz]ed|mets)\b",
    re.IGNORECASE)
# Metastases denied ("no distant metastases", "without evidence of metastatic disease", "negative for mets"):
# not stage IV (a colon cancer "without metastases" had been read as metastatic)
_METASTATIC_NEGATED_RE = re.compile(
    r"\b(?:no|not|without|negative\s+for|free\s+of|absence\s+of|nor|ruled?\s+out)\s+(?:[\w-]+\s+){0,3}\Z",
    re.IGNORECASE)
# A metastatic work-up with a clear result after it ("metastatic workup negative", "work-up was negative",
# "evaluation: unremarkable") or just before ("negative metastatic workup"): no metastases (an adjuvant
# breast case had scored stage IV). "Metastatic workup pending" is no result: it still reads as it did.
_WORKUP = r"[ -](?:work[- ]?up|evaluation|survey|screening)\b"
_WORKUP_RESULT_RE = re.compile(_WORKUP + r"[ \t]*(?::[ \t]*|(?:was|is|were|returned|came[ ]back)[ \t]+)?"
                               r"(?:negative|unremarkable|normal)\b", re.IGNORECASE)
_WORKUP_RE = re.compile(_WORKUP, re.IGNORECASE)
_NEGATIVE_BEFORE_RE = re.compile(r"\bnegative[ \t]+\Z", re.IGNORECASE)
# An M category on its own ("NSCLC, M1c", "PDAC, M1"): distant metastases. Not AML's FAB subtype ("FAB
# classification M1", "M1 AML"; in a note also "AML M1", ``_FAB_BEFORE_RE``). Shared with case fit.
LONE_M1_RE = re.compile(r"(?<![\w-])(?<!classification )(?<!FAB )[cp]?M1[a-d]?(?![\w-])(?!\s+AML)")
_FAB_BEFORE_RE = re.compile(r"\b(?:FAB|AML|ANLL|leuka?emia|subtype|type)\b[\s:,-]*(?:\w+[\s,-]+)?\Z",
                            re.IGNORECASE)
_EXTENSIVE_RE = re.compile(r"\bextensive[- ]stage\b", re.IGNORECASE)  # SCLC staging: extensive ~ IV
# SCLC's limited stage (I to III: no group), as written or as its definition ("confined to one radiation port")
_LIMITED_RE = re.compile(r"\blimited[- ]stage\b|\blimited[- ]disease\b|\bconfined\s+to\s+(?:one|a\s+single)\s+"
                         r"(?:radiation|radiotherapy)\s+(?:port|field)\b", re.IGNORECASE)
_LIMITED_TYPES = frozenset({"small cell lung cancer", "lung cancer"})
_UNKNOWN_PRIMARY_RE = re.compile(
    r"unknown primary|primary (?:site |tumou?r )?(?:is |remains |was )?unknown|occult primary|\bCUP\b", re.IGNORECASE)
_ECOG_RE = re.compile(r"\bECOG(?:\s*PS)?\s*(?:of|score|:|=)?\s*([0-4])\b", re.IGNORECASE)
_KPS_RE = re.compile(r"\b(?:KPS|Karnofsky(?: performance status)?)\s*(?:of|:|=)?\s*(\d{2,3})\s*%?", re.IGNORECASE)

_VARIANT = (r"(?:[\s-]*(?:exon\s*\d+\s*(?:deletion|insertion|skipping|mutation|del|ins)?|ex\s*\d+\s*(?:del|ins)|"
            r"(?:p\.)?[A-Z]\d{1,4}(?:[A-Z]|del|fs|\*)?|ITD|TKD|fusion|rearrangement|rearranged|amplification|amplified|"
            r"positive|negative|wild[- ]type|mutation|mutated|mutant|alteration|deletion|loss|"
            r"not detected|\+(?![\w])|-(?=\s|$|[,.;)])))*")
_NEGATIVE_STATUS = re.compile(r"negative|wild[- ]type|not detected|(?<![\w])-$", re.IGNORECASE)
# Mismatch repair / microsatellite status in its usual wordings: deficient (d) or proficient (p). Shared with case fit.
MMR_RE = re.compile(
    r"\b(?P<d>MSI[- ]?H(?:igh)?|dMMR|MMR[- ]?deficien(?:t|cy)|mismatch[- ]repair[- ]deficien(?:t|cy)|"
    r"deficient[ ]mismatch[- ]repair|microsatellite[- ]instability[- ]high|high[- ]microsatellite[- ]instability)\b|"
    r"\b(?P<p>MSS|pMMR|MSI[- ]?L(?:ow)?|MMR[- ]?(?:proficient|intact)|MMR[ ]proteins?[ ](?:intact|retained)|"
    r"mismatch[- ]repair[- ](?:proficient|intact)|(?:proficient|intact)[ ]mismatch[- ]repair|"
    r"microsatellite[- ]stable|MSI[- ]stable)\b", re.IGNORECASE)
_BIOMARKER_RE = re.compile(
    r"\b(?:TMB[- ]?(?:high|low|H)|"
    r"(?:ER|PR|o?estrogen[- ]receptors?|progesterone[- ]receptors?)[- ]?(?:positive|negative|\+|-)(?=[\s,.;/)]|$)|"
    r"(?:HR|hormone[- ]receptors?)[- ]?(?:positive|negative|\+|-)(?=[\s,.;/)]|$)|"
    r"triple[- ]negative)",
    re.IGNORECASE)
# A receptor list with one status at its end: "ER/PR/HER2 negative", "ER and PR positive", "HER2/ER/PR-negative".
# Each receptor gets the status (HER2 through the gene rules, ER/PR here).
_RECEPTOR = r"(?:ER|PR|PgR|HER2|ERBB2)"
_RECEPTOR_LIST_RE = re.compile(
    rf"(?<![\w-])({_RECEPTOR}(?:[ \t]*(?:/|,|&|(?i:and))[ \t]*{_RECEPTOR})+)[ \t]*(?:[ -]?(?i:(positive|negative))\b|"
    r"(\+|-)(?=[\s,.;)]|$))")
_NEGATION_RE = re.compile(r"\b(?:no|not|without|never|denies|naive|na[iï]ve)\b[^.;]{0,30}$", re.IGNORECASE)
# Words that name a treatment without reporting it given: eligibility ("cisplatin-eligible", "cisplatin
# ineligible", "candidate for surgery", "fit for chemotherapy") and wishes ("would prefer surgery").
_NOT_GIVEN_BEFORE_RE = re.compile(r"\b(?:(?:candidate|eligible|ineligible|fit|unfit|suitable|considered)\s+for|"
                                  r"prefer(?:s|red)?|preference\s+for|would\s+(?:like|favou?r|choose)|wishes)\b[^.;]{0,30}$", re.IGNORECASE)
_NOT_GIVEN_AFTER_RE = re.compile(r"[\s-]*(?:in)?eligib|[\s-]*(?:un)?fit\b|[\s-]*candidate", re.IGNORECASE)
_SENTENCE_RE = re.compile(r"(?<=[.?!;])\s+|\n+")


_ASKED_SPLIT_RE = re.compile(r"(?<=[.?!])\s+")


def asked_sentences(text: str) -> list[str]:
    """The sentences of a case that ask something (end in "?"); its last sentence when none does (shared by
    the retrieval query's question sentence and case fit's follow-up question)."""
    sentences = [x.strip() for x in _ASKED_SPLIT_RE.split(text) if x.strip()]
    return [x for x in sentences if x.endswith("?")] or sentences[-1:]


def statement_text(text: str) -> str:
    """The text without its questions: "Is FOLFIRINOX an option?" or "Is he a transplant candidate?" asks; it does
    not report a treatment, a resection or a fitness."""
    return " ".join(s for s in _SENTENCE_RE.split(text) if not s.rstrip().endswith("?"))


# A question's opening clause that tells what was done ("After wide excision and complete lymph node dissection for
# stage IIIC melanoma, what adjuvant systemic therapy?"): a report, though its sentence asks
_DONE_CLAUSE_RE = re.compile(r"^\s*(?:after|following|s/p|status\s+post)\b[^?,;]{3,200},\s+(?=(?:what|which|how|is|are|"
                             r"should|does|do|can|could|would|when)\b)", re.IGNORECASE)


def reported_text(text: str) -> str:
    """``statement_text`` and the opening clause of a question that tells what was done (``_DONE_CLAUSE_RE``)."""
    done = [m.group(0).rstrip(", ") + "." for s in _SENTENCE_RE.split(text) if s.rstrip().endswith("?")
            and (m := _DONE_CLAUSE_RE.match(s))]
    return " ".join([statement_text(text), *done]).strip()


# "untreated brain metastases" is a lesion, not an untreated patient (shared with the line of therapy below)
_NOT_THE_PATIENT = r"(?!,?\s+(?:(?:and\s+)?[\w-]+,?\s+){0,2}?(?:metastas[ie]s|metastatic\s+lesions?|lesions?|mets)\b)"
_NAIVE_RE = re.compile(r"treatment[- ]na[iï]ve|untreated" + _NOT_THE_PATIENT + r"|no prior (?:therapy|treatment)",
                       re.IGNORECASE)


# A negation before a run of MMR terms ("not MSI-H", "non-MSI-H/dMMR", "negative for MSI-H", "no dMMR") or a
# negative result after it ("MSI-H negative"): a negated MSI-H/dMMR is MSS/pMMR; a negated MSS/pMMR is read as
# nothing (it is not the same as MSI-H). A result not yet known ("MSI-H testing pending", "awaiting MSI-H") is
# nothing too, and so is one either way ("with or without dMMR", "whether or not MSI-H").
_MMR_RUN_SEP_RE = re.compile(r"[ \t]*(?:/|\bor\b|\band\b)[ \t]*", re.IGNORECASE)
_MMR_NEG_BEFORE_RE = re.compile(
    r"(?:(?<!\bor[ ])\b(?:no|not|without|negative[ ]for|absence[ ]of|lack[ ]of)(?:[ ]+(?:evidence[ ]of|an?|any))?[ ]+|"
    r"\bnon[ -]?)\Z", re.IGNORECASE)
# Either way: "with or without dMMR", "whether or not MSI-H", "regardless of MSI status": no reading. Shared with
# case fit (a gene condition after it is none either).
EITHER_WAY_RE = re.compile(r"\b(?:with[ ]or[ ]without|whether[ ]or[ ]not|regardless[ ]of|irrespective[ ]of|"
                           r"independent(?:ly)?[ ]of)(?:[ ]+(?:an?|any|the|their|its|known))?[ ]+\Z", re.IGNORECASE)
_MMR_PENDING_BEFORE_RE = re.compile(
    r"\b(?:awaiting|pending|not[ ](?:yet[ ])?tested[ ]for|to[ ]be[ ]tested[ ]for|testing[ ]for|tested[ ]for)[ ]+\Z",
    re.IGNORECASE)
_MMR_AFTER_RE = re.compile(
    r"[ \t]*(?::[ \t]*)?(?:(?:status|testing|test|result|by[ ](?:IHC|PCR|NGS))[ \t]*:?[ \t]*)?"
    r"(?:(?P<neg>negative|neg|not[ ]detected|absent|not[ ]present)|(?P<pending>pending|awaited|sent|ordered|unknown|"
    r"not[ ](?:yet[ ])?(?:tested|done|performed|available|known)|indeterminate|inconclusive|equivocal|failed))\b",
    re.IGNORECASE)


def mmr_readings(text: str) -> list[tuple[int, int, str | None]]:
    """Mismatch repair results as (start, end, "deficient" / "proficient" / None), the span taking in a negation
    or result words ("not MSI-H", "MSI-H/dMMR negative": proficient; "MSI-H testing pending", "not MSS": None).
    Terms joined by "/", "or", "and" share one negation ("non-MSI-H/dMMR"). Shared with case fit."""
    runs: list[list[re.Match[str]]] = []
    for m in MMR_RE.finditer(text):
        if runs and _MMR_RUN_SEP_RE.fullmatch(text, runs[-1][-1].end(), m.start()):
            runs[-1].append(m)
        else:
            runs.append([m])
    out: list[tuple[int, int, str | None]] = []
    for run in runs:
        start, end = run[0].start(), run[-1].end()
        before = text[max(0, start - 40):start]
        neg = _MMR_NEG_BEFORE_RE.search(before)
        pending = _MMR_PENDING_BEFORE_RE.search(before) or EITHER_WAY_RE.search(before)
        after = _MMR_AFTER_RE.match(text, end)
        if not (neg or pending or after):  # as written, each term on its own ("MSI-H/dMMR")
            out += [(m.start(), m.end(), "deficient" if m.group("d") else "proficient") for m in run]
            continue
        cue = neg or pending
        a = start - len(cue.group(0)) if cue else start
        b = after.end() if after else end
        if pending or after and after.group("pending") or any(m.group("p") for m in run):
            out.append((a, b, None))  # not known yet, or a negated MSS/pMMR
        else:
            out.append((a, b, "proficient"))
    return out


# Tumour antigens whose expression selects a targeted antibody or conjugate (PDQ: zolbetuximab with chemotherapy for
# "CLDN18.2-positive" gastric cancer; mirvetuximab soravtansine for "high tumor expression of folate receptor alpha"
# in platinum-resistant ovarian cancer), by the marker name a reading is given: "claudin 18.2 positive", "high
# folate receptor alpha expression", "FRα-high", "negative for CLDN18.2". Unread, two long notes' answers were
# never retrieved (the focused query named no marker) and a line for them was never qualified "applies if ...".
EXPRESSION_NAMES = {"cldn": "CLDN18.2", "fra": "FRα"}
# what a marker adds after its reading, for the retrieval query and the reader: PDQ writes "folate receptor alpha"
_EXPRESSION_SPELLED = {"FRα": " (folate receptor alpha)"}


def _antigen(tag: str) -> str:
    """The antigens' names as a pattern, each in a group named by its ``EXPRESSION_NAMES`` key plus ``tag``."""
    return (rf"(?:(?P<cldn{tag}>CLDN[- ]?18\.2|claudin[- ]?18\.2)|"
            rf"(?P<fra{tag}>FR[- ]?(?:α|alpha)|folate[- ]receptor[- ]?(?:α|alpha)|FOLR1))")


_EXPRESSION_RE = re.compile(
    # "CLDN18.2-positive", "claudin 18.2 positive", "FRα expression: high", "FRα IHC status is negative"
    rf"(?<![\w-]){_antigen('')}(?:[ \t]*-[ \t]*|[ \t]+)?(?:(?:tumou?r[ \t]+)?(?:expression|staining|status|IHC)"
    r"[ \t:]*(?:(?:is|was|of)[ \t]+)?)?(?P<word>positive|positivity|negative|high|low)\b|"
    # "high folate receptor alpha expression", "high tumor expression of folate receptor alpha", "negative for
    # CLDN18.2", "no FRα expression"; not "HER2 negative claudin 18.2 positive" (the word after the name is its own)
    r"\b(?P<before>high|low|positive|negative|no)[ \t]+(?:for[ \t]+)?(?:(?:tumou?r[ \t]+)?expression[ \t]+of[ \t]+)?"
    rf"{_antigen('_after')}(?![\w-])(?![ \t-]*(?:positive|positivity|negative|high|low)\b)"
    # nor a test not done: "no FRα expression testing was done", "no claudin 18.2 test result yet"
    r"(?![ \t-]*(?:expression[ \t]+)?(?:testing|tests?|assays?|results?|pending|unknown)\b)",
    re.IGNORECASE)
_EXPRESSION_STATUS = {"positive": "positive", "positivity": "positive", "negative": "negative", "no": "negative",
                      "high": "high", "low": "low"}


def expression_readings(text: str) -> list[tuple[int, int, str, str]]:
    """Tumour-antigen expression results as (start, end, marker name, "positive" / "negative" / "high" / "low"):
    ``EXPRESSION_NAMES``. Shared with case fit."""
    out = []
    for m in _EXPRESSION_RE.finditer(text):
        key = next(k for k in EXPRESSION_NAMES if m.group(k) or m.group(f"{k}_after"))
        word = (m.group("word") or m.group("before")).lower()
        out.append((m.start(), m.end(), EXPRESSION_NAMES[key], _EXPRESSION_STATUS[word]))
    return out


# HER2 by its IHC score (ASCO/CAP): 3+, or 2+ with ISH amplification, is HER2-positive; 1+, or 2+ without ISH
# amplification, is HER2-low; 0 is HER2-zero (neither positive nor low: HER2-low therapy does not apply); 2+ without
# an ISH result is equivocal (no status). The words "HER2-low", "HER2-ultralow" and "HER2-zero" say the same.
# Shared with case fit (engine/casefit.py), which reads passages and claims the same way.
_HER2_SCORE = r"(?:[0-3][ \t]*\+(?![\w+])|0(?![\w%+]|[.,]\d)|zero)"
_ISH = r"(?:(?:F|S|C|DD?)?ISH|in[ -]situ hybridi[sz]ation)"
_ISH_RESULT = (r"(?P<ish>positive|negative|not[ ]amplified|non-?amplified|unamplified|no[ ]amplification|amplified|"
               r"amplification|pending|equivocal|\+|-(?![\w]))")
HER2_SCORE_RE = re.compile(
    r"(?<![\w-])(?:HER2|ERBB2)(?:/neu)?"
    r"(?:[ -]?(?P<word>positive|negative|low|ultralow|ultra-low|zero|equivocal)\b|(?P<sign>[+-])(?![\w+]))?"
    r"(?:(?:(?:[ \t]*[:=(,][ \t]*|[ \t]+|-)(?:IHC|immunohistochemistry|score[ds]?|scoring|of|by|status|expression|"
    r"is|was|protein|staining)\b)*[ \t]*[:=(]?[ \t]*"
    rf"(?P<scores>{_HER2_SCORE}(?:[ \t]*(?:[-–/,]|to|or|and)[ \t]*(?:IHC[ \t]*)?{_HER2_SCORE})*)"
    rf"(?:[ \t]*(?:[,;/(]|with|and|but|by|on)?[ \t]*(?:(?:with|and|but|by|on)[ \t]+)?{_ISH}[ \t]*[:-]?[ \t]*"
    rf"{_ISH_RESULT}|[ \t]*[,;(][ \t]*(?P<ish2>not[ ]amplified|non-?amplified|amplified)[ \t]+(?:by|on)[ \t]+{_ISH})?"
    r")?", re.IGNORECASE)
_HER2_WORD_STATUS = {"positive": "positive", "+": "positive", "negative": "negative", "-": "negative", "low": "low",
                     "ultralow": "low", "ultra-low": "low", "zero": "zero", "equivocal": "equivocal"}


def her2_score(m: re.Match[str]) -> tuple[str | None, str]:
    """A ``HER2_SCORE_RE`` match as (status, the IHC/ISH result in words). Status: "positive" / "low" / "zero" /
    "negative" (0-1+: zero or low) / "equivocal" (2+ without ISH) / None (no score, or a word the score disagrees
    with: "HER2-negative (IHC 3+)" is read as nothing rather than guessed)."""
    word = (m.group("word") or m.group("sign") or "").lower()
    said = _HER2_WORD_STATUS.get(word)
    raw = m.group("scores")
    if not raw:
        return (said if said in ("low", "zero") else None), ""
    written = [("0" if sc.lower() in ("0", "zero") else re.sub(r"\s", "", sc))
               for sc in re.findall(_HER2_SCORE, raw, re.IGNORECASE)]
    scores = set(written)
    ish_word = (m.group("ish") or m.group("ish2") or "").lower()
    ish = None
    if ish_word:
        amplified = ish_word in ("positive", "amplified", "amplification", "+")
        ish = "positive" if amplified else "negative" if ish_word not in ("pending", "equivocal") else None
    if scores == {"0"}:
        status: str | None = "zero"
    elif scores == {"0", "1+"}:
        status = "negative"  # "IHC 0-1+": zero or low
    elif scores <= {"3+", "2+"} and (scores == {"3+"} or ish == "positive"):
        status = "positive"  # "3+", "2+ with ISH amplification", "IHC 3+ or 2+/ISH-positive"
    elif scores <= {"1+", "2+"} and ("2+" not in scores or ish == "negative"):
        status = "low"  # "1+", "2+/ISH-negative", "IHC 1+ or 2+/ISH-negative"
    elif scores == {"2+"} and ish is None:
        status = "equivocal"
    else:
        status = None
    fits_word = {None: True, "positive": status == "positive", "negative": status in ("zero", "low", "negative"),
                 "low": status == "low", "zero": status == "zero", "equivocal": status == "equivocal"}
    if not fits_word.get(said, False):
        status = None  # the word and the score disagree: no status rather than a guess
    shown = ("-" if scores == {"0", "1+"} else " or ").join(dict.fromkeys(written))
    return status, f"IHC {shown}" + (f", ISH-{ish}" if ish else ", ISH pending" if ish_word else "")


# HER2 by in situ hybridisation alone (ASCO/CAP 2018, dual-probe groups): a HER2/CEP17 ratio >= 2.0 with an average
# HER2 copy number >= 4.0 is positive (group 1), a ratio < 2.0 with a copy number < 4.0 negative (group 5); groups
# 2-4 need the IHC work-up, and a ratio without a copy number cannot tell the groups apart: no status rather than a
# guess. A result word ("FISH amplified", "HER2 not amplified", "SISH negative") says the same; a word the numbers
# disagree with gives no status. A bare "HER2 amplified" is left to the gene rules (it counts as HER2-positive).
# Shared with case fit.
_ISH_NUM = (r"\d{1,2}(?:\.\d{1,2})?(?![\d.])"
            r"(?![ \t]*(?:or|and)[ \t]+(?:more|higher|greater|above|less|lower|below|fewer))")  # not "2.0 or more"
_ISH_TAIL = (
    r"(?:[ \t]*[:(,-]?[ \t]*(?P<word>not[ ]amplified|non-?amplified|unamplified|no[ ]amplification|amplified|"
    r"positive|negative)\b)?"
    r"(?:[ \t]*[:(,;]?[ \t]*(?:(?:HER2[ \t]*/[ \t]*CEP[ \t-]?17|signal)[ \t]+)?ratio(?:[ \t]+(?:of|is|was))*[ \t]*[:=]?"
    rf"[ \t]*(?P<ratio>{_ISH_NUM}))?"
    r"(?:[ \t]*(?:[,;(]|with|and)?[ \t]*(?:(?:with|and)[ \t]+)?(?:(?:an?|the)[ \t]+)?(?:(?:average|mean)[ \t]+)?"
    r"(?:HER2[ \t]+)?(?:gene[ \t]+)?(?:copy[ \t]+numbers?|copies(?:[ \t]+per[ \t]+cell)?|signals?[ \t]+per[ \t]+cell)"
    rf"(?:[ \t]+(?:of|is|was))*[ \t]*[:=]?[ \t]*(?P<cn>{_ISH_NUM})|[ \t]+with[ \t]+(?P<cn2>{_ISH_NUM})[ \t]+"
    r"(?:HER2[ \t]+)?(?:signals|copies)(?:[ \t]+per[ \t]+cell)?)?")
HER2_ISH_RE = re.compile(
    r"(?<![\w-])(?:HER2|ERBB2)(?:/neu)?(?:[ \t]*/[ \t]*CEP[ \t-]?17)?"
    r"(?:[ \t]*[:(,-]?[ \t]*(?:(?:gene|by|on|status|testing|test|result|dual[- ]probe)[ \t]+)*"
    r"(?P<ishw>(?:F|S|C|DD?)ISH|ISH|in[ -]situ[ ]hybridi[sz]ation))?" + _ISH_TAIL, re.IGNORECASE)
# An ISH result after an IHC 2+ ("HER2 IHC 2+, FISH ratio 2.4, copy number 5.2"): read with the score (facts only)
_IHC_THEN_ISH_RE = re.compile(
    r"(?:[ \t]+(?:by|on)[ \t]+IHC\b)?[ \t]*(?:[,;/(]|with|and|by|on)?[ \t]*(?:(?:with|and|by|on)[ \t]+)?"
    r"(?P<ishw>(?:F|S|C|DD?)ISH|ISH|in[ -]situ[ ]hybridi[sz]ation)" + _ISH_TAIL, re.IGNORECASE)


def her2_ish(m: re.Match[str]) -> tuple[str | None, str]:
    """A ``HER2_ISH_RE`` match as (status: "positive" / "negative" / None, the ISH result in words); ("", "")
    when it is no ISH result (a bare "HER2", or "HER2 amplified"/"HER2-positive" without an ISH word: the gene
    rules read those)."""
    word = (m.group("word") or "").lower()
    ratio = float(m.group("ratio")) if m.group("ratio") else None
    cn_text = m.group("cn") or m.group("cn2")
    cn = float(cn_text) if cn_text else None
    negated = word.startswith(("not", "non", "un", "no "))
    if ratio is None and cn is None and not (word and (m.group("ishw") or negated)):
        return "", ""
    said = None if not word else "positive" if word in ("amplified", "positive") else "negative"
    if ratio is not None and cn is not None:
        by_numbers = ("positive" if ratio >= 2.0 and cn >= 4.0 else "negative" if ratio < 2.0 and cn < 4.0
                      else None)
        detail = f"ISH ratio {m.group('ratio')}, copy number {cn_text}"
    else:
        by_numbers = None
        detail = f"ISH ratio {m.group('ratio')}" if ratio is not None else f"ISH copy number {cn_text}" \
            if cn is not None else f"ISH {word}"
    if said and (ratio is not None or cn is not None):
        return (said if by_numbers == said else None), detail  # the word and the numbers disagree: no status
    return (said or by_numbers), detail

# ER/PR with a score (ASCO/CAP 2020; Allred): < 1% or Allred 0-2 is negative, 1-10% "ER-low" (low positive), above
# 10% or Allred 3-8 positive. A word the score disagrees with ("ER-positive (Allred 2)") gives no status.
HORMONE_SCORE_RE = re.compile(
    r"(?<![\w-])(?P<rec>(?-i:ER|PR|PgR))(?![\w])"
    r"(?:[ -]?(?:(?:strongly|weakly|moderately|focally)[ ])?(?P<word>low[- ]positive|positive|negative|low|\+|-)"
    r"(?![\w+]))?"
    r"(?:[ \t]*[:(,]?[ \t]*(?:(?:strongly|weakly|moderately|expression|status|staining|by|IHC|in|of|is|was)[ \t]+)*"
    r"(?:(?P<lt><[ \t]*)?(?P<pct>\d{1,3})[ \t]*%(?![ \t]*(?:reduction|decrease|shrinkage|regression|response))|"
    r"Allred(?:[ \t]+score)?(?:[ \t]*(?:of|:|=))?[ \t]*(?P<allred>[0-8])(?:[ \t]*/[ \t]*8)?\b))?",
    re.IGNORECASE)


def hormone_score(m: re.Match[str]) -> tuple[str | None, str]:
    """A ``HORMONE_SCORE_RE`` match as (status: "positive"/"low"/"negative"/None, the score as written)."""
    word = (m.group("word") or "").lower()
    said = {"+": "positive", "-": "negative", "low-positive": "low", "low positive": "low"}.get(word, word) or None
    if m.group("pct") is not None:
        pct = int(m.group("pct"))
        detail = f"{'<' if m.group('lt') else ''}{pct}%"
        status = "negative" if pct < 1 or m.group("lt") and pct <= 1 else "low" if pct <= 10 else "positive"
    elif m.group("allred") is not None:
        detail = f"Allred {m.group('allred')}"
        status = "negative" if int(m.group("allred")) <= 2 else "positive"
    else:
        return ("low" if said == "low" else None), ""
    if said is not None and said != status and not (said == "positive" and status == "low"):
        return None, detail  # "ER-positive (Allred 2)": no guess either way (ER-low is low positive: agrees)
    return status, detail


# PD-L1 with its status or value: "PD-L1 negative", "PD-L1-high", "PD-L1 TPS 1-49%", "PD-L1 expression >= 50%",
# "PD-L1 CPS 12", "PD-L1 TPS: 80%", "PD-L1 50% or more". Shared with case fit, which compares the ranges.
_PDL1_OP = (r"(?P<op>[<>≥≤]=?|=>|=<|at[ ]least|above|below|less[ ]than|greater[ ]than|more[ ]than|over|under|"
            r"of[ ]at[ ]least)")
PDL1_RE = re.compile(
    r"(?<![\w-])PD-?L1(?![\w])(?:[ -](?P<word>positive|negative|high|low)\b)?"
    r"(?:(?:(?:[ \t]*[:(,][ \t]*|[ \t]+)(?:expression|expressed|TPS|CPS|tumou?r[ ]proportion[ ]score|"
    r"combined[ ]positive[ ]score|score|of|is|was|at|in)\b)*[ \t]*[:(=]?[ \t]*"
    rf"(?:{_PDL1_OP}[ \t]*)?(?P<lo>\d{{1,3}})(?![\d.,]\d)[ \t]*%?"
    r"(?:[ \t]*(?:[-–]|to)[ \t]*(?P<hi>\d{1,3})[ \t]*%?|"
    r"[ \t]*(?<=[\s%])(?P<more>or[ ](?:more|higher|greater|above)))?)?",
    re.IGNORECASE)
_PDL1_WORDS = {"positive": (1, 100), "negative": (0, 0), "high": (50, 100), "low": (1, 49)}


def pdl1_range(m: re.Match[str]) -> tuple[int, int, str] | None:
    """A ``PDL1_RE`` match as (lowest, highest percentage, score: "TPS"/"CPS"/""); None when it states no value or
    its word and value disagree ("PD-L1 negative (TPS 30%)"). "<50%" is 0-49, ">=50%" 50-100, "1-49%" 1-49."""
    word = (m.group("word") or "").lower()
    score = next((t.upper() for t in re.findall(r"\b(TPS|CPS)\b", m.group(0), re.IGNORECASE)), "")
    if m.group("lo") is None:
        return (*_PDL1_WORDS[word], score) if word else None
    value = min(int(m.group("lo")), 100)
    op = (m.group("op") or "").lower()
    if m.group("hi"):
        lo, hi = value, min(int(m.group("hi")), 100)
    elif m.group("more") or op.startswith(("≥", ">=", "=>", "at", "of")):
        lo, hi = value, 100
    elif op.startswith((">", "above", "greater", "more", "over")):
        lo, hi = min(value + 1, 100), 100
    elif op.startswith(("≤", "<=", "=<")):
        lo, hi = 0, value
    elif op.startswith(("<", "below", "less", "under")):
        lo, hi = 0, max(value - 1, 0)
    else:
        lo, hi = value, value
    if word and not (_PDL1_WORDS[word][0] <= lo and hi <= _PDL1_WORDS[word][1]):
        return None  # the word and the value disagree: no reading rather than a guess
    return lo, hi, score


# a note's shorthand "ca" for cancer ("metastatic breast ca", "lung ca"; a QA pass's "breast ca" case had no cancer
# type and was refused), not calcium or a tumour marker ("Ca 10.2", "CA 19-9", "CA-125")
_CA_RE = re.compile(r"(?<=[a-z])\s+ca\b(?![\s-]*\d)(?!\.\w)", re.IGNORECASE)


def _best_cancer_type(text: str) -> str | None:
    text = _CA_RE.sub(" cancer", text)  # "breast ca" -> "breast cancer"
    best: tuple[int, int, str] | None = None  # (-length, start, name)
    for name, rx in _TYPE_RES:
        for m in rx.finditer(text):
            key = (-(m.end() - m.start()), m.start(), name)
            if best is None or key < best:
                best = key
    if best:
        return best[2]
    implied = [(m.start(), name) for name, rx in _IMPLIED_RES if (m := rx.search(text))]
    return min(implied)[1] if implied else None


def bladder_stage(m: re.Match[str]) -> str | None:
    """The AJCC 8th edition stage group of bladder cancer from a ``TNM_RE`` match, or None where T, N and M do not
    settle it (an "x", T0, or "T4" without a/b where the group turns on it). N0 M0: Ta/Tis 0, T1 I, T2 II, T3/T4a
    IIIA; T1-T4a N1 M0 IIIA; N2-N3 M0 IIIB; T4b any N M0 IVA; M1a IVA, M1b IVB (the group is returned: the
    sub-stage letters are not kept)."""
    t, sub, n, metastasis = m.group("t").lower(), (m.group("ts") or "").lower(), m.group("n").lower(), \
        m.group("m").lower()
    if metastasis == "1":
        return "IV"
    if metastasis != "0" or t in ("x", "0") or n == "x":
        return None
    if t == "4" and sub == "b":
        return "IV"
    if t == "4" and not sub:
        return None  # T4a (III) or T4b (IVA)
    if n in "23":
        return "III"
    if n == "1":
        return "III" if t not in ("a", "is") else None  # Ta/Tis N1: not a group AJCC lists
    return {"a": "0", "is": "0", "1": "I", "2": "II", "3": "III", "4": "III"}[t]


BREAST_TYPES = frozenset({"breast cancer", "triple-negative breast cancer", "HER2-positive breast cancer",
                          "hormone receptor-positive breast cancer", "male breast cancer"})


def breast_stage(m: re.Match[str]) -> str | None:
    """The AJCC 8th edition anatomic stage group of breast cancer from a ``TNM_RE`` match (the group; the
    prognostic stage needs grade and receptors, which TNM does not carry): M1 IV; N3 III; T4 III; N2 III; T3
    N1 III; T2 N1 and T3 N0 II; T0-1 N1 and T2 N0 II; T1 N0 I; Tis N0 0. None where an "x" leaves it open.
    The routing rule ("N1-3: III") had made cT2N1M0, stage IIB, a stage III case."""
    t, n, metastasis = m.group("t").lower(), m.group("n").lower(), m.group("m").lower()
    if metastasis == "1":
        return "IV"
    if metastasis != "0" or "x" in (t, n):
        return None
    if n in "23" or t == "4" or (t == "3" and n == "1"):
        return "III"
    if n == "1" or t in ("2", "3"):
        return "II"
    return {"1": "I", "is": "0"}.get(t)  # T0 N0 is no cancer found; Ta is no breast category


# Head and neck sites staged by the AJCC 8th edition's common table (not the nasopharynx, not HPV-positive
# oropharyngeal cancer, whose groups differ; so not the oropharynx, whose HPV status a note may not give)
HEAD_NECK_TNM = frozenset({"oral cavity cancer", "laryngeal cancer", "hypopharyngeal cancer"})


def head_neck_stage(m: re.Match[str]) -> str | None:
    """The stage group of a ``TNM_RE`` match for ``HEAD_NECK_TNM`` sites, or None where T, N and M do not settle it
    (an "x", T0): Tis N0 0, T1 N0 I, T2 N0 II, T3 N0 or T1-3 N1 III, T4 or N2-3 IV (IVA/IVB; M0, not distant), M1
    IV (IVC)."""
    t, n, metastasis = m.group("t").lower(), m.group("n").lower(), m.group("m").lower()
    if metastasis == "1":
        return "IV"
    if metastasis != "0" or t in ("x", "0", "a") or n == "x":
        return None
    if t == "4" or n in "23":
        return "IV"
    if n == "1":
        return "III" if t != "is" else None
    return {"is": "0", "1": "I", "2": "II", "3": "III"}[t]


# AJCC 8th edition groups of node-negative, M0 disease where T alone settles them: colon and rectum (Tis 0, T1-T2
# I, T3-T4 II) and anal canal (Tis 0, T1 I, T2-T3 II, T4 IIIB)
_NODE_NEGATIVE_GROUPS: dict[str, dict[str, str]] = {
    "colon cancer": {"is": "0", "1": "I", "2": "I", "3": "II", "4": "II"},
    "rectal cancer": {"is": "0", "1": "I", "2": "I", "3": "II", "4": "II"},
    "colorectal cancer": {"is": "0", "1": "I", "2": "I", "3": "II", "4": "II"},
    "anal cancer": {"is": "0", "1": "I", "2": "II", "3": "II", "4": "III"},
}


# A pathological T and N without M ("pT3N1a", as a resection report gives it): for colorectal and anal cancer, where
# any node-positive M0 disease is stage III, read as M0 unless the note names metastases
_TN_ONLY_RE = re.compile(r"\b(?:y?[cp]|y)?T(?P<t>[0-4x]|is)(?P<ts>[a-d])?\s*N(?P<n>[0-3x])[a-c]?\b(?!\s*M[01x])")
_TN_ONLY_GROUPS = frozenset({"colon cancer", "rectal cancer", "colorectal cancer", "anal cancer"})


def node_negative_stage(cancer_type: str | None, m: re.Match[str]) -> str | None:
    """The stage group of a ``TNM_RE`` match "T2N0M0" where the cancer's own staging settles it from T
    (``_NODE_NEGATIVE_GROUPS``); None elsewhere or for Tx/T0 or an N or M that is not 0."""
    if m.group("n").lower() != "0" or m.group("m").lower() != "0":
        return None
    return _NODE_NEGATIVE_GROUPS.get(cancer_type or "", {}).get(m.group("t").lower())


# The Barcelona Clinic Liver Cancer stage ("BCLC C", "BCLC stage B", "Barcelona stage A"): hepatocellular carcinoma's
# treatment stages, which map to no single AJCC group (the audit's and QA passes' HCC cases had no stage at all)
BCLC_RE = re.compile(r"\b(?:BCLC|Barcelona(?:\s+Clinic\s+Liver\s+Cancer)?)(?:\s*[-:(]?\s*stage)?\s*[-:]?\s*"
                     r"([0ABCD])\b", re.IGNORECASE)
# A FIGO stage written without the word "stage" ("FIGO IB3", "FIGO 2018 IIIC1"; the audit's cervical case had
# read as no stage)
_FIGO_RE = re.compile(r"\bFIGO\s+(?:20\d\d\s+)?(IV|III|II|I)(?:[ABC]\d?)?(?![\w])")


def penile_stage(t: str, sub: str, n: str, metastasis: str) -> str | None:
    """The AJCC 8th edition stage group of penile cancer, or None where T, N and M do not settle it: N0 M0: Tis/Ta
    0, T1a I, T1b/T2/T3 II; T1-T3 N1-N2 III; T4 or N3 IV; M1 IV (a QA pass's "pT2 G3 cN0" and the audit's
    "T1a N0" had read as no stage, their stage I-III lines only qualified)."""
    if metastasis == "1" or t == "4" or n == "3":
        return "IV"
    if metastasis not in ("0", "") or t in ("x", "0") or n == "x":
        return None
    if n in "12":
        return "III"
    if t in ("is", "a"):
        return "0"
    if t == "1":
        return {"a": "I", "b": "II"}.get(sub)
    return "II"


# A breast tumour's size and nodes in words ("1.8 cm, node-negative", "3.5 cm ... and a positive axillary node"):
# the audit's early breast cases had no stage, so every stage I-III line was only qualified. Not after neoadjuvant
# therapy (a residual size is no clinical T) nor with the cancer's spread named (``_stage`` reads that first).
_BREAST_SIZE_RE = re.compile(r"(?<![\d.])(?P<size>\d{1,2}(?:\.\d)?)\s*(?P<unit>cm|mm)\b(?!\s+(?:\w+\s+)?(?:lymph\s+)?"
                             r"nodes?\b)", re.IGNORECASE)
_NODES_NEGATIVE_RE = re.compile(
    r"\bnode[- ]negative\b|\b(?:no|without)\s+(?:\w+\s+){0,2}(?:lymph\s+)?nod(?:e|al)\b|\bcN0\b|\bpN0\b|"
    r"\b(?:sentinel|axillary)\s+(?:lymph\s+)?nodes?\s+(?:\w+\s+)?negative\b|\b0\s*/\s*\d+\s+(?:lymph\s+)?nodes\b|"
    r"\bnegative\s+(?:sentinel|axillary)\s+(?:lymph\s+)?nodes?\b", re.IGNORECASE)
_ONE_NODE_RE = re.compile(r"\b(?:a|one|1)\s+(?:positive|involved)\s+(?:axillary\s+|sentinel\s+)?(?:lymph\s+)?node\b|"
                          r"\b1\s*/\s*\d+\s+(?:positive\s+)?(?:lymph\s+)?nodes?\b", re.IGNORECASE)
_NEOADJUVANT_RE = re.compile(r"neo-?adjuvant|pre-?operative\s+(?:chemo|systemic)|residual|\byp[TN]", re.IGNORECASE)


def _breast_size_stage(text: str) -> tuple[str, str] | None:
    """(anatomic stage group, the words) from the first tumour size and a node status the note states in words:
    T1 (<= 2 cm) N0 I; T1 N1 or T2 (<= 5 cm) N0-1 or T3 N0 II; T3 N1 III. None when either is missing, the nodes
    are positive in an unstated number, or the note is after neoadjuvant therapy."""
    size = _BREAST_SIZE_RE.search(text)
    if size is None or _NEOADJUVANT_RE.search(text):
        return None
    negative, one = _NODES_NEGATIVE_RE.search(text), _ONE_NODE_RE.search(text)
    nodes = negative or one
    if nodes is None or (negative and one):
        return None  # neither, or both (a note with two readings is not settled here)
    cm = float(size.group("size")) / (10 if size.group("unit").lower() == "mm" else 1)
    t = 1 if cm <= 2 else 2 if cm <= 5 else 3
    group = ("I", "II", "II")[t - 1] if negative else ("II", "II", "III")[t - 1]
    return group, f"{size.group(0)}, {nodes.group(0)}"


def oropharynx_stage(m: re.Match[str], hpv: str | None) -> str | None:
    """The AJCC 8th edition stage group of oropharyngeal cancer from a ``TNM_RE`` match and its HPV (p16) status:
    p16-negative by the common head and neck table (``head_neck_stage``); p16-positive (clinical) T0-T2 N0-N1 I,
    T0-T2 N2 or T3 N0-N2 II, T4 or N3 III, M1 IV; None when the status is not stated (a QA pass's HPV-negative
    "T4aN2bM0" had been a routing guess, stage III, not IVA)."""
    if hpv == "negative":
        return head_neck_stage(m)
    t, n, metastasis = m.group("t").lower(), m.group("n").lower(), m.group("m").lower()
    if hpv != "positive" or metastasis not in ("0", "1") or (metastasis == "0" and ("x" in (t, n) or t in ("a", "is"))):
        return None
    if metastasis == "1":
        return "IV"
    return "III" if t == "4" or n == "3" else "II" if t == "3" or n == "2" else "I"


def _penile_tnm_stage(m: re.Match[str]) -> str | None:
    return penile_stage(m.group("t").lower(), (m.group("ts") or "").lower(), m.group("n").lower(),
                        m.group("m").lower())


def nasopharyngeal_stage(m: re.Match[str]) -> str | None:
    """The AJCC 8th edition stage group of nasopharyngeal carcinoma from a ``TNM_RE`` match, or None where an "x"
    leaves it open: M1 IV (IVB); T4 or N3 IV (IVA); N2 or T3 III; T2 or N1 II; T1 N0 I; Tis N0 0 (the audit's
    "T3N2M0" had been only a routing guess, so its stage II-IV lines were qualified)."""
    t, n, metastasis = m.group("t").lower(), m.group("n").lower(), m.group("m").lower()
    if metastasis == "1":
        return "IV"
    if metastasis != "0" or t in ("x", "a") or n == "x":
        return None
    if t == "4" or n == "3":
        return "IV"
    if n == "2" or t == "3":
        return "III"
    if t == "2" or n == "1":
        return "II"
    return {"is": "0", "1": "I"}.get(t)


# Cancers whose TNM is read by their own stage groups (bladder too, by ``bladder_stage``, when the note says
# bladder; the oropharynx by its HPV status: ``tnm_staging``): engine.casefit trusts a stage these give
TNM_STAGING: dict[str, Callable[[re.Match[str]], str | None]] = {
    **{c: head_neck_stage for c in HEAD_NECK_TNM}, **{c: breast_stage for c in BREAST_TYPES},
    "nasopharyngeal carcinoma": nasopharyngeal_stage, "penile cancer": _penile_tnm_stage}


def tnm_staging(cancer_type: str | None, statuses: Iterable[str] = ()) -> Callable[[re.Match[str]], str | None] | None:
    """The cancer's own TNM stage groups (``TNM_STAGING``; the oropharynx's by the "HPV:..." among ``statuses``, as
    ``CaseFacts.statuses`` writes them), or None where TNM gives only the routing rule's guess. One reading for
    ``_stage`` and for engine.casefit, which trusts a stage it gives."""
    if cancer_type == "oropharyngeal cancer":
        hpv = next((x.split(":")[1] for x in statuses if x.startswith("HPV:")), None)
        return None if hpv is None else lambda m: oropharynx_stage(m, hpv)
    return TNM_STAGING.get(cancer_type or "")


# Another disease's stage ("chronic kidney disease stage 3", "CKD stage 3b", "stage 2 hypertension"): not the
# cancer's (a QA pass's AML case with CKD stage 3 had read as stage III)
_COMORBIDITY = (r"(?:CKD|chronic\s+kidney\s+disease|kidney\s+disease|renal\s+(?:disease|failure|insufficiency|"
                r"impairment)|heart\s+failure|hypertension|COPD|pressure\s+(?:ulcers?|injur(?:y|ies))|ulcers?|"
                r"lymph?edema|fibrosis|cirrhosis|osteoarthritis)")
_COMORBIDITY_BEFORE_RE = re.compile(_COMORBIDITY + r"[\s(,:-]*\Z", re.IGNORECASE)
_COMORBIDITY_AFTER_RE = re.compile(r"[\s)-]*" + _COMORBIDITY + r"\b", re.IGNORECASE)


def _comorbidity_stage(text: str, m: re.Match[str]) -> bool:
    return bool(_COMORBIDITY_BEFORE_RE.search(text, max(0, m.start() - 40), m.start())
                or _COMORBIDITY_AFTER_RE.match(text, m.end()))


def _stage(text: str, cancer_type: str | None = None, statuses: Iterable[str] = ()) -> tuple[str | None, str | None]:
    """(stage group, its words + the extent words). A stated stage ("stage IIB", "extensive-stage") wins over TNM
    ("cT2N1M0 stage IIB" is IIB, not III); TNM only when none is stated, "metastatic" only when neither is. TNM is
    read by the cancer's own staging where it is unambiguous (bladder: ``bladder_stage``, and ``TNM_STAGING``:
    head and neck, nasopharynx, breast, penis), else as a routing approximation (M1: IV, else N1-3: III). A FIGO
    stage counts as stated; another disease's stage ("CKD stage 3") does not."""
    stated = [(_ROMAN[m.group(1).lower()], m.group(0)) for m in _STAGE_RE.finditer(text)
              if not _comorbidity_stage(text, m)]
    stated += [("IV", m.group(0)) for m in _EXTENSIVE_RE.finditer(text)]
    stated += [(_ROMAN[m.group(1).lower()], m.group(0)) for m in _FIGO_RE.finditer(text)]
    derived: list[tuple[str, str]] = []
    bladder = cancer_type == "urothelial carcinoma" and bool(_BLADDER_RE.search(text))
    # the cancer's own groups; where T, N and M do not settle one ("T4 N1 M0" bladder: IIIA or IVA), none; without
    # its HPV status the oropharynx gets the routing rule below
    staging = bladder_stage if bladder else tnm_staging(cancer_type, statuses)
    for m in TNM_RE.finditer(text):
        n, metastasis = m.group("n").lower(), m.group("m").lower()
        if staging is not None:
            if (group := staging(m)) is not None:
                derived.append((group, m.group(0)))
        elif metastasis == "1":
            derived.append(("IV", m.group(0)))
        elif n in "123":
            derived.append(("III", m.group(0)))
        elif (group := node_negative_stage(cancer_type, m)) is not None:
            derived.append((group, m.group(0)))
    if not derived and (m := next((m for m in _METASTATIC_RE.finditer(text)
                                   if not _metastases_denied(text, m)), None)):
        derived.append(("IV", m.group(0)))
    if not derived and "leuk" not in (cancer_type or "") and (m := next(
            (m for m in LONE_M1_RE.finditer(text) if not _FAB_BEFORE_RE.search(text, max(0, m.start() - 30),
                                                                                 m.start())), None)):
        derived.append(("IV", m.group(0)))
    if not derived and cancer_type == "penile cancer":  # "pT2 cN0": read as M0 unless the note names metastases
        derived += [(group, m.group(0)) for m in _TN_ONLY_RE.finditer(text) if (group := penile_stage(
            m.group("t").lower(), (m.group("ts") or "").lower(), m.group("n").lower(), ""))]
    if not derived and cancer_type in _TN_ONLY_GROUPS:
        for m in _TN_ONLY_RE.finditer(text):
            n = m.group("n").lower()
            group = "III" if n in "123" else _NODE_NEGATIVE_GROUPS[cancer_type].get(m.group("t").lower()) \
                if n == "0" else None
            if group is not None:
                derived.append((group, m.group(0)))
    if not stated and not derived and cancer_type in BREAST_TYPES and (size_stage := _breast_size_stage(text)):
        derived.append(size_stage)
    if not stated and not derived and (m := _DCIS_RE.search(text)) and not _INVASIVE_RE.search(text):
        derived.append(("0", m.group(0)))  # ductal carcinoma in situ is stage 0 (Tis N0 M0) unless invasive
    found = stated or derived
    distant = [m for m in _METASTATIC_RE.finditer(text) if not _metastases_denied(text, m)
               and not _REGIONAL_ONLY_RE.search(text, max(0, m.start() - 30), m.start())]
    distant_relapse = _DISTANT_RELAPSE_RE.search(text)
    if distant_relapse and not _metastases_denied(text, distant_relapse):
        distant.append(distant_relapse)
    later_nodal = False
    if found and max(_STAGE_ORDER[f[0]] for f in found) < 4 and distant and (
            _recurrent(text) or any(_later_metastases(text, m) for m in distant)):
        # a metastatic recurrence of a cancer first staged lower ("had hysterectomy for stage IB disease two years
        # ago", now "recurrent ... with lung and nodal metastases"), or metastases that came later ("diagnosed in
        # 2020 with stage IIIA ...; in 2023 she developed liver and lung metastases"): stage IV now, not the stage
        # at diagnosis (the QA pass's endometrial case was offered adjuvant brachytherapy for stage I, its colon
        # case refused; long notes' histories were searched as stage II and III)
        found = [("IV", distant[0].group(0))]
    elif found and cancer_type == "melanoma" and max(_STAGE_ORDER[f[0]] for f in found) < 3 and (
            nodal := _later_nodal(text, found)):
        # a melanoma first staged I or II whose regional nodes are involved since ("stage IB ... In 2025 ... PET-CT
        # shows bulky axillary nodal disease only"): stage III now (a long note's case was searched as stage I and
        # missed the neoadjuvant therapy of resectable stage III)
        found = [("III", nodal)]
        later_nodal = True
    stage, words = max(found, key=lambda f: _STAGE_ORDER[f[0]]) if found else (None, None)
    if not found and (m := TNM_RE.search(text)):
        words = m.group(0)  # no group, but case fit still reads M0 where stage IV means M1 (casefit)
    elif not found and cancer_type == "hepatocellular carcinoma" and (m := BCLC_RE.search(text)):
        words = f"BCLC {m.group(1).upper()}"  # no AJCC group; case fit reads the BCLC stage (casefit)
    extent = list(dict.fromkeys("unresectable" if m.group("not") else " ".join(m.group(0).lower().split())
                                for m in _EXTENT_RE.finditer(text) if not _former_unresectable(text, m)))
    if not any(e in _UNRESECTABLE_WORDS for e in extent):
        statements = reported_text(text)
        done = [m for m in _RESECTION_RE.finditer(statements)
                if not _RESECTION_NOT_DONE_RE.search(statements, 0, m.start())]
        if done and later_nodal:
            pass  # the primary was excised; the nodal disease found since is not (l21: neoadjuvant therapy asked)
        elif done:
            extent.append("resected" if any(m.group("done") for m in done) else
                          "borderline resectable" if any(m.group("border") for m in done) else "resectable")
        elif any(_former_unresectable(text, m) for m in _EXTENT_RE.finditer(text)):
            extent.append("unresectable")  # "initially unresectable" and nothing since: still unresectable
    if cancer_type in BREAST_TYPES and "resected" in extent:
        # which operation: radiation after breast-conserving surgery and after mastectomy are decided apart
        # (postmastectomy chest wall radiation had been released for DCIS after lumpectomy)
        statements = statement_text(text)
        if _BREAST_CONSERVING_RE.search(statements):
            extent.append("breast-conserving surgery")
        elif _MASTECTOMY_RE.search(statements):
            extent.append("mastectomy")
    if stage is None and _LOCALIZED_RE.search(text):
        extent.append("localized")
    elif stage is None and any(_metastases_denied(text, m) for m in _METASTATIC_RE.finditer(text)):
        extent.append("non-metastatic")  # "no distant metastases": metastatic lines do not apply
    if stage is None and cancer_type in _LIMITED_TYPES and _LIMITED_RE.search(text):
        extent.append("limited-stage")
    if extent:
        words = ", ".join([words, *extent] if words else extent)
    return stage, words


# metastases in the regional nodes only ("nodal metastases", "axillary lymph node metastases") or in transit, not
# distant ones; "lung and nodal metastases" names a distant site
_REGIONAL_ONLY_RE = re.compile(r"(?<!\band )(?<!, )\b(?:(?:regional|local|axillary|cervical|pelvic|para-?aortic|"
                               r"inguinal)\s+)?(?:nodal|lymph[- ]node|node|LN)\s+\Z|"
                               r"\b(?:in[- ]transit|satellite|regional|locoregional)\s+\Z", re.IGNORECASE)


# Regional nodes involved after the stage was stated: the nodal words in a later sentence, not negated ("negative
# sentinel node biopsy (stage IB)" is the staging itself)
_NODAL_DISEASE_RE = re.compile(r"\b(?:(?:regional|axillary|inguinal|cervical|groin|nodal|lymph[- ]node)\s+"
                               r"(?:disease|recurrence|relapse|metastas[ie]s|involvement)|(?:lymph[- ]node|nodal)\s+"
                               r"(?:\w+\s+)?metastas[ie]s|(?:nodal|lymph[- ]node)\s+mass(?:es)?)\b", re.IGNORECASE)


def _later_nodal(text: str, found: list[tuple[str, str]]) -> str:
    """The nodal words of a sentence after the one that states the stage, or ""."""
    at = max((text.find(words) for _, words in found), default=-1)
    if at < 0:
        return ""
    start = next((m.end() for m in _SENTENCE_RE.finditer(text, at)), len(text))
    m = next((m for m in _NODAL_DISEASE_RE.finditer(text, start)
              if not _METASTATIC_NEGATED_RE.search(text, max(0, m.start() - 40), m.start())), None)
    return m.group(0) if m else ""


# Metastases as a later event than the diagnosis: "developed/new/now ... metastases", "metastases were found",
# "metastatic colon cancer". Not "presented with" (at diagnosis) nor "with omental metastases" (stage IIIC ovarian)
_LATER_BEFORE_RE = re.compile(r"\b(?:developed|develops|new|newly|now|later|subsequently|since|found\s+to\s+have|"
                              r"progressed\s+(?:to|with))\b[^.;]{0,40}\Z", re.IGNORECASE)
_LATER_AFTER_RE = re.compile(r"\s+(?:were|was|have\s+been|has\s+been)\s+(?:found|detected|discovered|diagnosed|"
                             r"identified|noted|seen)\b|\s+(?:\w+\s+){0,2}(?:cancer|carcinoma|adenocarcinoma|"
                             r"melanoma|sarcoma)\b", re.IGNORECASE)


# a relapse named by its distant site ("In 2024 she relapsed with lung nodules and para-aortic lymph nodes"): not
# the peritoneum, where ovarian cancer relapses within its stage III
_DISTANT_RELAPSE_RE = re.compile(r"\b(?:relapsed|recurred|recurrences?|relapses?)\b[^.;]{0,30}?\b(?:in|with|to)\s+"
                                 r"(?:the\s+|both\s+|multiple\s+|several\s+)?(?:lungs?|liver|hepatic|pulmonary|"
                                 r"bones?|osseous|brain|adrenals?)\b", re.IGNORECASE)


def _later_metastases(text: str, m: re.Match[str]) -> bool:
    """A ``_METASTATIC_RE`` mention that reports metastases found after the diagnosis (``_LATER_BEFORE_RE``,
    ``_LATER_AFTER_RE``; the second's cancer name only after "metastatic")."""
    if _LATER_BEFORE_RE.search(text, max(0, m.start() - 50), m.start()):
        return True
    after = _LATER_AFTER_RE.match(text, m.end())
    return bool(after) and (m.group(0).lower() == "metastatic" or not re.search(
        r"cancer|carcinoma|melanoma|sarcoma", after.group(0), re.IGNORECASE))


def _metastases_denied(text: str, m: re.Match[str]) -> bool:
    """A ``_METASTATIC_RE`` mention that denies metastases: negated ("no distant metastases") or a metastatic
    work-up with a clear result ("metastatic workup negative", "negative metastatic workup")."""
    if _METASTATIC_NEGATED_RE.search(text, max(0, m.start() - 40), m.start()):
        return True
    negative_before = _NEGATIVE_BEFORE_RE.search(text, max(0, m.start() - 20), m.start())
    return m.group(0).lower() == "metastatic" and bool(
        _WORKUP_RESULT_RE.match(text, m.end()) or (negative_before and _WORKUP_RE.match(text, m.end())))


def _former_unresectable(text: str, m: re.Match[str]) -> bool:
    """An unresectable/inoperable mention the text puts in the past ("initially unresectable", "unresectable at
    diagnosis", "originally deemed inoperable")."""
    return ((m.group(0).lower() in _UNRESECTABLE_WORDS or bool(m.group("not")))
            and bool(_FORMER_BEFORE_RE.search(text, max(0, m.start() - 40), m.start())
                     or _FORMER_AFTER_RE.match(text, m.end())))


def split_extent(stage_text: str | None) -> tuple[str | None, list[str]]:
    """stage_text as (the stage's words, the extent words _stage added: "unresectable", "resected", ...)."""
    parts = [s.strip() for s in (stage_text or "").split(",") if s.strip()]
    extent = [s for s in parts if s.lower() in _EXTENT_WORDS]
    words = ", ".join(s for s in parts if s.lower() not in _EXTENT_WORDS)
    return words or None, extent


def _stated_stage(stage_text: str | None) -> bool:
    """The stage was written as a stage ("stage IIB"), not derived from TNM or "metastatic"."""
    return bool(stage_text and (_STAGE_RE.search(stage_text) or _EXTENSIVE_RE.search(stage_text)))


# Status words. NEG: tested and not altered. PENDING / UNKNOWN: no result yet, so nothing to count either.
_NEG_WORDS = (r"negative|neg|wild[- ]type|wt|not[ ]detected|undetected|not[ ]identified|not[ ]found|absent|"
              r"none[ ]detected")
_PENDING_WORDS = r"pending|sent(?:[ ]out)?|ordered|awaited|awaiting|requested|in[ ]progress|to[ ]follow"
_UNKNOWN_WORDS = (r"unknown|not[ ](?:yet[ ])?(?:tested|done|performed|available|assessed|known)|indeterminate|"
                  r"inconclusive|equivocal|failed|insufficient")
_STATUS_GROUPS = rf"(?:(?P<neg>{_NEG_WORDS})|(?P<pending>{_PENDING_WORDS})|(?P<unknown>{_UNKNOWN_WORDS}))\b"
_STATUS_RE = re.compile(rf"\b{_STATUS_GROUPS}", re.IGNORECASE)
# Words that may stand between a gene list and its status: "EGFR mutation testing: pending", "KRAS status unknown".
_STATUS_FILLER = (r"mutations?|mutational|alterations?|rearrangements?|fusions?|amplifications?|variants?|testing|"
                  r"tests?|status|results?|analysis|sequencing|ngs|pcr|fish|ihc|by|on|via|was|were|is|are|has|have|"
                  r"been|still|currently|germline|somatic|all|both|each")
_SUFFIX_STATUS_RE = re.compile(rf"(?:[ \t:-]+(?:{_STATUS_FILLER})\b){{0,5}}[ \t:-]*{_STATUS_GROUPS}", re.IGNORECASE)
# A cue just before the list: "negative for", "no actionable", "no mutations in", "awaiting". Only these few
# words may stand between cue and gene, so "did not receive osimertinib despite EGFR mutation" stays EGFR-mutant;
# bare "negative" is no cue ("triple-negative breast cancer with BRCA1 mutation" is BRCA1-mutant).
_PREFIX_GAP = (r"evidence|of|for|any|an?|the|known|actionable|targetable|detectable|pathogenic|likely|germline|"
               r"somatic|driver|sensitizing|activating|mutations?|alterations?|in|tested|testing")
_PREFIX_STATUS_RE = re.compile(
    r"\b(?:(?P<neg>no|not|without|negative[ ]for|neg[ ]for|wild[- ]type[ ]for|absence[ ]of|lacks?|lacking)|"
    r"(?P<pending>awaiting|pending(?:[ ]for)?|sent[ ]for|ordered[ ]for))"
    rf"(?:[ -]+(?:{_PREFIX_GAP})){{0,3}}[ -]*\Z", re.IGNORECASE)
# A gene's own finding, which a leading negation does not reach ("no EGFR mutation, KRAS G12C": KRAS counts).
_SPECIFIC_RE = re.compile(r"[A-Z]\d{1,4}|exon|ITD|TKD|positive|\+", re.IGNORECASE)
_SEP = r"(?:[ \t]*(?:,|/|&)[ \t]*(?:(?:and|or|nor)[ \t]+)?|[ \t]+(?:and|or|nor)[ \t]+)"
# a separator, with gene symbols that are not configured between ("No PIK3CA, AKT1, PTEN or ESR1 alterations": the
# negation reaches ESR1 across AKT1 and PTEN, which had made ESR1 read as altered)
_LIST_SEP_RE = re.compile(_SEP + r"(?:(?-i:[A-Z][A-Z0-9]{1,6})" + _SEP + r")*", re.IGNORECASE)
_BOUNDARY = ".;\n()"  # a status never reaches across these (nor a leading cue across a comma)
# "no actionable alterations (EGFR, ALK, KRAS G12C, RET tested)": the list in brackets is what was found negative
_NONE_FOUND_RE = re.compile(r"\b(?:no|without|negative\s+for)\s+(?:[\w-]+\s+){0,2}(?:alterations?|mutations?|"
                            r"variants?|drivers?|fusions?|abnormalit(?:y|ies))\s*[(:]\s*\Z", re.IGNORECASE)
_OF_ALL_RE = re.compile(r"[\s,:-]*(?:(?:were|are|was|is)\s+)?(?:all|both|each)\b", re.IGNORECASE)
_FOUND_OWN_RE = re.compile(r"positive|\+|\bdetected|\bpresent|\bmutated|\bamplified", re.IGNORECASE)
# Gene symbols that are also English words match in capitals only ("met with the family" is not MET), and so does
# EGFR: "eGFR 62 mL/min" is a kidney function (a long note's kidney cancer had read as EGFR-altered).
_WORD_GENES = {"MET", "RET", "KIT", "ATM", "EGFR"}
_STATUS_LABEL = {"neg": "negative", "pending": "pending", "unknown": "status unknown"}
_ONLY_STATUS_RE = re.compile(rf"[\s:-]*(?:{_NEG_WORDS}|{_PENDING_WORDS}|{_UNKNOWN_WORDS}|-)\s*", re.IGNORECASE)


def _gene_items(text: str, genes: Iterable[str]) -> list[tuple[int, int, str, str]]:
    """Every gene mention as (start, end, name, the gene's own variant/status text), in text order.
    "BRCA1/2" is one item named "BRCA1/2" when both genes are configured, and so is a bare "BRCA" ("no germline
    BRCA or PALB2 mutation": the negation must reach PALB2 across it)."""
    names = {g.upper() for g in genes}
    brca = {"BRCA1", "BRCA2"} <= names
    alt = "|".join(re.escape(g) if g not in _WORD_GENES else f"(?-i:{re.escape(g)})"
                   for g in sorted(names | ({"BRCA"} if brca else set()), key=len, reverse=True))  # "ERBB2" first
    # a fusion written with its partner and a hyphen ("EML4-ALK fusion", "KIF5B-RET fusion"; the audit's ALK case
    # had no marker), not "non-ALK" or "anti-EGFR"
    partner = rf"(?<=(?-i:[A-Z0-9])-)(?=(?:{alt})\s+(?:fusion|rearrangement|translocation))"
    rx = re.compile(rf"(?:(?<![\w-])|{partner})({alt})(/\d)?(?![\w])({_VARIANT})", re.IGNORECASE)
    items = []
    for m in rx.finditer(text):
        name = m.group(1).upper()
        if name == "BRCA":
            if m.group(2):
                continue  # "BRCA/2" is no gene pair
            name = "BRCA1/2"
        elif m.group(2):
            if not name[-1].isdigit() or name[:-1] + m.group(2)[1] not in names:
                continue  # "EGFR/2" is no gene pair
            name += m.group(2)
        items.append((m.start(), m.end(), name, m.group(3)))
    return items


def _status(own: str) -> str | None:
    """"neg" / "pending" / "unknown" from a gene's own text, else None (positive, a variant, nothing said)."""
    if _NEGATIVE_STATUS.search(own):
        return "neg"
    m = _STATUS_RE.search(own)
    return None if m is None else m.lastgroup


def _her2_scores(text: str) -> list[tuple[int, int, str, str | None]]:
    """HER2 mentions with an IHC score or a low/zero word, as (start, end, marker, status), the marker keeping the
    score ("HER2 3+" -> "HER2-positive (IHC 3+)", "HER2-negative (IHC 0)" stays so: case fit reads it as HER2-zero).
    A plain "HER2-positive"/"HER2-negative" is left to the gene rules."""
    out: list[tuple[int, int, str, str | None]] = []
    for m in HER2_ISH_RE.finditer(text):  # "HER2/CEP17 ratio 2.4, copy number 5.1", "HER2 FISH not amplified"
        status, detail = her2_ish(m)
        if not detail:
            continue
        if status is None and m.group("word"):
            marker = f"HER2 discordant (stated {m.group('word').lower()}, {detail})"
        elif status is None:
            marker = f"HER2 ISH unclassified ({detail.removeprefix('ISH ')})"
        else:
            marker = f"HER2-{status} ({detail})"
        out.append((m.start(), m.end(), marker, status))
    for m in HER2_SCORE_RE.finditer(text):
        if any(a <= m.start() < b for a, b, _, _ in out):
            continue
        status, detail = her2_score(m)
        if status == "equivocal" and (ish := _IHC_THEN_ISH_RE.match(text, m.end())):
            ish_status, ish_detail = her2_ish(ish)
            if ish_detail and ish_status is not None:
                # ASCO/CAP: IHC 2+ with ISH group 1 is HER2-positive, with group 5 (ISH-negative) HER2-low; the
                # marker says "ISH-positive"/"ISH-negative", as case fit reads it with the score
                status = "positive" if ish_status == "positive" else "low"
                words = ish_detail.removeprefix("ISH ")
                out.append((m.start(), ish.end(), f"HER2-{status} ({detail}, ISH-{ish_status}: {words})", status))
                continue
        if not detail:
            if status is None:
                continue
            marker = " ".join(m.group(0).split())  # "HER2-low", "HER2-ultralow", "HER2-zero"
        elif status is None:  # "HER2-negative (IHC 3+)": the word and the score disagree
            marker = f"HER2 discordant (stated {(m.group('word') or m.group('sign')).lower()}, {detail})"
        else:
            label = {"zero": "-negative", "equivocal": " equivocal"}.get(status, f"-{status}")
            marker = f"HER2{label} ({detail})"
        out.append((m.start(), m.end(), marker, status))
    return out


def _markers(text: str, genes: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    markers: list[str] = []
    altered: list[str] = []
    her2 = _her2_scores(text)
    for _, _, marker, status in her2:
        markers.append(marker)
        if status == "positive" and "HER2" not in altered:
            altered.append("HER2")  # as "HER2-positive" counts; HER2-low/zero/equivocal are no alteration
    lists: list[list[tuple[int, int, str, str]]] = []  # coordinated genes: "EGFR, ALK and ROS1", "EGFR/ALK"
    for item in _gene_items(text, genes):
        if any(a <= item[0] < b for a, b, _, _ in her2):
            continue  # read with its score above
        if lists and _LIST_SEP_RE.fullmatch(text, lists[-1][-1][1], item[0]):
            lists[-1].append(item)
        else:
            lists.append([item])
    receptor_status: dict[int, str] = {}  # start of a HER2 inside "ER/PR/HER2 negative" -> "neg"
    receptor_markers: list[str] = []
    for m in _RECEPTOR_LIST_RE.finditer(text):
        word = (m.group(2) or {"+": "positive", "-": "negative"}[m.group(3)]).lower()
        names = list(re.finditer(_RECEPTOR, m.group(1)))
        for r in names:
            if r.group().upper() in ("HER2", "ERBB2"):
                if word == "negative":
                    receptor_status[m.start(1) + r.start()] = "neg"
            elif r is not names[-1]:  # the last one is read with its status by _BIOMARKER_RE
                receptor_markers.append(f"{'PR' if r.group() == 'PgR' else r.group()} {word}")
    for group in lists:
        start, end = group[0][0], group[-1][1]
        before = text[max(0, start - 60):start]
        before = before[max(before.rfind(c) for c in _BOUNDARY + ",") + 1:]
        pm = _PREFIX_STATUS_RE.search(before)
        sm = _SUFFIX_STATUS_RE.match(text, end)
        suffix = sm.lastgroup if sm else None
        prefix = pm.lastgroup if pm else None  # covers the leading items, up to the first with its own words
        # A negated list whose last item is joined by "and", "or" or "nor" denies every item, variants and generic
        # words included ("No EGFR, ALK, ROS1, BRAF, KRAS G12C, MET, RET or NTRK alterations", "negative for EGFR,
        # ALK, ROS1, KRAS G12C and RET", "without EGFR mutation, ALK rearrangement, or KRAS G12C mutation"); so does
        # a status said of all ("... RET and NTRK all wild type") and a list of what was tested after "no
        # actionable alterations (". Two QA passes' driver-negative cases had read such drivers as altered (and
        # were drafted RET and NTRK inhibitors). An item's own positive finding stays ("..., and KRAS G12C
        # positive").
        joined = len(group) > 1 and bool(re.search(r"\b(?:n?or|and)\b", text[group[-2][1]:group[-1][0]],
                                                   re.IGNORECASE))
        if _NONE_FOUND_RE.search(text, max(0, start - 60), start):
            prefix, joined = "neg", True
        said_of_all = sm is not None and suffix is not None and bool(_OF_ALL_RE.match(sm.group(0)))
        every = prefix == "neg" and joined or said_of_all
        for k, (s, e, name, own) in enumerate(group):
            status = _status(own)
            if every and _FOUND_OWN_RE.search(own):
                pass  # its own finding: "KRAS G12C positive"
            elif status is None and said_of_all:
                status = suffix
            elif status is None and prefix is not None and (every or not _SPECIFIC_RE.search(own)):
                status = prefix
            if own.strip() and not every:
                prefix = None  # "no EGFR or ALK mutation, KRAS G12C": the cue ends at "mutation"
            if status is None and not own.strip():
                # "EGFR, ALK and ROS1 wild-type": a gene that said nothing itself takes the next status in its
                # list ("EGFR/ALK negative, KRAS G12C": EGFR is negative, KRAS G12C does not undo that)
                status = next((st for st in (_status(it[3]) for it in group[k + 1:]) if st), None) or suffix
            if status is None and k == len(group) - 1 and not _SPECIFIC_RE.search(own):
                status = suffix  # "ALK fusion absent", "EGFR mutation testing pending"
            if status is None and not own.strip():
                status = receptor_status.get(s)  # "HER2/ER/PR negative"
            marker = " ".join(text[s:e].split())
            if status is not None and not _ONLY_STATUS_RE.fullmatch(own):
                # "EGFR negative", not "EGFR" (the query and the export must not read it as mutant) nor "ALK
                # rearrangement negative" (case fitting reads "rearrangement" as an alteration); a variant denied
                # stays named ("KRAS G12C negative")
                variant = own if every and _SPECIFIC_RE.search(own) and not _status(own) else ""
                marker = " ".join((text[s:e - len(own)] + variant).split()) + " " + _STATUS_LABEL[status]
            markers.append(marker)
            if status is None and name not in altered:
                altered.append(name)
    # "BRCA1/2 mutation" is one gene slot; the text naming BRCA2 itself as well makes it redundant
    pairs = {g: {g[:-2], g[:-3] + g[-1]} for g in altered if "/" in g}
    altered = [g for g in altered if g not in pairs or not pairs[g] & set(altered)]
    markers.extend(receptor_markers)
    hormone: list[tuple[int, int, str]] = []  # ER/PR with a score ("ER 90%", "PR Allred 2"), or "ER-low"
    for m in HORMONE_SCORE_RE.finditer(text):
        status, detail = hormone_score(m)
        rec = "PR" if m.group("rec") == "PgR" else m.group("rec")
        if detail and status is None:
            hormone.append((m.start(), m.end(), f"{rec} discordant (stated {m.group('word').lower()}, {detail})"))
        elif status is not None:
            hormone.append((m.start(), m.end(), f"{rec}-{status}" + (f" ({detail})" if detail else "")))
    found = [(m.start(), m.group(0)) for m in _BIOMARKER_RE.finditer(text)
             if not any(a <= m.start() < b for a, b, _ in hormone)]
    found += [(a, text[a:b]) for a, b, _ in mmr_readings(text)]  # "not MSI-H" keeps its negation
    found += [(a, f"{name}-{status}{_EXPRESSION_SPELLED.get(name, '')}")  # "CLDN18.2-positive", "FRα-high (...)"
              for a, _, name, status in expression_readings(text)]
    found += [(a, marker) for a, _, marker in hormone]
    found += [(m.start(), m.group(0) + ")" * (m.group(0).count("(") - m.group(0).count(")")))
              for m in PDL1_RE.finditer(text)]  # "PD-L1 positive (TPS 30%)" keeps its parenthesis
    for _, marker in sorted(found):
        marker = " ".join(marker.split())
        markers.append("triple-negative" if marker.lower().startswith("triple") else marker)
    unique = tuple(dict.fromkeys(m for m in markers if m))
    return unique, tuple(altered)


# A question about a status, which reports none: "Is it HER2-positive or MSI-H, and does that matter?", "Should we
# test whether it is claudin 18.2 positive?" (a short clause after "is it", "whether she is", ...; not one that gives
# a result as it asks: "Is she a candidate given HER2 3+?")
_ASKED_STATUS_RE = re.compile(
    r"\b(?:is|are|was|were|whether|if)\s+(?:it|this|she|he|they|the\s+(?:tumou?r|cancer|disease|biopsy|specimen)|"
    r"(?:her|his|their)\s+(?:tumou?r|cancer|disease))(?:\s+(?:is|are|was|were))?\s+(?:also\s+|still\s+)?"
    r"(?P<asked>(?:(?!\b(?:given|with|because|since|despite|after|showing|shows?)\b)(?:[^.?!;]|(?<=\d)\.(?=\d)))"
    r"{2,60})\?",
    re.IGNORECASE)


def _asked_markers_dropped(text: str, genes: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``_markers`` without those the note only asks about (``_ASKED_STATUS_RE``): read again with the asked
    clauses blanked, a marker or altered gene found only in the asked clause is dropped."""
    markers, altered = _markers(text, genes)
    spans = [m.span("asked") for m in _ASKED_STATUS_RE.finditer(text)]
    if not spans:
        return markers, altered
    blanked = text
    for a, b in spans:
        blanked = blanked[:a] + " " * (b - a) + blanked[b:]
    said, said_altered = _markers(blanked, genes)
    return tuple(m for m in markers if m in said), tuple(g for g in altered if g in said_altered)


def _treatments(text: str, keywords: Iterable[str]) -> tuple[str, ...]:
    if _NAIVE_RE.search(text):
        return ()
    statements = statement_text(text)
    out: list[str] = []
    for kw in keywords:
        for m in re.finditer(r"(?<![\w-])" + re.escape(kw) + r"(?![\w])", statements, re.IGNORECASE):
            before = statements[max(0, m.start() - 40):m.start()]
            if _NEGATION_RE.search(before) or _NOT_GIVEN_BEFORE_RE.search(before) \
                    or _NOT_GIVEN_AFTER_RE.match(statements, m.end()):
                continue
            if kw.lower() not in out:
                out.append(kw.lower())
            break
    return tuple(out)


def _performance(text: str) -> str | None:
    if m := _ECOG_RE.search(text):
        return f"ECOG {m.group(1)}"
    if m := _KPS_RE.search(text):
        return f"KPS {m.group(1)}"
    return None


# The line of therapy a note states, for case fit's line-of-therapy sections ("Second-line systemic therapy"
# does not apply to an untreated case). "first": untreated ("treatment-naive", "no prior systemic therapy",
# "de novo metastatic", or the question asks for first-line treatment; not "untreated brain metastases": a
# lesion, not the patient); "later": "progressed on/after", "second-line", "previously treated", or a
# first-line therapy the patient already had ("progressed after first-line pembrolizumab",
# ``_PRIOR_FIRST_LINE_RE``; it had been taken for the line asked about). Both or neither: None ("relapsed
# after adjuvant FOLFOX; first-line options?" is not judged).
_FIRST_LINE_RE = re.compile(
    r"\btreatment[- ]na[iï]ve\b|\b(?:previously |otherwise )?untreated\b" + _NOT_THE_PATIENT
    + r"|\b(?:no|without) (?:prior|previous) "
    r"(?:systemic |palliative |anticancer |oncologic )?(?:therapy|treatment|chemo\w*|systemic)|\bnot (?:yet |been "
    r"|previously )*treated\b|\bde novo\b|\bfirst[- ]line\b|\bfront[- ]?line\b", re.IGNORECASE)
_LATER_LINE_RE = re.compile(
    r"\b(?:second|third|later|subsequent|next)[- ]line\b|"
    r"\bprogress(?:ed|ion|ing)\s+(?:on|after|despite|through|while on|during)\b|\brefractory to\b|"
    r"\b(?:previously|heavily) treated\b|\bpretreated\b|\bprimary[- ]refractory\b|"
    # "relapsed 7 months after completing therapy", "relapse following R-CHOP"
    r"\brelaps(?:ed|ing|e)\s+(?:[\w-]+\s+){0,4}?(?:after|following|on|within|despite)\b", re.IGNORECASE)
_LINE_NEGATION_RE = re.compile(r"\b(?:no|not|without|nor)\s+(?:\w+\s+)?\Z", re.IGNORECASE)
# A first-line therapy after a cue that puts it behind the patient ("progressed after 6 months of
# first-line pembrolizumab", "following first-line FOLFOX", "prior first-line"): the line already had, so a
# later-line case. Not "disease control on first-line platinum"; a negated cue ("has not progressed
# after") leaves it first-line.
_PRIOR_FIRST_LINE_RE = re.compile(
    r"\b(?P<cue>after|following|despite|failure[ ]of|refractory[ ]to|prior|completed|"
    r"progress(?:ed|ion|ing)[ ]on)\s+(?:[\w-]+\s+){0,3}?(?P<line>(?:first|front)[- ]?line)\b", re.IGNORECASE)
_FIRST_LINE_WORD_RE = re.compile(r"(?:first|front)[- ]?line", re.IGNORECASE)
_LATER_LINE_ASKED_RE = re.compile(r"\b(?:second|third|later|subsequent|next)[- ]line\b", re.IGNORECASE)


def _question_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence that ends in a question mark."""
    spans, start = [], 0
    for sep in [*_SENTENCE_RE.finditer(text), None]:
        end = sep.start() if sep else len(text)
        if text[start:end].rstrip().endswith("?"):
            spans.append((start, end))
        start = sep.end() if sep else start
    return spans


# A later-line case whose first line for the advanced disease is behind it: a first-line therapy after a cue
# ("progressed after first-line pembrolizumab"), or a second or later line it has had or that it asks for ("then
# second-line docetaxel", "What third-line options?"). Not "progressed on adjuvant FOLFOX; second-line options?":
# with (neo)adjuvant therapy named, only a first-line cue counts (the first line for metastatic disease may come).
_ADJUVANT_RE = re.compile(r"\b(?:neo-?)?adjuvant\b|\bperioperative\b", re.IGNORECASE)


# Progression stated in a statement, bare ("now with progression in the liver", "progressive disease"); not a risk,
# a plan or an end point ("risk of progression", "until progression", "progression-free survival"), nor negated
_PROGRESSED_RE = re.compile(
    r"(?<!risk of )(?<!time to )(?<!until )(?<!before )(?<!prior to )(?<!rate of )"
    r"\b(?:(?:disease\s+)?progression|progressive\s+disease|progressed|progressing)\b(?![- ]free)", re.IGNORECASE)
# New disease after a first-line therapy ("on first-line osimertinib for 26 months, now with new liver metastases"):
# a progression there, not at diagnosis ("new liver lesions on CT, biopsy shows ..." is how cancers present)
_NEW_DISEASE_RE = re.compile(r"\bnew\s+(?:[\w-]+\s+){0,2}?(?:metastas[ie]s|lesions?|mets)\b|\btransformation\b",
                             re.IGNORECASE)


def _line_reading(text: str, cancer_type: str | None = None) -> tuple[str | None, bool]:
    """(line of therapy, whether the first line is behind a later-line case). The first line is behind: a
    first-line therapy after a cue or before a progression ("on first-line osimertinib for 26 months, now with
    progression", which had read as first line), a second or later line had or asked for, a lymphoma, leukemia or
    myeloma that relapsed or progressed (no adjuvant therapy there: "relapsed 7 months after R-CHOP" had been
    offered R-CHOP's frontline sections). Not a metastatic case that "progressed on chemotherapy" alone: an EGFR
    case's first-line osimertinib is still to come."""
    def negated(start: int) -> bool:
        return bool(_LINE_NEGATION_RE.search(text[max(0, start - 20):start]))

    questions = _question_spans(text)

    def asked(m: re.Match[str]) -> bool:
        return any(a <= m.start() < b for a, b in questions)

    progressions = [m for m in _PROGRESSED_RE.finditer(text) if not negated(m.start()) and not asked(m)]
    prior = [m for m in _PRIOR_FIRST_LINE_RE.finditer(text) if not negated(m.start("cue"))]
    prior_at = {m.start("line") for m in prior}
    firsts = [m for m in _FIRST_LINE_RE.finditer(text) if m.start() not in prior_at]
    # a first-line therapy a progression follows is the line had
    before = [m for m in firsts if _FIRST_LINE_WORD_RE.fullmatch(m.group(0)) and not asked(m)
              and any(p.start() > m.end() for p in progressions + [
                  x for x in _NEW_DISEASE_RE.finditer(text) if not negated(x.start()) and not asked(x)])]
    firsts = [m for m in firsts if m not in before]
    later = bool(prior) or bool(before) or bool(progressions) or \
        any(not negated(m.start()) for m in _LATER_LINE_RE.finditer(text))
    named_later = [m for m in _LATER_LINE_ASKED_RE.finditer(text) if not negated(m.start())]
    if firsts and any(asked(m) for m in named_later) and all(
            _FIRST_LINE_WORD_RE.fullmatch(m.group(0)) and not asked(m) for m in firsts):
        # a later line asked for, and the only first-line word names a regimen outside it: the line had
        return "later", True
    first = bool(firsts)
    line = "first" if first and not later else "later" if later and not first else None
    adjuvant = bool(_ADJUVANT_RE.search(text))
    blood = bool(cancer_type and _BLOOD_CANCER_RE.search(cancer_type))
    lines_had = any(not negated(m.start()) for m in _LINES_HAD_RE.finditer(text))
    treated_after = any(_treated_at(text, p.end()) and not asked(p) for p in progressions)
    done = line == "later" and (bool(prior) or bool(before) or blood or bool(named_later) and not adjuvant
                                or lines_had or treated_after)
    return line, done


# Lines a case has had, counted ("after two prior lines", "3 previous lines of therapy", "multiple lines"), and a
# drug given at a progression ("At progression in 2024 he received lurbinectedin"): the first line is behind (a long
# note's third-line SCLC case had prophylactic cranial irradiation, a first-line option, drafted)
_LINES_HAD_RE = re.compile(r"\b(?:two|three|four|five|several|multiple|[2-9])\s+(?:or\s+more\s+)?"
                           r"(?:(?:prior|previous)\s+)?lines\b", re.IGNORECASE)
_TREATED_RE = re.compile(r"\b(?:received|was\s+(?:given|treated\s+with|started\s+on)|started|switched\s+to|"
                         r"began)\s+(?:[\w-]+\s+){0,3}?", re.IGNORECASE)


# The line a case is at, stated: asked for ("What third-line option ...?"), referred for ("referred for second-line
# treatment") or counted ("after two prior lines"); a population "after two or more prior regimens" is not for a
# case at its second line (engine.casefit; a long note's second-line HER2-positive case had neratinib's "after two
# or more prior anti-HER2-based regimens" drafted first)
_ORDINALS = {"second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_ASKED_LINE_RE = re.compile(r"\b(second|third|fourth|2nd|3rd|4th)[- ]line\b", re.IGNORECASE)
_REFERRED_LINE_RE = re.compile(r"\breferred\s+for\s+(?:[\w-]+\s+)?(second|third|fourth|2nd|3rd|4th)[- ]line\b",
                               re.IGNORECASE)
_COUNTED_LINES_RE = re.compile(r"\b(?:after|following)\s+(one|two|three|four|[1-4])\s+(?:prior\s+|previous\s+)?"
                               r"lines?\b(?!\s+or\s+more)", re.IGNORECASE)
_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4}


def _prior_lines(text: str) -> int | None:
    """The number of lines before the one the case asks for, where the note says it; None otherwise."""
    asked = " ".join(s for s in asked_sentences(text) if s.rstrip().endswith("?"))
    if m := _ASKED_LINE_RE.search(asked) or _REFERRED_LINE_RE.search(text):
        return _ORDINALS[m.group(1).lower()] - 1
    if m := _COUNTED_LINES_RE.search(text):
        word = m.group(1).lower()
        return int(word) if word.isdigit() else _COUNTS[word]
    return None


def _treated_at(text: str, start: int) -> bool:
    """A drug is given in the clause that starts at ``start`` ("At progression in 2024 he received lurbinectedin")."""
    end = min([len(text)] + [start + m.start() for m in re.finditer(r"[.;?]", text[start:])][:1])
    drugs_at = {start + a for a, _, _ in drug_spans(text[start:end])}
    return any(m.end() in drugs_at for m in _TREATED_RE.finditer(text, start, end))


# Checkpoint inhibitors of PD-1/PD-L1 a case progressed after ("progressed on pembrolizumab",
# "first-line carboplatin, pemetrexed and pembrolizumab, then second-line docetaxel; now progressing"): case fit
# does not offer the class again (a third-line NSCLC case after chemo-immunotherapy had been offered nivolumab).
# The drug is named before a word of progression or a later line, or after "progressed on", "refractory to",
# "failure of" (not "progressed on chemotherapy; pembrolizumab started last week": on it, not past it). The class
# words count ("anti-PD-1", "checkpoint inhibitor", "chemo-immunotherapy"; "immunotherapy" not for a lymphoma,
# leukemia or myeloma: rituximab, CAR T cells). Not in a (neo)adjuvant clause (a recurrence after adjuvant
# therapy may be rechallenged), nor negated, planned or considered ("not a candidate for pembrolizumab", "plan to
# start nivolumab", "pembrolizumab was declined"). Likewise a lymphoma's frontline regimen ("relapsed 7 months after
# R-CHOP" had been offered "R-CHOP is the preferred regimen ..."), by its name in ``FRONTLINE_REGIMENS``.
FRONTLINE_REGIMENS = {"rchop": "R-CHOP", "polarchp": "pola-R-CHP", "abvd": "ABVD", "aavd": "A-AVD",
                      "bvavd": "A-AVD", "beacopp": "BEACOPP", "escalatedbeacopp": "BEACOPP"}
FRONTLINE_REGIMEN_RE = re.compile(r"\b(?:R-?CHOP|pola-?R-?CHP|ABVD|(?:A|BV)-?AVD|(?:escalated\s+)?BEACOPP)\b",
                                  re.IGNORECASE)
PD1_DRUGS = ("nivolumab", "pembrolizumab", "cemiplimab", "dostarlimab", "atezolizumab", "durvalumab", "avelumab",
             "tislelizumab", "toripalimab", "retifanlimab")
CTLA4_DRUGS = ("ipilimumab", "tremelimumab")  # another class: given again only if the case did not progress on it
# EGFR TKIs after progression on a third-generation one (osimertinib, lazertinib): no earlier-generation TKI helps
# then (after erlotinib or gefitinib, osimertinib still does: those are not read)
EGFR_TKIS = ("osimertinib", "erlotinib", "gefitinib", "afatinib", "dacomitinib", "lazertinib")
_THIRD_GEN_EGFR = ("osimertinib", "lazertinib")
# androgen receptor pathway inhibitors: after progression on one, another is of little use (cross-resistance; a QA
# pass's castration-resistant case after abiraterone was offered abiraterone's trials again)
ARPI_DRUGS = ("abiraterone", "enzalutamide", "apalutamide", "darolutamide")
# ALK TKIs after progression on a second-generation one (alectinib, brigatinib, ...): crizotinib and the others of
# that generation do not help, lorlatinib does; after lorlatinib none does (a QA pass's case on alectinib had
# crizotinib's trial released). Progression on crizotinib is not read (a second-generation TKI still helps).
ALK_SECOND_GEN = ("alectinib", "brigatinib", "ceritinib", "ensartinib")
ALK_LAST_GEN = "lorlatinib"
# CDK4/6 inhibitors: after progression on one, the next line is another class (PDQ's post-CDK4/6 options are
# everolimus, alpelisib, capivarsertib, elacestrant, ...); a QA pass's case after ribociclib had no progression read
CDK46_DRUGS = ("palbociclib", "ribociclib", "abemaciclib")
# lenalidomide: a myeloma or lymphoma that progressed on it is not offered its regimens again (a long note's
# lenalidomide-refractory myeloma had every drafted sentence about lenalidomide); pomalidomide stays
LENALIDOMIDE = "lenalidomide"
# likewise pomalidomide, the anti-CD38 antibodies (daratumumab, isatuximab) and the HER2 antibody-drug conjugates: a
# case that progressed on one is not offered it again (a long note's myeloma after daratumumab-pomalidomide had
# pomalidomide's trials drafted, its HER2-positive case after T-DM1 had EMILIA's)
POMALIDOMIDE = "pomalidomide"
ANTI_CD38_DRUGS = ("daratumumab", "isatuximab")
HER2_ADCS = {"trastuzumab emtansine": "trastuzumab emtansine", "ado-trastuzumab emtansine": "trastuzumab emtansine",
             "t-dm1": "trastuzumab emtansine", "trastuzumab deruxtecan": "trastuzumab deruxtecan",
             "fam-trastuzumab deruxtecan": "trastuzumab deruxtecan", "t-dxd": "trastuzumab deruxtecan"}
# irinotecan and oxaliplatin, alone or in a fluoropyrimidine regimen: after progression on one, its regimens are not
# offered again (a long note's colon cancer after FOLFOX and FOLFIRI had "FOLFIRI plus ramucirumab" drafted); the
# next line is the other backbone or a later-line drug. Not the platinum salts (their resistance is a status,
# engine.facts ``STATUSES``); bevacizumab is read apart (below)
CHEMO_BACKBONES = {"FOLFIRI": ("irinotecan",), "CAPIRI": ("irinotecan",), "XELIRI": ("irinotecan",),
                   "FOLFOX": ("oxaliplatin",), "CAPOX": ("oxaliplatin",), "XELOX": ("oxaliplatin",),
                   "FOLFIRINOX": ("irinotecan", "oxaliplatin"), "FOLFOXIRI": ("irinotecan", "oxaliplatin"),
                   "irinotecan": ("irinotecan",), "oxaliplatin": ("oxaliplatin",)}
# bevacizumab: after progression on it, not offered again, but in colorectal cancer, where it is continued beyond
# progression (a long note's cervical cancer after carboplatin, paclitaxel, bevacizumab and pembrolizumab had "the
# addition of bevacizumab may be considered" drafted)
_COLORECTAL_TYPE_RE = re.compile(r"colo|rect", re.IGNORECASE)
_CHEMO_BACKBONE_RE = (r"\bm?(?:FOLFIRINOX|FOLFOXIRI|FOLFIRI|FOLFOX|CAPOX|XELOX|CAPIRI|XELIRI)(?:-?\d)?\b|"
                      r"\b(?:irinotecan|oxaliplatin)\b")
_PD1_GIVEN_RE = re.compile(
    r"(?<![\w-])(?:(?:ado|fam)-)?(?:trastuzumab\s+(?:emtansine|deruxtecan)|(?-i:T-DM1|T-DXd))(?![\w-])|"
    r"\b(?:" + "|".join(PD1_DRUGS + CTLA4_DRUGS + _THIRD_GEN_EGFR + ARPI_DRUGS + CDK46_DRUGS + ALK_SECOND_GEN
                       + (LENALIDOMIDE, POMALIDOMIDE) + ANTI_CD38_DRUGS
                       + (ALK_LAST_GEN,)) + r")\b|"
    r"\bCDK\s?4/6\s+inhibitors?\b|"
    r"\banti-?PD-?L?1\b|\bPD-?L?1(?:/PD-?L1)?[- ](?:inhibitors?|blockade|"
    r"antibod(?:y|ies))\b|\b(?:immune[- ])?checkpoint[- ](?:inhibitors?|inhibition|blockade)\b|"
    r"\b(?P<io>(?:chemo-?)?immunotherapy|(?-i:IO|ICIs?))\b|(?P<regimen>" + FRONTLINE_REGIMEN_RE.pattern + ")|"
    r"(?P<chemo>" + _CHEMO_BACKBONE_RE + r")|\b(?P<vegf>bevacizumab)\b",
    re.IGNORECASE)
_PROGRESSION_RE = re.compile(
    r"\b(?:progress(?:ed|es|ion|ing|ive)|recurr(?:ed|ence)|relapse[ds]?|fail(?:ed|ure)|refractory|resistan(?:t|ce)|"
    r"(?:second|third|fourth|later|subsequent)[- ]line)\b", re.IGNORECASE)
_GOVERNED_RE = re.compile(r"\s+(?:on|after|despite|through|during|while\s+on|to|of|following)\b[^.;?\n]{0,80}\Z",
                          re.IGNORECASE)
_NOT_YET_BEFORE_RE = re.compile(r"\b(?:plan(?:s|ned|ning)?|consider(?:s|ed|ing)?|discuss(?:es|ed|ing)?|will|would|"
                                r"could|should|may|offer(?:ed)?|recommend(?:ed)?|candidate)\b[^.;]{0,30}$",
                                re.IGNORECASE)
_NOT_YET_AFTER_RE = re.compile(r"[^.;]{0,20}?\b(?:was|were)\s+(?:declined|refused|deferred|not\s+given)\b",
                               re.IGNORECASE)
_BLOOD_CANCER_RE = re.compile(r"lymphoma|leuka?emia|myeloma|\bCLL\b|\bAML\b|\bALL\b", re.IGNORECASE)


def _backbone(written: str) -> str:
    """A ``_CHEMO_BACKBONE_RE`` match as its ``CHEMO_BACKBONES`` name ("mFOLFOX6": FOLFOX)."""
    word = re.sub(r"-?\d$", "", written)
    return word.lower() if word.lower() in CHEMO_BACKBONES else re.sub(r"^M(?=FOL)", "", word.upper())


def _progressed_after(text: str, cancer_type: str | None) -> tuple[str, ...]:
    said = statement_text(text)
    # new disease is a progression too ("now ... a new painful lytic lesion", "new brain metastases")
    cues = [m for m in [*_PROGRESSION_RE.finditer(said), *_NEW_DISEASE_RE.finditer(said)]
            if not _LINE_NEGATION_RE.search(said[max(0, m.start() - 20):m.start()])]
    out: list[str] = []
    for m in _PD1_GIVEN_RE.finditer(said):
        start = max([0] + [x.end() for x in re.finditer(r"[.;]\s+|\n+", said[:m.start()])])
        end = min([len(said)] + [m.end() + x.start() for x in re.finditer(r"[.;]\s+|\n+", said[m.end():])][:1])
        clause, before = said[start:end], said[max(start, m.start() - 40):m.start()]
        if _ADJUVANT_RE.search(clause) or m.group("io") and cancer_type and _BLOOD_CANCER_RE.search(cancer_type):
            continue
        if m.group("vegf") and cancer_type and _COLORECTAL_TYPE_RE.search(cancer_type):
            continue  # continued beyond progression in colorectal cancer (a standard second line)
        if _NEGATION_RE.search(before) or _NOT_GIVEN_BEFORE_RE.search(before) or \
                _NOT_YET_BEFORE_RE.search(before) or _NOT_GIVEN_AFTER_RE.match(said, m.end()) or \
                _NOT_YET_AFTER_RE.match(said, m.end()):
            continue
        if any(c.start() > m.end() or _GOVERNED_RE.search(said, c.end(), m.start()) for c in cues):
            name = " ".join(m.group(0).split())
            low = name.lower()
            out.append(FRONTLINE_REGIMENS[re.sub(r"[^a-z]", "", low)] if m.group("regimen")
                       else _backbone(name) if m.group("chemo") else HER2_ADCS[low] if low in HER2_ADCS
                       else name if name[:3].upper() == "CDK" else low)  # "CDK4/6 inhibitor" as written
    return tuple(dict.fromkeys(out))


# Cytotoxic drugs (``drug_spans`` keys) a case is done with when its disease progressed on them or within six months
# of their last dose (the definition of platinum resistance, which holds for the others too): a long note's ovarian
# cancer that came back three months after carboplatin and pegylated liposomal doxorubicin had liposomal
# doxorubicin's trials offered first. Progression later than that is a relapse a guideline may re-treat (a
# platinum-sensitive recurrence gets platinum again), so it is not read. Not fluorouracil nor capecitabine (colorectal
# cancer keeps the fluoropyrimidine from line to line), nor irinotecan and oxaliplatin (``CHEMO_BACKBONES``).
PLATINUM = "platinum"
CYTOTOXICS = {"carboplatin": PLATINUM, "cisplatin": PLATINUM, "doxorubicin": "doxorubicin",
              "epirubicin": "epirubicin", "paclitaxel": "paclitaxel", "docetaxel": "docetaxel",
              "gemcitabine": "gemcitabine", "topotecan": "topotecan", "pemetrexed": "pemetrexed",
              "eribulin": "eribulin", "vinorelbine": "vinorelbine", "etoposide": "etoposide",
              "temozolomide": "temozolomide", "trabectedin": "trabectedin", "lurbinectedin": "lurbinectedin",
              "cabazitaxel": "cabazitaxel", "ifosfamide": "ifosfamide"}
_WEEKS_OR_MONTHS = r"(?P<n>\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a\s+few|several)\s+" \
                   r"(?P<unit>weeks?|months?)"
# how soon: "three months after her last platinum dose", "five months after finishing", "within 6 months of
# completing"
_SOON_RES = (re.compile(_WEEKS_OR_MONTHS + r"\s+(?:after|from|following|since)\s+(?:(?:her|his|their|the)\s+)?"
                        r"(?:last|final|complet\w*|finish\w*|end\b|stopping)", re.IGNORECASE),
             re.compile(r"\bwithin\s+" + _WEEKS_OR_MONTHS + r"\s+(?:of|after)\b", re.IGNORECASE))
# on the drugs it names next: "progressed on weekly paclitaxel", "grew during topotecan", "refractory to topotecan"
_ON_DRUGS_RE = re.compile(r"\b(?:progress\w*|relaps\w*|recurr\w*|grew|growing|enlarg\w*)\s+(?:while\s+)?(?:on|"
                          r"during|while\s+(?:on|receiving|still\s+on))\b|\brefractory\s+to\b", re.IGNORECASE)
_EARLY_MONTHS = 6
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a few": 3, "several": 4}
# a sentence that reports the disease growing (``_PROGRESSION_RE`` and ``_NEW_DISEASE_RE`` besides)
_GROWTH_RE = re.compile(r"\b(?:enlarg\w*|grow\w*|grew|worsen\w*|rising|increas\w*)\b", re.IGNORECASE)
_CLAUSE_END_RE = re.compile(r"[,;:()]|\s+(?:but|then|followed\s+by)\s+", re.IGNORECASE)
# the statement turns to growth after what was given ("he received lurbinectedin for four cycles with brief
# stabilization, but CT now shows growth of liver and mediastinal disease"): progression on that regimen, unless a
# later time is said between them ("... but relapsed two years later")
_BUT_NOW_RE = re.compile(r"\b(?:but|yet|however)\b[^.;]{0,40}?\bnow\b|"
                         r"\b(?:but|yet)\s+(?:\w+\s+){0,3}?(?:shows?|showed|has|had|developed|progress\w*)\b",
                         re.IGNORECASE)
_LATER_RE = re.compile(r"\b(?:years?|\d{4})\b|\b(?:seven|eight|nine|ten|eleven|twelve|[7-9]|\d{2,})\s+months?\b",
                       re.IGNORECASE)


def _soon(m: re.Match[str]) -> bool:
    """A ``_SOON_RES`` match within ``_EARLY_MONTHS`` (a number of weeks always is)."""
    n = " ".join(m.group("n").lower().split())
    months = int(n) if n.isdigit() else _NUMBER_WORDS.get(n, _EARLY_MONTHS + 1)
    return m.group("unit").lower().startswith("week") or months <= _EARLY_MONTHS


def _early_progression(text: str) -> tuple[str, ...]:
    """The cytotoxic drugs (``CYTOTOXICS`` keys) the disease progressed on or within six months of, in a statement
    that reports the disease growing: those a "progressed on" or "refractory to" governs ("progressed on weekly
    paclitaxel"); those named before a "how soon" (``_SOON_RES``) and after the statement's last progression cue
    before them, the recurrence they treated ("A platinum-sensitive recurrence in 2023 was treated with carboplatin
    and pegylated liposomal doxorubicin, but ... three months after her last platinum dose, she developed ascites"),
    and when the statement names none before it, those of the statement before; and those the statement turns from
    to growth (``_BUT_NOW_RE``: "received lurbinectedin for four cycles ..., but CT now shows growth")."""
    said = [s for s in _SENTENCE_RE.split(statement_text(text)) if s.strip()]
    out: list[str] = []
    for i, sentence in enumerate(said):
        cues = [c for c in [*_PROGRESSION_RE.finditer(sentence), *_NEW_DISEASE_RE.finditer(sentence),
                            *_GROWTH_RE.finditer(sentence)]
                if not _LINE_NEGATION_RE.search(sentence[max(0, c.start() - 20):c.start()])]
        if not cues:
            continue
        for m in _ON_DRUGS_RE.finditer(sentence):
            if not _LINE_NEGATION_RE.search(sentence[max(0, m.start() - 20):m.start()]):
                out += [key for _, _, key in drug_spans(_CLAUSE_END_RE.split(sentence[m.end():])[0])]
        for m in _BUT_NOW_RE.finditer(sentence):
            if not any(c.start() >= m.start() for c in cues):
                continue
            aside = [x.span() for x in re.finditer(r"\([^()]*\)", sentence)]  # "(ifosfamide was avoided ...)"
            before = [(a, b, key) for a, b, key in drug_spans(sentence[:m.start()])
                      if not any(x <= a < y for x, y in aside)]
            last = max((c.end() for c in cues if before and c.end() <= before[0][0]), default=0)
            given = [(b, key) for a, b, key in before if a >= last]
            if given and not _LATER_RE.search(sentence, given[-1][0], m.end()):
                out += [key for _, key in given]
        for m in (m for soon_re in _SOON_RES for m in soon_re.finditer(sentence)):
            if not _soon(m) or _LINE_NEGATION_RE.search(sentence[max(0, m.start() - 20):m.start()]):
                continue
            before = [(a, key) for a, _, key in drug_spans(sentence[:m.start()])]
            if not before and i:
                before = [(0, key) for _, _, key in drug_spans(said[i - 1])]
            last = max((c.end() for c in cues if before and c.end() <= before[0][0]), default=0)
            out += [key for a, key in before if a >= last]
    return tuple(dict.fromkeys(d for d in out if d in CYTOTOXICS))


# A genotype that the listed drugs cannot treat: a GIST's PDGFRA D842V mutation resists imatinib and the other type
# II kinase inhibitors (PDQ: "Initial TKI therapy for PDGFRA D842-variant GISTs" is avapritinib); a QA pass's D842V
# case had sunitinib and regorafenib put forward
_GENOTYPE_RESISTS = ((re.compile(r"\bD842V\b"), ("imatinib", "sunitinib", "regorafenib", "nilotinib", "sorafenib")),)


def _resisted_by_genotype(text: str, avoided: set[str]) -> tuple[str, ...]:
    """"drug: the note's sentence (resists it)" for each drug the case's stated genotype resists
    (``_GENOTYPE_RESISTS``) and the note does not avoid already, as ``avoided_drugs`` holds them."""
    said = statement_text(text)
    out: list[str] = []
    for rx, drugs in _GENOTYPE_RESISTS:
        if m := rx.search(said):
            start = max([0] + [x.end() for x in re.finditer(r"[.;]\s+", said[:m.start()])])
            end = min([len(said)] + [m.end() + x.start() for x in re.finditer(r"[.;](?:\s|$)", said[m.end():])][:1])
            out += [f"{drug}: {said[start:end].strip()} (resists it)" for drug in drugs if drug not in avoided]
    return tuple(out)


# A drug stopped for a toxicity or ruled out by the note is not offered again (engine.casefit), nor is another of its
# class where the class shares the harm: a checkpoint inhibitor's immune toxicity, the deruxtecan conjugates'
# interstitial lung disease (a long note's case after T-DXd pneumonitis had DESTINY-Breast trials offered)
PD1_CLASS = "PD-1/PD-L1"
DXD_CLASS = "deruxtecan antibody-drug conjugate"
_AVOID_CLASS = {**dict.fromkeys(PD1_DRUGS, PD1_CLASS), **dict.fromkeys(CTLA4_DRUGS, "CTLA-4"),
                "trastuzumab deruxtecan": DXD_CLASS, "datopotamab deruxtecan": DXD_CLASS}
ANTHRACYCLINE = "anthracycline"  # doxorubicin, epirubicin, ...: one lifetime cardiotoxic dose
TAXANE = "taxane"  # paclitaxel, docetaxel, nab-paclitaxel, cabazitaxel: one neuropathy


def avoid_key(drug: str) -> str:
    """A ``drug_spans`` key as what a case avoids: its class where the class shares the harm, else itself."""
    return ANTHRACYCLINE if drug.endswith("rubicin") else TAXANE if drug.endswith("taxel") else \
        _AVOID_CLASS.get(drug, drug)


# a class a note names as such ("her team avoided checkpoint inhibitors", "grade 2 neuropathy from taxanes")
_CLASS_NAMES_RE = re.compile(r"\b(?P<pd1>(?:immune\s+)?checkpoint\s+inhibitors?|anti-?PD-?L?1(?:\s+(?:therapy|"
                             r"antibod(?:y|ies)))?|PD-?L?1\s+inhibitors?)\b|\b(?P<taxane>taxanes?)\b|"
                             r"\b(?P<anthracycline>anthracyclines?)\b", re.IGNORECASE)


def drug_and_class_spans(text: str) -> list[tuple[int, int, str]]:
    """``drug_spans`` and the classes ``_CLASS_NAMES_RE`` names, each as its ``avoid_key``, in text order."""
    classes = [(m.start(), m.end(), PD1_CLASS if m.group("pd1") else TAXANE if m.group("taxane") else ANTHRACYCLINE)
               for m in _CLASS_NAMES_RE.finditer(text)]
    return sorted([*drug_spans(text), *classes])


# A lifetime anthracycline dose reached ("after a cumulative doxorubicin dose of 450 mg/m2"): no more anthracycline
# (a long note's liposarcoma case had pegylated liposomal doxorubicin drafted); doxorubicin's limit is 450-550 mg/m2,
# epirubicin's 900, so 400 and 800 are where the note's dose is read as the limit
_CUMULATIVE_RE = re.compile(r"\bcumulative\s+(?:(?P<drug>\w*rubicin|anthracycline)\s+)?(?:dose|exposure)\s+"
                            r"(?:of\s+)?(?:(?P<drug2>\w*rubicin)\s+)?(?P<dose>\d{3,4})\s*mg/m(?:2|²)?", re.IGNORECASE)


def _anthracycline_limit(text: str) -> str:
    """The clause of a cumulative anthracycline dose at its lifetime limit, or ""."""
    for m in _CUMULATIVE_RE.finditer(text):
        drug = (m.group("drug") or m.group("drug2") or "doxorubicin").lower()
        if int(m.group("dose")) >= (800 if drug == "epirubicin" else 400):
            return m.group(0)
    return ""


# What a note says a drug was stopped for or kept from: a toxicity ("trastuzumab deruxtecan was stopped after five
# cycles because of grade 2 pneumonitis", "discontinued pembrolizumab for grade 3 colitis", "intolerant of
# capecitabine", "allergic to paclitaxel") or anything else it names ("ifosfamide was avoided because of his
# solitary kidney", "cisplatin is contraindicated given hearing loss"). Case fit does not offer that drug again (a
# long note's HER2-positive case after T-DXd pneumonitis had T-DXd's trials offered, a liposarcoma with a solitary
# kidney ifosfamide). A plain "stopped after six cycles" is no reason; "held for a week" is not stopping.
_TOXICITY_WORDS = (r"toxicit\w*|pneumonitis|colitis|hepatitis|myocarditis|nephritis|adverse|intoleran\w*|"
                   r"(?:not|poorly)\s+tolerated|allerg\w*|anaphyla\w*|hypersensitivity|infusion[- ]related|"
                   r"infusion\s+reaction|neuropath\w*|interstitial\s+lung|\bILD\b|cardiomyopathy|heart\s+failure|"
                   r"cardiotoxic\w*|nephrotoxic\w*|ototoxic\w*|side[- ]effects?|grade\s*[234]\b|rash|"
                   r"Stevens-Johnson|hand-foot|mucositis|diarrh\w*|neutropeni\w*|thrombocytopeni\w*|"
                   r"cytopeni\w*|myelosuppression|hemorrhage|bleeding|perforation|thrombo\w*|embol\w*|"
                   r"renal\s+(?:failure|injury|impairment)|kidney\s+injury|LVEF\s+(?:decline|drop|fall)")
_STOP_WORDS = r"stopped|discontinued|ceased|halted|withdrawn|abandoned|stop|discontinue"
_KEEP_WORDS = r"avoided|avoid|omitted|omit|withheld|withhold|not\s+given|not\s+used|not\s+offered"
_RULED_WORDS = r"contraindicated|not\s+(?:re)?challenged|(?:not|poorly)\s+tolerated"  # no reason needed
# the verb right after the drug ("T-DXd was stopped", "ifosfamide, which was avoided", "pembrolizumab was later
# permanently discontinued"), or before it ("stopped pembrolizumab", "intolerant of capecitabine")
_AVOIDED_AFTER_RE = re.compile(
    r"\s*,?\s*(?:which\s+)?(?:(?:was|were|is|had\s+been|has\s+been|had\s+to\s+be)\s+)?"
    r"(?:(?:started|begun|given|initiated|tried)\s+(?:but|and)\s+)?(?:(?:then|later|"
    r"subsequently|eventually|permanently|therefore)\s+)*"
    r"(?:(?P<stop>" + _STOP_WORDS + r")|(?P<keep>" + _KEEP_WORDS + r")|(?P<ruled>" + _RULED_WORDS + r"))\b",
    re.IGNORECASE)
_AVOIDED_BEFORE_RE = re.compile(
    r"\b(?:(?P<ruled>(?:intolerant|intolerance)\s+(?:of|to)|allerg(?:ic|y)\s+to|anaphylaxis\s+to|"
    r"hypersensitivity\s+to|(?:unable\s+to|could\s+not|cannot)\s+tolerate|contraindications?\s+to)|"
    r"(?P<stop>" + _STOP_WORDS + r"|stopping)|(?P<keep>" + _KEEP_WORDS + r"|avoiding))"
    r"\s+(?:(?:the|her|his|their)\s+)?\Z", re.IGNORECASE)
_TOXICITY_RE = re.compile(_TOXICITY_WORDS, re.IGNORECASE)
# or stopped because it cannot work: resistance, or a test that showed it ("Adjuvant imatinib was started but stopped
# after four months when mutation testing showed a PDGFRA exon 18 D842V mutation": a long note's GIST was drafted an
# imatinib plan)
_RESISTANCE_RE = re.compile(r"\bresistan\w*|\binsensitiv\w*|\bineffective\b|\b(?:testing|analysis|sequencing|"
                            r"profiling)\s+(?:showed|revealed|found|identified|detected)\b", re.IGNORECASE)
# a toxicity of grade 2 or more that a drug caused ("grade 2 neuropathy from taxanes", "grade 3 colitis on
# ipilimumab"): that drug is not given again (a long note's platinum-resistant ovarian case had weekly paclitaxel and
# docetaxel drafted)
_TOXIC_FROM_RE = re.compile(r"\bgrade\s*[2-4]\s+(?:[\w-]+\s+){0,2}?(?:" + _TOXICITY_WORDS + r")\s+"
                            r"(?:from|due\s+to|caused\s+by|attributed\s+to|related\s+to|after|on|with)\s+"
                            r"(?:(?:prior|previous|the|her|his|their)\s+)?\Z", re.IGNORECASE)
_REASON_RE = re.compile(r"\b(?:because|due\s+to|owing\s+to|given|in\s+view\s+of|for|as|with)\b", re.IGNORECASE)
_AVOID_UNDONE_RE = re.compile(r"\b(?:plan\w*|consider\w*|discuss\w*|will|would|may|could|if|whether|not|never|"
                              r"did\s+not|to)\s+\Z", re.IGNORECASE)


_ASKED_HISTORY_RE = re.compile(r"\b(?:after|following|despite|beyond|refractory\s+to|resistant\s+to|"
                               r"progress\w*\s+(?:on|after))\s+(?:[\w-]+\s+){0,2}\Z", re.IGNORECASE)
_CLAUSE_END_RE = re.compile(r"[.;]\s+|\n+|,\s+(?:and|but|so|while|whereas|then)\s+", re.IGNORECASE)


def _avoided_drugs(text: str) -> tuple[str, ...]:
    """"drug: the clause as written" for each drug ``text`` says was stopped for a toxicity, kept from the patient
    for a stated reason or contraindicated, in note order; questions are not read."""
    said = statement_text(text)
    # a drug the question asks about is weighed, not ruled out ("Can she be rechallenged with pembrolizumab?"); not
    # one it names as history ("What second-line agent ... after anthracycline therapy?")
    asked = {avoid_key(drug) for q in asked_sentences(text) if q.rstrip().endswith("?")
             for a, _, drug in drug_and_class_spans(q) if not _ASKED_HISTORY_RE.search(q, max(0, a - 40), a)}
    out: dict[str, str] = {}
    for first, last, drug in drug_and_class_spans(said):
        if avoid_key(drug) in asked:
            continue
        start = max([0] + [x.end() for x in _CLAUSE_END_RE.finditer(said[:first])])
        end = min([len(said)] + [last + x.start() for x in _CLAUSE_END_RE.finditer(said[last:])][:1])
        if _TOXIC_FROM_RE.search(said, start, first):  # "grade 2 neuropathy from taxanes"
            out.setdefault(drug, said[start:end].strip(" ,"))
            continue
        cue = _AVOIDED_AFTER_RE.match(said, last, end) or _AVOIDED_BEFORE_RE.search(said, start, first)
        if cue is None or _AVOID_UNDONE_RE.search(said, max(start, cue.start() - 20), cue.start()):
            continue  # "plan to stop", "did not stop"
        # the clause but the drug and its cue ("Because of colitis, ...")
        a, b = min(first, cue.start()), max(last, cue.end())
        rest = said[start:a] + " " + said[b:end]
        if cue.group("stop") and not (_TOXICITY_RE.search(rest) or _RESISTANCE_RE.search(rest)) \
                or cue.group("keep") and not _REASON_RE.search(rest):
            continue  # "stopped after six cycles", "pembrolizumab was not given"
        out.setdefault(drug, said[start:end].strip(" ,"))
    if (limit := _anthracycline_limit(said)) and ANTHRACYCLINE not in asked:
        out.setdefault(ANTHRACYCLINE, limit)
    return tuple(f"{drug}: {clause}" for drug, clause in out.items())


# Recurrent disease ("recurrent", "relapsed", "recurred", "a liver recurrence") or a new diagnosis ("newly
# diagnosed", "de novo", "new diagnosis"). Not a score or a risk ("Oncotype recurrence score", "risk of recurrence",
# "recurrence-free survival"), a negation ("no recurrence", "without evidence of relapse") or something else that
# recurs ("recurrent laryngeal nerve", "recurrent UTIs", "recurrent pleural effusions").
_RECURRENT_RE = re.compile(r"\b(?:recurrent|relapsed|relapsing|recurred|recurrences?|relapses?)\b", re.IGNORECASE)
_RECURRENT_BEFORE_RE = re.compile(
    r"(?:\b(?:no|not|without|nor|free of|negative for|absence of)\s+(?:\w+\s+){0,3}|"
    r"\b(?:risk|rates?|odds|chance|probability|reduc\w*|prevent\w*|lower\w*)\s+(?:of\s+|the\s+)?(?:\w+\s+)?)\Z",
    re.IGNORECASE)
_RECURRENT_AFTER_RE = re.compile(
    r"\A[\s-]*(?:score|risk|free|rates?|laryngeal|infections?|UTIs?|falls?|(?:pleural\s+)?effusions?|"
    r"pneumonias?|ascites|episodes?|fevers?|headaches?|seizures?)\b", re.IGNORECASE)
_NEW_DIAGNOSIS_RE = re.compile(
    r"\bnewly[- ]diagnosed\b|\bnew(?:ly)? diagnos[ie]s\b|\bde novo\b|"
    # "New acute myeloid leukemia in a 50-year-old": a new cancer, not a new lesion ("new liver metastases")
    r"\bnew\s+(?:(?!metasta)[\w-]+\s+){0,3}(?:cancer|carcinoma|adenocarcinoma|leuka?emia|lymphoma|myeloma|sarcoma|"
    r"melanoma|(?-i:AML|ALL|CLL|CML|DLBCL|NSCLC|SCLC))\b", re.IGNORECASE)


def _recurrent(text: str) -> bool | None:
    recurrent = any(not _RECURRENT_BEFORE_RE.search(text[max(0, m.start() - 40):m.start()])
                    and not _RECURRENT_AFTER_RE.match(text[m.end():m.end() + 20])
                    for m in _RECURRENT_RE.finditer(text))
    new = bool(_NEW_DIAGNOSIS_RE.search(text))
    return True if recurrent and not new else False if new and not recurrent else None


# Fitness for a treatment's intensity ("not a candidate for intensive chemotherapy", "transplant-ineligible",
# "cisplatin-ineligible", "fit for autologous stem cell transplant", "less-fit", "frail"): the same words in a note
# and in a guideline, for case fit (engine.casefit's "fitness" family). Each reading is (start, end, target,
# value): target "intensive" (intensive chemotherapy or induction; "standard induction chemotherapy" in AML),
# "transplant" (HCT, ASCT, stem cell transplant, high-dose therapy), "cisplatin", "chemotherapy" (any) or "general"
# (bare "less-fit", "frail", "unfit", "fit patients", "medically fit"); value "fit" or "unfit". Not "candidates for
# surgery/resection/radiation" (resectability and local therapy are not an intensity) nor "eligible for the trial".
_FIT_TARGET = (r"(?:(?:an?|the|any)\s+)?(?:(?:standard|conventional|intensive|high[- ]dose|induction|remission[- ]"
               r"induction|cisplatin(?:[- ]based)?|platinum[- ]based|multiagent|combination|aggressive|"
               r"allogeneic|autologous|allo(?:geneic)?[- ]?|auto(?:logous)?[- ]?|hematopoietic|haematopoietic|"
               r"stem[- ]cell|bone\s+marrow)\s+){0,4}"
               r"(?:chemotherapy|chemo|therapy|treatment|induction|regimens?|transplant(?:ation)?|HCT|HSCT|SCT|ASCT|"
               r"cisplatin)\b|\bintensive\b")
_FIT_WORD = r"(?:candidates?|eligible|fit|suitable|appropriate)"
FITNESS_RE = re.compile(
    r"(?P<unfit>\b(?:not|never|no\s+longer)\s+(?:(?:be|been|being|considered|deemed|thought|judged|felt|medically)\s+"
    r"){0,2}(?:an?\s+)?" + _FIT_WORD + r"\s+(?:for|to\s+(?:receive|undergo|tolerate))\s+(?P<t1>" + _FIT_TARGET + r")"
    r"|\b(?:ineligible|unfit|unsuitable|too\s+frail|unable\s+to\s+(?:tolerate|receive|undergo))[\"\u201d']?\s+"
    r"(?:for\s+|to\s+(?:receive|undergo|tolerate)\s+)?(?P<t2>" + _FIT_TARGET + r")"
    r"|\bnot\s+(?:an?\s+)?(?P<t3>transplant|HCT|HSCT|ASCT|SCT|cisplatin|intensive[- ]chemotherapy)\s+candidates?\b"
    r"|\b(?P<t4>transplant|HCT|HSCT|ASCT|SCT|cisplatin|intensive[- ]therapy|intensive[- ]chemotherapy)[- ]"
    r"(?:ineligible|unfit|unsuitable)\b"
    r"|\b(?:less[- ]fit|frail|unfit)\b(?![\"\u201d']?\s+(?:for|to)\b))"
    r"|(?P<fit>\b" + _FIT_WORD + r"\s+(?:for|to\s+(?:receive|undergo|tolerate))\s+(?P<t5>" + _FIT_TARGET + r")"
    r"|\b(?:able|well\s+enough)\s+to\s+(?:tolerate|receive|undergo)\s+(?P<t6>" + _FIT_TARGET + r")"
    r"|\b(?:an?\s+)?(?P<t7>transplant|HCT|HSCT|ASCT|SCT|cisplatin)\s+candidates?\b"
    r"|\b(?P<t8>transplant|HCT|HSCT|ASCT|SCT|cisplatin)[- ](?:eligible|fit)\b"
    r"|\b(?:medically\s+fit|fit\s+(?:patients|adults|older|elderly|individuals))\b(?!\s+for\b))", re.IGNORECASE)
_CRCL_RE = re.compile(
    r"\b(?:creatinine\s+clearance|CrCl|(?-i:CLcr))\s*(?:of|was|is|:|=)?\s*(?P<op><=|>=|<|>|≤|≥|less\s+than|below|"
    r"under|greater\s+than|above|over|at\s+least)?\s*(?P<n>\d{1,3})(?!\.?\d)\s*(?:mL|ml|cc)\s*/\s*min", re.IGNORECASE)
_FIT_NEGATED_RE = re.compile(r"\b(?:not|never|in)\s*(?:(?:be|been|considered|deemed|an?)\s+){0,2}\Z|-\Z", re.IGNORECASE)
_FIT_NOT_A_TARGET_RE = re.compile(r"\b(?:surgery|surgical|resection|radiation|radiotherapy|trial|study)\b",
                                  re.IGNORECASE)


def _fitness_target(words: str | None) -> str | None:
    """The intensity a fitness phrase's object names (see FITNESS_RE); None for no treatment intensity."""
    if words is None:
        return "general"  # "less-fit", "frail", "fit patients": fitness as a whole
    w = words.lower()
    if "cisplatin" in w:
        return "cisplatin"
    if re.search(r"transplant|\bh?s?ct\b|asct|high[- ]dose|stem[- ]cell|marrow", w):
        return "transplant"
    if re.search(r"intensive|standard|conventional|induction|aggressive|multiagent", w):
        return "intensive"
    if re.search(r"chemo", w) and not re.search(r"platinum", w):
        return "chemotherapy"
    return None  # "platinum-based chemotherapy", "treatment", "therapy": no intensity to judge


# A risk group, on one of two scales: "low-risk", "intermediate-risk", "high-risk", "low- to intermediate-risk"
# (APL, neuroblastoma, prostate, MDS, stage II colon "high-risk features"; "favorable/good-risk" is low, "poor/
# adverse-risk" high: IMDC, ELN) and "favorable"/"unfavorable" ("Early Unfavorable Classic HL", "favorable
# histology"). Not a risk of something ("high risk of
# recurrence", "at low risk for"), "high-risk HPV", a comparison ("more favorable", "a favorable outcome"), or a
# negated one ("no high-risk features"). The QA pass's "stage IIA classic Hodgkin lymphoma, favorable" had the
# early unfavorable options item second, its "APL, WBC 4,000 (low risk)" the high-risk induction.
RISK_SCALES = {"low": "risk", "intermediate": "risk", "high": "risk", "favorable": "favor", "unfavorable": "favor"}
_GROUP = r"low|intermediate|high|good|poor|adverse|(?:un)?favou?rable"
_RISK_RE = re.compile(
    r"\b(?P<v>" + _GROUP + r")(?:-?\s*(?:to|or|and|/)\s*(?P<w>" + _GROUP + r"))?[- ]risk\b"
    r"(?!\s+(?:of|for|to)\b)(?![- ]HPV\b)", re.IGNORECASE)
# a risk group's other names: IMDC's and ELN's "favorable/good" and "poor/adverse" risk are the low and high groups
_SAME_GROUP = {"good": "low", "favorable": "low", "favourable": "low", "poor": "high", "adverse": "high",
               "unfavorable": "high", "unfavourable": "high"}
_FAVOR_RE = re.compile(
    r"\b(?:(?P<early>early)[- ])?(?P<u>un)?favou?rable\b(?![- ]risk\b)"
    r"(?P<after>(?=[- ](?:histology|disease|group|prognosis|prognostic|classic|HL|Hodgkin|cytogenetics|karyotype|"
    r"features?|patients|genetics?)\b)|(?=\s*[,;)]))?", re.IGNORECASE)
_RISK_NEGATED_RE = re.compile(r"\b(?:no|not|non|without|nor|lack\s+of|absence\s+of)\s+(?:\w+\s+)?\Z|\bnon[-\u2013]\Z|"
                              r"\b(?:more|less|most|least|equally|as|similarly|very|a|an)\s+\Z", re.IGNORECASE)


def risk_readings(text: str) -> list[tuple[int, int, tuple[str, ...]]]:
    """(start, end, risk groups) for each risk group ``text`` states (alternatives: "low- to intermediate-risk")."""
    out: list[tuple[int, int, tuple[str, ...]]] = []
    for m in _RISK_RE.finditer(text):
        if not _RISK_NEGATED_RE.search(text, max(0, m.start() - 25), m.start()):
            values = [_SAME_GROUP.get(g, g) for g in [m.group("v").lower()] + ([m.group("w").lower()]
                                                                               if m.group("w") else [])]
            if len(values) == 2 and {"low", "high"} == set(values):  # "low- to high-risk": every group
                values.insert(1, "intermediate")
            out.append((m.start(), m.end(), tuple(values)))
    for m in _FAVOR_RE.finditer(text):
        risky = m.group("early") or m.group("after") is not None
        if risky and (m.group("early") or not _RISK_NEGATED_RE.search(text, max(0, m.start() - 25), m.start())):
            out.append((m.start(), m.end(), ("unfavorable" if m.group("u") else "favorable",)))
    return sorted(out)


# Child-Pugh class ("Child-Pugh B8", "Child-Pugh class A, B, and C cirrhosis", "Child-Pugh class B and class C"):
# PDQ's HCC trials were of class A liver function; a class B case had them released unqualified (QA session 17)
_CHILD_PUGH_RE = re.compile(
    r"\bChild[- ]Pugh(?:[- ]Turcotte)?\s+(?:class\s+|score\s+|grade\s+)?(?P<a>[ABC])(?:\d{1,2})?\b"
    r"(?P<more>(?:\s*(?:,|and|or|to|-|/)\s*(?:and\s+|or\s+)?(?:class\s+)?[ABC](?:\d{1,2})?\b)*)")


def child_pugh_readings(text: str) -> list[tuple[int, int, str]]:
    """(start, end, classes) for each Child-Pugh class ``text`` states ("AB" for "class A or B")."""
    return [(m.start(), m.end(), "".join(dict.fromkeys(m.group("a") + "".join(re.findall(r"\b([ABC])(?:\d{1,2})?\b",
                                                                                     m.group("more"))))))
            for m in _CHILD_PUGH_RE.finditer(text)]


# Statuses a guideline divides patients by, each judged against the note's (engine.casefit): prostate cancer's
# castration status ("castration-resistant", "hormone-refractory", "mCRPC" vs "castration-sensitive",
# "hormone-naive", "mHSPC": an mCRPC case had hormone-sensitive lines released), HPV/p16 ("HPV-positive
# oropharyngeal" vs "p16-negative": an HPV-negative case had HPV-positive statements) and platinum sensitivity
# ("platinum-sensitive recurrence" vs "platinum-resistant/-refractory": a platinum-resistant ovarian case had
# platinum-sensitive regimens drafted). name -> (value, pattern) pairs, and the value a note naming both has now
# (resistance follows sensitivity: "prior docetaxel for castration-sensitive disease"); None: neither is read.
STATUSES: dict[str, tuple[tuple[tuple[str, re.Pattern[str]], ...], str | None]] = {
    "castration": ((
        ("resistant", re.compile(r"\b(?:(?:castrat(?:ion|e)|hormone|androgen)[- ](?:resistant|refractory|independent)|"
                                 r"(?-i:m?CRPC))\b", re.IGNORECASE)),
        ("sensitive", re.compile(r"\b(?:(?:castrat(?:ion|e)|hormone|androgen)[- ](?:sensitive|na[iï]ve|dependent)|"
                                 r"(?-i:m?[CH]SPC))\b", re.IGNORECASE))), "resistant"),
    "HPV": ((
        ("positive", re.compile(r"\b(?:HPV|p16|human papillomavirus)\)?(?:[- ]?(?:positive|associated|related|"
                                r"driven)\b|\+)", re.IGNORECASE)),
        ("negative", re.compile(r"\b(?:HPV|p16|human papillomavirus)\)?[- ]?(?:negative|unrelated|independent)\b",
                                re.IGNORECASE))), None),
    "platinum": ((
        ("resistant", re.compile(r"\bplatinum[- ](?:resistant|refractory)\b", re.IGNORECASE)),
        ("sensitive", re.compile(r"\bplatinum[- ]sensitive\b", re.IGNORECASE))), "resistant"),
    # differentiated thyroid cancer's response to radioactive iodine (PDQ: "Treatment options for iodine-resistant
    # thyroid cancer include:")
    "iodine": ((
        ("resistant", re.compile(r"\b(?:radioactive[- ]iodine|radio-?iodine|iodine|RAI|I-?131|131I)[- ]?(?:refractory|"
                                 r"resistant|non-?avid)\b", re.IGNORECASE)),
        ("sensitive", re.compile(r"\b(?:radioactive[- ]iodine|radio-?iodine|iodine|RAI)[- ]?(?:sensitive|avid|"
                                 r"responsive)\b", re.IGNORECASE))), "resistant"),
}


def status_readings(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, status name, value) for each ``STATUSES`` status ``text`` states."""
    return sorted((m.start(), m.end(), name, value) for name, (pairs, _) in STATUSES.items()
                  for value, rx in pairs for m in rx.finditer(text))


_POSSESSIVE_BEFORE_RE = re.compile(r"\b(?:her|his|their|the\s+patient's)\s+(?:[\w-]+\s+){0,2}\Z", re.IGNORECASE)


def _statuses(text: str) -> tuple[str, ...]:
    """The statuses a note states, "name:value" ("castration:resistant"), its questions aside."""
    said: dict[str, set[str]] = {}
    for _, _, name, value in status_readings(statement_text(text)):
        said.setdefault(name, set()).add(value)
    for question in (s for s in _SENTENCE_RE.split(text) if s.rstrip().endswith("?")):
        # a status a question gives the patient's disease ("What is appropriate for her platinum-resistant
        # recurrence?" after "A platinum-sensitive recurrence in 2023 ...") states it; "Is it platinum-resistant?" asks
        for start, _, name, value in status_readings(question):
            if _POSSESSIVE_BEFORE_RE.search(question, max(0, start - 30), start):
                said.setdefault(name, set()).add(value)
    out = []
    for name, values in said.items():
        now = next(iter(values)) if len(values) == 1 else STATUSES[name][1]
        if now:
            out.append(f"{name}:{now}")
    return tuple(out)


def _risk(text: str) -> tuple[str, ...]:
    """The risk groups a note states, as "scale:group" ("risk:low", "favor:favorable"), its questions aside."""
    return tuple(dict.fromkeys(f"{RISK_SCALES[v]}:{v}" for _, _, values in risk_readings(statement_text(text))
                               for v in values))


def fitness_readings(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, target, value) for each fitness statement in ``text``: value "fit" or "unfit" (FITNESS_RE)."""
    out: list[tuple[int, int, str, str]] = []
    for m in FITNESS_RE.finditer(text.translate(DASHES)):
        fit = m.group("fit") is not None
        if fit and _FIT_NEGATED_RE.search(text, max(0, m.start() - 30), m.start()):
            continue  # "not eligible ..." is read by the unfit branch; "ineligible", "non-transplant": not fit
        words = next((m.group(g) for g in ("t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8") if m.group(g)), None)
        target = _fitness_target(words)
        if target is None or _FIT_NOT_A_TARGET_RE.search(m.group(0)):
            continue
        out.append((m.start(), m.end(), target, "fit" if fit else "unfit"))
    for m in _CRCL_RE.finditer(text):
        # kidney function for cisplatin (the usual ineligibility criterion: creatinine clearance below 60 mL/min): a
        # note's value ("creatinine clearance 35 mL/min") or a population's bound ("creatinine clearance < 60")
        n, op = int(m.group("n")), (m.group("op") or "").lower()
        if op in ("<", "<=", "≤", "less than", "below", "under") and n <= 60 or not op and n < 60:
            out.append((m.start(), m.end(), "cisplatin", "unfit"))
        elif op in (">", ">=", "≥", "greater than", "above", "over", "at least") and n >= 60:
            out.append((m.start(), m.end(), "cisplatin", "fit"))
    return sorted(out)


def _fitness(text: str) -> tuple[str, ...]:
    """The note's fitness statements as written ("not a candidate for intensive chemotherapy"), outside questions
    ("Is he a transplant candidate?" asks)."""
    statements = statement_text(text)
    out: list[str] = []
    for a, b, _, value in fitness_readings(statements):
        said = " ".join(statements[a:b].split())
        # a kidney value says what it means ("cisplatin-ineligible (creatinine clearance 35 mL/min)"): shown, queried
        # and read back as such
        out.append(f"cisplatin-ineligible ({said})" if value == "unfit" and _CRCL_RE.fullmatch(said) else said)
    return tuple(dict.fromkeys(out))


# The patient's age: "78-year-old", "78 yo", "78 years old", "aged 78", "age: 78"; an age the redactor removed
# ("[AGE_1]-year-old": Safe Harbor takes ages over 89) is 90. The first one written is the patient's.
_AGE_NUM = r"(?:(?P<n>\d{1,3})|(?P<redacted>\[AGE_\d+\]))"
_CASE_AGE_RE = re.compile(
    r"(?<![\w.\[])" + _AGE_NUM + r"[ ]?-?[ ]?(?:years?[ -]old|year-old|yrs?[ -]old|y\.?o\.?(?![\w])|y/o)|"
    r"\b(?:aged|age[: ]+|age of)\s*" + _AGE_NUM.replace("?P<n>", "?P<n2>").replace("?P<redacted>", "?P<redacted2>")
    + r"(?!\d|\.\d|\s*(?:%|kg|months?|weeks?|days?|mg))", re.IGNORECASE)


# a note's shorthand "64F", "72 M", "58yo M" is read too: two digits and a sex letter standing alone ("64F
# with breast cancer after lumpectomy" had no age); not "T2N1M0", "3M" (months) or "12F" French catheters
_SHORT_AGE_RE = re.compile(r"(?<![\w.\[/-])(?:(?P<n>[1-9]\d)|(?P<redacted>\[AGE_\d+\]))[ ]?[MF](?![\w/-])")


def _age(text: str) -> int | None:
    m = _CASE_AGE_RE.search(text)
    if m is None:
        short = _SHORT_AGE_RE.search(text)
        if short and short.group("redacted"):
            return 90  # "[AGE_1]M": an age over 89, redacted
        return int(short.group("n")) if short and 18 <= int(short.group("n")) < 100 else None
    if m.group("redacted") or m.group("redacted2"):
        return 90
    age = int(m.group("n") or m.group("n2"))
    return age if 0 < age < 120 else None


# Menopausal status, on which breast cancer's endocrine therapy turns ("postmenopausal women": an aromatase
# inhibitor alone; "premenopausal women": with ovarian suppression): "postmenopausal", "post-menopausal", "after
# menopause" (post); "premenopausal", "perimenopausal" (pre: ovarian function may persist). Read alike in a note and
# a guideline sentence; not a hormone therapy, a symptom or a risk ("postmenopausal hormone therapy",
# "postmenopausal bleeding", "postmenopausal serum androgens"), nor negated ("not yet postmenopausal").
_MENOPAUSE_RE = re.compile(
    r"\b(?:(?P<post>post-?\s?menopausal|after\s+(?:the\s+)?menopause)|(?P<pre>(?:pre|peri)-?\s?menopausal))\b"
    r"(?!\s+(?:hormones?|estrogens?|oestrogens?|bleeding|serum|osteoporosis|bone|symptoms?|HRT|use)\b)",
    re.IGNORECASE)
_MENOPAUSE_NEGATED_RE = re.compile(r"\b(?:not|nor|never)\s+(?:(?:yet|been|become|considered)\s+){0,2}\Z",
                                   re.IGNORECASE)
# The patient's sex as a note states it, for the menopausal populations (a man's breast cancer is of neither): a
# word ("woman", "male", the shorthand "64F"), else the pronouns when they agree ("she", "her"); None otherwise
_SEX_WORD_RE = re.compile(r"\b(?:(?P<f>woman|female|lady)|(?P<m>man|male|gentleman))\b", re.IGNORECASE)
_SHORT_SEX_RE = re.compile(
    r"(?<![\w.\[/-])(?:1[89]|[2-9]\d|\[AGE_\d+\])\s?(?:yo\s?|y/o\s?|y\.o\.\s?)?(?P<s>[MF])(?![\w/-])")
_PRONOUN_RE = re.compile(r"\b(?:(?P<f>she|her|hers|herself)|(?P<m>he|his|him|himself))\b", re.IGNORECASE)
# A woman of 60 or more is postmenopausal (NCCN's definition of menopause); so is one after both ovaries were
# removed
_OOPHORECTOMY_RE = re.compile(r"\bbilateral\s+(?:salpingo-?)?oophorectomy\b|\bBSO\b", re.IGNORECASE)
_MENOPAUSE_FROM_AGE = 60


def menopause_readings(text: str) -> list[tuple[int, int, str]]:
    """(start, end, "post"/"pre") for each menopausal status ``text`` states."""
    return [(m.start(), m.end(), "post" if m.group("post") else "pre") for m in _MENOPAUSE_RE.finditer(text)
            if not _MENOPAUSE_NEGATED_RE.search(text, max(0, m.start() - 40), m.start())]


def _sex(text: str) -> str | None:
    """"female" / "male" as the note's words say (a word, else the pronouns; None when neither or both)."""
    said = {"female" if m.group("f") else "male" for m in _SEX_WORD_RE.finditer(text)}
    said |= {"female" if m.group("s") == "F" else "male" for m in _SHORT_SEX_RE.finditer(text)}
    if not said:
        said = {"female" if m.group("f") else "male" for m in _PRONOUN_RE.finditer(text)}
    return said.pop() if len(said) == 1 else None


def _menopause(text: str, age: int | None, sex: str | None) -> str | None:
    """The case's menopausal status: stated (the last statement wins: "premenopausal at diagnosis, now
    postmenopausal"), else "post" for a woman of 60 or more or after a bilateral oophorectomy; None for a man or
    when nothing says."""
    if sex == "male":
        return None
    said = [value for _, _, value in menopause_readings(statement_text(text))]
    if said:
        return said[-1]
    if sex == "female" and (age is not None and age >= _MENOPAUSE_FROM_AGE or _OOPHORECTOMY_RE.search(text)):
        return "post"
    return None


# An age a guideline sentence states for its population, for case fit (engine.casefit's "age" family): (start, end,
# lo, hi, kind) with kind "" for a number ("patients older than 60 years", "Patients with HL who are older than 60
# years" (a QA pass's 26-year-old was released its line), "patients aged 70 years or older",
# "aged 65 to 79 years", "aged ≥80 years", "patients (<60 years") and "older" / "younger" for the vague words
# ("older patients", "elderly patients", "the elderly", "younger adults"). Not an age as a factor or a statistic
# ("age older than 60 years" among prognostic factors, "the median age was 66 years"): a population word or "aged"
# must come first.
_POPULATION = r"(?:patients|adults|women|men|people|persons|individuals|those|survivors)"
_AGE_POP_RE = re.compile(
    r"\b" + _POPULATION + r"\s+(?:with\s+(?:[\w/-]+\s+){1,4}?(?=who\s))?(?:(?:who\s+(?:are|were)|aged)\s+)?"
    r"(?P<cmp>older|younger)\s+than\s+(?P<a>\d{2})\b"
    r"|\b(?:" + _POPULATION + r"\s+)?aged\s+(?P<b>\d{2})\s*(?:years?\s+)?(?:or|and)\s+(?P<dir>older|above|over|"
    r"younger|under|below)\b"
    r"|\b" + _POPULATION + r"\s+(?P<c>\d{2})\s+years?\s+(?:or|and)\s+(?P<dir2>older|above|over|younger|under|below)\b"
    r"|\baged\s+(?P<lo>\d{2})\s*(?:years?\s*)?(?:to|through|[-–])\s*(?P<hi>\d{2})\b"
    r"|(?:\baged|\b" + _POPULATION + r"\s*\(\s*(?:aged\s*)?)\s*(?P<op>≥|>=|>|≤|<=|<)\s*(?P<d>\d{2})\b"
    r"|\b(?P<vague>older|elderly|younger)\s+" + _POPULATION + r"\b|\bthe\s+(?P<vague2>elderly)\b", re.IGNORECASE)


_AGE_UNIT_RE = re.compile(r"\s*(?:months?|mo\b|weeks?|wk|days?)", re.IGNORECASE)
_AGE_BOUND_RE = re.compile(r"\s*\(\s*(?:aged\s*)?(?P<op>≥|>=|>|≤|<=|<)\s*(?P<d>\d{2})\b")


def age_readings(text: str) -> list[tuple[int, int, int, int, str]]:
    """(start, end, lo, hi, kind) for each population age in ``text`` (see _AGE_POP_RE); ages in whole years."""
    out: list[tuple[int, int, int, int, str]] = []
    taken = 0
    for m in _AGE_POP_RE.finditer(text):
        g = m.groupdict()
        if m.start() < taken or _AGE_UNIT_RE.match(text, m.end()):
            continue  # read with the words before it; "infants aged <12 months": not years
        end, op, a = m.end(), g["op"], g["d"]
        if g["vague"] or g["vague2"]:
            bound = _AGE_BOUND_RE.match(text, m.end())  # "older patients (aged ≥60 years)": what "older" means here
            if bound is None or _AGE_UNIT_RE.match(text, bound.end()):
                kind = "younger" if (g["vague"] or "").lower() == "younger" else "older"
                out.append((m.start(), m.end(), 0, 0, kind))
                continue
            end, op, a = bound.end(), bound.group("op"), bound.group("d")
        if op:
            n = int(a)
            lo, hi = {"≥": (n, 120), ">=": (n, 120), ">": (n + 1, 120),
                      "≤": (0, n), "<=": (0, n), "<": (0, n - 1)}[op]
        elif g["cmp"]:
            n = int(g["a"])
            lo, hi = (n + 1, 120) if g["cmp"].lower() == "older" else (0, n - 1)
        elif g["b"] or g["c"]:
            n, way = int(g["b"] or g["c"]), (g["dir"] or g["dir2"]).lower()
            lo, hi = (n, 120) if way in ("older", "above", "over") else (0, n)
        else:
            lo, hi = int(g["lo"]), int(g["hi"])
            if lo > hi:
                continue
        out.append((m.start(), end, lo, hi, ""))
        taken = end
    return out


# Sites within the oral cavity and the larynx, which PDQ treats apart ("Treatment Options for Small Lesions of the
# Floor of the Mouth", "Treatment of Stage III Laryngeal Cancer > Supraglottis"), and the two Hodgkin lymphomas it
# treats apart ("Treatment of Advanced Classic HL", "Treatment of Nodular Lymphocyte-Predominant HL (NLPHL)": the
# audit's classic HL case was offered "For patients with advanced-stage NLPHL, ... R-CHOP ..."), and APL among the
# AML (the QA pass's APL case was offered AML's "too frail for intensive induction" lines): read from a note
# of those cancers and from guideline headings, for case fit (engine.casefit's "subsite" family). Not "Lip and Oral
# Cavity" (the whole summary's name) nor the base of the tongue (the oropharynx).
SUBSITES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(rx, re.IGNORECASE)) for name, rx in (
    ("supraglottis", r"\bsupraglott\w*"),
    ("glottis", r"(?<!supra)(?<!sub)\bglott(?:is|ic)\b|\b(?:true\s+)?vocal\s+cords?\b"),
    ("subglottis", r"\bsubglott\w*"),
    ("lip", r"\blips?\b(?!\s+and\s+oral)"),
    ("tongue", r"(?<!base of the )(?<!base of )\b(?:anterior\s+|oral\s+|mobile\s+|lateral\s+)?tongue\b(?![\s-]+base)"),
    ("floor of mouth", r"\bfloor\s+of\s+(?:the\s+)?mouth\b"),
    ("buccal mucosa", r"\bbuccal\b"),
    ("upper gingiva", r"\bupper\s+gingiv\w*|\bmaxillary\s+(?:gingiv\w*|alveol\w*)"),
    ("lower gingiva", r"\blower\s+gingiv\w*|\bmandibular\s+(?:gingiv\w*|alveol\w*)"),
    ("hard palate", r"\bhard\s+palate\b"),
    ("retromolar trigone", r"\bretromolar\b"),
    ("classic HL", r"\bclassic(?:al)?\s+(?:HL|Hodgkin)\b|\bcHL\b"),
    ("NLPHL", r"\bNLPHL\b|\bnodular\s+lymphocyte[\s\-\u2013]+predominant\b"),
    # acute promyelocytic leukemia, treated apart from other AML (ATRA and arsenic trioxide)
    ("APL", r"(?-i:\bAPL\b)|\bpromyelocytic\b|" + _APL_FUSION),
    # the thyroid cancers PDQ treats apart (a papillary case had "External-beam radiation therapy" of anaplastic
    # thyroid cancer released)
    ("differentiated thyroid", r"\b(?:papillary|follicular|(?:well[- ])?differentiated|h[uü]rthle[- ]cell|oncocytic)"
                               r"(?:\s+(?:and|or)\s+(?:papillary|follicular))?\s+thyroid\b"),
    ("medullary thyroid", r"\bmedullary\s+thyroid\b|(?-i:\bMTC\b)"),
    ("anaplastic thyroid", r"\banaplastic\s+thyroid\b"),
    # testicular germ cell tumours: a stage IA seminoma had "Stage I Nonseminoma" lines (RPLND) released
    ("nonseminoma", r"\bnon-?\s?seminoma(?:s|tous)?\b|(?-i:\bNSGCTs?\b)|\bembryonal\s+carcinoma\b|\byolk\s+sac\b|"
                    r"\bchoriocarcinoma\b|\bteratoma\b"),
    ("seminoma", r"(?<!non-)(?<!non)(?<!non )\bseminoma(?:s|tous)?\b"),
    # mesothelioma's sites and ovarian serous carcinoma's grades, which PDQ treats apart (a QA pass's pleural case
    # was offered "Of the 73 patients with malignant peritoneal mesothelioma ...", a high-grade serous one "As LGSC
    # is relatively chemoresistant ...")
    ("pleural mesothelioma", r"\bpleural\s+(?:malignant\s+)?mesotheliomas?\b|\bmesothelioma\s+of\s+the\s+pleura\b|"
                             r"(?-i:\bMPM\b)"),
    ("peritoneal mesothelioma", r"\bperitoneal\s+(?:malignant\s+)?mesotheliomas?\b|\bmesothelioma\s+of\s+the\s+"
                                r"peritoneum\b"),
    ("low-grade serous", r"\blow[- ]grade\s+serous\b|(?-i:\bLGSO?C\b)"),
    ("high-grade serous", r"\bhigh[- ]grade\s+serous\b|(?-i:\bHGSO?C\b)"),
))
_SUBSITE_CANCERS = frozenset({"oral cavity cancer", "laryngeal cancer", "Hodgkin lymphoma", "acute myeloid leukemia",
                              "thyroid cancer", "testicular cancer", "mesothelioma", "ovarian cancer"})


def subsite_readings(text: str) -> list[str]:
    """The oral cavity and larynx sites and Hodgkin lymphoma types ``text`` names (``SUBSITES``), in table order."""
    return [name for name, rx in SUBSITES if rx.search(text)]


def _case_subsites(text: str, cancer_type: str | None) -> tuple[str, ...]:
    """The note's ``SUBSITES`` (for the cancers read so); a mixed germ cell tumour with any nonseminomatous part is
    treated as a nonseminoma."""
    if cancer_type not in _SUBSITE_CANCERS:
        return ()
    sites = subsite_readings(text)
    return tuple(x for x in sites if not (x == "seminoma" and "nonseminoma" in sites))


def is_rare(cancer_type: str | None, rare_cancers: Iterable[str]) -> bool:
    if not cancer_type:
        return False
    for keyword in rare_cancers:
        # a long keyword may end a word: "sarcoma" in "osteosarcoma", "rhabdomyosarcoma" (a QA pass's 15-year-old
        # with osteosarcoma scored 0); not a short one ("anal" in "canal")
        start = "" if len(keyword) >= 7 else r"\b"
        pattern = r"(?<!non-)(?<!non )" + start + re.escape(keyword) + r"\b"
        if re.search(pattern, cancer_type, re.IGNORECASE):
            return True
    return False


# A lung cancer the note shows is non-small cell: its histology or an NSCLC driver ("CT showed a left lower lobe
# mass ...; biopsy confirmed adenocarcinoma. ... MET exon 14 skipping": PDQ's NSCLC summary, not lung cancer at large)
_NSCLC_CUE_RE = re.compile(r"\badenocarcinoma\b|\bsquamous\b|\blarge[- ]cell carcinoma\b|\b(?:(?-i:EGFR|ALK|ROS1|RET|"
                           r"NTRK)|MET\s+exon\s*14|KRAS\s+G12C|BRAF\s+V600E)\b", re.IGNORECASE)


def extract_facts(text: str, *, genes: Iterable[str], treatment_keywords: Iterable[str],
                  rare_cancers: Iterable[str]) -> CaseFacts:
    text = text.translate(DASHES)
    cancer_type = _best_cancer_type(text)
    sex = _sex(text)
    if cancer_type == "breast cancer" and sex == "male":
        cancer_type = "male breast cancer"
    if cancer_type == "lung cancer" and _NSCLC_CUE_RE.search(text):
        cancer_type = "non-small cell lung cancer"
    early = _early_progression(text)
    statuses = _statuses(text)
    if any(CYTOTOXICS[drug] == PLATINUM for drug in early):  # back within six months of platinum: resistant now
        statuses = tuple(x for x in statuses if not x.startswith(PLATINUM + ":")) + (f"{PLATINUM}:resistant",)
    stage, stage_text = _stage(text, cancer_type, statuses)
    markers, altered = _asked_markers_dropped(text, genes)
    unknown_primary = bool(_UNKNOWN_PRIMARY_RE.search(text)) or cancer_type == "cancer of unknown primary"
    line, first_line_done = _line_reading(text, cancer_type)
    if line is None and early:  # progressed on a regimen or soon after it: the next line ("platinum-resistant")
        line = "later"
    return CaseFacts(
        cancer_type=cancer_type,
        stage=stage,
        stage_text=stage_text,
        markers=markers,
        genes=altered,
        prior_treatments=_treatments(text, treatment_keywords),
        performance_status=_performance(text),
        unknown_primary=unknown_primary,
        rare=is_rare(cancer_type, rare_cancers),
        line=line,
        first_line_done=first_line_done,
        prior_lines=_prior_lines(text) if line == "later" else None,
        progressed_after=tuple(dict.fromkeys(_progressed_after(text, cancer_type) + early)),
        drugs_named=tuple(dict.fromkeys(key for _, _, key in drug_spans(statement_text(text)))),
        avoided_drugs=(avoided := _avoided_drugs(text)) + _resisted_by_genotype(
            text, {x.split(": ", 1)[0] for x in avoided}),
        recurrent=_recurrent(text),
        fitness=_fitness(text),
        risk=_risk(text),
        statuses=statuses,
        child_pugh=next((c for _, _, c in child_pugh_readings(statement_text(text)) if len(c) == 1), None),
        age=(age := _age(text)),
        subsites=_case_subsites(text, cancer_type),
        sex=sex,
        menopause=_menopause(text, age, sex),
    )


def merge_facts(earlier: CaseFacts, later: CaseFacts) -> CaseFacts:
    """A follow-up turn ("what about second line?") keeps what the thread already established. Stage: the higher
    of the two (disease progresses), except that a stage the new turn states in words replaces one the thread only
    derived from TNM or "metastatic" ("cT2N1M0", read as III, then "stage IIB": IIB). The extent words are kept
    apart from the stage: resectability ("unresectable", "resected", "resectable") and bladder invasion each come
    from the latest turn that states them, else from the earlier one (a later "stage IIIB" does not drop an
    earlier "unresectable"; a later "now resected" replaces it)."""
    (early_words, early_extent), (late_words, late_extent) = split_extent(earlier.stage_text), \
        split_extent(later.stage_text)
    stage_pick = max((earlier.stage, early_words), (later.stage, late_words),
                     key=lambda s: _STAGE_ORDER.get(s[0] or "", -1))
    if later.stage and _stated_stage(late_words) and not _stated_stage(early_words):
        stage_pick = (later.stage, late_words)
    extent: list[str] = []
    for kind in (lambda e: "invasive" not in e, lambda e: "invasive" in e):  # resectability, then invasion
        extent += [e for e in late_extent if kind(e)] or [e for e in early_extent if kind(e)]
    if stage_pick[0]:  # a stage stated since (or before) says more than "localized"
        extent = [e for e in extent if e != "localized"]
    stage_text = ", ".join([stage_pick[1], *extent] if stage_pick[1] else extent) or None
    return CaseFacts(
        cancer_type=later.cancer_type or earlier.cancer_type,
        stage=stage_pick[0],
        stage_text=stage_text,
        # a marker the later turn repeats takes its place: case fit reads the last of conflicting ones ("MSI-H",
        # then "not MSI-H", then "MSI-H" again: deficient)
        markers=tuple(dict.fromkeys([m for m in earlier.markers if m not in later.markers] + list(later.markers))),
        genes=tuple(dict.fromkeys(earlier.genes + later.genes)),
        prior_treatments=tuple(dict.fromkeys(earlier.prior_treatments + later.prior_treatments)),
        performance_status=later.performance_status or earlier.performance_status,
        unknown_primary=earlier.unknown_primary or later.unknown_primary,
        rare=earlier.rare or later.rare,
        line=later.line or earlier.line,  # "what about second line?" after an untreated case: later
        first_line_done=(later.line or earlier.line) == "later" and (earlier.first_line_done or later.first_line_done),
        prior_lines=later.prior_lines if later.prior_lines is not None else earlier.prior_lines,
        progressed_after=tuple(dict.fromkeys(earlier.progressed_after + later.progressed_after)),
        drugs_named=tuple(dict.fromkeys(earlier.drugs_named + later.drugs_named)),
        avoided_drugs=tuple(dict.fromkeys(earlier.avoided_drugs + later.avoided_drugs)),
        recurrent=later.recurrent if later.recurrent is not None else earlier.recurrent,
        fitness=later.fitness or earlier.fitness,  # the latest turn that states fitness ("now fit for transplant")
        risk=later.risk or earlier.risk,
        statuses=tuple({x.split(":")[0]: x for x in earlier.statuses + later.statuses}.values()),  # the latest
        child_pugh=later.child_pugh or earlier.child_pugh,
        age=later.age or earlier.age,
        subsites=later.subsites or earlier.subsites,
        sex=later.sex or earlier.sex,
        menopause=later.menopause or earlier.menopause,
    )
