"""Deterministic, offline PHI redaction (HIPAA Safe Harbor oriented).

Pure Python + ``re`` + stdlib; no network, no models.  ``redact(text)`` returns a :class:`Redaction`
whose ``text`` has every detected identifier replaced by a typed placeholder such as ``[PERSON_1]``.
Placeholders are stable within one call: the same surface string (and, for people, a bare surname or
first name of someone already seen in full) gets the same placeholder.

Types: PERSON, DATE, AGE (>89 only), ID, PHONE, EMAIL, URL, IP, SSN, ADDRESS, LOCATION, ORGANIZATION.

Deliberately kept (not identifiers under Safe Harbor, or clinical content):
  * a bare year standing alone, outside a calendar date ("relapsed in 2019", "diagnosed in 1960"): Safe Harbor
    permits the year of a date, and oncology prose needs years (approval years, trial names, citations).  Not
    kept: a year or decade of birth after a birth cue ("born in 1929", "DOB 1931", "YOB 1929", "DOB: early
    1930s", "In 1929 she was born": it may show an age over 89), a year given with the age at that time
    ("at age 40 in 1960", "in 1960, aged 40", "Tonsillectomy 1938 at age 8", "in 1950 when she was 20": that
    is a year of birth too) and
    the year inside any calendar date ("March 2021", "3/4/2021": the whole date goes).  The redactor does not know
    today's date, so a free year whose link to an age is looser ("diagnosed in 1960 ... she was 40 then") stays;
  * weekday names, ages up to 89 ("72-year-old");
  * drug names, genes/variants, stages, doses, lab values, trial ids (NCT...), cancer eponyms
    ("Hodgkin lymphoma", "Ewing sarcoma", "Wilms tumor", "Merkel cell");
  * titles and credentials around a name ("Dr. [PERSON_1]", "[PERSON_2], MD");
  * countries and US states on their own (inside an address block the whole block is redacted).

How it works (all rule based):
  1. regular expressions for structured identifiers (email, URL, IP, SSN, dates, phones, MAC addresses, IDs (after
     a label such as MRN, SN, S/N or username, a licence number after its state: "License MA S1234567", Medicare
     MBIs "1EG4-TE5-MK73"), ZIP codes,
     street addresses incl. international forms and multi-line address blocks (redacted line by line, each line
     with the block's placeholder, so line breaks and quoting stay), ages > 89: "94-year-old",
     "94 yo", "aged 94", "age: 94", "he is 94", "ninety-four-year-old", not "he is 94 kg"; with a sex: "92M",
     "HPI: 93 M", "Age/Sex: 92/M", "F, 95,", not "Tmax 99 F", "95M reads"), record numbers after "Acc#",
     "HAR", "Path #",
     a "/" between phone numbers ("617.555.0199 / +1 617 555 0123", not "mg/m2"), pager numbers and phone
     extensions after their label ("pager 4417", "pgr #2231", "ext. 3321", "x4521"; not "extranodal extension 2
     mm", "PgR 150", "x400 magnification");
  2. token rules for names: titles (Dr./Mr./Pt. ..., and a lower-case or ALL-CAPS name after a title in
     mixed-case text: "dr. kowalski", "Dr. o'brien", "nurse j. smith", "dr. van der berg", "DR SMITH"; a name
     ends at a verb or function word of the note: "dr. smith saw her", "Dr. Smith Recommended"), labels ("Name:",
     "Signed:", "seen by", "my name is"), initials after a person cue ("seen by MT", "pt MT", "Dr. MT"; not a
     listed service or test such as PT, IR, CT, NPO, nor an abbreviation the text defines in brackets), a first
     name that is a word after a care-team role when it ends its clause or a verb follows ("Pharmacist Rose
     reviewed", "Case manager Hope to call"; not "Pharmacist Will review"),
     credentials ("J. Smith, MD"), a built-in multinational first-name list plus the US census
     first-name and surname lists, sequences of two or more capitalised words that are not common
     English/clinical vocabulary, a lone capitalised word inside a sentence that is not English (Webster's
     2nd lower-case entries, plurals and inflections allowed), clinical vocabulary, an eponym, a drug,
     a nationality, a language ("Haitian Creole", "Tigrinya") or a place, coordination ("A, B and C" next to a known
     name; not a Title Case verb after a place: "Lives In Springfield, Works At ..."), a quoted nickname ('prefers
     to be called "Buddy"'), a lower-case first name after a relative in mixed-case text ("partner jamal"), a first
     name in brackets after a relative in any case ("SON (GRANT)"), a first name that is a word after a relative
     with a surname or before a verb ("Daughter Hope Johnson", "Son Will is HCP"), dialogue speakers and
     propagation of already-found name tokens, a full name of listed names in the wrong case for mixed-case
     text ("JOHN SMITH presents", a header line "SMITH, JOHN A", "patient bob jones"); New York's boroughs and
     best-known districts are places ("Flushing, Queens", "Staten Island", "lives in the bronx"; not the
     MANHATTAN trial in capitals);
  3. organisation names ending in Hospital/Clinic/Medical Center/Oncology/SNF/... or company suffixes (in lower-case
     text too: "seen at mercy hospital", "university of iowa hospitals", "allstate insurance group"; not "a
     teaching hospital", "the control group", "in the folfox group"; a name before its head stops at a capitalised
     preposition of a Title Case note: "Seen At [ORGANIZATION_1]"), hospitals
     called "<place> General" ("Mass General", "Toronto General"; not "Surgeon General"), firm
     names made of three or more bare surnames ("Lopez, Santos and Coleman"), an employer after "works
     for", "X is a ... company" (in lower case too: "works at zillow", "employed by walmart", "works at general
     motors", "bank of america"; not "works at home"; after "retired from" only a firm's shape: "retired from
     verizon", not "retired from teaching"), a saint's hospital after a verb of transfer or before a lower-case
     head ("transferred from St. Barnabas", "St. Luke's hospital", one span), a hospital named by one word after a
     verb of admission ("admitted to Mercy", not "mercy" in prose), the letterhead line above an
     address and a venue named right before one,
     and a short list of well-known hospitals without a head noun ("Brigham and Women's", "MGH", "BWH", "MD
     Anderson"; its scales and models, "MD Anderson Symptom Inventory", stay whole);
  4. overlap resolution by priority, then numbering of placeholders in order of appearance (after any
     placeholder already in the text, so a reviewer's edit of a redacted report keeps its numbers;
     ``redact_after(text, context)`` numbers them after the placeholders of already redacted text it will be read
     with too: a reviewer's note stored with the case).

Before all this the text is put in plain form (``_ODD_RE``), and the redacted text returned is that plain
form: terminal escape sequences and control, zero-width, bidi and tag characters are dropped, Unicode spaces
become " ", hyphens (and en dashes inside dashed numbers) "-", full-width forms, ligatures and non-ASCII
digits their ASCII form; superscripts and other compatibility forms stay ("10\u2079/L").  ``spans`` still
point into the text given.  "Ann Arbor" is the staging except after a residence cue ("lives in Ann Arbor");
"Bence Jones protein", "Heng risk" and "Memorial Sloan Kettering risk" stay.

An ALL-CAPS text is read as a lower-case one (its case says nothing about names); in it a word of four letters or
fewer, or an English or medical word, is a name only when it is a listed name ("CAUSED BY HL", "FOLLOWED BY IFRT"
stay), a single word after a bare "BY" or "ALSO KNOWN AS" only when listed ("EVIDENCED BY LOH", "FOLLOWED BY
FOLFOX6"), an abbreviation the text defines in brackets never ("LOSS OF HETEROZYGOSITY (LOH)"), nor a trial name
where it stands ("ARIEL2", "THE PATRICIA STUDY", "[KATHERINE](/CLINICALTRIALS/...)"), and a street address needs a
word that is no English prose ("VIA AMBULATORY PUMP OVER 22 H", "24 MONTHS. THE PRIMARY END POINT" stay).  In Title
Case notes a capitalised word after "In"/"At"/"From" is a town when it is no English word or follows a verb of care
or residence ("Seen In Duluth On ...", "Treated In Reading"), not in a heading ("Factors in Folliculotropic
Mycosis").  A word before a US state is a town whatever it means ("lives in Mobile, AL", "Normal, Illinois"); in
an ALL-CAPS or lower-case note a word after a residence cue is a town when it stands alone ("SHE LIVES IN
FLUSHING WITH HER SON"), not a word of a living situation ("LIVES IN SHELTER", "lives in assisted living").  Windows line ends are read as "\n".

Dates: intervals kept, calendar dates removed (no calendar date keeps its year, and no shift is applied; bare years
are the exception listed above).  Every DATE span
that parses to a calendar date becomes an offset from the anchor, the first parseable date of the text:
``[DATE_1]`` is the anchor, later dates read ``[DATE_2 (+63 days)]`` / ``[DATE_3 (-2 days)]``; when either
date has month precision only ("March 2021", "03/2021") the offset is in calendar months
(``[DATE_4 (+3 months)]``).  If the anchor is not ``DATE_1`` (an unparseable date came first, or the text or the
context given to ``redact_after`` already held placeholders) the suffix names it: ``(+5 days from DATE_3)``.
Parsed with ``strptime``: ISO y-m-d; numeric dates with the year last are read month first (US m/d/y) for "/"
and "-" and day first for "." (European d.m.y), the other order only when the first is impossible (13/03/2021);
"March 4, 2021", "4 Mar 2021", "4th of March 2021", "14-Mar-2021", "05MAR2021", "2021MAR05", "Mar 2021"; times
are ignored.
Two-digit years ("3/4/21", "3.4.21": a birth year or a visit?) and dates without a year ("March 14"; "4/2"
right after "on",
"since", "scheduled" ..., not a fraction: "on 1/2 tab", "on 3/4 items"; a month/day after an event of care up to
three words back, before a colon or a time, at the head of a line before an event, or in a list after such a date:
"CT chest 2/11:", "seen 3/4, labs 3/18", "Telephone encounter 4/17 9:40am"; not a score, ratio or count: "ECOG
0/1", "grade 2/3", "2/12 cores", "5/5 strength", "cycle 2/6", "XRT 5/28 fx") are not parsed and keep a plain
``[DATE_n]``.  The same calendar date keeps one placeholder whatever its
spelling.  The offset is a count of days or months, never a year or month name, so an interval alone
does not identify the patient; it can coincide with a day-of-month digit by chance.

No interval may show an age over 89 (Safe Harbor).  So: (1) a date of birth (after "DOB", "D.O.B.", "date of
birth", "birth date", "born on/in", "b." ...; that calendar date anywhere in the text) is a plain ``[DATE_n]``
and never the anchor, and a bare year of birth is redacted too; (2) the dates shown as intervals from one
anchor span together less than 89 years minus the oldest age the text keeps ("72-year-old": 17 years), counted short
(365-day years, less a month for month-precision dates), since any two of them could be a birth the cues
missed and a visit, and a kept age plus an interval is an age too.  A date that would widen its anchor's span
past that limit anchors a new group instead (``[DATE_3]``, then ``[DATE_4 (+61 days from DATE_3)]``); no
interval links two groups.  Elderly patients therefore get fewer intervals (an 85-year-old: within 4 years).

Data files (engine/phi_data/, each with its provenance in its header): ``clinical_vocab.txt`` (words of
oncology prose), ``first_names.txt`` and ``surnames.txt`` (US Census 1990, public domain),
``english_words.txt.gz`` (Webster's 2nd International, public domain).  Nothing is downloaded.

The common-word vocabulary (``_VOCAB``) is the set of words that occur in lower case in general
oncology prose (NCI PDQ summaries); a capitalised word found there is treated as ordinary language,
not as part of a name, which is what keeps clinical terms intact.

``evaluate(records)`` scores the redactor on labelled records (see its docstring for the exact rules).
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Iterable

__all__ = ["Redaction", "redact", "redact_after", "evaluate", "load_records", "PhiDataError", "PLACEHOLDER_RE",
           "TYPES"]

TYPES = (
    "PERSON", "DATE", "AGE", "ID", "PHONE", "EMAIL", "URL", "IP", "SSN", "ADDRESS", "LOCATION",
    "ORGANIZATION",
)

# group 1: type, group 2: number; a date may carry its interval to the anchor date ("[DATE_2 (+63 days)]")
PLACEHOLDER_RE: re.Pattern = re.compile(
    r"\[(" + "|".join(TYPES) + r")_(\d+)(?: \([+-]\d+ (?:days?|months?)(?: from DATE_\d+)?\))?\]")


@dataclass(frozen=True)
class Redaction:
    text: str  # redacted text with typed placeholders
    counts: dict[str, int] = field(default_factory=dict)  # distinct placeholders issued per type
    spans: tuple[tuple[str, int, int], ...] = ()  # (type, start, end) in the ORIGINAL text


# ---------------------------------------------------------------------------------------------------
# Word lists
# ---------------------------------------------------------------------------------------------------

# Common first names from many countries (accents folded, lower case).  General list, not data-derived.
_FIRST_NAMES_TEXT = """
aaron abby abdul abdullah abigail abraham ada adam adela adelaide adele adina adolf adrian adriana
adrianna adrienne agata agatha agnes agnieszka ahmad ahmed aida aidan aiden aileen aimee aino aisha
akira aksel al alan alana albert alberta alberto alda aldo alec alejandra alejandro aleksander aleksandr
aleksandra aleksei alena alessandra alessandro alessia alex alexa alexander alexandra alexandre
alexandru alexei alexis alf alfie alfonso alfred alfredo ali alice alicia alina aline alisha alison
alistair allan allen allison alma alois alonso alvaro alvin alyssa amal amanda amber amelia amelie amir
amira amos amy ana anastasia anatoly anders andrea andreas andrei andrej andres andrew andrey andrzej
andy aneta angel angela angelica angelika angelina angelo angus anika anita anja ann anna annabel
annabelle anne anneli annelise annette annie anouk ansel anthony antoine anton antonella antoni antonia
antonin antonio antonius antti anya apolonia archie ari ariana arianna ariel arjun arlene armand armando
arnaud arne arnold aron arrow art arthur artur arturo arvid arvo asa asbjorn ashley ashton asia aslak
asta astrid asya atle audrey august augusta augustin aurelia aurelio aurora austin ava avery axel ayesha
aylin baptiste barbara barbora barney barry bart bartholomew bartosz basil bastian beata beatrice
beatrix beatriz becky belinda bella ben benedetta benedict benedikt benjamin bennett benny bent
bernadette bernard bernardo bernd bert berta bertha bertil bertram beth bethany betty beverly bianca
bill billie billy bjarne bjorn blake blanca blanche bo bob bobby bogdan bohdan bohumil boris borislav
bozena brad bradley brandon brenda brendan brent brett brian briana brianna bridget brigitte britt
britta brittany brooke bruce bruno bryan bryce burak caleb callum calvin camila camilla camille candace
cara carina carl carla carles carlo carlos carly carmen carol carole carolina caroline carolyn carrie
carsten carter casey caspar casper cassandra catalina caterina catherine cathy cecile cecilia cedric
celeste celia celina cesar chad chantal charlene charles charley charlie charlotte chelsea cheryl
chester chiara chloe chris christa christian christiane christie christina christine christoffer
christoph christophe christopher chuck ciara cindy claire clara clarence clark claude claudia claudio
clemens clement cleo cliff clifford clint clive cody colette colin colleen connor conor conrad constance
constantin consuelo cora coralie corey corina corinne cormac cornelia cornelius courtney craig cristian
cristiano cristina curtis cynthia cyril czeslaw dafne dag dagmar dagny dai daisy dalia damian damien dan
dana daniel daniela daniele danielle danny dante daphne dara darek daria dario darius darko darlene
darren darryl daryl dave david dawid dean deborah debra declan deirdre delia demetrius denis denise
dennis derek derrick desmond devin diana diane diego dieter dimitri dimitrios dina dino dirk dmitri
dmitry dolores domenico dominic dominik dominika dominique donald donna dora doris dorota dorothea
dorothy doug douglas drew duncan dusan dustin dwayne dylan ebba ed eddie edgar edith edmund edoardo
eduard eduardo edvard edward edwin eero eileen einar ekaterina elaine eleanor elena eleni eli elias
elijah elin elina elisa elisabeth elisabetta elise eliska eliza elizabeth ella elle ellen ellie elliot
elliott ellis elmer eloise elsa else elsie elvira elzbieta emanuel emanuele emil emile emilia emilie
emilio emily emma emmanuel emmanuelle enrico enrique enzo erasmo eric erica erich erik erika erin erkki
erlend erling ernest ernesto ernst errol erwin esa esmeralda esperanza esteban estelle ester esther
ethan etienne eugen eugene eugenia eva evan evangelina eve evelina evelyn evgeny ewa ewan ezra fabian
fabio fabrice fanny farah fatima fausto federica federico felicia felicity felipe felix ferdinand ferenc
fernanda fernando filip filippo finn fiona flavia flavio fletcher flora florence florian floyd frances
francesca francesco francis francisco franco francois francoise frank frankie franz franziska fred
freddie frederick frederik fredrik freja freya frida fridtjof friedrich fritz gabor gabriel gabriela
gabriele gabriella gabrielle gail galina garrett gary gaspard gavin gemma geneva genevieve geoffrey
georg george georgia georgina gerald geraldine gerard gerardo gerda gerhard gerrit gertrude gianluca
gianni gideon gilbert gilles gina gino giorgio giovanna giovanni giulia giuliana giulio giuseppe gladys
glenn gloria gonzalo gordon grace graham grant greg gregor gregory greta gretchen griselda gudrun guido
guillaume guillermo gunnar gunnhild gunther gustav gustavo guy gwen gwendolyn gyorgy haakon hadley
hailey hakan hal halina halldor halvard hamid hamza hana hank hanna hannah hannele hannes hans harald
harold harper harriet harrison harry harvey hassan hayden hazel heather hector hedda hedvig hedwig heidi
heike heikki heinrich heinz helen helena helene helga helmut henning henri henrietta henrik henrique
henry herbert herman hermann hilda hilde hildegard hilding holger holly horace howard hubert hugh hugo
hunter ian ibrahim ida ignacio igor ilona ilse imogen imran ines inga inge ingrid irena irene irina iris
irma isaac isabel isabella isabelle isak isidor ismael israel istvan ivan ivana ivo ivy iwona izabela
jack jackie jackson jacob jacqueline jacques jade jaime jake jakob jakub james jamie jan jana jane janet
janice janina janine janusz jari jarmila jaroslav jaroslava jasmine jason jasper javier jay jean
jeanette jeanne jeff jeffrey jelena jennifer jenny jens jeremy jerome jerzy jesper jesse jessica jesus
jill jim jimmy jiri jo joachim joan joanna joao joaquin jocelyn jodi jody joe joel johan johann johanna
johannes john johnny jon jonas jonathan jordan jordi jorge jorgen jose josef josefina joseph josephine
josh joshua josie joyce juan juana judit judith judy jukka julia julian juliana julie julien juliet
julio julius june jurgen justin justine jutta jyrki kai kaisa kaja kalle kamil kamila kara karel karen
kari karin karina karl karla karol karolina kasia kasper kata katalin katarina katarzyna kate katerina
katharina katherine kathleen kathrine kathryn kathy katie katja katrin katrina katrine kay kayla keith
kelly ken kenji kenneth kent kerry kevin kim kimberly kirsten kirsti kitty klara klaus knut konrad
konstantin kristen kristian kristin kristina kristine kristof kristoffer krisztina krzysztof kurt kyle
lada lana lara lars laszlo laura lauren laurence laurent lauri lea leah lee leena leif leila lena leni
lennart leo leon leona leonard leonardo leonid leopold leslie lewis lidia lila lilian liliana lillian
lina linda lindsay lindsey linnea lionel lisa lise liv livia liz liza lizzie lois lola lorena lorenzo
loretta lori lorraine lotta lotte louis louisa louise lovisa luca lucas lucia luciano lucie lucy ludmila
ludovic ludwig luigi luis luisa lukas lukasz luke luna lydia lynn mads magda magdalena magnus mai maja
malcolm malgorzata malin malte manon manuel manuela marc marcel marcela marcella marcello marcia marco
marcos marcus marek margaret margareta margarita margit margo margot marguerite maria mariah marian
mariana marianne marie mariella marika marilyn marina mario marion marisa marissa marit marius marjorie
mark marko markus marlene marta martha martin martina marty marvin mary maryam mason massimo mateo
mateusz mathias mathieu matias matilda matt matteo matthew matthias matti maud maureen maurice mauricio
mauro max maxim maxime maximilian maya megan mehmet melanie melinda melissa melvin mercedes meredith
mette mia michael michaela michal michel michele michelle miguel mihai mika mikael mikhail mikko miklos
milan milena miles milos mira miranda miriam mirjam miroslav mitchell mohamed mohammad mohammed moira
monica monika morgan moritz morten muhammad murat murray nadia nadine nancy naomi natalia natalie
natasha nathalie nathan nathaniel neil nelson nicholas nick nicola nicolas nicole niels nigel nika
nikita niklas nikola nikolai nikolaj nikolaos nils nina noah noel noemi nora norbert norma norman oksana
olaf olav ole oleg olga oliver olivia olivier omar oscar oskar osvaldo otto owen pablo paige pamela
paola paolo pascal pascale patricia patrick patrik paul paula paulina pauline pavel pawel pedro peggy
penelope per pernille petar peter petr petra philip philippa philippe phillip phoebe pia piero pierre
pieter piotr pirjo polly priscilla quentin quinn rachel radek radoslaw rafael raffaele ragnar ragnhild
rainer ralph ramon ramona randall randy raphael raquel rasmus raul raymond rebecca regina reginald reid
reinhard renata renate rene renee reza ricardo riccardo richard rick rickard rita rob robert roberta
roberto robin rocco roderick rodney rodrigo roger roland rolf roman romana ronald ronja ronnie rosa
rosalind rosanna rosemary ross rowan roxanne ruben rudi rudolf rudolph rufus rupert russell ruth ryan
sabina sabine sabrina sally salma salvatore sam samantha samir samuel sandra sandro santiago sara sarah
sasha saskia saul scott sean sebastian sebastien selma serena sergei sergey sergio seth shane shannon
sharon shawn sheila shelby shirley sidney siegfried sienna sigrid silke silvana silvia simon simona
simone siobhan sixten sofia sofie solveig sonia sonja sophia sophie soren stacy stanislav stanislaw
stefan stefania stefanie stefano stella sten stephan stephanie stephen steve steven stig stina sune
susan susanne suzanne sven svetlana sylvia sylvie szymon tadeusz tamara tamas tania tanja tanya tara
tatiana tatjana teodor teresa terje terrence terri terry tess tessa thea theo theodor theodore theresa
therese thomas thor thorsten tiago tilda tilly tim timo timothy tina tobias toby todd tom tomas tomasz
tommy toni tony torben tore torsten tove tracy travis trevor trine tristan troy tuomas tyler uffe ulf
ulla ulrich ulrika urban ursula uwe vaclav valentin valentina valentine valeria valerie vanessa vasily
vera veronica veronika vicente victor victoria vidar viktor viktoria vilma vincent vincenzo viola violet
virginia vitor vivian viviane vladimir vojtech waldemar walter wanda warren wayne wendy werner wesley
wiktor wilhelm wilhelmina will willem william willy wilma wojciech wolfgang xavier yasmin yolanda yuri
yusuf yvette yvonne zach zachary zara zbigniew zdenek zoe zofia zoltan zora zuzana
"""

# More first names (Nordic, Central/Eastern European, Southern European, Middle Eastern, South and East
# Asian).
_FIRST_NAMES_EXTRA = """
sigurdur gudmundur olafur bjarni helgi kristjan thorsteinn sigridur gudrun margret arnar birgir
gunnar einar hafthor jonas kari runar steinunn thora unnur vigdis zsolt zsuzsanna eszter erzsebet
attila balazs csaba tibor bence levente reka orsolya timea gyula janos jozsef laszlo imre sandor
lajos matyas dorottya nikolett krisztian tereza lenka marketa sarka vladimira jindrich vaclav
bohuslav radek ondrej jiri ludek vit vlasta libuse grzegorz marcin krystyna wieslaw wladyslaw
boleslaw miroslaw ryszard kazimierz stanislawa jadwiga danuta grazyna wislawa przemyslaw
dobroslaw roscislaw bronislaw jaroslaw zdzislaw ludmila dragan goran zoran jovan milica dragana
snezana bojan dejan nenad sasa zeljko branko vesna mirjana ljiljana slobodan predrag aleksandar
anda andja bojka jasna juha pekka tuula paivi riitta minna marjatta pirkko kaarina eino onni
veikko tapio pentti seppo raimo ilkka riku jouni jouko satu outi sanna tiina sirpa kaija aila
birgitta kerstin annika alva signe sigrun torunn bjorg oddvar geir trond kjell svein halvor eirik
oystein lone birthe dorthe poul preben flemming mathilde josefine piet kees henk joost bram daan
lieke sanne femke maaike marieke ineke joke wim ruud sjoerd jeroen thijs bas koen stijn maarten
horst manfred gunter birgit gabriele anke jorg leonie giuseppina carmela antonietta concetta
margherita franca francisca pilar rosario nuria encarnacion rocio montserrat alba goncalo diogo
rui helder nuno joana catarina leonor margarida filipa monique sandrine celine aurelie margaux
juliette artem darya ksenia polina nadezhda lyudmila lyubov zoya yulia huseyin hasan ismail osman
omer ayse emine hatice zeynep elif merve esra ozlem mahmoud khaled youssef hussein tariq karim
nour zainab amina rania hiba aarav rohan suresh ramesh rajesh mahesh ganesh vikram aditya nikhil
pooja anjali neha sunita kavita deepa lakshmi sita radha meera divya shreya ananya aditi hiroshi
takashi kenji yuki yuko yoko keiko akiko naoko haruto sota yuto hinata sakura yui aoi kenta
daiki takumi shota ryota kaito chihiro wei ming mei jing hui xiu ying chen hyun soo seung min-jun
ji-woo emre mustafa ahmet fatma selin dzhambek ruslan timur aslan zaur magomed ramzan islam
shamil akhmed bekbolat kamila dilnoza gulnara aigerim
"""

# First names that are also ordinary (often clinical) words: used only with a supporting cue.
_AMBIGUOUS_NAMES = set("""
will may june april august grace hope faith joy dawn bill art pat sue frank gene ray chase mark don
guy page summer star angel crystal amber ruby pearl ivy holly daisy iris lily rose olive ginger miles
christian king major price lane dale glen grant reed rich sandy rocky buck duke earl patience violet
jade penny max jack bob else per ed al carina tore bent odd lone eve sky hunter harmony melody
destiny trinity liberty chance ace rex sunny storm river autumn winter spring cash noble young long
brown white black green gray grey baker cook park key hill bay bo jo kay lee rosa vera mercedes
lucky victor justice sage marina nova august aurora clement constance felicity prudence charity
tracy sandra christina? gay geri
""".replace("?", "").split()) - {"sandra", "christina", "tracy"}

_DAY_MONTH_NAMES = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday weekday weekend january february march "
    "april june july august september october november december".split())

# Titles that introduce a name.
_TITLES = {
    "dr", "drs", "mr", "mrs", "ms", "miss", "mx", "prof", "professor", "pt", "mme", "mlle", "herr",
    "frau", "sr", "sra", "srta", "rev", "fr", "sir", "dame", "madam", "mister", "doctor", "nurse",
    "sister", "brother",
}
_STRONG_TITLES = {"dr", "drs", "mr", "mrs", "ms", "miss", "mx", "prof", "professor", "mme", "mlle",
                  "herr", "frau", "sra", "srta", "mister", "madam", "dame", "sir"}
# Ranks and offices before a name ("Sgt. Miller", "Officer Stone", "Pastor Young").  As with "Dr.", the word itself
# stays: it says what the person does, not who they are; the name goes.  Several are clinical shorthand too ("Lt
# breast", "Col"), so the name after them must be a census first name or surname ("Green", "Young" count), or, in
# mixed-case text, a capitalised word that is no English word.
_RANK_TITLES = frozenset("sgt sergeant lt lieutenant capt captain cpt col colonel maj cpl corporal pvt cmdr det "
                         "detective officer deputy sheriff trooper rev reverend pastor chaplain rabbi imam".split())
_TITLES |= _RANK_TITLES

# Credentials that follow a name ("J. Smith, MD", "Anna Berg RN").
_CREDENTIALS = (
    r"M\.?D\.?|D\.?O\.?|R\.?N\.?|N\.?P\.?|PA-C|P\.?A\.?|Ph\.?D\.?|DDS|DMD|APRN|CNP|FNP|FNP-BC|MBBS|"
    r"FACP|FACS|FRCP|FRCPC|PharmD|MSN|BSN|LPN|CRNA|DNP|MPH|MS|MSc|MA|LCSW|RD|OCN|AOCN|AOCNP|RPh|CNS"
)

# Name particles that may sit inside a name ("van de Noort", "da Silva").
_PARTICLES = {
    "van", "von", "de", "der", "den", "da", "das", "do", "dos", "di", "del", "della", "la", "le", "du",
    "des", "bin", "ibn", "al", "el", "ten", "ter", "st", "mac", "ap", "y",
}

# Words that are never part of a person name when found by an uncued rule (and end a cued one).
_HARD_STOP = set("""
january february march april may june july august september october november december feb
apr jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday mon tue
tues wed thu thur thurs fri sat sun today tomorrow yesterday tonight morning afternoon evening night
hospital clinic center centre institute university college medical health healthcare memorial
general regional community foundation laboratory laboratories lab labs pharmacy hospice infirmary
street st avenue ave road rd lane ln drive boulevard blvd court ct place pl square terrace way parkway
highway circle close crescent suite apt apartment unit box floor room building po psc
inc llc ltd corp corporation company co group plc gmbh partners associates
syndrome disease lymphoma sarcoma tumor tumour tumors tumours cell cells carcinoma leukemia leukaemia
myeloma melanoma cancer score scale classification criteria stage staging grade grading index
system test assay procedure operation resection nodule node sign triad phenomenon effect method
analysis estimate curve technique pouch status esophagus oesophagus thyroiditis macroglobulinemia
performance protocol regimen trial study cohort arm phase cycle day week month year dose
patient patients pt male female man woman boy girl he she his her him they them their we our you
your i me my mine the a an and or but nor of in on at to for from by with without into onto via per
is are was were be been being am has have had do does did will would shall should can could may
might must not no yes this that these those there here who whom whose which what when where why how
name names phone fax email mail address tel mobile cell home work office web website url date dob
age sex mrn id ssn zip code city state country county
mr mrs ms dr miss prof md rn np pa phd do
""".split())

# Clinical head nouns: a capitalised word directly before one of these is an eponym, not a person.
_CLINICAL_HEADS = set("""
syndrome syndromes disease diseases lymphoma lymphomas sarcoma sarcomas tumor tumors tumour tumours
cell cells carcinoma carcinomas leukemia leukaemia myeloma melanoma cancer cancers score scores
scale classification criteria stage stages staging grade grading index system test tests assay
procedure procedures operation resection nodule nodules node nodes sign signs triad phenomenon
effect method analysis estimate estimates curve curves technique pouch status esophagus oesophagus
thyroiditis macroglobulinemia disorder anomaly anemia anaemia ulcer hernia fracture reaction
tube catheter needle approach incision maneuver manoeuvre law rule formula equation distribution
regression model hazards statement questionnaire inventory trial trials lesion lesions polyp
polyps polyposis neuroma body bodies granule granules fibers fibres canal duct gland glands
space spaces line lines nephroblastoma family cyst cysts palsy protein proteins coma rod rods chromosome
transformation reservoir neoplasm neoplasms exact thickness level levels class catheter ulcer fistula
""".split())

# Cancer/medical eponyms and similar capitalised clinical words never treated as people on their own.
_EPONYMS = set("""
hodgkin hodgkins non-hodgkin lambert-eaton brown-sequard dubin-johnson crigler-najjar ehlers-danlos klippel-trenaunay sturge-weber budd-chiari mallory-weiss swan-ganz bloom-richardson stevens-johnson mann-whitney cheyne-stokes arnold-chiari guillain-barre jarisch-herxheimer waterhouse-friderichsen wiskott-aldrich chediak-higashi osler-weber-rendu wolff-parkinson-white lemierre mohs waldeyer bence oddi inuit langerin francophone anglophone ewing ewings wilms merkel burkitt burkitts kaposi kaposis waldenstrom
sezary paget pagets lynch li-fraumeni cowden gleason breslow clark karnofsky whipple krukenberg
pancoast horner trousseau virchow barrett barretts crohn crohns hashimoto graves cushing addison
peutz-jeghers hippel-lindau von turcot gardner muir-torre fanconi bloom werner gorlin birt-hogg-dube
hurthle reed-sternberg askin brenner sertoli leydig sertoli-leydig richter auer philadelphia
kaplan-meier kaplan meier cox fisher wilcoxon kruskal-wallis mann-whitney bonferroni pap
papanicolaou hounsfield lugano deauville kiel rai binet hasford sokal arbor masaoka masaoka-koga
dukes astler-coller enneking gail tyrer-cuzick oncotype mammaprint guardant foundationone caris
tempus bethesda breslow recist tnm ajcc uicc figo who ecog nccn asco esmo sister
charcot-marie-tooth guillain-barre creutzfeldt-jakob down turner klinefelter beckwith-wiedemann
denys-drash wagr gorlin-goltz cronkhite-canada zollinger-ellison verner-morrison carney
bannayan-riley-ruvalcaba proteus ollier maffucci mccune-albright stewart-treves kasabach-merritt
castleman rosai-dorfman erdheim-chester langerhans schwann purkinje kupffer sternberg
brodie virchows sjogren sjogrens raynaud raynauds stevens-johnson steven-johnson epstein-barr
epstein barr hpv ebv hiv hbv hcv htlv kras braf egfr alk ros ret met ntrk her2 erbb2 brca brca1
brca2 tp53 pik3ca pten idh idh1 idh2 flt3 npm1 jak2 calr mpl kit pdgfra
""".split())

# Countries, US states and similar: not identifiers below state level (kept, excluded from recall).
_COUNTRIES_STATES = set("""
afghanistan albania algeria andorra angola argentina armenia australia austria azerbaijan bahamas
bahrain bangladesh barbados belarus belgium belize benin bhutan bolivia bosnia botswana brazil brunei
bulgaria burundi cambodia cameroon canada chad chile china colombia congo croatia cuba cyprus czechia
czech denmark djibouti dominica ecuador egypt eritrea estonia eswatini ethiopia fiji finland france
gabon gambia georgia germany ghana greece greenland grenada guatemala guinea guyana haiti honduras
hungary iceland india indonesia iran iraq ireland israel italy jamaica japan jordan kazakhstan kenya
kiribati korea kosovo kuwait kyrgyzstan laos latvia lebanon lesotho liberia libya liechtenstein
lithuania luxembourg madagascar malawi malaysia maldives mali malta mauritania mauritius mexico
micronesia moldova monaco mongolia montenegro morocco mozambique myanmar namibia nauru nepal
netherlands holland nicaragua niger nigeria norway oman pakistan palau palestine panama paraguay peru
philippines poland portugal qatar romania russia rwanda samoa senegal serbia seychelles singapore
slovakia slovenia somalia spain sudan suriname sweden switzerland syria taiwan tajikistan tanzania
thailand togo tonga tunisia turkey turkmenistan tuvalu uganda ukraine uruguay uzbekistan vanuatu
venezuela vietnam yemen zambia zimbabwe england scotland wales usa uk america europe asia africa
alabama alaska arizona arkansas california colorado connecticut delaware florida hawaii idaho
illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota
mississippi missouri montana nebraska nevada ohio oklahoma oregon pennsylvania tennessee texas utah
vermont virginia washington wisconsin wyoming
""".split())
_COUNTRY_PHRASES = {
    "united states", "united states of america", "united kingdom", "south africa", "new zealand",
    "south korea", "north korea", "saudi arabia", "sri lanka", "costa rica", "el salvador",
    "czech republic", "dominican republic", "puerto rico", "great britain", "northern ireland",
    "new hampshire", "new jersey", "new mexico", "new york", "north carolina", "north dakota",
    "rhode island", "south carolina", "south dakota", "west virginia", "district of columbia",
    "the netherlands", "the united states", "the united kingdom", "ivory coast", "cyprus (greek)",
}
_CA_PROVINCE_ABBR = {"AB", "BC", "MB", "NB", "NL", "NS", "NT", "NU", "ON", "PE", "QC", "SK", "YT"}
_COUNTRY_PHRASE_RE = re.compile(
    r"\b(?:" + "|".join(re.escape(c) for c in sorted(_COUNTRY_PHRASES, key=len, reverse=True)) + r")\b")
_US_STATE_ABBR = set("""
AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC
ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC PR
""".split())
# US state names, spelled out after a city ("Mobile, Alabama")
_US_STATE_NAMES = (
    "Alabama Alaska Arizona Arkansas California Colorado Connecticut Delaware Florida Georgia Hawaii Idaho Illinois "
    "Indiana Iowa Kansas Kentucky Louisiana Maine Maryland Massachusetts Michigan Minnesota Mississippi Missouri "
    "Montana Nebraska Nevada New_Hampshire New_Jersey New_Mexico New_York North_Carolina North_Dakota Ohio Oklahoma "
    "Oregon Pennsylvania Rhode_Island South_Carolina South_Dakota Tennessee Texas Utah Vermont Virginia Washington "
    "West_Virginia Wisconsin Wyoming").split(" ")
_US_STATE_NAMES = [w.replace("_", " ") for w in _US_STATE_NAMES]

# Words seen in lower case in general oncology prose (NCI PDQ summaries, >= 4 occurrences). Generated once;
# a capitalised word in this set is treated as ordinary language rather than part of a name.
_VOCAB_TEXT = "\n".join(
    line for line in (Path(__file__).parent / "phi_data" / "clinical_vocab.txt").read_text(encoding="utf-8").splitlines()
    if not line.startswith("#"))



def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_VOCAB: frozenset[str] = _wordset(_VOCAB_TEXT) | _wordset(
    """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can cannot could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself just
    let me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up very was we were what when where which while who whom why
    with would you your yours yourself yourselves yes okay ok hello hi hey dear thanks thank please
    sorry regards sincerely best new old good great nice big small first last next previous today
    lives live lived living restaurant conference office home house city town street road meet meeting
    week weekend month year years day days morning evening night tomorrow yesterday monday tuesday
    wednesday thursday friday saturday sunday january february march april may june july august
    september october november december note notes plan assessment impression history subjective
    objective exam examination physical review systems chief complaint present illness past medical
    surgical family social medications allergies vitals labs imaging pathology oncology hematology
    radiology consult consultation follow-up followup progress discharge summary admission admitted
    referral referred signed dictated transcribed electronically attending fellow resident nurse
    physician provider team clinic hospital unit ward bed room floor service department division
    demo demonstration
    """
)

# Common general-English words (so that Title Case prose and headings are not taken for names) and
# oncology/supportive-care brand names (drug names must survive even when capitalised).
_VOCAB = _VOCAB | _wordset(
    """
    able account act action actually add address advice age ago agree air allow almost alone along
    already always among amount another answer anyone anything appear apply area argue arm around arrive
    art article ask attention available average avoid award awarded away baby back bad bag ball bank
    base beach bear beat beautiful become bed begin behind believe benefit better beyond bill billing
    bit black blood blue board boat body book born boss bot box boy break bring brother brown budget
    build building business buy call camera campaign car card care career carry case catch cause
    central century certain chair challenge chance change character charge check child choice choose
    church citizen civil claim class clear close coach cold collection college color come commercial
    common community company compare computer concern condition consider contain continue control
    cool cost could country couple course court cover create crime cultural culture cup current
    customer cut dark data daughter dead deal death debate decade decide decision deep defense degree
    democrat describe design despite detail determine develop difference different difficult dinner
    direction director discover discuss dog door dream drive drop drug during early east easy eat
    economic economy edge education effort eight either election else employee end energy enjoy enough
    enter entire environment especially establish even event ever every everybody everyone everything
    evidence exactly example executive exist expect experience expert explain eye face fact fail fall
    family far fast father fear federal feel feeling few field fight figure fill film final finally
    financial find fine finger finish fire firm fish five floor fly focus follow food foot force
    foreign forget form former forward four free friend front full fund future game garden gas general
    generation get girl give glass go goal good government great green ground group grow growth guess
    gun guy hair half hand hang happen happy hard hate have head health hear heart heat heavy help
    here herself high himself history hit hold home hope hospital hot hotel hour house however huge
    human hundred husband idea identify image imagine impact important improve include including
    increase indeed indicate individual industry information inside instead institution interest
    interesting international interview into investment involve issue item itself job join just keep
    key kid kill kind kitchen know knowledge land language large last late later laugh law lawyer lay
    lead leader learn least leave left leg legal less let letter level lie life light like likely line
    list listen little live local long look lose loss lot love low machine magazine main maintain major
    majority make man manage management manager many market marriage material matter maybe mean
    measure media medical meet meeting member memory mention message method middle might military
    million mind minute miss mission model modern moment money month more morning most mother mouth
    move movement movie much music must myself name nation national natural nature near nearly
    necessary need network never news newspaper next nice night none north note nothing notice number
    occur offer office officer official often oil old once one only onto open operation opportunity
    option order organization others our outside owner page pain painting paper parent part
    participant particular particularly partner party pass past pattern pay peace people per perform
    performance perhaps period person personal phone physical pick picture piece place plan plant play
    player point police policy political politics poor popular population position positive possible
    power practice prepare present president pressure pretty prevent price private probably problem
    process produce producer product production professional professor program project property
    protect prove provide public pull purpose push put quality question quickly quite race radio raise
    range rate rather reach read ready real reality realize really reason receive recent recently
    recognize record red reduce reflect region relate relationship religious remain remember remove
    report represent republican require research resource respond response responsibility rest result
    return reveal rich right rise risk road rock role room rule run safe same save say scene school
    science scientist score sea season seat second section security see seek seem sell send senior
    sense series serious serve service set seven several sex sexual shake share she shoot short shot
    should shoulder show side sign significant similar simple simply since sing single sister sit site
    situation six size skill skin small smile social society soldier some somebody someone something
    sometimes son song soon sort sound source south southern space speak special specific speech spend
    sport spring staff stage stand standard star start state statement station stay step still stock
    stop store story strategy street strong structure student study stuff style subject success
    successful such suddenly suffer suggest summer support sure surface system table take talk task
    tax teach teacher team technology television tell ten tend term test than thank that the their
    them themselves then theory there these they thing think third this those though thought thousand
    threat three through throughout throw thus time today together tonight too top total tough toward
    town trade traditional training travel treat treatment tree trial trip trouble true truth try turn
    type under understand unit until upon use user usually value various very victim view violence
    visit voice vote wait walk wall want war watch water way weapon wear week weight well west western
    what whatever wheel when where whether which while white whole whom whose why wide wife will win
    wind window wish with within without woman wonder word work worker world worry would write writer
    wrong yard yeah year yes yet you young your yourself royal princess prince king queen lord lady
    orchestra band album guilty pleasures pleasure musicians supposed secretly tales cautionary novel
    awarded salesperson contacting helicopter arrived welcome agent assistant engineer technician
    manager clerk installer operator controller librarian accountant writer singer soldier midwife
    dear sir madam hello hi thanks regards
    keytruda opdivo tagrisso herceptin avastin erbitux lynparza ibrance kisqali verzenio xtandi zytiga
    imbruvica revlimid velcade darzalex gleevec tarceva iressa alecensa xalkori lorbrena tecentriq
    imfinzi yervoy bavencio libtayo enhertu kadcyla perjeta phesgo trodelvy padcev lenvima cabometyx
    nexavar stivarga sutent votrient inlyta afinitor tykerb nerlynx tukysa piqray faslodex arimidex
    femara aromasin nolvadex lupron zoladex firmagon erleada nubeqa provenge xofigo pluvicto lutathera
    sandostatin somatuline temodar gliadel zejula rubraca talzenna mekinist tafinlar braftovi mektovi
    zelboraf cotellic opdualag kymriah yescarta tecartus breyanzi abecma carvykti blincyto besponsa
    mylotarg venclexta calquence brukinsa jakafi tasigna sprycel bosulif iclusig scemblix rituxan
    gazyva adcetris polivy kyprolis ninlaro pomalyst thalomid xpovio sarclisa empliciti retevmo gavreto
    tabrecta tepmetko lumakras krazati exkivity rybrevant gilotrif vizimpro alunbrig zykadia rozlytrek
    vitrakvi cyramza portrazza vectibix lonsurf xeloda gemzar abraxane taxol taxotere jevtana halaven
    ixempra navelbine adriamycin doxil ellence cytoxan ifex platinol paraplatin eloxatin camptosar
    onivyde hycamtin etopophos alimta folotyn leukeran treanda bendeka alkeran neulasta neupogen
    udenyca fulphila zarxio granix procrit epogen aranesp retacrit xgeva prolia zometa emend akynzeo
    zofran aloxi decadron marinol megace ativan compazine reglan dilaudid oxycontin duragesic lovenox
    eliquis xarelto coumadin keppra synthroid glucophage lasix protonix nexium tylenol advil motrin
    benadryl imodium lomotil miralax senokot colace bactrim levaquin cipro zosyn vancocin diflucan
    valtrex medrol solu-medrol contin onpro zaltrap arzerra campath zevalin leukine mozobil kepivance
    ethyol totect zinecard mesnex fusilev elitek kytril anzemet sancuso varubi cinvanti sustol barhemsys
    syndros cesamet remeron provigil nuvigil percocet norco vicodin ultram actiq fentora subsys dolophine
    roxanol kadian exalgo opana nucynta lyrica neurontin cymbalta effexor celexa lexapro zoloft paxil
    prozac wellbutrin xanax klonopin restoril ambien lunesta haldol zyprexa seroquel risperdal abilify
    desyrel senna senokot-s dulcolax linzess relistor movantik amitiza entereg creon zenpep pancreaze
    carafate pepcid zantac prilosec reglan emla lidoderm magic-mouthwash mycelex nystatin biotene
    salagen evoxac caphosol gelclair neulasta-onpro nivestym releuko ziextenzo nyvepria stimufend
    rolvedon fylnetra ryzneuta kanjinti ogivri trazimera herzuma ontruzant mvasi zirabev vegzelma
    alymsys truxima ruxience riabni signatera natera guardant guardant360 foundationone tempus caris
    myriad invitae ambry neogenomics oncotype mammaprint prosigna decipher prolaris oncotypedx
    afirma thyroseq cologuard galleri
    elahere datroway tivdak jemperli zynyz loqtorzi vyloy imdelltra
    columvi epkinly talvey elrexfio tecvayli lunsumio ojjaara inrebic vonjo rezlidhia tibsovo idhifa
    xospata vanflyta rydapt onureg vidaza dacogen inqovi oncaspar erwinase rylaze marqibo vyxeos
    foley picc mediport port-a-cath ommaya hickman medicare medicaid caucasian hispanic latino latina
    american americans african asian asians european europeans caucasians hispanics latinos native
    indian indians alaskan pacific islander islanders arab jewish christian muslim catholic english
    spanish french german italian chinese japanese korean vietnamese filipino russian polish dutch
    swedish norwegian danish finnish greek turkish irish scottish welsh british canadian mexican
    brazilian australian united kingdom states republic union bureau census vol clin oncol engl med
    pathol cutan surg radiol biol phys res natl inst hematol dermatol genet semin ophthalmol haematol
    thorac syst endocrinol obstet gynecol urol pediatr lancet jama ann int sci rev nat commun rep
    """
)

# Units and short clinical tokens that look like capitalised words.
_UNITS = _wordset("gy cgy mg mcg kg ml mmol mol iu mci mbq gbq bq hz khz mhz mm cm dl l g hr hrs min sec")

_FOLD_TABLE = str.maketrans({
    "ø": "o", "Ø": "o", "ł": "l", "Ł": "l", "đ": "d", "Đ": "d", "þ": "th", "Þ": "th", "ð": "d",
    "Ð": "d", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "ß": "ss", "ı": "i",
})


def _ci(pattern: str) -> re.Pattern:
    """Compile ``pattern`` for matching against the lower-cased text (much faster than re.I)."""
    out = []
    esc = False
    for ch in pattern:
        if esc:
            out.append(ch)
            esc = False
        elif ch == "\\":
            out.append(ch)
            esc = True
        else:
            out.append(ch.lower())
    return re.compile("".join(out))


def _lowered(text: str) -> str:
    """Lower-cased copy of ``text`` with identical offsets."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


@functools.lru_cache(maxsize=65536)
def _fold(s: str) -> str:
    s = s.translate(_FOLD_TABLE)
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s if not unicodedata.combining(c)).lower()




@functools.lru_cache(maxsize=4)
def _name_file(fname: str) -> tuple[str, ...]:
    text = (Path(__file__).parent / "phi_data" / fname).read_text(encoding="utf-8")
    return tuple(w.strip() for w in text.splitlines() if w and not w.startswith("#"))


def _name_list(fname: str, keep_words: bool = False, english_ok: bool = False) -> frozenset[str]:
    """A census name list, minus entries that are ordinary words in our prose (checked in ``namey``
    too, but dropping them here keeps the sets small) and minus places/publishers common in notes."""
    words = _name_file(fname)
    # exact entries only ("Brooks" stays a surname although "brook" is a word); the 2,000 most frequent
    # names stay even when they are also words ("Smith", "Miller", "Turner")
    english = _english_words()
    return frozenset(w for rank, w in enumerate(words) if len(w) > 2 and (keep_words or (
        w not in _VOCAB and (english_ok or rank < 2000 or w not in english)))
                     and w not in _NAME_LIST_STOP and w not in _COUNTRIES_STATES)


@functools.lru_cache(maxsize=1)
def _english_words() -> frozenset[str]:
    """Ordinary English words (lower-case entries of Webster's 2nd, no proper names); loaded on first use."""
    import gzip

    with gzip.open(Path(__file__).parent / "phi_data" / "english_words.txt.gz", "rb") as fh:
        lines = fh.read().decode("utf-8").split("\n")
    return frozenset(w for w in lines if w and not w.startswith("#"))


_TNM_RE = re.compile(r"[cpyra]{0,2}[TNM](?:is|x|X|[0-4])[a-d]?(?:mi|mic|sn)?")

# Prefixes of medical compounds: a word made of one of these and an English word is not a name.
_MEDICAL_PREFIXES = (
    "anti", "trans", "micro", "macro", "neuro", "radio", "histio", "histo", "immuno", "chemo", "cyto", "hemato",
    "haemato", "onco", "peri", "post", "pre", "intra", "inter", "extra", "sub", "supra", "hyper", "hypo",
    "pseudo", "para", "poly", "mono", "multi", "non", "auto", "endo", "epi", "meta", "gastro", "hepato",
    "nephro", "osteo", "myelo", "lympho", "angio", "cardio", "pneumo", "ribo", "leuko", "leuco", "thrombo",
    "uro", "neo", "retro", "re", "un", "de", "co")

# Nationality / ancestry adjectives ("Croatian", "Pakistani", "Ashkenazi") are clinical context, not names.
_DEMONYM_ENDINGS = ("ian", "ean", "ese", "ish", "ic", "ani", "azi", "ite", "ino", "ina")

# Endings of medical / derived English words that names (almost) never have.
_WORDISH_ENDINGS = (
    "ectomy", "otomy", "ostomy", "plasty", "scopy", "graphy", "gram", "oma", "omas", "itis", "osis", "emia",
    "aemia", "pathy", "plasia", "trophy", "genic", "genesis", "logy", "logist", "cyte", "cytes", "blast",
    "tion", "tions", "sion", "ment", "ments", "ness", "ity", "ities", "ism", "isms", "ive", "ous", "able",
    "ible", "ical", "ally", "ing", "ings", "ated", "ized", "ised", "ization", "isation", "ship", "hood",
    "ward", "wards", "wise", "like", "less", "ful", "ology", "mab", "nib", "ase", "ases", "ine", "ines")


@functools.lru_cache(maxsize=65536)
def _english(word: str, endings: bool = True) -> bool:
    """``word`` (lower case) is an ordinary English or medical word, allowing plurals and British -ise;
    with ``endings``, also any word with a typical derived/medical ending."""
    ew = _english_words()
    if word in ew or word in _VOCAB or (endings and word.endswith(_WORDISH_ENDINGS)):
        return True
    if len(word) > 4 and word[-1:] in ("a", "b", "c") and _english(word[:-1], endings):  # table footnote "Necka"
        return True
    for prefix in _MEDICAL_PREFIXES:  # "Radionuclides", "Antiadrenal", "Macrometastasis"
        if word.startswith(prefix) and len(word) - len(prefix) >= 4 and _english(word[len(prefix):], endings):
            return True
    for suffix, repl in (("ies", "y"), ("es", ""), ("s", ""), ("isation", "ization"), ("ise", "ize"),
                         ("ised", "ized"), ("our", "or"), ("tre", "ter"), ("ed", ""), ("ed", "e"), ("ied", "y"),
                         ("ing", ""), ("ing", "e"), ("er", ""), ("ers", ""), ("est", ""), ("ly", ""),
                         ("'s", ""), ("’s", "")):
        stem = word[: len(word) - len(suffix)] + repl
        if word.endswith(suffix) and (stem in ew or stem in _VOCAB):
            return True
    return False


# Census names that are, in clinical notes, far more often a place, a publisher or a word.
_NAME_LIST_STOP = _wordset(
    "york london boston paris berlin springer council press manual meta america blessing winter diamond "
    "china canada france jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun "
    "mayo kettering sloan hopkins cochrane lippincott wolters kluwer elsevier medline pubmed stage grade "
    "cancer tumor tumour mass node nodes lymph chemo radiation rad scan dose doses cycle cycles god info kids user bot admin agent customer client")

_FIRST_NAMES: frozenset[str] = _wordset(_FIRST_NAMES_TEXT) | _wordset(_FIRST_NAMES_EXTRA) | \
    _name_list("first_names.txt", english_ok=True)
# census first names that are also English words ("Misty", "Angel", "Dale") need a cue like other
# ambiguous names
_LISTED_FIRST_NAMES: frozenset[str] = _wordset(_FIRST_NAMES_TEXT) | _wordset(_FIRST_NAMES_EXTRA)  # not census ones
_AMBIGUOUS_NAMES |= (_name_list("first_names.txt", english_ok=True) - _wordset(_FIRST_NAMES_TEXT)) & \
    _english_words()
# Common surnames (US census); a capitalised one that is not an ordinary word is taken as a name.
_SURNAMES: frozenset[str] = _name_list("surnames.txt")
_CENSUS_SURNAMES: frozenset[str] = _name_list("surnames.txt", keep_words=True)
# every census name, words included: only used next to a clear name
# languages a note names for its interpreter ("speaks Haitian Creole", "Tigrinya interpreter"): no names, no places;
# those that are names too ("Karen", "Chin", "Thai") are left to the name rules
_LANGUAGES_TEXT = """
creole haitian verdean tagalog ilocano ilokano cebuano visayan amharic tigrinya oromo somali swahili cantonese mandarin
toisanese taishanese hakka hokkien teochew fujianese shanghainese wolof yoruba igbo hausa twi akan ewe fula fulani
mandinka khmer hmong laotian karenni nepali bhutanese tibetan bengali bangla punjabi gujarati marathi telugu kannada
malayalam urdu hindi sindhi pashto dari farsi kurdish kurmanji sorani yiddish marshallese chuukese samoan tongan fijian
mixteco mixtec zapotec quiche nahuatl quechua aymara guarani garifuna patois
"""
_CENSUS_NAMES: frozenset[str] = _name_list("surnames.txt", keep_words=True) | \
    _name_list("first_names.txt", keep_words=True)
_LANGUAGES: frozenset[str] = _wordset(_LANGUAGES_TEXT) - _FIRST_NAMES - _CENSUS_NAMES
# verbs before a language that are census surnames too: "Speaks English." opens a sentence, it names no one
_LANGUAGE_VERBS = _wordset("speaks understands reads writes prefers")
_DRUG_SUFFIXES = (
    "mab", "nib", "lib", "platin", "taxel", "rubicin", "mycin", "cycline", "tecan", "poside", "trexate",
    "fosfamide", "mustine", "ciclib", "parib", "zomib", "limus", "lisib", "degib", "olol", "pril",
    "sartan", "azole", "semide", "prazole", "relin", "relix", "lutamide", "trozole", "afil", "caine",
    "dronate", "glutide", "gliptin", "parin", "xaban", "plase", "tinib", "citabine", "rabine", "vudine",
    "cept", "kinra", "leukin", "grastim", "poetin", "umab", "ximab", "zumab", "statin", "fungin",
    "cillin", "floxacin", "micin", "conazole", "cycline", "dipine", "oxetine", "triptan", "pam", "lam",
    "sone", "olone", "nide", "onide", "asone", "tide",
)


def _is_drugish(fold: str) -> bool:
    return len(fold) > 5 and fold.endswith(_DRUG_SUFFIXES)


def _clinical_compound(word: str) -> bool:
    """'T-cell', 'Ph-positive', 'Non-Hodgkin': hyphenated words with a common or one-letter part."""
    if "-" not in word:
        return False
    parts = word.split("-")
    if len(parts) == 2 and _fold(parts[0]) in _NAME_PREFIX_PARTICLES and parts[1][:1].isupper() and \
            parts[1].lower() not in _VOCAB:
        return False  # "Al-Khatib", "El-Sayed", "Abu-Bakr": a surname with its particle
    return any(len(p) <= 1 or p.lower() in _VOCAB or _fold(p) in _EPONYMS for p in parts)


_NAME_PREFIX_PARTICLES = frozenset("al el abu abd ben bin bou ibn ould".split())


# ---------------------------------------------------------------------------------------------------
# Structured identifiers (regular expressions; every quantifier is bounded or anchored on a literal)
# ---------------------------------------------------------------------------------------------------

_MON = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
        r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?|JAN(?:UARY)?|FEB(?:RUARY)?|"
        r"MAR(?:CH)?|APR(?:IL)?|MAY|JUNE?|JULY?|AUG(?:UST)?|SEP(?:T(?:EMBER)?)?|OCT(?:OBER)?|"
        r"NOV(?:EMBER)?|DEC(?:EMBER)?)")
_DAY = r"(?:0?[1-9]|[12]\d|3[01])"
_YEAR = r"(?:1[89]\d\d|20\d\d)"
_TIME = r"(?:(?:,?[ ]?(?:at[ ])?|T)\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:[ ]?[AaPp]\.?[Mm]\.?)?(?:Z|[+-]\d\d:?\d\d)?)?"

_NUMDATE_ANCHOR_RE = re.compile(r"\d[/.-]\d")
_MON_ANCHOR_RE = re.compile(_MON)
_PHONE_ANCHOR_RE = re.compile(r"\d\d[ .)-]{1,2}\(?\d\d|\d{7}|\+[ ]?\d|\(\d")
_DATE_RES = [
    # 2022-03-14, 2022/03/14, 2022.03.14 (+ time)
    re.compile(rf"{_YEAR}([-/.])(?:0?[1-9]|1[0-2])\1{_DAY}(?!(?!T\d)[\w/]|[.-]\d){_TIME}"),  # ...T14:22:07Z too
    # 03/14/2022, 14-03-2022, 3/14/22, 14.03.2022 (+ time)
    re.compile(rf"{_DAY}([/-]){_DAY}\1(?:{_YEAR}|\d\d)(?![\w/]|[.-]\d){_TIME}"),
    re.compile(rf"{_DAY}\.{_DAY}\.{_YEAR}(?![\w/]|[.-]\d){_TIME}"),
    # 03/2022 (month/year)
    re.compile(rf"(?:0?[1-9]|1[0-2])/{_YEAR}(?![\w/]|[.-]\d)"),
    # March 14, 2022 / Mar. 14th 2022 / March 14
    re.compile(rf"{_MON}\.?[ ]{{1,3}}{_DAY}(?:st|nd|rd|th)?\b(?:,?[ ]{{1,3}}{_YEAR}\b)?{_TIME}"),
    # 14 Mar 2022 / 14th of March, 2022 / 14 March
    re.compile(rf"{_DAY}(?:st|nd|rd|th)?[ ]{{1,3}}(?:of[ ]{{1,3}})?{_MON}\b\.?(?:,?[ ]{{1,3}}{_YEAR}\b)?"),
    # March 2022 (month + year)
    re.compile(rf"{_MON}\.?,?[ ]{{1,3}}{_YEAR}\b"),
    # 14-Mar-2022
    re.compile(rf"{_DAY}-{_MON}-(?:{_YEAR}|\d\d)\b"),
    # 05MAR2024, 2024MAR05 (as lab and pharmacy systems print them)
    re.compile(rf"{_DAY}{_MON}(?:{_YEAR}|\d\d)(?!\w)"),
    re.compile(rf"{_YEAR}{_MON}(?:0[1-9]|[12]\d|3[01])(?!\w)"),
    # 3.4.24 (d.m.yy, read like 3/4/24: a two-digit year is not parsed)
    re.compile(rf"{_DAY}\.{_DAY}\.\d\d(?![\w/]|[.-]\d)"),
]
_NOT_DMY_BEFORE_RE = re.compile(r"(?<![\w])(?:version|ver|v|release|build|section|sect|sec|§|table|fig|"
                                r"figure|chapter|ch|step|item|appendix|page|pp?|rule|no|number|#)\.?[ ]?\Z")
# a month and day without a year right after "on", "since", "until", "dated", "through" ("f/u on 4/2"); not a
# fraction of a dose or of a group ("on 1/2 tab", "on 1/3 of patients", "on 3/4 items")
_MONTH_DAY_CUE_RE = re.compile(
    r"(?:on|since|until|till|dated|through|thru|scheduled|rescheduled|planned|due|done|performed|completed|"
    r"obtained|drawn|admitted|discharged)[ ]((?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01]))"
    r"(?![\w/%]|[.,-]\d|[ ](?:of|dose|tab|tablet|strength|the|cup|pill|vial)\b|"
    r"[ ](?!(?:thi|wa|ha|hi|plu|a|i|u)s\b)[a-z]{1,20}s\b)")  # nor a count of things: "on 3/4 items"
# a month and day without a year and without such a cue, where a note puts a date (the fractions, ratios and
# scores of clinical text stay: "ECOG 0/1", "2/12 cores", "1/3 of patients", "grade 2/3", "5/5 strength", "HER2 2/3"):
#   * after an event of care up to three words back ("CT chest 2/11", "seen 3/4", "labs 3/18", "C2D1 6/17");
#   * before a colon ("9/30: called pt") or at the head of a line before an event ("- 11/5 admitted");
#   * in a list right after such a date ("seen 3/4, 3/18 and 3/25")
# and never right after a score or count word ("CT grade 1/2 toxicity", "pain 3/10", "Allred 2/8").
_MD_RE = re.compile(
    r"((?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01]))"
    r"(?![\w/%+^]|[.,-]\d|[ ]?(?:of|dose|doses|tab|tabs|tablets?|strength|power|the|cup|pill|vial|positive|negative|"
    r"involved|ratio|score|cores?|nodes?|ln|lns|hpf|patients|pts|cases|x|[x×*]|fx|fxs|fractions?|cycles?|"
    r"courses?|hours?|hrs?|h|days?|wks?|weeks?|months?|years?|inch|inches|mile|cc|way|done|complete)\b|"
    r"[ ](?!(?:thi|wa|ha|hi|plu|a|i|u|show|reveal|demonstrate|indicate|suggest|remain|note|confirm|bi-?rad|"
    r"pi-?rad|ti-?rad)s\b)"  # not "mammo 8/2 birads 2"
    r"[a-z]{1,20}s\b)")
_MD_EVENT = (
    r"seen|see|saw|visits?|appt|appointment|f/u|fu|follow-?up|clinic|hospital|infirmary|hospice|transferred|labs?|cbc|cmp|bmp|ct|cta|mri|pet|pet/ct|"
    r"scans?|imaging|xr|cxr|x-?ray|ultrasound|us|echo|egd|colonoscopy|bronch|bronchoscopy|ebus|biopsy|bx|fna|"
    r"ercp|eus|mrcp|cystoscopy|placed|inserted|implanted|removed|exchanged|replaced|"
    r"surgery|resection|lumpectomy|mastectomy|port|admit|admitted|admission|adm|discharged?|d/c|ed|er|"
    r"c\d{1,2}d\d{1,2}|sim|simulation|started|start|"
    r"stopped|held|resumed|began|last|next|called|phoned|tc|msg|message|path|pathology|cytology|consult|"
    r"tumor[ ]board|nadir|dx|diagnosed|presented|returned|restaging|staging|pft|pfts|ekg|ecg|mammogram|mammo|"
    r"dexa|bone[ ]scan|paracentesis|thoracentesis|transfusion|transfused|hospitalized|tte|note|addendum|"
    r"encounter|update|referral|referred|ref|call|telephone|phone|tel|portal|fax|faxed|received|triage|"
    r"opinion|eval|evaluation|compared[ ](?:with|to)(?:[ ](?:the[ ])?(?:prior|previous|outside))?"
    r"(?:[ ](?:study|exam|ct|scan|mri|pet))?"
)
_MD_EVENT_BEFORE_RE = re.compile(
    rf"(?<![\w/-])(?:{_MD_EVENT})(?:[ ][a-z][\w/.-]{{0,20}}){{0,3}}[ ]{{1,2}}(?:on[ ]|\()?\Z")  # "f/u dr. lee 3/16"
# a treatment count is written like a date ("cycle 2/6", "chemo 3/6": the 3rd of 6 cycles): after these a month and
# day is read only with a day past 12, where no count of cycles reaches ("C3 AC 3/21", "infusion 4/18")
_MD_CYCLE_BEFORE_RE = re.compile(
    r"(?<![\w/-])(?:c\d{1,2}|cycle[ ]\d{1,2}|chemo|chemotherapy|infusion|tx|treatment|dose|immunotherapy|"
    r"given|administered|completed)"
    r"(?:[ ][a-z][\w/+-]{0,20}){0,3}[ ]{1,2}(?:on[ ]|\()?\Z")
# a span of days ("away 12/20-1/5"): both ends are dates when either day is past 12 ("grade 1/2-2/3" stays)
_MD_RANGE_RE = re.compile(
    r"((?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01]))[ ]?[-–][ ]?((?:0?[1-9]|1[0-2])/(?:0?[1-9]|[12]\d|3[01]))"
    r"(?![\w/%+^]|[.,-]\d)")
# a quantity, not a date, after these as the last word: "seen in 3/10", "responses in approximately 1/3"
_MD_QUANT_BEFORE_RE = re.compile(
    r"[ ](?:of|in|by|per|than|to|for|about|only|up|all|and|or|with|nearly|approximately|showed|had|were|was|"
    r"are|is)[ ]{1,2}\Z")
_MD_EVENT_AFTER_RE = re.compile(rf"[ ]{{1,2}}(?:[-–:][ ]?)?(?:{_MD_EVENT})\b")
_MD_SCORE_BEFORE_RE = re.compile(
    r"(?<![\w/-])(?:grade|gr|g|ecog|ps|kps|her2|bp|strength|gleason|score|scores|allred|cps|tps|ratio|pain|nodes|"
    r"node|ln|lns|cores|core|er|pr|pgr|ki-?67|mitoses|mitotic|hpf|stage|motor|reflexes|power|sensation|pulse|"
    r"vision|ctcae|toxicity|tab|tabs|dose|take|nrs|vas|esas|likert|rate|ratios|positive|negative|involved|"
    r"sln|slns|motor|mmt|t|n|m|cn|pn|yp|x)[ ]{1,2}(?:on[ ]|\()?\Z")
_MD_LIST_GAP_RE = re.compile(
    r"[ ]{0,2}(?:,|;|,?[ ](?:and|or|&)|,[ ]then|[ ]then)[ ]{1,2}(?:[a-z][a-z/-]{0,20}[ ]){0,3}\Z")
_MD_LINE_HEAD_RE = re.compile(r"(?:^|\n)[ \t>*•-]{0,6}\Z")
_MD_TIME_AFTER_RE = re.compile(r"[ ,]{1,2}(?:at[ ]|@[ ]?)?(?:[01]?\d|2[0-3]):[0-5]\d(?!\d)")  # "4/17 9:40am"
# lower-case documents: month names in any case, but only in full dates with a year
_MON_I = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DATE_RES_LOWER = [
    re.compile(rf"\b{_MON_I}\.?[ ]{{1,3}}{_DAY}(?:st|nd|rd|th)?,?[ ]{{1,3}}{_YEAR}\b", re.I),
    re.compile(rf"\b{_DAY}(?:st|nd|rd|th)?[ ]{{1,3}}(?:of[ ]{{1,3}})?{_MON_I}\.?,?[ ]{{1,3}}{_YEAR}\b", re.I),
]
# dates in words, as dictation writes them: "the fourth of July", "march fourth", "July the 4th",
# "the twenty-first of May, 2023"; "may" is also a verb ("we may first try"), so it needs "of" before it
_ORD_DAY = (r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
            r"fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|"
            r"twenty[- ]?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|thirtieth|thirty[- ]?first|"
            rf"{_DAY}(?:st|nd|rd|th))")
_MON_FULL_I = r"(?:january|february|march|april|june|july|august|september|october|november|december)"
_NOT_ORD_DATE_AFTER = (r"(?![\w-]|[ ](?:line|look|opinion|primary|cancer|malignancy|tumou?r|trimester|degree|"
                       r"generation|course|cycle|dose|round|time|visit|step|choice|week|month|year)s?\b)")
_WORD_DATE_RES = [  # against the lower-cased text
    re.compile(rf"{_ORD_DAY}[ ]of[ ](?:{_MON_FULL_I}|may)\b(?:,?[ ]{_YEAR}\b)?"),
    re.compile(rf"{_MON_FULL_I}[ ](?:the[ ])?{_ORD_DAY}{_NOT_ORD_DATE_AFTER}(?:,?[ ]{_YEAR}\b)?"),
]
_WORD_DATE_ANCHOR_RE = re.compile(r"(?:uary|march|april|may|june|july|august|ember|october)\b")
# a holiday is a date: with its year ("Christmas Eve 2023", "Thanksgiving 2022") or after "on", "since",
# "until" ("admitted on Christmas Eve"); not a time around it ("the Sunday before Labor Day", "over Christmas"),
# nor a season or a month of fasting ("during Ramadan")
_HOLIDAY = (r"(?:christmas(?:[ ](?:eve|day))?|x-?mas(?:[ ]eve)?|new[ ]year['’]?s(?:[ ](?:eve|day))?|"
            r"thanksgiving(?:[ ]day)?|easter(?:[ ](?:sunday|monday))?|good[ ]friday|halloween|"
            r"valentine['’]?s[ ]day|independence[ ]day|memorial[ ]day|labou?r[ ]day|veterans['’]?[ ]day|"
            r"mother['’]?s[ ]day|father['’]?s[ ]day|juneteenth|st\.?[ ]patrick['’]?s[ ]day|boxing[ ]day|"
            r"cinco[ ]de[ ]mayo|rosh[ ]hashana(?:h)?|yom[ ]kippur|passover|hanukk?ah|chanukk?ah|diwali|"
            r"(?:lunar|chinese)[ ]new[ ]year|mlk[ ]day|presidents['’]?[ ]day|columbus[ ]day)")
_HOLIDAY_RE = re.compile(
    r"(?:(on|since|until|till|through|thru)[ ](?:the[ ](?:day[ ](?:before|after)[ ])?)?)?"
    rf"({_HOLIDAY})(?![\w'’])(?:,?[ ](?:of[ ])?({_YEAR})\b)?")
_HOLIDAY_ANCHOR_RE = re.compile(r"christmas|x-?mas|year|thanksgiving|easter|friday|halloween|day\b|juneteenth|"
                                r"mayo|rosh|kippur|passover|anukk?ah|diwali")

# a number that is a measurement, not an age: "he is 94 kg", "she was 95% adherent", "pt is 98.6"
_NOT_AGE_AFTER = (r"(?![.,]\d|[ ]?(?:%|°|/|-|kg|kilo|lb|pound|mg|mcg|g\b|cm|mm|in\b|inch|m\b|ml|l\b|bpm|beats|"
                  r"breaths|percent|units?|min|hours?|hrs?|h\b|days?|weeks?|wks?|months?|mos?\b|points?|pts?\b|"
                  r"times|x\b|of\b|out\b|on\b|per\b|mmhg|miles?|mph|degrees?|f\b|c\b))")
_NINETY = (r"(?:ninety(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?|"
           r"(?:a|one)[ -]hundred(?:[- ](?:and[- ])?(?:one|two|three|four|five|six|seven|eight|nine|ten))?)")
# a sex right after an age ("92 M", "92/F", "92 yo male"): after an age cue "m" is no metre, "f" no Fahrenheit
_SEX_AFTER = r"[ ]?/?[ ]?(?:m|f|male|female|man|woman)\b(?![-/'’]\w)"
# yttrium-90 ("s/p 90Y radioembolization", "90Y microspheres"), not an age of 90
_YTTRIUM_AFTER = (r"[ -]?(?:radio|microsph|sirt|glass|resin|embol|segmentectomy|lobectomy|dosimetr|"
                  r"therap|treatment)")
_AGE_RES = [  # matched against the lower-cased text
    _ci(r"(9\d|1[01]\d)(?=[ ]?-?[ ]?(?:years?|yrs?|y\.?o\.?\b|y/o|yo\b|y-o\b|-?year-old|year[ -]old|"
        r"y/?o[mf]\b)|[ ]?y\b(?![.'’-]\w)(?!" + _YTTRIUM_AFTER + r"))"),  # "92yoM", "Patient 95 y."
    _ci(r"(?:aged?|age[: ]|age[ ]?/[ ]?(?:sex|gender)[ ]?:?|turned|turns|turn|at the age of|nonagenarian)"
        rf"[ :]{{0,3}}(9\d|1[01]\d)\b(?:(?={_SEX_AFTER})|{_NOT_AGE_AFTER})"),  # "Age 92 M", "Age/Sex: 92/M"
    # "he is 94", "she's 96 and lives alone", "the patient is now 91": a person's number with no unit is an age
    _ci(r"\b(?:he|she|patient|pt|who)(?:[ ](?:is|was|turns|turned)|['’]s)(?:[ ](?:now|currently|already|nearly|"
        r"almost|over))?[ ](9\d|1[01]\d)\b" + _NOT_AGE_AFTER),
    # spelled out: "ninety-four-year-old", "aged ninety-one"
    _ci(rf"\b({_NINETY})(?=[ -]years?[ -]old\b|[ -]y/?o\b)"),
    _ci(rf"(?:\baged?|\bage[:]|\bturned|\bat the age of)[ :]{{1,3}}({_NINETY})\b"),
]
# more ages in short forms, read only near a number from 90 to 119 (``_AGE_NUM_ANCHOR_RE``)
_AGE_NUM_RES = [
    _ci(r"(?:sex|gender)[ ]?/[ ]?age[ ]?:?[ ]{0,3}(?:m|f|male|female)[ ]?/[ ]?(9\d|1[01]\d)\b(?![.,]?\d)"),
    # an age and a sex heading a note or a line: "92M with AML", "HPI: 93 M", "- 91 yo F"; not "95 m walk"
    _ci(r"(?:^|\n)[ \t>*•-]{0,6}(?:(?:hpi|cc|id|pt|patient|demographics|identification)[ ]?:?[ ]{0,3})?"
        rf"(9\d|1[01]\d)(?=(?:[ ]?(?:y/?o|y\.o\.|yrs?|y))?{_SEX_AFTER}(?!\.?[ ](?:walk|distance|away|long|"
        r"tall|reads|bases|bp|cells|copies|st|street|ave|avenue|rd|road|blvd|pl|place|ct|court|ln|lane|"
        r"way)\b))"),
    # "Patient now 96", "Mother, now 93, lives alone" ("platelets now 96" stays)
    _ci(r"\b(?:he|she|patient|pt|who|mother|father|mom|dad|husband|wife|spouse|partner|"
        r"grand(?:mother|father)|aunt|uncle|sister|brother)[ ,(]{1,2}(?:now|currently|today)[ ]"
        r"(9\d|1[01]\d)\b" + _NOT_AGE_AFTER),
]
_AGE_NUM_ANCHOR_RE = re.compile(r"(?<![\d.,])(?:9\d|1[01]\d)(?!\d)")
# in mixed-case text a capital M or F after a number is a sex ("a 92M with AML", "pt is 91 yo F"), not after a
# temperature cue ("Tmax 99 F"), nor in "95M reads" or "$92M"
_AGE_SEX_CASED_RE = re.compile(
    r"(?<![\w.,/$€£#+=-])(9\d|1[01]\d)(?=(?:[ ]?y/?o)?[ ]?([MF])\b(?![-/'’]\w|"
    r"[ ]?(?:reads|bases|bp|cells|copies)\b|[ ]?(?:and|/|,)[ ]?\d{1,4}[ ]?[MF]\b|"  # "95 M and 20 F": counts
    r"\.?[ ](?:St|Street|Ave|Avenue|Rd|Road|Blvd|Pl|Place|Ct|Court|Ln|Lane|Dr|Drive|Way|Ter|Terrace)\b))")
_TEMP_CUE_RE = _ci(r"(?:\b(?:t|tm|tmax|temps?|temperature|fevers?|febrile|afebrile|pyrexi\w*|spik\w*|"
                   r"degrees?|oral|rectal|axillary|tympanic)\b|°)[^\n]{0,20}\Z")
_ROOM_BEFORE_RE = re.compile(  # "Apt 92F"
    r"(?<![\w])(?:apt|apartment|unit|suite|ste|room|rm|bed|flat|floor|fl|bldg|building|box|no|lot|space|bay|"
    r"pod|locker|gate|seat|site|row)\.?[ ]?#?[ ]?\Z|#[ ]?\Z")
# an age set off by commas after a sex or a name: "F, 95, with AML", "Mr X, 91, presents", "Ann Lee, 94, is"
_AGE_APPOSITION_RE = re.compile(
    r"(?:(?<![\w.])(?:[MF]|[Mm]ale|[Ff]emale|[Ww]oman|[Mm]an)|"
    r"\b(?:Mr|Mrs|Ms|Miss|Mx)\.?(?:[ ][A-Z][\w'’-]*){1,3}),"
    r"[ ]?(9\d|1[01]\d)(?=[ ]?(?:,|;|\)|\.(?!\d)|\n|$|[ ](?:y|yo|y/o|yrs?|years?)\b))|"
    r"\b[A-Z][a-z'’-]+[ ][A-Z][a-z'’-]+,[ ](9\d|1[01]\d),[ ](?=[a-z])")
# A date of birth: "DOB", "D.O.B.:", "date of birth", "birth date", "born on/in", "b." right before the date.
_BIRTH_CUE = (r"(?:\bd\.?[ ]?o\.?[ ]?b\b\.?|\by\.?[ ]?o\.?[ ]?b\b\.?|\bdate[ ]of[ ]birth|\bbirth[ -]?date|"
              r"\bbirthday|\byear[ ]of[ ]birth|\bbirth[ ]?year|\bborn(?:[ ](?:on|in))?(?:[ ]the)?|"
              r"(?<![\w.])b\.)"
              r"[ \t]*(?:\([^()\n]{0,12}\))?[ \t]*[:=#-]?[ \t]*")
_BIRTH_CUE_END_RE = re.compile(_BIRTH_CUE + r"\Z", re.I)
# a bare year of birth ("born in 1929"): Safe Harbor keeps years, but not one that shows an age over 89, and
# the redactor cannot know today's date, so every year of birth goes
# A few words of vagueness may stand between cue and year ("DOB sometime around the spring of 1930"); only these,
# so that "DOB in chart; diagnosed in 2019" keeps its year
_BIRTH_VAGUE = (r"(?:(?:some[ ]?time|around|about|circa|ca\.|approx\.?|approximately|roughly|probably|possibly|"
                r"early|mid|late|in|the|of|year|spring|summer|autumn|fall|winter|unknown|uncertain|unclear|"
                r"estimated|est\.|during|~)[ ,-]{0,2}){0,5}")
# a decade of birth ("DOB: early 1930s", "born in the late 1940s", "born in the '20s") goes too
_BIRTH_YEAR_RE = re.compile(
    _BIRTH_CUE + _BIRTH_VAGUE + rf"({_YEAR}|1[89]\d0['’]?s|['’]\d0s|['’]\d\d|(?:nineteen[ -])?(?:twenties|thirties|forties|"
    r"fifties|sixties|seventies|eighties|nineties))(?![\w/]|[.-]\d)", re.I)
# a year with the age at that time gives the year of birth ("at age 40 in 1960", "in 1960, aged 40"): it goes too
_AGE_AT = r"(?:at[ ](?:the[ ])?age(?:[ ]of)?|aged?|age:?)[ ]\d{1,3}"
# ("Tonsillectomy 1938 at age 8", "Appendectomy 1950 (age 20)", "in 1950 when she was 20", "In 1929 she was
# born": a year of birth told in words)
_WHEN_AGED = r"when[ ](?:he|she|they|the[ ]patient|patient|pt)[ ](?:was|turned)[ ](?:aged?[ ])?\d{1,3}\b"
_YEAR_WITH_AGE_RE = re.compile(
    rf"\b{_AGE_AT}(?:[ ]?(?:years?|yrs?|y/?o))?,?[ ](?:in|during|since)[ ]({_YEAR})(?![\w/]|[.-]\d)|"
    rf"\b(?:in|during|since)[ ]({_YEAR}),?[ ][(]?{_AGE_AT}\b|"
    rf"\b({_YEAR}),?[ ][(]?(?:at[ ](?:the[ ])?age(?:[ ]of)?|age:?)[ ]\d{{1,3}}\b|"
    rf"\b(?:in|during)[ ]({_YEAR}),?[ ]"
    rf"(?:{_WHEN_AGED}|(?:he|she|they|the[ ]patient|patient|pt)[ ]was[ ]born\b)|"
    rf"\b{_WHEN_AGED}(?:[ ]years[ ]old)?,?[ ](?:in|during)[ ]({_YEAR})(?![\w/]|[.-]\d)", re.I)
_YEAR_AGE_ANCHOR_RE = re.compile(r"\b(?:age|born|when)")
# ages that stay in the text (<= 89): with them an interval could add up to an age over 89
_KEPT_AGE_RE = _ci(r"\b(\d{1,2})(?:[ ]?-?[ ]?(?:years?|yrs?)[ -]?old|[ ]?(?:y/o|yo|y\.o\.)(?![\w]))|"
                   r"\b(?:aged?|age[ ]?:|at[ ]the[ ]age[ ]of)[ ]{0,3}(\d{1,2})\b"
                   r"(?![.,]\d|[ ]?(?:%|months?|weeks?|days?))")

_EMAIL_RE = re.compile(r"(?<![\w.+%-])[\w.+%-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
# a social-media handle: after a platform or handle word ("tweets as @linhpham58", "Instagram @maria.lopez"), or
# on its own when it mixes a word with digits or "_" ("@jdoe_1960"); "f/u @ 9am", "@MSK", "@home", "@C1D1" stay
_HANDLE_RE = re.compile(r"@([A-Za-z][\w.]{1,29}[A-Za-z0-9_])(?![\w@-])")
_HANDLE_CUE_RE = _ci(r"\b(?:twitter|tweets?|tweeted|instagram|insta|ig|tiktok|facebook|fb|snapchat|snap|threads|"
                     r"x\.com|handle|username|user[ ]name|screen[ ]name|venmo|cash[ ]?app|telegram|whatsapp|"
                     r"youtube|linkedin|reddit|discord)\b")
_URL_RE = _ci(r"(?:(?:https?|ftp)://|www\.)[^\s<>\"'\[\]{}|\\^`]{1,2000}")
_TLDS = (
    "com|net|org|edu|gov|mil|int|info|biz|health|io|ai|app|dev|me|us|uk|ca|au|de|fr|nl|be|ch|at|se|no|"
    "dk|fi|is|ee|lv|lt|pl|cz|sk|hu|si|hr|rs|ro|bg|gr|cy|it|es|pt|ie|jp|cn|in|br|mx|ru|nz|za|eu|tv|ly"
)
_DOMAIN_RE = re.compile(
    rf"(?<![\w@.-])(?:[A-Za-z0-9][A-Za-z0-9-]{{0,62}}\.){{1,6}}(?:{_TLDS})\b(?!\.\w)(?:/[^\s<>\"']{{0,500}})?")
_TLD_ANCHOR_RE = re.compile(rf"\.(?:{_TLDS})\b")
_IPV4_ANCHOR_RE = re.compile(r"\d\.\d{1,3}\.\d{1,3}\.\d")
_IPV4_RE = re.compile(
    r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w]|\.\d)")
_IPV6_RE = re.compile(
    r"(?<![\w:])(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,7}:"
    r"(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,6})?|::(?:[0-9A-Fa-f]{1,4}:){0,6}[0-9A-Fa-f]{1,4})(?![\w:])")
_SSN_RE = re.compile(r"\d{3}-\d{2}-\d{4}(?:[A-Z][0-9A-Z]?)?(?![\w-])")  # with a letter: an old Medicare HICN
_SSN_LABEL_RE = _ci(
    r"(?:SSN|SS#|social[ ]security(?:[ ](?:number|no\.?|#))?)[ \t]*(?:is|:|#|-)?[ \t]*(\d{3}[- ]?\d{2}[- ]?\d{4})\b")

_ID_LABEL_RE = _ci(
    r"(?:MRN|MR#|medical[ ]record|record|chart|account|acct|licen[cs]e|DL|device|serial|SN|S/N|policy|member|"
    r"medicare|medicaid|medi-cal|MBI|HICN|"
    r"subscriber|insurance|health[ ]plan|beneficiary|certificate|card|IBAN|plate|VIN|patient[ ]ID|"
    r"ID|identifier|accession|encounter|case|FIN|CSN|NPI|DEA|passport|visa|claim|group|pin|badge|"
    r"employee|routing|bank|specimen|requisition|order|user[ ]?name|user[ ]id|login|log-in)"
    r"(?:[ ](?:number|no\.?|num|#|id|code))?[ \t]{0,3}(?:is|was|#?:|#|-|=)?[ \t]{0,3}(?:(?:number|no\.?|#)[ \t]{0,3})?"
    r"((?=[A-Z0-9-]{0,30}\d)[A-Z0-9][A-Z0-9-]{3,30})\b")
# a record number after a short label that is also a word or an abbreviation of clinical prose ("ACC" is a
# cancer, "path" a word), so only with "#", "no." or "number" ("Acc# 998877", "Path # S24-12345", "Surg path
# no. S24-1"), and a hospital account record ("HAR 998877") with digits only
_ID_HASH_LABEL_RE = _ci(
    r"(?:acc|accn|path|surg(?:ical)?[ ]path(?:ology)?|pathology|cyto(?:logy)?|har)[ \t]{0,2}(?:#|no\.|number)"
    r"[ \t]{0,3}:?[ \t]{0,3}((?=[A-Z0-9-]{0,30}\d)[A-Z0-9][A-Z0-9-]{3,30})\b|"
    r"har[ \t]{1,3}:?[ \t]{0,3}(\d{5,15})\b")
_ID_HASH_ANCHOR_RE = re.compile(r"#|no\.|number|har\b")
# a licence or ID number after its issuing state ("License MA S1234567", "DL# CA D1234567", "license no. NY
# 123-456-789"): the number goes, the state stays (a state alone is no identifier); the state must be written in
# capitals in mixed-case text (checked where it is used), so "license in 2019" stays
_ID_STATE_LABEL_RE = _ci(
    r"(?:(?:driver'?s?|driving|state|medical|nursing)[ ])?(?:licen[cs]e|lic\.?|DL|ID(?:[ ]card)?|permit)"
    r"(?:[ ](?:number|no\.?|num|#|id|state))?[ \t]{0,3}(?:is|was|#?:|#|-|=|\()?[ \t]{0,3}"
    r"(?:(?:number|no\.?|#)[ \t]{0,3})?"
    r"([A-Z]{2})(?:\)[ \t]{0,2}:?|[ \t]{0,2}[,:])?[ \t]{1,3}(?:(?:number|no\.?|#)[ \t]{0,2}:?[ \t]{0,3})?"
    r"((?=[A-Z0-9-]{0,30}\d)[A-Z0-9][A-Z0-9-]{3,30})\b")
_ID_STATE_ANCHOR_RE = _ci(r"\b(?:licen[cs]e|lic|DL|ID|permit)\b")
# Medicare Beneficiary Identifier: 11 characters, digit 1-9, letter, letter/digit, digit, letter, letter/digit,
# digit, letter, letter, digit, digit (no S L O I B Z), with or without dashes (or spaces) after the 4th and the 7th
_MBI_L = "[AC-HJKMNP-RT-Y]"
_MBI_RE = re.compile(
    rf"[1-9]{_MBI_L}[{_MBI_L[1:-1]}0-9]\d([- ]?){_MBI_L}[{_MBI_L[1:-1]}0-9]\d\1{_MBI_L}{{2}}\d\d(?![\w-])")
_MBI_ANCHOR_RE = re.compile(r"[1-9][A-Z][A-Z0-9]\d")
_MAC_RE = re.compile(r"[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){4}(?![\w:-])")
_CARD_RE = re.compile(r"\d{4}(?:[ -]\d{4}){2}[ -]\d{1,7}(?![\w]|[.-]\d)")
_LONG_DIGITS_RE = re.compile(r"\d{8,30}(?![\w]|[.,]\d)")
_DIGIT5_RE = re.compile(r"\d{5,}")
_ID_SAFE_PREFIX = ("nct", "isrctn", "actrn", "eudract", "rs", "grch", "hg", "chr", "nm_", "np_", "ctri",
                   "jrct", "drks", "umin", "chictr", "pmid", "doi")

_PHONE_LABEL_RE = _ci(
    r"(?:phone|tel|telephone|mobile|cell|cellphone|fax|pager|beeper|contact|call|desk|office|home|work|"
    r"ph|mob|direct|landline|number|"
    r"(?:answering|reach(?:ed)?|call(?:ed)?|text|ring|contact)(?:[ ](?:me|him|her|us|them|the[ ]\w+))?[ ](?:at|on))\b\.?[ \t]{0,3}(?:#|no\.?|number|num)?[ \t]{0,3}[:\-]?\s{0,4}"
    r"(\+?[\d(][\d \t().-]{5,24}\d(?:[ ]?(?:x|ext\.?|extension)[ ]?\d{1,6})?)")
# a sentence ends after a labelled number and the next one starts with a number that is no part of it: an age
# or a count ("Phone (617) 555-0142. 64F with ...", "Tel 617-555-0142. 64-year-old man", "... 0958. 71 y/o")
_PHONE_SENTENCE_END_RE = re.compile(r"(?<=\d)\.[ \t]+(?=\d)")
_WORD_AFTER_NUMBER_RE = re.compile(r"[ \t]?-?[^\W\d_]")
# after a country code, a one-digit area or mobile prefix ("+33 6 12 34 56 78") or a bracketed trunk zero
# ("+44 (0)20 7946 0958"); an area code and a long subscriber number ("+49 30 12345678")
_PHONE_RE = re.compile(
    r"(?:\+[ ]?\d{1,3}[ .-]?(?:\(0\)[ ]?)?(?:\d[ .-])?)?(?:1[ .-])?(?:\(\d{1,5}\)[ .-]?(?:\d{1,4}[ .-]?)?)?\d{2,5}"
    r"(?:[ .-]\d{2,5}){1,4}(?:[ ]?(?:x|ext\.?)[ ]?\d{1,6})?(?![\w]|[.-]\d)"
    r"|\+[ ]?\d{7,15}(?![\w]|[.-]\d)|\+[ ]?\d{1,3}[ .-]\d{1,5}[ .-]\d{5,10}(?![\w]|[.-]\d)"
    r"|\d{10,11}(?![\w]|[.,]\d)")
# a pager number or a phone extension on its own: "pager 4417", "pgr #2231", "beeper 555", "ext. 3321",
# "extension 44", "x4521" (a short number, so only after its label; not "extranodal extension 2 mm", "PgR 80%",
# "PgR 150" (an H-score: "pgr" needs 4 digits or a "#"), "x400 magnification", "x10^9/L", "x3 days")
# a number read out digit by digit in a dictation ("two eight one five five five zero one four four"): seven or more
# digit words in a row are a phone number or a record number, never clinical prose
_DIGIT_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
_SPOKEN_DIGITS_RE = re.compile(rf"{_DIGIT_WORD}(?:[ ,-]{{1,2}}{_DIGIT_WORD}){{6,19}}(?![\w'’-])")
_DIGIT_VALUE = {w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())} | {"oh": 0}
_SPOKEN_ANCHOR_RE = re.compile(rf"\b{_DIGIT_WORD}[ ,-]{{1,2}}{_DIGIT_WORD}[ ,-]{{1,2}}{_DIGIT_WORD}\b")
_PAGER_RE = _ci(
    r"(pager|pgr|beeper|bpr|ext|extension)\b\.?[ \t]{0,2}(?:no\.?|number|num)?[ \t]{0,2}[:=-]?[ \t]{0,2}(#[ ]?)?"
    r"(\d{2,6})(?![\w%+/^]|[.,]\d|[ ]?(?:x|×)[ ]?10)")
_PAGER_ANCHOR_RE = _ci(r"pager|pgr|beeper|bpr|ext")
_EXT_X_RE = re.compile(r"[xX](\d{3,5})(?![\w%+/^]|[.,]\d)")
_EXT_X_ANCHOR_RE = re.compile(r"[xX]\d{3}")
_PHONE_CONTEXT_RE = _ci(r"\b(?:call|calls|called|phone|tel|page|paged|reach|contact|office|line|desk|clinic|"
                        r"number|dial|ring|voicemail|vm|fax|cell|mobile|nurse|triage|scheduling|extension|ext)\b")
_EXT_CLINICAL_BEFORE_RE = _ci(
    r"(?:extranodal|extracapsular|extraprostatic|extrathyroidal|extrascleral|extraocular|local|direct|tumou?r|"
    r"nodal|capsular|perineural|intracranial|intraductal|parenchymal|soft[ ]tissue|microscopic|gross|further|"
    r"of|with|no|any|and)[ ]{1,2}\Z")
_NOT_EXT_X_AFTER_RE = _ci(r"[ ]?(?:magnification|mag\b|objective|fields?|hpf|power|original|lens|zoom|"
                          r"times|daily|days?|weeks?|doses?|cycles?|mg|ml)")
_UNIT_AFTER_RE = re.compile(
    r"[ \t]{0,2}(?:mg|mcg|µg|ug|g\b|kg|ml|mL|l\b|L\b|%|cells|copies|iu|IU|u\b|U\b|units?|/|x[ ]?10|×|"
    r"mm|cm|gy|Gy|cgy|cGy|mmol|µmol|pg|ng|mci|mbq|patients|cases|pts|people|women|men|subjects)")
# a "/" that lists numbers, not a unit's ("mg/m2"): one before a space or another phone number ("617.555.0199
# / +1 617 555 0123", "617-555-0199/617-555-0198"), unless a unit follows the space ("250 000 000 / L")
_SLASH_LIST_AFTER_RE = re.compile(
    r"[ \t]{0,2}/(?:[ \t]+(?!(?:mg|mcg|µg|ug|g|kg|m2|m²|ml|dl|l|µl|ul|mm3|hpf|d|day|h|hr|wk|week|cycle)\b)"
    r"|\+?[ ]?\(?\d{1,3}\)?[ .-]?\d{3}[ .-]?\d{3,4}(?![\w]|[.-]\d))", re.I)

_ZIP_LABEL_RE = _ci(
    r"(?:zip(?:[ ]?code)?|postal[ ]code|post[ ]?code)[ \t]{0,3}(?:is|:|#|=)?[ \t]{0,3}"
    r"(\d{3,5}(?:[ -]\d{2,4})?|[A-Z]\d[A-Z][ ]?\d[A-Z]\d|[A-Z]{1,2}\d[A-Z\d]?[ ]\d[A-Z]{2})\b")
_STATE_BEFORE_RE = re.compile(r"(?:^|[^\w])([A-Z]{2})[ ]{1,2}$")  # "IL " before a ZIP code
_STATE_NAME_BEFORE_RE = re.compile(r"(?<![\w'’-])([^\W\d_]+(?:[ ][^\W\d_]+)?),?[ ]{1,2}$")  # "Iowa 50219"
_NOT_ZIP_AFTER_RE = re.compile(r"[ ]?(?:[a-z]|%|\+)")  # "Ohio 10000 patients": a count
# postcodes that read as nothing else: Canadian ("M5G 2M9", with its space) and British ("SE5 9NR", "SW1A 1AA"),
# with the letters each system allows (British inward codes never use C I K M O V: not "D1 8MG")
_CA_POSTAL_RE = re.compile(r"[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z][ ]\d[ABCEGHJ-NPRSTV-Z]\d(?![\w-])")
_UK_POSTCODE_RE = re.compile(
    r"(?:[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]?|[A-PR-UWYZ]\d[A-HJKPSTUW]|[A-PR-UWYZ][A-HK-Y]\d[ABEHMNPRV-Y])"
    r"[ ]\d[ABD-HJLNP-UW-Z]{2}(?![\w-])")
_POSTCODE_ANCHOR_RE = re.compile(r"\d[A-Z]{1,2}\d?\b")
_ZIP5_RE = re.compile(r"\d{5}(?:-\d{4})?(?![\w-])")

# --- street addresses -------------------------------------------------------------------------------
_AW = r"[^\W\d_][\w'’.∆-]{0,40}"  # an address word
_STREET_TYPES = (
    r"Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|Square|Sq|Terrace|"
    r"Ter|Way|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Close|Crescent|Cres|Row|Alley|Trail|Trl|Path|Walk|Mews|"
    r"Grove|Gardens|Park|Plaza|Loop|Pike|Run|Point|Ridge|Heights|Hill|View|Crossing|Cove|Coves|Mall|"
    r"Squares|Isle|Islands|Pass|Route|Expressway|Freeway|Landing|Junction|Gate|Quay|Wharf|Esplanade|"
    r"Causeway|Manor|Meadows?|Villas?|Estates?|Fort|Harbor|Harbour|Shores?|Springs?|Station|Summit|"
    r"Turnpike|Viaduct|Vista|Ways|Wells?|Greens?|Groves?|Lakes?|Hollow|Bypass|Center|Centre|Common|Port")
_STREET_TYPE_ABBR = _wordset("st ave rd blvd ln dr ct pl sq ter pkwy hwy cir cres trl")
_STREET_TYPE_WORD_RE = re.compile(rf"(?:{_STREET_TYPES})s?")
_STREET_TYPE_LONG = r"Street|Avenue|Road|Boulevard|Lane|Drive|Terrace|Parkway|Highway|Close|Crescent|Square"
_ADDR_US_RE = re.compile(
    rf"\d{{1,6}}(?:[ -]\d{{1,6}})?[A-Za-z]?[ ]{{1,3}}((?:{_AW}[ ]{{1,3}}){{1,4}})"
    rf"(?:{_STREET_TYPES})\b\.?")
_ADDR_US_RE_I = _ci(_ADDR_US_RE.pattern)
_ADDR_NONUM_RE = re.compile(rf"((?:[A-Z][\w'’-]{{1,40}}[ ]){{1,3}})(?:{_STREET_TYPE_LONG})\b")
_STREET_PREFIX = (
    r"rue|rua|rúa|avenue|avenida|avda\.?|av\.?|via|viale|vicolo|corso|piazza|piazzetta|largo|calle|carrer|"
    r"camino|paseo|plaza|praça|praca|travessa|estrada|strada|ulica|ul\.|aleja|chaussée|chaussee|"
    r"boulevard|bd\.|quai|allée|impasse|chemin|route|place|platz|Λ\.|οδός|Πλατεία|Λεωφόρος|sokak|"
    r"cadde|calea|str\.|utca|út")
_ADDR_PREFIX_NUM_RE = _ci(  # "Via Tasso 129", "ul. Miła 57", "Avda. Rio Nalon 58"
    rf"(?:{_STREET_PREFIX})[ ]{{1,3}}((?:{_AW}[ ]{{1,3}}){{0,5}}?)"
    rf"\d{{1,5}}[A-Za-z]?\b\.?")
_ADDR_LEAD_PREFIX_RE = _ci(  # "36 rue de pologne", "69 Av Sidi Lakhmi"
    rf"\d{{1,6}}(?:[ ]{{1,3}}\d{{1,6}})?[ ]{{1,3}}(?:{_STREET_PREFIX})[ ]{{1,3}}"
    rf"{_AW}(?:[ ]{{1,3}}{_AW}){{0,4}}")
_STREET_SUFFIX = (
    r"vej|vegen|veien|vägen|gata|gatan|gade|stræde|straede|strasse|straße|weg|laan|straat|gracht|plein|"
    r"kade|dijk|katu|tie|kuja|polku|gasse|platz|allee|damm|utca|útja|sokak|backe|gränd|torget|plads|"
    r"alle|allé|braut|stígur|vegur|stien|veg|vei|stig|tún|ulica|cesta|iela|tänav|gatve|straat|steeg|"
    r"singel|dreef|baan|hof|ring|gården|gärde|bakken|haugen|lia|lund|road|street|avenue|út|rkp|terrasse|"
    r"gate|sgate|vegur|stræti|tori|aukio|rinne|mäki|ranta|väylä")
_STREET_SUFFIXES = tuple(_STREET_SUFFIX.replace("\\.", ".").split("|"))
# street-type words written as a separate word after the name ("Kossuth u. 12", "Brivibas iela 3",
# "Narva mnt 5", "Parnu tee 8"): too short or too common to be matched as the end of a longer word
_STREET_WORDS_AFTER = _wordset("u utca út útja tér krt körút tee mnt maantee puiestee tänav iela gatve")
_ADDR_SPNUM_RE = re.compile(r"[ ]{1,3}\d{1,5}[A-Za-z]?\b\.?")
_ADDR_PRE_WORDS_RE = re.compile(r"(?:(?<=[ \t\n,:>])|^)(?:[^\W\d_][\w'’.∆-]{0,40}[ ]{1,3}){1,3}$")
_ADDR_LEAD_RE = re.compile(  # "30102 Kaevu 94", "975 3968 Bygget 91", "3565 Πλατεία Συντάγματος 204"
    rf"\d{{1,6}}(?:[ ]{{1,3}}\d{{1,6}})?[ ]{{1,3}}((?:{_AW}[ ]{{1,3}}){{1,4}})"
    rf"\d{{1,5}}[A-Za-z]?(?![\w%/]|[.,-]\d)\.?")
# camel case ("CheckMate"): a capital right after a lower-case letter, except after the name prefixes of
# "McNeil", "MacArthur", "DeWitt", "LeBlanc", "DiNapoli", "VanDyke"
_CAMEL_CASE_RE = re.compile(r"(?<![^\W\d_])(?!(?:Mc|Mac|De|Di|Da|Du|La|Le|Van|Von)[A-Z])[^\W\d_]*?[a-z][A-Z]")
_ADDR_UNIT_RE = re.compile(
    r"(?:Apt|Apartment|Suite|Ste|Unit|Flat|Bldg|Building|Floor|Fl|Room|Rm)\.?[ ]{0,2}#?[ ]?\d{1,6}[A-Za-z]?\b")
_ADDR_HASH_RE = re.compile(r"#[ ]?\d{1,5}[A-Za-z]?\b(?=[ \t]*(?:,|\n|$))")
_ADDR_UNIT_RE_I = _ci(
    r"(?:apt|apartment|suite|ste|unit|flat|bldg|building|floor|room)\.?[ ]{0,2}#?[ ]?\d{1,6}[a-z]?\b")
# house number + name + unit, the street type left out: "4471 Wrenfield Suite 12", "12 Rosendal 4 apt 9"
_ADDR_RES_UNIT = r"(?:Apt|Apartment|Suite|Ste|Unit|Flat)\.?[ ]{0,2}#?[ ]?\d"
_ADDR_NUM_UNIT_RE = re.compile(
    rf"\d{{1,6}}(?:[ ]{{1,3}}\d{{1,6}})?[A-Za-z]?[ ]{{1,3}}((?:{_AW}[ ]{{1,3}}){{1,4}}?)"
    rf"(?:\d{{1,5}}[A-Za-z]?[ ]{{1,3}})?"
    rf"(?={_ADDR_RES_UNIT})")
_ADDR_NUM_UNIT_RE_I = _ci(_ADDR_NUM_UNIT_RE.pattern)
_ADDR_RES_UNIT_RE = re.compile(_ADDR_RES_UNIT)  # the pattern above is tried only just before such a unit
_ADDR_RES_UNIT_RE_I = _ci(_ADDR_RES_UNIT)
# a rural route or highway contract route is written with its box ("RR 2 Box 118", "HC 63 Box 20"; a bare "RR 2"
# is a relative risk), or spelled out ("Rural Route 3, Box 45"); Canada adds site and compartment ("RR 1 Site 5
# Comp 12")
_ADDR_BOX_RE = _ci(
    r"(?:(?:P\.?[ ]?O\.?[ ]?Box|PSC|Unit|CMR|Rural[ ]Route|Star[ ]Route)[ ]{1,3}\d{1,6}|"
    r"(?:R\.?R\.?|H\.?C\.?|HCR|RFD|R\.?F\.?D\.?)[ ]{1,3}\d{1,4}(?=,?[ ]{1,3}(?:Box|Site)[ ]))"
    r"(?:,?[ ]{1,3}Site[ ]{1,3}\d{1,4})?(?:,?[ ]{1,3}(?:Box|Comp)[ ]{1,3}\d{1,6})?")
_ADDR_MIL_RE = re.compile(
    r"(?:USNS|USNV|USS|USCGC)[ ]{1,3}[^\W\d_][\w'’-]{0,40}(?:[ ][A-Z][\w'’-]{0,40})?"
    r"|(?:FPO|APO|DPO)[ ]{1,3}(?:AA|AE|AP)[ ]{1,3}\d{5}\b")
_ADDR_MIL_RE_I = _ci(_ADDR_MIL_RE.pattern.replace("[A-Z]", "[^\\W\\d_]"))
_ADDR_CORNER_RE = _ci(r"(corner[ ]of[ ]{1,3}(?:[^.?!\n]|\.(?=[ ]and[ ]|[ ][a-z]|\w)){3,120})")
_ADDR_CUE_RE = _ci(
    r"(?:lives?[ ](?:at|on)|living[ ](?:at|on)|resides?[ ]at|located[ ](?:at|on)|address(?:[ ]is|:)|"
    r"send[ ](?:it|them|this|a[ ]new[ ]one|the[ ]\w{1,20})?[ ]?to|ship(?:ped)?[ ]to|mail(?:ed)?[ ]to|"
    r"deliver(?:ed)?[ ]to|return(?:ed)?[ ](?:it|them|this|mail|post)?[ ]?to|"
    r"meet[ ](?:me|you|us)[ ]at|stop[ ]at|off[ ]at|is[ ]at|office[ ]is[ ]at|is[ ]on)"
    r"[ \t]{1,3}(?:the[ ]\w{1,12}[ ]side[ ]of[ ])?((?:[^\W\d_][\w'’.-]{0,40}[ ]{1,3}){1,4}\d{1,5}[A-Za-z]?\b)")
# after a cue, a number followed by one of these counts or measures something: not a house number
_ADDR_CUE_NOT_NUM_RE = _ci(
    r"[ ]?(?:%|am\b|pm\b|a\.m|p\.m|o'clock|h\b|hrs?\b|hours?|min|days?|weeks?|wks?|months?|years?|yrs?|"
    r"times|cycles?|doses?|tablets?|pills?|mg|mcg|g\b|kg|ml|units?|patients?|people|copies|of\b)")
# words that open the closing line of a message, never a city's name ("Thanks", "Best wishes", "Regards")
_SIGN_OFFS = frozenset("thanks thank thx ty regards best cheers sincerely cordially respectfully yours kind warm "
                       "warmly many bye".split())
_LINE_LEAD = " \t>?*•-"  # list markers and quoting in front of the lines of a block
# continuation of an address block: separator + (unit | postcode | place)
_ADDR_SEP_RE = re.compile(r"[ \t]*,[ \t]*(?:\n[ \t>?*•-]*)?|[ \t]*\n(?:[ \t]*\n)?[ \t>?*•-]*(?:,[ \t]*)?|[ \t]+")
_POSTAL = (r"(?:[A-Z]{1,3}[ -])?\d{3,6}(?:[ -]\d{2,4})?(?![\w])|[A-Z]\d[A-Z][ ]?\d[A-Z]\d\b|"
           r"[A-Z]{1,2}\d[A-Z\d]?[ ]\d[A-Z]{2}\b")
_POSTAL_RE = re.compile(_POSTAL)
_PLACE_RE = re.compile(
    rf"(?:[^\W\d_]|∆)[\w'’.∆-]{{0,40}}(?:[ ]{{1,3}}(?:[^\W\d_]|∆)[\w'’.∆-]{{0,40}}){{0,4}}(?:[ ]{{0,2}}\([^()\n]{{1,30}}\))?"
    rf"(?:[ ]{{1,3}}(?:{_POSTAL}))?")

# --- locations -------------------------------------------------------------------------------------
_CITY_CUE_RE = _ci(
    r"(?:lives?[ ]in|living[ ]in|moved[ ](?:here[ ]|back[ ])?(?:from|to)|originally[ ]from|born[ ]in|"
    r"resides?[ ]in|residing[ ]in|lived[ ]in|resided[ ]in|flew[ ](?:in[ ])?to|fly(?:ing)?[ ]to|travel(?:l?ing|l?ed)?[ ]to|"
    r"(?:i[ ]am|i'm|we[ ]are|we're)[ ](?:currently[ ])?in|home[ ](?:city|town)|hometown|located[ ]in|"
    r"based[ ]in|city[ ]of|town[ ]of|village[ ]of|grew[ ]up[ ]in|comes?[ ]from|came[ ]from|year[ ]in|"
    r"visiting|trip[ ]to|where[ ]?:|location[ ]?:|city[ ]?:|town[ ]?:|birthplace[ ]?:|place[ ]of[ ]birth[ ]?:|"
    r"arrived[ ](?:at|in)|returned[ ]to|back[ ]to)[ \t:]{1,3}(?:the[ ])?")
# words that start place names ("New Westminster", "Port Paien") and are ordinary words on their own
_PLACE_PREFIXES = _wordset("new port fort mount mt saint st san santa los las upper lower north south east west "
                           "station lake county")
# common words that end a place name ("Jersey City", "Oak Park"): ordinary words, so they stopped it before
_PLACE_SUFFIXES = _wordset("city town village falls springs beach heights park hills harbor harbour junction")
# weaker cues: a following unknown capitalised (not all-caps) word is taken as a place
_PREP_CUE_END_RE = re.compile(r"(?:in|at|to|from|near|around|outside)[ ]\Z")
# times and places of care that Title Case writing capitalises after a preposition ("Dr. Patel At Bedside")
_CARE_TIMES_PLACES = frozenset(
    "bedside chairside bedtime noon midday midnight lunch lunchtime breakfast dinner supper mealtime mealtimes "
    "daycare handover handoff checkout checkin intake triage weekends nights desk nursing bedrest".split())
_TITLE_BEFORE_RE = re.compile(r"(?<![\w'’-])(?:" + "|".join(sorted(_TITLES)) + r")\.?[ ]{1,2}\Z", re.I)
_NOT_PLACE_AFTER_RE = re.compile(r"['’]s\b|[ ]et[ ]al\b|[ ]*,[ ]*(?:MD|M\.D\.|RN|DO|NP|PhD)\b")  # a person's
_PLACE_PREP_END_RE = re.compile(r"(?<![\w'’-])(?:in|near|In|Near)[ ]\Z")
_TIME_WORDS = _wordset("last next this since until after before during prior recently previously")
# verbs of care or residence before "in"/"at"/"from"/...: in a Title Case note the capitalised word after them is a
# place even when it is English ("Treated In Reading", "Lives In Florence")
_PLACE_VERBS = _wordset(
    "treated seen lives lived living resides resided residing born moved relocated transferred referred admitted "
    "hospitalized hospitalised followed works worked working raised stationed located based diagnosed operated "
    "evaluated discharged returned travelled traveled visiting staying stays stayed imaged biopsied scanned "
    "radiated irradiated receiving received resected grew retired")

# "she lives in Flushing", "resides in Mobile": in mixed-case prose the capital after a lower-case residence cue
# makes even a clinical word a town; not these states of living ("Lives in Denial")
_RESIDENCE_IN_RE = re.compile(r"(?:[Ll]ives|[Ll]iving|[Rr]esides|[Rr]esiding|[Ll]ived|[Rr]esided)[ ]in[ ]")
_NOT_RESIDENCES = _wordset("fear denial pain poverty isolation comfort peace solitude squalor hiding limbo dread "
                           "terror anxiety seclusion harmony luxury filth chaos misery silence")
# In a lower-case or ALL-CAPS note the capital is gone, so after a residence cue an English word is a town only when
# it stands alone ("SHE LIVES IN FLUSHING WITH HER SON", "lives in mobile, al"), and never one of these words of a
# living situation ("LIVES IN SHELTER", "lives in assisted living", "LIVES IN SUBSIDIZED HOUSING", "rural areas")
_DWELLINGS = _wordset(
    "home homes house houses housing apartment apartments apt condo trailer shelter shelters hotel motel car van rv "
    "camper tent dorm dormitory facility facilities snf ltc hospice care assisted subsidized supportive transitional "
    "temporary independent affordable public senior group nursing rural urban suburban area areas community "
    "communities town city village country countryside suburbs state county same separate own section low "
    "government shared boarding halfway sober foster basement room rooms unit bed household households residence "
    "place region neighborhood neighbourhood")
# "moved here from", "originally from": the capital of a lone word after them is a town's too
_MOVED_RE = re.compile(r"(?:[Mm]oved[ ](?:here[ ]|back[ ])?(?:from|to)|[Oo]riginally[ ]from|[Gg]rew[ ]up[ ]in|"
                       r"[Rr]elocated[ ](?:from|to))[ ]")
_LOWER_RESIDENCE_IN_RE = re.compile(r"(?:lives|living|resides|residing|lived|resided)[ ]in[ ](?:the[ ])?\Z")
# the word then ends its clause or a function word or ", <state>" follows it
_TOWN_ALONE_AFTER_RE = re.compile(
    r"[ ]?[,;.)\n]|\Z|[ ](?:with|and|since|for|near|in|at|on|until|from|by|but|alone|who|where|per|last|this|"
    r"when|after|before|about|around|\d+[ ](?:years?|months?|weeks?)[ ]ago)\b")
# ", AL", ", Alabama" after a city: it names a town even when it is a word ("resides in Mobile, AL")
_STATE_AFTER_RE = re.compile(
    r",?[ ]{1,2}(?:(?:" + "|".join(sorted(_US_STATE_ABBR)) + r")\b(?![\w-])|"
    r"(?:" + "|".join(sorted(_US_STATE_NAMES, key=len, reverse=True)) + r")\b)")
# in lower case a state abbreviation must end its clause and not be a word ("lives in mobile, al."; not
# "visiting family, in ...")
_STATE_AFTER_RE_I = re.compile(
    r",?[ ]{1,2}(?:(?:" + "|".join(sorted(a.lower() for a in _US_STATE_ABBR
                                            if a not in ("OR", "IN", "ME", "OK", "HI", "DE", "OH", "MA", "LA", "CO",
                                                         "ID", "PA", "DC", "PR")))
    + r")(?=[ ]?(?:[,.;)\n]|\Z))|(?:" + "|".join(sorted((n.lower() for n in _US_STATE_NAMES), key=len, reverse=True))
    + r")\b)")
# city names that are stop words elsewhere (a phone label)
_STOP_WORD_TOWNS = frozenset({"mobile"})

# --- organisations ---------------------------------------------------------------------------------
_ORG_HEAD_RE = re.compile(
    r"(?:Hospitals?|Clinics?|Medical[ ]Cent(?:er|re)|Health[ ]Cent(?:er|re)|Cancer[ ]Cent(?:er|re)|"
    r"Cancer[ ]Institute|Medical[ ]Group|Health[ ]System|Health[ ]Network|Health[ ]Services|Healthcare|Health[ ]Care|"
    r"Infirmary|Hospice|Institute|University|College|Laborator(?:y|ies)|Labs|Pharmacy|Nursing[ ]Home|SNF|Skilled[ ]Nursing(?:[ ]Facility)?|"
    r"Rehabilitation[ ]Cent(?:er|re)|Surgery[ ]Cent(?:er|re)|Surgical[ ]Cent(?:er|re)|Oncology[ ]Associates|"
    r"Medical[ ]Associates|Inc|Incorporated|LLC|L\.L\.C\.|Ltd|Limited|Corp|Corporation|PLC|GmbH|Group|"
    r"Partners|Associates|Technologies|Software|Consulting|Solutions|Services|Systems|Insurance|"
    r"Holdings|Industries|Enterprises|Company|Co|Sons|Foundation|Agency|Bank|Trust|Capital|"
    r"Analytics|Media|Labs?|Networks|Transit|Traffic|Movers|Lines|Research|Service|Brothers|Bros|"
    r"Medicine|Physicians|Primary[ ]Care|Urgent[ ]Care|Oncology|Cancer[ ]Care|Imaging|Radiology|"
    r"Orchestra|Choir|Chorus|Country[ ]Club|Club)\b\.?")
_ORG_UNIV_OF_RE = re.compile(
    r"(?:University|Universit[àé]|Universidad|Hospital|Institute|College|Hospice|Clinic)[ ]of[ ]((?:the[ ])?"
    r"(?:[A-Z][\w'’-]{1,40}[ ]?){1,4})")
_ORG_EXEMPT_FIRST = _wordset(
    "national american european international world federal eastern western southwest southwestern "
    "northern nordic british canadian japanese german french gynecologic children's childrens alliance "
    "swog ecog nccn asco esmo nrg rtog cooperative united us u.s. the foundation")
_ORG_EXEMPT_ANY = _wordset(
    "oncology cooperative study trials society network consortium association agency administration "
    "collaborative working leukemia alliance commission committee council")
_ORG_GENERIC_BODY = _wordset("american national international european world")
_ORG_OF_HEADS = _wordset(
    "university college institute bank hospital school society department center centre academy museum "
    "church sisters daughters friends board")
_ORG_CONNECT = {"of", "the", "and", "&", "for", "de", "du", "la", "der", "y"}
# words before an organisation name that are not part of it ("the", "Two Nordic Lymphoma Group Trials")
_ORG_LEAD_DROP = _wordset("the a an at in to two three four five six seven eight nine ten several both")
# prepositions that a Title Case note capitalises ("Seen At Springfield Clinic", "Transferred From Bangor To Mercy
# Hospital"): an organisation name before its head does not reach back over one
_ORG_STOP_PREPS = _wordset("at in to from with by on via near into per")
# "Mass General", "Toronto General (Hospital)": a hospital named "<place> General", whose words are all common
# ("mass" is prose) so the uncommon-word test cannot find it.  These words before "General" make a rank or an
# office instead ("Surgeon General", "Attorney General"); a capitalised word after it that is prose makes a
# heading ("General Information"), one that is not joins the name ("Mass General Brigham").
_ORG_GENERAL_RE = re.compile(
    r"((?:[A-Z][a-z][\w'’-]{0,30}[ ]){1,2})General(?:[ ]([A-Z][a-z][\w'’-]{1,30}))?\b(?![-'’])")
_GENERAL_RANKS = _wordset(
    "surgeon attorney secretary inspector consul director lieutenant major brigadier postmaster solicitor "
    "accountant governor auditor comptroller registrar vicar superior adjutant quartermaster paymaster "
    "commissary procurator advocate receiver treasurer controller captain colonel commander chaplain marshal "
    "judge general")
# heads that name ordinary things too: an organisation only with an uncommon word before them
_ORG_GENERIC_HEADS = _wordset(
    "medicine physicians oncology imaging radiology group research service brothers services systems capital "
    "media trust bank lines traffic transit analytics co sons company agency foundation institute college "
    "university labs lab partners associates orchestra choir chorus club") | {
        "primary care", "urgent care", "cancer care", "country club"}
# bodies named by their kind ("the Halvorsen Orchestra"): only the name before the head is redacted
_ORG_KIND_HEADS = _wordset("orchestra choir chorus club") | {"country club"}
# "worked for Initech", "employed by Vandelay Industries": the capitalised words after it
_ORG_WORK_CUE_RE = _ci(r"(?:(?:work(?:s|ed|ing)?(?:[ ](?:part|full)[- ]time|[ ](?:nights|days|weekends|evenings))?|job|intern(?:ed|ing)?)[ ](?:for|at)|"
                       r"employed[ ](?:for|at|by)|employer[ ]?:|"
                       r"(?:works?|worked|working|employed)[ ]as[ ](?:an?[ ])?[a-z-]{2,20}(?:[ ][a-z-]{2,20})?[ ](?:for|at))[ ]")
# "Initech is a software company", "Vandelay was an import-export firm"
_ORG_NOUNS = (r"company|firm|agency|bank|start-?up|corporation|business|manufacturer|provider|retailer|brand|"
              r"consultancy|organi[sz]ation|non-?profit|charity|insurer|publisher|studio|label|employer")
_ORG_NOUN_RE = re.compile(rf"(?:{_ORG_NOUNS})\b")  # cheap anchor for the pattern below
_ORG_IS_A_RE = re.compile(
    r"((?:[A-Z][\w'’&-]{1,40}[ ]){1,4})(?:is|was)[ ](?:a|an|the)[ ](?:[\w-]{1,30}[ ]){0,4}?"
    rf"(?:{_ORG_NOUNS})\b")
_ORG_IS_A_RE_I = re.compile(
    r"((?:[^\W\d_][\w'’&-]{1,40}[ ]){1,4})(?:is|was)[ ](?:a|an|the)[ ](?:[\w-]{1,30}[ ]){0,4}?"
    rf"(?:{_ORG_NOUNS})\b")
# lower-case text: "... vandelay industries inc."
_ORG_SUFFIX_LOWER_RE = re.compile(
    r"((?:[^\W\d_][\w'’&-]{0,40}[ ]{1,2}){1,3})(?:inc|llc|ltd|corp|gmbh|plc)\b\.?")
_ORG_SUFFIX_ANCHOR_RE = re.compile(r"(?:inc|llc|ltd|corp|gmbh|plc)\b")

# --- names -----------------------------------------------------------------------------------------
_TOKEN_RE = re.compile(r"(?:[^\W\d_]|∆)+(?:['’][^\W\d_]+|-[^\W\d_]+){0,4}")  # ∆: a Greek Delta look-alike
_COORD_LIST_RE = re.compile(
    r"(?<![\w'’-])[A-Z][\w'’-]{1,30}(?:,[ ][A-Z][\w'’-]{1,30}){0,6},?[ ](?:and|&)[ ][A-Z][\w'’-]{1,30}(?![\w'’-])")
_CONTRACTION_HEADS = _wordset(
    "i you we they he she it that there what who where how let don can won isn aren wasn weren didn doesn "
    "couldn wouldn shouldn haven hasn hadn ain here")
# a bare capitalised word directly followed by one of these verbs is a person ("Irenka is very reliable")
_PERSON_VERB_RE = re.compile(
    r"[ \t]{1,2}(?:(?:lives|lived|said|says|began|begins|shouted|told|asked|wrote|writes|works|worked|spent|"
    r"died|married|moved|flew|gave|had[ ]given|has[ ]given|denies|denied|reports|reported[ ]that|states|stated|"
    r"complains|complained|presents|presented[ ]with|tolerated|agrees|agreed|understands|declined|"
    r"wishes|prefers|returns|returned[ ]to|smokes|drinks|walks|ambulates|is[ ]very|was[ ]born|is[ ]from|"
    r"is[ ]a[ ]\d{1,3}|was[ ]seen|will[ ]be[ ]talking|listed[ ]his|listed[ ]her|feels|felt|thinks|"
    r"thought|wants|wanted|called|calls|visited|visits|arrived|came|went|lost|won)\b)|[ ]?,[ ]can[ ]I\b")
# Verbs and function words that follow a name in a note and so end it ("dr. smith saw her", "Dr. Smith
# Recommended ...", "DR KOWALSKI NOTES ..."): a name after a title stops at one of these.  Capitalised, a census
# name among them ("Dr. Ahmed Said", "Dr. Anna Held") is still read as a name.
_NOTE_VERBS = _wordset("""
    saw see sees seen seeing said say says saying told tell tells asked ask asks spoke speaks speak talked talks
    called calls phoned emailed wrote writes replied answered is was are were has had have will would can could
    may might must shall should did does do recommended recommends recommend noted notes note reported reports
    stated states agreed agrees advised advises feels felt thinks thought believes wants wanted plans planned
    ordered orders prescribed prescribes started starts stopped stops discussed discusses reviewed reviews
    examined examines evaluated evaluates assessed assesses explained explains suggested suggests confirmed
    confirms documented documents referred refers requested requests performed performs came comes went goes
    gave gives sent sends signed signs follow follows followed admitted admits discharged discharges consented
    declined declines presented presents returned returns arrived arrives visited visits met meets checked
    checks changed changes increased decreased reduced held holds continued continues resumed resumes added
    adds removed removes placed obtained informed informs reassured counseled counselled counsels updated
    contacted agreeing recommending noting reporting stating also then today tonight now again already still
    just personally herself himself who which that as about re regarding flew retired died denies denied
    endorses endorsed complains complained tolerates tolerated notified paged aware works worked lives lived
    resides resided residing stays stayed
""")


def _past_tense(lw: str) -> bool:
    """``lw`` (lower case) is the past tense of a common word: "tolerated", "stopped", "notified"; not "melamed"."""
    if len(lw) <= 4 or not lw.endswith("ed"):
        return False
    return lw[:-2] in _VOCAB or lw[:-1] in _VOCAB or (lw.endswith("ied") and lw[:-3] + "y" in _VOCAB) or \
        (lw[-3] == lw[-4] and lw[:-3] in _VOCAB)
_KIN_RE = re.compile(
    r"['’]s[ ](?:kid|kids|son|sons|daughter|daughters|wife|husband|partner|mother|father|mom|dad|brother|"
    r"sister|child|children|family|friend|boyfriend|girlfriend|fianc[ée]e?|widow|widower|caregiver|"
    r"grandson|granddaughter|grandmother|grandfather|aunt|uncle|niece|nephew|cousin|killers?|doctor)\b")
_SPEAKER_RE = re.compile(r"^[ \t>?*•-]{0,8}([^\W\d_][\w'’-]{1,30})[ \t]?:[ \t]{0,4}(?=\S)", re.M)
_CRED_RE = re.compile(rf"(?:{_CREDENTIALS})(?![\w-])")
_CRED_PRE_RE = re.compile(r"(?<=[^\W\d_])\.?,?[ \t]{1,3}$")
_PROTECTED_PHRASES_RE = _ci(
    r"(?:Sister[ ]Mary[ ]Joseph|Ann[ ]Arbor|Li-Fraumeni|Kaplan-Meier|Reed-Sternberg|Charcot-Marie-Tooth|"
    r"Von[ ]Hippel-Lindau|von[ ]Willebrand|Mary[ ]Joseph|Lou[ ]Gehrig|Johns[ ]Hopkins[ ]criteria|"
    r"St\.?[ ]John's[ ]wort|Hodgkin|Non-Hodgkin|Wilms|Ewing|Merkel|Burkitt|Kaposi|"
    # "Bence Jones protein", "Heng risk", "IMDC (Heng)": a protein and a risk model ("Mr. Heng" is a name)
    r"Bence[ -]Jones(?=[ ]?(?:proteins?|proteinuria|light|myeloma|urine|test|negative|positive)\b)|"
    r"Heng(?=[ ](?:risk|criteria|model|score|prognostic|classification|group)\b)|IMDC[ ]?[(/-][ ]?Heng\b|"
    r"M\.?[ ]?D\.?[ ]Anderson(?:[ ]Cancer[ ]Center)?(?=[ ](?:Symptom|Dysphagia|Prognostic|Scor|Model|Risk|Index|"
    r"Inventory|Classification|Criteria|Scale|Staging|Nomogram)))\b")

# "lives in Ann Arbor" is the city ("Ann Arbor stage" is the staging)
_ARBOR_HOME_BEFORE_RE = re.compile(
    r"(?:(?:lives?|living|lived|resides?|residing|resided|moved|relocated|originally|grew[ ]up|born|visiting|"
    r"home|house|apartment)[ ](?:back[ ]|here[ ])?(?:in|to|from|near|at)|(?:is|are|was|comes?|came)[ ]from|"
    r"native[ ]of)[ ]\Z")
_ARBOR_STAGE_AFTER_RE = re.compile(r"[ ]?(?:stag|class|criteri|system|modifi|[(]?[iv]{1,3}[abe]?\b)")


def _arbor_home(low: str, s: int, e: int) -> bool:
    """The protected "Ann Arbor" at s..e is the city someone lives in, not the staging."""
    home = _ARBOR_HOME_BEFORE_RE.search(low, max(0, s - 40), s) is not None
    return home and low.startswith("ann arbor", s) and not _ARBOR_STAGE_AFTER_RE.match(low, e)


# ---------------------------------------------------------------------------------------------------
# Span bookkeeping
# ---------------------------------------------------------------------------------------------------

_PRIO = {
    "EMAIL": 100, "URL": 96, "IP": 95, "SSN": 92, "ID_LABEL": 90, "DATE": 88, "AGE": 87,
    "PHONE_LABEL": 85, "ID_CARD": 91, "PHONE": 80, "ZIP": 78, "ADDRESS": 70, "PHONE_SPACE": 66,
    "ID": 60, "LOCATION": 55,
}
_OUT_TYPE = {"ID_LABEL": "ID", "PHONE_LABEL": "PHONE", "ID_CARD": "ID", "PHONE_SPACE": "PHONE",
             "ZIP": "LOCATION"}


class _Mask:
    """Character mask of already-claimed text."""

    __slots__ = ("m",)

    def __init__(self, n: int) -> None:
        self.m = bytearray(n)

    def free(self, s: int, e: int) -> bool:
        return e > s and self.m.find(1, s, e) == -1

    def take(self, s: int, e: int) -> None:
        self.m[s:e] = b"\x01" * (e - s)


def _iter(rx: re.Pattern, s: str, bad: str = ""):
    """``rx.finditer(s)`` keeping only matches not preceded by a word character or one of ``bad``.

    Patterns are written without a leading ``\\b`` / look-behind (which would disable the regex
    engine's fast first-character scan); the boundary is checked here instead.
    """
    for m in rx.finditer(s):
        st = m.start()
        if st:
            c = s[st - 1]
            if c.isalnum() or c == "_" or c in bad:
                continue
        yield m


def _windows(anchor: re.Pattern, s: str, before: int, after: int) -> list[tuple[int, int]]:
    """Merged windows around the matches of a cheap anchor pattern."""
    out: list[list[int]] = []
    n = len(s)
    for m in anchor.finditer(s):
        a, b = max(0, m.start() - before), min(n, m.end() + after)
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def _iter_win(rx: re.Pattern, s: str, wins: list[tuple[int, int]], bad: str = ""):
    """Like :func:`_iter`, restricted to the given windows."""
    for a, b in wins:
        for m in rx.finditer(s, a, b):
            st = m.start()
            if st:
                c = s[st - 1]
                if c.isalnum() or c == "_" or c in bad:
                    continue
            yield m


def _trim(text: str, s: int, e: int, chars: str = " \t\n,.;:!?)]}'\"") -> tuple[int, int]:
    while e > s and text[e - 1] in chars:
        e -= 1
    while s < e and text[s] in " \t\n":
        s += 1
    return s, e


# ---------------------------------------------------------------------------------------------------
# Detectors for structured identifiers
# ---------------------------------------------------------------------------------------------------

def _valid_phone(text: str, s: int, e: int, labelled: bool) -> bool:
    cand = text[s:e]
    core = re.split(r"(?i)[ ]?(?:x|ext\.?|extension)[ ]?\d", cand, maxsplit=1)[0]
    digits = sum(c.isdigit() for c in core)
    if not 7 <= digits <= 15:
        return labelled and 6 <= digits <= 15
    if labelled:
        return True
    groups = [g for g in re.split(r"[ \t().-]+", core) if g]
    if len(groups) > 6:
        return False
    if _UNIT_AFTER_RE.match(text, e) is not None and _SLASH_LIST_AFTER_RE.match(text, e) is None:
        return False
    if s > 0 and text[s - 1] in "$€£":
        return False
    if core.startswith("+") or "(" in core:
        return True
    if len(groups) == 1:
        return 10 <= digits <= 11
    if all(re.fullmatch(r"(?:19|20)\d\d", g) for g in groups):
        return False
    small = [g for g in groups if len(g) < 2]
    if small and not (len(small) == 1 and groups[0] == "1" and digits == 11):
        return False
    if "." in core and not re.fullmatch(r"[\d.]+", core):
        return False
    return True


# (an Australian Medicare number ends in a one-digit issue number: "2123 45670 1")
_ID_MORE_GROUPS_RE = re.compile(r"(?:[ ]\d{2,6}){1,4}(?:[ ]\d(?=[ \t]*(?:[,;)\n]|$|\.(?!\d))))?(?![\w-]|[.,]\d)")


def _id_groups_end(text: str, s: int, e: int) -> int:
    """End of a labelled number written in groups ("DL 1234 5678 9012", "MRN 1234 5678"): a short digit group
    after the label goes on over the digit groups that follow it (not over a count or a measure: "ID 1234 500 mg")."""
    if e - s > 6 or not text[s:e].replace("-", "").isdigit():
        return e
    g = _ID_MORE_GROUPS_RE.match(text, e)
    if g is None or _UNIT_AFTER_RE.match(text, g.end()) or _ADDR_CUE_NOT_NUM_RE.match(text.lower(), g.end()):
        return e
    return g.end()


def _structured(text: str, low: str, lower_mode: bool, as_written: str = "") -> list[tuple[int, int, str]]:
    """``as_written``: the text before an ALL-CAPS note was lowered, for the codes whose capitals say what they are."""
    """Return candidate (start, end, kind) spans for pattern-based identifiers."""
    out: list[tuple[int, int, str]] = []
    add = out.append

    if "@" in text:
        for m in _EMAIL_RE.finditer(text):
            s, e = _trim(text, m.start(), m.end(), ".-")
            if "@" in text[s:e] and "." in text[text.index("@", s):e]:
                add((s, e, "EMAIL"))
        for m in _HANDLE_RE.finditer(text):
            if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "._%+-"):
                continue  # part of an e-mail address
            v = m.group(1)
            if (re.search(r"[\d_]", v) and re.search(r"[^\W\d_]{3}", v)) or \
                    _HANDLE_CUE_RE.search(low, max(0, m.start() - 40), m.start()):
                add((m.start(), m.end(), "EMAIL"))
    for m in _iter(_URL_RE, low):
        s, e = _trim(text, m.start(), m.end())
        if ")" in text[s:e] and "(" not in text[s:e]:  # markdown "(url)"
            e = text.index(")", s)
        add((s, e, "URL"))
    if "." in text and _TLD_ANCHOR_RE.search(low):
        for m in _DOMAIN_RE.finditer(text):
            s, e = _trim(text, m.start(), m.end())
            host = text[s:e].split("/")[0].lower()
            if host.count(".") == 1 and host.split(".")[0] in ("e", "i", "fig", "vs", "no", "al", "et"):
                continue
            add((s, e, "URL"))
    if "." in text and _IPV4_ANCHOR_RE.search(text):
        for m in _IPV4_RE.finditer(text):
            add((m.start(), m.end(), "IP"))
    if "::" in text or text.count(":") >= 5:
        for m in _IPV6_RE.finditer(text):
            v = m.group()
            if v.count(":") >= 2 and (any(c.isalpha() for c in v) or v.count(":") >= 4):
                add((m.start(), m.end(), "IP"))
    for m in _iter(_SSN_RE, text, "-"):
        add((m.start(), m.end(), "SSN"))
    for m in _iter(_SSN_LABEL_RE, low):
        add((m.start(1), m.end(1), "SSN"))

    num_wins = _windows(_NUMDATE_ANCHOR_RE, text, 12, 40)
    mon_wins = _windows(_MON_ANCHOR_RE, text, 12, 40)
    for k, rx in enumerate(_DATE_RES):
        for m in _iter_win(rx, text, mon_wins if 4 <= k <= 9 else num_wins, ".-/"):
            s, e = _trim(text, m.start(), m.end(), " \t,")
            v = text[s:e]
            if k == 10 and _NOT_DMY_BEFORE_RE.search(low, max(0, s - 12), s):
                continue  # "Section 3.4.24", "version 3.4.24"
            nums = re.findall(r"\d+", v)
            # numeric d/m/y: one of the first two fields must be a month
            if re.match(r"\d{1,2}[/.-]\d{1,2}[/.-]\d", v):
                a, b = int(nums[0]), int(nums[1])
                if a > 12 and b > 12:
                    continue
            add((s, e, "DATE"))
    if lower_mode:
        for rx in _DATE_RES_LOWER:
            for m in rx.finditer(text):
                add((m.start(), m.end(), "DATE"))
    if _WORD_DATE_ANCHOR_RE.search(low):
        for rx in _WORD_DATE_RES:
            for m in _iter(rx, low):
                add((m.start(), m.end(), "DATE"))
    if _HOLIDAY_ANCHOR_RE.search(low):
        for m in _iter(_HOLIDAY_RE, low):
            if m.group(1) or m.group(3):
                add((m.start(2), m.end(), "DATE"))
    for m in _iter_win(_MONTH_DAY_CUE_RE, low, num_wins):  # "seen on 4/2", "since 11/14": a date without its year
        add((m.start(1), m.end(1), "DATE"))
    last_md = -1  # end of the last month/day taken, for the list rule
    for m in _iter_win(_MD_RANGE_RE, low, num_wins, "/.,+-"):
        if max(int(m.group(1).split("/")[1]), int(m.group(2).split("/")[1])) > 12 and \
                not _MD_SCORE_BEFORE_RE.search(low, max(0, m.start() - 30), m.start()):
            add((m.start(1), m.end(1), "DATE"))
            add((m.start(2), m.end(2), "DATE"))
    for m in _iter_win(_MD_RE, low, num_wins, "/.,+-"):
        s, e = m.start(1), m.end(1)
        head = low[max(0, s - 60):s]
        if (_MD_SCORE_BEFORE_RE.search(head) and not (s >= 3 and low[s - 3:s] == "on ")) or \
                _UNIT_AFTER_RE.match(text, e):
            continue  # "grade 2/3", "CT 5/10 mm"
        cue = _MD_EVENT_BEFORE_RE.search(head) or (int(low[s:e].split("/")[1]) > 12 and
                                                   _MD_CYCLE_BEFORE_RE.search(head))
        compared = head.endswith(("compared with ", "compared to "))  # "compared with 2/3." ("2/3 of" stays)
        if ((cue and (not _MD_QUANT_BEFORE_RE.search(head) or compared)) or
                (low[e:e + 1] == ":" and not low[e + 1:e + 2].isdigit()) or _MD_TIME_AFTER_RE.match(low, e) or
                (_MD_LINE_HEAD_RE.search(head) and _MD_EVENT_AFTER_RE.match(low, e)) or
                (last_md >= 0 and s - last_md <= 80 and _MD_LIST_GAP_RE.fullmatch(low, last_md, s))):
            add((s, e, "DATE"))
            last_md = e

    for m in _BIRTH_YEAR_RE.finditer(text):
        add((m.start(1), m.end(1), "DATE"))
    for a, b in _windows(_YEAR_AGE_ANCHOR_RE, low, 50, 50):
        for m in _YEAR_WITH_AGE_RE.finditer(text, a, b):
            g = next(i for i in range(1, 6) if m.group(i))
            add((m.start(g), m.end(g), "DATE"))
    for rx in _AGE_RES:
        for m in _iter(rx, low):
            add((m.start(1), m.end(1), "AGE"))
    age_wins = _windows(_AGE_NUM_ANCHOR_RE, low, 60, 40)
    for rx in _AGE_NUM_RES:
        for m in _iter_win(rx, low, age_wins):
            add((m.start(1), m.end(1), "AGE"))
    for a, b in age_wins:
        if not lower_mode and not as_written:  # mixed case: the case of "M" and "F" tells a sex
            for m in _AGE_SEX_CASED_RE.finditer(text, a, b):
                before = max(0, m.start() - 40)
                if (m.group(2) == "M" or not _TEMP_CUE_RE.search(low, before, m.start())) and \
                        not _ROOM_BEFORE_RE.search(low, max(0, m.start() - 14), m.start()):
                    add((m.start(1), m.end(1), "AGE"))
        for m in _AGE_APPOSITION_RE.finditer(as_written or text, a, b):
            g = 1 if m.group(1) else 2
            add((m.start(g), m.end(g), "AGE"))

    for m in _iter(_ID_LABEL_RE, low):
        v = m.group(1)
        if sum(c.isdigit() for c in v) >= 3 and not v.lower().startswith(_ID_SAFE_PREFIX):
            s, e = _trim(text, m.start(1), m.end(1), "-")
            add((s, _id_groups_end(text, s, e), "ID_LABEL"))
    for m in _iter_win(_ID_HASH_LABEL_RE, low, _windows(_ID_HASH_ANCHOR_RE, low, 30, 40)):
        g = 1 if m.group(1) else 2
        if sum(c.isdigit() for c in m.group(g)) >= 3:
            s, e = _trim(text, m.start(g), m.end(g), "-")
            add((s, _id_groups_end(text, s, e), "ID_LABEL"))
    for m in _iter_win(_ID_STATE_LABEL_RE, low, _windows(_ID_STATE_ANCHOR_RE, low, 20, 60)):
        state, v = text[m.start(1):m.end(1)], m.group(2)
        if state.upper() in _US_STATE_ABBR | _CA_PROVINCE_ABBR and (lower_mode or state.isupper()) and \
                sum(c.isdigit() for c in v) >= 3 and not re.fullmatch(_YEAR, v):
            s, e = _trim(text, m.start(2), m.end(2), "-")
            add((s, _id_groups_end(text, s, e), "ID_LABEL"))
    for m in _iter_win(_MBI_RE, text, _windows(_MBI_ANCHOR_RE, text, 0, 16)):
        add((m.start(), m.end(), "ID_LABEL"))
    if ":" in text or "-" in text:
        for m in _iter(_MAC_RE, text, ":-"):  # a device's MAC address
            add((m.start(), m.end(), "ID_LABEL"))
    for m in _iter(_CARD_RE, text, "+.-"):
        add((m.start(), m.end(), "ID_CARD"))
    for m in _iter(_LONG_DIGITS_RE, text, "+.-"):
        n = m.end() - m.start()
        add((m.start(), m.end(), "ID_CARD" if n >= 12 else "ID"))
    seen_tok = set()
    for m in _DIGIT5_RE.finditer(text):  # alphanumeric tokens with >= 9 digits ("F162823540116")
        a, b = m.start(), m.end()
        while a > 0 and (text[a - 1].isascii() and (text[a - 1].isalnum() or text[a - 1] == "-")):
            a -= 1
        while b < len(text) and (text[b].isascii() and (text[b].isalnum() or text[b] == "-")):
            b += 1
        a, b = _trim(text, a, b, "-")
        while a < b and text[a] == "-":
            a += 1
        if (a, b) in seen_tok:
            continue
        seen_tok.add((a, b))
        v = text[a:b]
        if sum(c.isdigit() for c in v) >= 9 and any(c.isalpha() for c in v) and len(v) <= 60:
            if not v.lower().startswith(_ID_SAFE_PREFIX):
                add((a, b, "ID_CARD"))

    for m in _iter(_PHONE_LABEL_RE, low):
        s, e = _trim(text, m.start(1), m.end(1), " \t.-(")
        if ")" in text[s:e] and "(" not in text[s:e]:  # "(beeper 2207). 72 yo": the bracket closes the number
            s, e = _trim(text, s, text.index(")", s), " \t.-(")
        if (dot := _PHONE_SENTENCE_END_RE.search(text, s, e)) and _WORD_AFTER_NUMBER_RE.match(text, e) and \
                _valid_phone(text, s, dot.start(), True):
            e = dot.start()  # "Tel 617-555-0142. 64-year-old man": the age after the full stop stays
        if _valid_phone(text, s, e, True):
            add((s, e, "PHONE_LABEL"))
    for m in _iter_win(_PAGER_RE, low, _windows(_PAGER_ANCHOR_RE, low, 0, 30)):
        label, s, e = m.group(1), m.start(3), m.end(3)
        if _UNIT_AFTER_RE.match(text, e) or _NOT_EXT_X_AFTER_RE.match(low, e):
            continue
        if label == "pgr" and not m.group(2) and e - s < 4:
            continue  # "PgR 150": a progesterone receptor H-score
        if label == "pgr" and text[m.start(1):m.start(1) + 3] in ("PgR", "PGR") and not m.group(2) and \
                not _PHONE_CONTEXT_RE.search(low, max(0, m.start() - 40), m.start()):
            continue  # "ER 95, PGR 2000"? an assay value next to its receptor
        if label.startswith("ext") and (_EXT_CLINICAL_BEFORE_RE.search(low, max(0, m.start() - 25), m.start())
                                        or label == "ext" and e - s < 3 and not m.group(2)):
            continue  # "extranodal extension 44": the extent of a tumour, not a phone line
        add((m.start(2) if m.group(2) else s, e, "PHONE_LABEL"))
    for m in _iter_win(_EXT_X_RE, text, _windows(_EXT_X_ANCHOR_RE, text, 0, 8)):
        s, e = m.start(1), m.end(1)
        pre = text[max(0, m.start() - 1):m.start()]
        if pre and pre not in " \t\n(,;:/":
            continue
        if re.search(r"\d[ ]?\Z", text[max(0, m.start() - 3):m.start()]) or _NOT_EXT_X_AFTER_RE.match(low, e):
            continue  # "2 x400", "x400 magnification"
        ctx = _PHONE_CONTEXT_RE.search(low, max(0, m.start() - 40), m.start()) or \
            (m.start() >= 2 and re.search(r"\d[ ,]{1,2}\Z", text[max(0, m.start() - 3):m.start()]))
        if not ctx and (e - s < 4 or text[e - 2:e] == "00"):
            continue  # a bare "x400", "x1000": a magnification or a count
        add((m.start(), e, "PHONE_LABEL"))
    for m in _iter_win(_PHONE_RE, text, _windows(_PHONE_ANCHOR_RE, text, 12, 40), "+.-"):
        s, e = _trim(text, m.start(), m.end(), " \t.-")
        if re.fullmatch(r"\d{5}-\d{4}", text[s:e]) and (sm := _STATE_BEFORE_RE.search(text[max(0, s - 5):s])) and \
                sm.group(1) in _US_STATE_ABBR:
            continue  # "Boston MA 02118-1234": a ZIP+4 code (the ZIP rule below takes it), no phone
        if _valid_phone(text, s, e, False):
            core = text[s:e]
            spaced = not any(c in core for c in "+()-.")
            add((s, e, "PHONE_SPACE" if spaced else "PHONE"))

    if _SPOKEN_ANCHOR_RE.search(low):
        for m in _iter(_SPOKEN_DIGITS_RE, low):
            ds = [_DIGIT_VALUE[w] for w in re.findall(_DIGIT_WORD, m.group())]
            if all(b - a == 1 for a, b in zip(ds, ds[1:])):
                continue  # counting out loud: "one, two, three, four, five, six, seven"
            n = len(ds)
            add((m.start(), m.end(), "PHONE_LABEL" if n in (7, 10, 11) else "ID_LABEL"))
    for m in _iter(_ZIP_LABEL_RE, low):
        add((m.start(1), m.end(1), "ZIP"))
    for m in _ZIP5_RE.finditer(text):  # "IL 62704", "Iowa 50219", "New Mexico 87501", "France 75013"
        st = m.start()
        sm = _STATE_BEFORE_RE.search(text[max(0, st - 5):st])
        if sm and sm.group(1) in _US_STATE_ABBR:
            add((st, m.end(), "ZIP"))
            continue
        sm = _STATE_NAME_BEFORE_RE.search(text, max(0, st - 30), st)
        if sm and (lower_mode or sm.group(1)[0].isupper()) and not _NOT_ZIP_AFTER_RE.match(text, m.end()):
            name = sm.group(1).lower()
            if name in _COUNTRY_PHRASES or name.split()[-1] in _COUNTRIES_STATES:
                add((st, m.end(), "ZIP"))
    caps = as_written or text  # postcodes are capitals; a shouted note was lowered
    if _POSTCODE_ANCHOR_RE.search(caps):
        for m in _iter(_CA_POSTAL_RE, caps):
            if not re.fullmatch(r"T\dN \dM\d", m.group()):  # a TNM stage written with a space
                add((m.start(), m.end(), "ZIP"))
        for m in _iter(_UK_POSTCODE_RE, caps):
            add((m.start(), m.end(), "ZIP"))

    out.extend(_addresses(text, low, lower_mode))
    return out


def _addr_words_ok(words: str, lower_mode: bool, allow_vocab: bool = False) -> bool:
    ws = [w for w in re.split(r"[ ]+", words.strip()) if w]
    if not ws or all(len(f) <= 1 or f in _PARTICLES or f in _ADDR_PARTICLES
                     for f in (_fold(w.strip(".'’")) for w in ws)):  # a name word is needed
        return False
    for k, w in enumerate(ws):
        f = _fold(w.strip(".'’"))
        if f in _PARTICLES or f in _ADDR_PARTICLES:
            continue
        if k and len(f) == 1 and f.isalpha():
            continue  # an initial inside the name: "Rua Carlos B. Teixeira"
        if f in _UNITS or f in _HARD_STOP and f not in ("st", "place", "way", "park"):
            if f not in ("street", "road", "avenue", "lane", "drive", "court", "square"):
                return False
        if not allow_vocab and w.lower().strip(".") in _VOCAB:
            return False
        if not lower_mode and not w[0].isupper():
            return False
        if _is_drugish(f):
            return False
    return True


_STRONG_STREET_TYPES = _wordset("street st avenue ave road rd boulevard blvd lane ln drive dr court ct terrace ter "
                                "highway hwy parkway pkwy")
_SENTENCE_END_IN_RE = re.compile(r"[^\W\d_]{4,}\.[ ]+\S")  # "months. The": a sentence end inside a street name


def _addr_name_word(words: str, english_ok: bool = False) -> bool:
    """Some word of a street name found in lower-case or ALL-CAPS text is neither prose nor (unless ``english_ok``)
    English ("kaevu", "spiga"; "countess" before "close"): without case, such a run is prose ("via ambulatory pump
    over", "represents a common")."""
    return any(len(f) > 1 and f not in _VOCAB and (english_ok or not _english(f)) and f not in _ADDR_PARTICLES
               for f in (_fold(w.strip(".,'’")) for w in words.split()))


_ADDR_PARTICLES = _wordset(
    "u ul st av avda nan dei degli delle dello dal della do da das dos du d y e i na nad pod v von van zu "
    "zum zur am an auf im sur sous les aux del de la le l el al o of the")


def _addr_name_run(text: str, a: int, b: int, lower_mode: bool) -> int:
    """Start of the street name that ends at ``b``: the run of capitalised uncommon words ending there
    (particles and lower-case non-English words allowed inside: "Rua da Prata", "Bajcsy zsilinszky út"),
    searched from ``a``; ``b`` itself when there is none.  Only the run next to the number counts: in
    "Brannigan lives on Ostergasse 4" the street starts at "Ostergasse"."""
    start = b
    for w in reversed(list(re.finditer(r"\S+", text[a:b]))):
        v = w.group()
        fv = _fold(v.strip(".'’"))
        if (v[0].isupper() or lower_mode) and v.lower() not in _VOCAB and fv not in _HARD_STOP:
            start = a + w.start()
        elif (fv in _PARTICLES or fv in _ADDR_PARTICLES or (
                v.isalpha() and v.lower() not in _VOCAB and not _english(v.lower()))):
            continue  # inside the name only: one in front of it does not move ``start``
        else:
            break
    return start


def _street_line_above(text: str, p: int, lower_mode: bool) -> tuple[int, int] | None:
    """The street line of a block whose line starts with the unit or P.O. box at ``p``: the line above,
    when it is short, holds a house number and reads as a street ("Orvath 22 Melk Dam\nSuite 301")."""
    ls = text.rfind("\n", 0, p) + 1
    if ls < 2 or p - ls > 8 or text[ls:p].strip(_LINE_LEAD):
        return None
    a, b = _trim(text, text.rfind("\n", 0, ls - 1) + 1, ls - 1)
    while a < b and text[a] in _LINE_LEAD:
        a += 1
    line = text[a:b]
    words = " ".join(re.findall(r"[^\W\d_][\w'’.-]*", line))
    if 0 < len(line) <= 60 and re.search(r"(?<!\w)\d{1,6}[A-Za-z]?(?!\w)", line) and \
            not re.search(r"[:@/=|?!]|[.][ \t]*$", line) and words and \
            _addr_words_ok(words, lower_mode, allow_vocab=True) and \
            any(w.lower() not in _VOCAB for w in words.split()):
        return a, b
    return None


def _addresses(text: str, low: str, lower_mode: bool) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    add = out.append
    for m in _iter(_ADDR_US_RE_I, low, ".,/:-") if lower_mode else _iter(_ADDR_US_RE, text, ".,/:-"):
        if _SENTENCE_END_IN_RE.search(m.group(1)):
            continue  # "24 months. The primary end point": a sentence ends inside the "street name"
        if lower_mode and low[m.end(1):m.end()].strip(" .") not in _STRONG_STREET_TYPES and \
                not _addr_name_word(text[m.start(1):m.end(1)], english_ok=True):
            continue  # lower-case or ALL-CAPS prose: "11 represents a common", "1 gastroesophageal junction"
        if _addr_words_ok(text[m.start(1):m.end(1)], lower_mode, allow_vocab=True):
            e = m.end()
            if text[e - 1] == "." and low[m.end(1):e - 1] not in _STREET_TYPE_ABBR:
                e -= 1  # "Corbel Road." ends a sentence; "Oak St." is an abbreviation
            add((m.start(), e, "ADDRESS"))
    for m in _iter(_ADDR_NONUM_RE, text):
        if _addr_words_ok(m.group(1), False):
            add((m.start(), m.end(), "ADDRESS"))
    for m in _iter(_ADDR_PREFIX_NUM_RE, low, "."):
        head = text[m.start():m.end()]
        pre = head.split()[0]
        lead = re.search(r"\d[ ]{1,3}$", text[max(0, m.start() - 4):m.start()])
        if not lower_mode and not (pre[0].isupper() or pre.lower() in ("ul.", "str.", "av.", "av")) and not lead:
            continue
        if m.group(1) and not _addr_words_ok(text[m.start(1):m.end(1)], lower_mode, allow_vocab=True):
            continue
        if _SENTENCE_END_IN_RE.search(m.group(1) or "") or re.match(r"(?:the|a|an)\b", low[m.start(1):m.start(1) + 4]) \
                or ((lower_mode or head.isupper()) and not _addr_name_word(text[m.start(1):m.end(1)])):
            continue  # English prose: "via the cobas 4800", "via ambulatory pump over 22 h", "place within 6"
        add((m.start(), m.end(), "ADDRESS"))
    for m in _iter(_ADDR_LEAD_PREFIX_RE, low, ".,/:-"):
        s, e = m.start(), m.end()
        # stop at the first common (non-particle) word after the street name
        seg = text[s:e]
        words = list(re.finditer(r"\S+", seg))
        keep = len(words)
        for k, w in enumerate(words[3:], start=3):
            wl = w.group().lower().strip(".,")
            if wl in _VOCAB and wl not in _PARTICLES and wl not in ("street", "st"):
                keep = k
                break
        e = s + words[keep - 1].end()
        s2, e2 = _trim(text, s, e)
        add((s2, e2, "ADDRESS"))
    for m in _ADDR_SPNUM_RE.finditer(text):  # "<street word> <number>", checked backwards
        j = m.start()
        if j and text[j - 1] == ".":
            j -= 1
        i = j
        while i > 0 and j - i <= 41 and (text[i - 1].isalnum() or text[i - 1] in "'’-"):
            i -= 1
        if i == j or not text[i].isalpha() or (i and text[i - 1] in "."):
            continue
        name = text[i:j]
        f = name.lower()
        standalone = f in _STREET_WORDS_AFTER  # "Kossuth u. 12": the name is in the words before
        if not (standalone or f.endswith(_STREET_SUFFIXES)) or _is_drugish(f):
            continue
        if not standalone and f not in _STREET_SUFFIXES and _english(f, endings=False):
            continue  # an English word that only ends like a street type: "measuring 2", "bearing 9p"
        pm = _ADDR_PRE_WORDS_RE.search(text, max(0, i - 130), i)
        pre = _addr_name_run(text, pm.start(), i, lower_mode) if pm else i
        if (f in _VOCAB or len(f) < 4 or standalone) and pre == i:
            continue
        if not lower_mode and not name[0].isupper() and pre == i:
            continue
        s, e = _trim(text, pre, m.end(), ",;:!?)")
        add((s, e, "ADDRESS"))
    for m in _iter(_ADDR_LEAD_RE, text, ".,/:-"):
        # no street type to confirm it: a word in mixed case or a short acronym is a trial, isotope or
        # code ("2 CheckMate 714", "177 Lu-DOTA 0", "2003 CL 001"), not a street name
        if _addr_words_ok(m.group(1), lower_mode) and not any(
                _CAMEL_CASE_RE.search(w) or any(p.isupper() and len(p) <= 4 for p in w.split("-"))
                for w in m.group(1).split()) and not (lower_mode and (
                    not _addr_name_word(m.group(1)) or any(len(p) <= 2 for w in m.group(1).split()
                                                            for p in w.split("-")))):
            add((m.start(), m.end(), "ADDRESS"))
    src = low if lower_mode else text
    for m in _iter(_ADDR_UNIT_RE_I, low) if lower_mode else _iter(_ADDR_UNIT_RE, text):
        add((m.start(), m.end(), "ADDRESS"))
        if not (_ADDR_RES_UNIT_RE_I if lower_mode else _ADDR_RES_UNIT_RE).match(src, m.start()):
            continue  # a floor or a room: hospital rooms are not home addresses
        # house number + name before the unit, the street type left out
        for nm in (_ADDR_NUM_UNIT_RE_I if lower_mode else _ADDR_NUM_UNIT_RE).finditer(
                src, max(0, m.start() - 280), m.start() + 20):
            if (not nm.start() or not (text[nm.start() - 1].isalnum() or text[nm.start() - 1] in "_.,/:-")) \
                    and _addr_words_ok(text[nm.start(1):nm.end(1)], lower_mode):
                add((nm.start(), nm.end(), "ADDRESS"))
        street = _street_line_above(text, m.start(), lower_mode)
        if street:
            add((street[0], street[1], "ADDRESS"))
    if "#" in text:
        for m in _iter(_ADDR_HASH_RE, text):
            add((m.start(), m.end(), "ADDRESS"))
    for m in _iter(_ADDR_BOX_RE, low):
        v = text[m.start():m.end()]
        if lower_mode or v[0].isupper():
            add((m.start(), m.end(), "ADDRESS"))
            street = _street_line_above(text, m.start(), lower_mode) if low[m.start()] == "p" else None
            if street:
                add((street[0], street[1], "ADDRESS"))
    for m in _iter(_ADDR_MIL_RE_I, low) if lower_mode else _iter(_ADDR_MIL_RE, text):
        add((m.start(), m.end(), "ADDRESS"))
    for m in _iter(_ADDR_CORNER_RE, low):
        v = text[m.start(1):m.end(1)]
        if any(c.isdigit() for c in v) or re.search(r"\b[A-Z]", v):
            s, e = _trim(text, m.start(1), m.end(1))
            if low[max(0, s - 4):s] == "the ":
                s -= 4
            add((s, e, "ADDRESS"))
    for m in _iter(_ADDR_CUE_RE, low):
        if _ADDR_CUE_NOT_NUM_RE.match(low, m.end(1)):
            continue
        # the street name is the longest tail of the words before the number that reads as one
        # ("return to Marbury and Quillon 58": "Quillon 58"; the crossing is added with the block)
        for w in list(re.finditer(r"\S+", text[m.start(1):m.end(1)]))[:-1]:
            s = m.start(1) + w.start()
            if _addr_words_ok(text[s:m.end(1)].rsplit(None, 1)[0], lower_mode, allow_vocab=False):
                add((s, m.end(1), "ADDRESS"))
                break
    return out


_PLACE_WORD_RE = re.compile(r"(?:[^\W\d_]|∆)[\w'’∆-]{0,40}(?:[ ]?\([^()\n]{1,30}\))?")


def _same_line_place(text: str, p: int, lower_mode: bool) -> int | None:
    """Up to 4 capitalised non-vocabulary words (city / region / country) right after an address."""
    end = None
    pos = p
    phrase_start = p
    for _ in range(4):
        m = _PLACE_WORD_RE.match(text, pos)
        if not m:
            break
        w = m.group().split("(")[0].strip()
        ok = (w[0].isupper() or lower_mode) and (
            w.lower() not in _VOCAB or _fold(w) in _COUNTRIES_STATES or _STREET_TYPE_WORD_RE.fullmatch(w)
            or _fold(text[phrase_start:m.end()].split("(")[0].strip()) in _COUNTRY_PHRASES
            or (w.lower() == "new" and text[m.end():m.end() + 1] == " "))
        if not ok or _fold(w) in _HARD_STOP:
            break
        end = m.end()
        nxt = text[m.end():m.end() + 1]
        if nxt != " ":
            break
        pos = m.end() + 1
    if end is None:
        return None
    pm = re.match(r"[ ](?:" + _POSTAL + r")", text[end:end + 20])
    if pm:
        end += pm.end()
    if text[end:end + 1] not in ("", ".", ",", "?", "!", "\n", ";", " ", ")"):
        return None
    return end


def _extend_address(text: str, s: int, e: int, mask: _Mask, lower_mode: bool) -> int:
    """Extend an address over following units, places and postcodes (same or next lines)."""
    n = len(text)
    for _ in range(8):
        sm = _ADDR_SEP_RE.match(text, e)
        if sm is None:
            break
        sep = sm.group()
        p = sm.end()
        if p >= n:
            break
        blank = sep.count("\n") >= 2
        newline_or_comma = "\n" in sep or "," in sep
        got = None
        um = (_ADDR_UNIT_RE_I if lower_mode else _ADDR_UNIT_RE).match(text, p) or _ADDR_BOX_RE.match(text, p) \
            or (_ADDR_MIL_RE_I if lower_mode else _ADDR_MIL_RE).match(text, p)
        if um:
            got = um.end()
        if got is None:
            pm = _POSTAL_RE.match(text, p)
            if pm and (newline_or_comma or sep.strip() == ""):
                got = pm.end()
        if got is None:
            if not newline_or_comma:
                got = _same_line_place(text, p, lower_mode)
        if got is None and newline_or_comma:
            pl = _PLACE_RE.match(text, p)
            if pl:
                chunk = pl.group()
                cut = re.search(r"(?<=[^\W\d_]{3})\.[ ]", chunk)  # "77 Beacon St, Boston. Emergency contact: ..."
                if cut:
                    chunk = chunk[:cut.start()]
                words = re.findall(r"[^\W\d_][\w'’.-]*", chunk)
                after = text[pl.start() + len(chunk):pl.start() + len(chunk) + 2]
                ok = bool(words) and not after.startswith(":") and len(chunk) <= 60 and \
                    _fold(words[0].strip(".'’")) not in _SIGN_OFFS  # "12 Oak Street\nThanks": a closing, no city
                if ok and blank and not re.search(r"\d", chunk):
                    ok = False
                if ok:
                    for k, w in enumerate(words):
                        f = _fold(w.strip(".'’"))
                        wl = w.lower().strip(".")
                        if f in _ADDR_PARTICLES and 0 < k < len(words) - 1:  # "Mora de Rubielos", "Caxias do Sul"
                            continue
                        if k > 0 and w.isupper() and len(w) <= 3:  # a region code: "Aalborg NO 9100"
                            continue
                        if f in _HARD_STOP and f not in ("st",) or f in ("phone", "fax", "mobile", "email",
                                                                        "website", "tel", "desk", "office"):
                            ok = False
                            break
                        if w[0].isupper() or lower_mode or f in _PARTICLES or f == "nan":
                            if wl in _VOCAB and w.islower():
                                ok = False
                                break
                            continue
                        ok = False
                        break
                if ok:
                    got = pl.start() + len(chunk)
        if got is None:  # a country/state/province (or the "nan" of a blank field) closing the block
            cm = _ADDR_COUNTRY_TAIL_RE.match(text, p)
            if cm:
                got = cm.end()
        if got is None and "\n" in sep and "," in sep:  # "...\n, 13\n 44939", "\n, WHT\n": a form's region code
            rm = re.match(r"(?:\d{1,3}|[^\W\d_]{1,3})(?=[ \t]*\n)", text[p:p + 4])
            if rm:
                got = p + rm.end()
        if got is None and not newline_or_comma:  # "OULU NO": a region code after a city in capitals
            last = re.search(r"([^\W\d_]{3,})\Z", text[max(0, e - 40):e])
            rm = re.match(r"[A-Z]{2,3}(?=[ \t]*(?:$|[\n.,;)]))", text[p:p + 5])
            if last and last.group(1).isupper() and rm:
                got = p + rm.end()
        if got is not None and not mask.free(p, got):
            # the place runs into a postcode already claimed ("123 Main St, Boston MA 02118"): the words before
            # it still join the block (the postcode's own span is merged with the block afterwards)
            q = mask.m.find(1, p, got)
            got = q if q > p and text[q - 1] in " \t," else None
        if got is None:
            break
        e = _trim(text, p, got, " \t,.")[1]
    return e


_CROSS_STREET_RE = re.compile(r"(?:(?<=[\s,:;(])|^)([^\W\d_][\w'’-]{1,40})[ ]{1,2}(?:and|&)[ ]{1,2}\Z")


def _cross_street_start(text: str, s: int, lower_mode: bool) -> int:
    """Start of an address at ``s`` that names a crossing ("Maple and 14 Birch Road", "Kern & Hofweg 3"):
    the one uncommon word joined to it by "and" / "&" is the cross street, part of the address."""
    m = _CROSS_STREET_RE.search(text, max(0, s - 48), s)
    if m is None:
        return s
    w = m.group(1)
    f = _fold(w)
    if not (w[0].isupper() or lower_mode) or w.lower() in _VOCAB or f in _HARD_STOP or f in _TITLES or \
            f in _COUNTRIES_STATES:
        return s
    return m.start(1)


_ADDR_COUNTRY_TAIL_RE = re.compile(
    r"(?i:(?:(?:upper|lower|north|south|east|west|northern|southern|central)[ ])?(?:"
    + "|".join(re.escape(c) for c in sorted(_COUNTRIES_STATES | _COUNTRY_PHRASES, key=len, reverse=True))
    + r"|nan))(?:[ ]?\([^()\n]{1,20}\))?([ ,]{1,3}" + _POSTAL + r")?(?![\w'’-])"
    + r"|(?:" + "|".join(sorted(_US_STATE_ABBR | _CA_PROVINCE_ABBR)) + r")(?=[ \t]*(?:$|[\n.,;)]))")


# ---------------------------------------------------------------------------------------------------
# Organisations
# ---------------------------------------------------------------------------------------------------

# --- pasted tables ---------------------------------------------------------------------------------
# An EHR table pasted as text puts its labels in a header row and the values in the rows below
# ("Name: | MRN: | DOB:" over "Abdullah Al-Rashidi | 7730451 | 11/23/1948"): no value has its label beside it, so
# the label rules miss them. A header row names what its columns hold; PERSON cells are taken after the names.
_TABLE_COLUMNS = {
    "PERSON": "name|patient|patient name|pt name|pt|full name|last name|first name|family name|given name|"
              "middle name|attending|attending physician|physician|provider|md|rn|nurse|resident|fellow|pcp|"
              "referring|referring md|referring physician|contact|emergency contact|next of kin|nok|caregiver|"
              "spouse|surgeon|oncologist|guarantor|subscriber|insured",
    "ID_LABEL": "mrn|mr|mr no|patient id|pt id|id|acct|account|account no|fin|csn|encounter|member id|policy|"
                "policy no|insurance id|subscriber id|medicare|medicaid|nhs|nhs no|nhs number|health card|ohip|"
                "chart|chart no|record no|medical record|medical record no|accession",
    "SSN": "ssn|social security",
    "DATE": "dob|date of birth|birth date|birthdate|admit date|admission date|adm date|admitted|discharge date|"
            "dc date|discharged|date|visit date|dos|date of service|service date|date of death|dod|death date|"
            "surgery date|appt|appointment",
    "PHONE_LABEL": "phone|tel|telephone|cell|mobile|home phone|work phone|fax|contact no|phone no",
    "ADDRESS": "address|street|home address|street address",
    "ZIP": "city|town|zip|zip code|postcode|postal code|county",
}
_TABLE_LABEL_KIND = {lab: kind for kind, labs in _TABLE_COLUMNS.items() for lab in labs.split("|")}
_TABLE_RULE_RE = re.compile(r"[ \t|:+=-]*")  # a markdown rule under the header ("|---|:--|")


def _table_label(cell: str) -> str | None:
    key = " ".join(re.sub(r"[:#.()]|\bnumber\b|\bno\b", " ", cell.lower()).split())
    return _TABLE_LABEL_KIND.get(key) or _TABLE_LABEL_KIND.get(key + " no") if key else None


def _split_cells(text: str, a: int, b: int, sep: str) -> list[tuple[int, int]]:
    """The cells of the line text[a:b] split at ``sep``, as trimmed (start, end) offsets."""
    cells, p = [], a
    while True:
        q = text.find(sep, p, b)
        end = b if q < 0 else q
        s, e = p, end
        while s < e and text[s] in " \t":
            s += 1
        while e > s and text[e - 1] in " \t":
            e -= 1
        cells.append((s, e))
        if q < 0:
            return cells
        p = q + 1


def _table_cells(text: str) -> list[tuple[int, int, str]]:
    """Cells under a header column that names an identifier, as (start, end, kind), and the header's labels
    (kind HEADER)."""
    out: list[tuple[int, int, str]] = []
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", text)]
    k = 0
    while k < len(lines):
        a, b = lines[k]
        k += 1
        sep = "|" if "|" in text[a:b] else "\t" if "\t" in text[a:b] else ""
        if not sep:
            continue
        head = _split_cells(text, a, b, sep)
        kinds = [_table_label(text[s:e]) if e - s <= 40 else None for s, e in head]
        named = sum(1 for kd in kinds if kd)
        if named < 2 or any(not kd and e > s and len(text[s:e].split()) > 4 for kd, (s, e) in zip(kinds, head)):
            continue  # a header row: at least two identifier labels, no prose
        out.extend((s, e, "HEADER") for kd, (s, e) in zip(kinds, head) if kd)  # the labels stay
        while k < len(lines):
            a, b = lines[k]
            if sep not in text[a:b]:
                break
            k += 1
            if _TABLE_RULE_RE.fullmatch(text, a, b):
                continue
            row = _split_cells(text, a, b, sep)
            if len(row) != len(head):
                break
            for kd, (s, e) in zip(kinds, row):
                v = text[s:e]
                if not kd or e <= s or (kd not in ("PERSON", "ADDRESS", "ZIP") and not any(c.isdigit() for c in v)):
                    continue
                if kd == "PERSON" and (any(c.isdigit() for c in v) or len(v.split()) > 5):
                    continue
                out.append((s, e, kd))
    return out


def _tokens(text: str) -> list[tuple[int, int]]:
    out = []
    for m in _TOKEN_RE.finditer(text):
        s, e = m.start(), m.end()
        if e - s > 3 and text[e - 2] in "'’" and text[e - 1] in "sS":
            e -= 2
        out.append((s, e))
    return out


_ORG_HEAD_RE_I = _ci(r"(?<![\w'’-])" + _ORG_HEAD_RE.pattern)
# heads of places of care: in lower-case text the name before one needs only a word that is not oncology prose
# ("mercy hospital", "st. mary's medical center"); other heads need one that is no English word ("allstate insurance
# group", "pixia corp."; not "the control group", "a support group")
_CARE_HEADS = _wordset("hospital hospitals clinic clinics infirmary hospice") | {
    "medical center", "medical centre", "health center", "health centre", "cancer center", "cancer centre",
    "cancer institute", "health system", "nursing home", "rehabilitation center", "surgery center",
    "surgical center", "medical group", "oncology associates", "medical associates", "snf", "skilled nursing",
    "skilled nursing facility"}
# words of prose that name hospitals too ("springfield memorial hospital", "mass general hospital")
_ORG_NAME_COMMON = _wordset("general memorial regional community university medical saint st st. mount mt "
                            "county city state children's childrens women's womens") | {"st."}
# heads of companies and bodies that lower-case text names by: the others ("imaging", "oncology", "medicine") too
# often follow a test or a study there
_LOWER_ORG_HEADS = _wordset(
    "inc incorporated llc l.l.c ltd limited corp corporation plc gmbh company co sons brothers bros partners "
    "associates holdings industries enterprises technologies software consulting solutions insurance group bank "
    "trust capital analytics media networks research services systems orchestra choir chorus club") | {"country club"}
# words before a group that make it an arm of a study ("in the folfox group", "each group")
_ARM_DETERMINERS = _wordset("the a an this that each either both per every which whose")
# words that say what kind of place of care it is, not which ("a teaching hospital", "the veterans hospital")
_CARE_KINDS = _wordset("teaching local community academic tertiary quaternary veterans private public rural urban "
                       "district psychiatric rehabilitation outside nearby affiliated partner satellite specialty "
                       "outpatient inpatient day walk-in free mobile pediatric paediatric cancer oncology dental eye "
                       "military army navy hometown regional major large small big new old other same different")
_ORG_UNIV_OF_RE_I = re.compile(
    r"(?<![\w'’-])(?:university|hospital|institute|college|clinic)[ ]of[ ]((?:the[ ])?(?:[^\W\d_][\w'’-]{1,40}"
    r"(?:[ ]|(?=[\s,.;:)]|$))){1,4})")


def _lower_orgs(text: str, low: str, mask: _Mask) -> list[tuple[int, int]]:
    """Organisations in lower-case (or ALL-CAPS) text: the run of words right before an organisation head that are
    not prose ("seen at mercy hospital", "works at allstate insurance group", "pixia corp."), and "university of
    <name>" ("university of iowa hospitals")."""
    out: list[tuple[int, int]] = []
    ew = _english_words()
    for m in _iter(_ORG_HEAD_RE_I, low):
        hs, he = m.start(), m.end()
        head = re.sub(r"\s+", " ", low[hs:he].rstrip("."))
        care = head in _CARE_HEADS
        if not care and head not in _LOWER_ORG_HEADS:
            continue  # "psma imaging", "siopen biology": without case these heads name services and studies
        hs0 = hs  # "kowalczyk & sons", "smith and associates": the name before "&"/"and" and a firm's head
        amp = re.search(r"[ ](?:&|and)[ ]\Z", low[max(0, hs - 5):hs])
        if amp and head in ("sons", "brothers", "bros", "partners", "associates", "co", "company"):
            hs0 = hs - (len(amp.group()) - 1)
        words = list(re.finditer(r"[^\W\d_][\w'’&.-]*", low[max(0, hs0 - 120):hs0]))
        base = max(0, hs0 - 120)
        run: list[re.Match] = []
        for w in reversed(words):
            end = base + w.end()
            gap = low[end:(base + run[0].start()) if run else hs0]
            if gap not in (" ", ". ") or (gap == ". " and w.group().rstrip(".") not in ("st", "mt")):
                break
            f = _fold(w.group().rstrip("."))
            if f.endswith(("'s", "’s")):
                f = f[:-2]
            if "-" in f and all(not x or x in _VOCAB or x in _ORG_STOP_PREPS for x in re.split(r"-+", f)):
                break  # "study--pediatric oncology", "chemotherapy-first group": prose joined by hyphens
            if f in _ORG_STOP_PREPS or f in _NOTE_VERBS or f in _PLACE_VERBS or f in _ORG_CONNECT or \
                    f in _ORG_LEAD_DROP or (f in _HARD_STOP and f not in _ORG_NAME_COMMON) or \
                    (f in _VOCAB and f not in _ORG_NAME_COMMON and not _ORG_HEAD_RE_I.fullmatch(f)):
                break
            run.insert(0, w)
            if len(run) == 4:
                break
        if not run:
            continue
        names = [_fold(w.group().rstrip(".")) for w in run]
        names = [x[:-2] if x.endswith(("'s", "’s")) else x for x in names]
        # a specialty or a negated kind is no name: "urology clinic", "nonacademic hospitals", "co-operative group"
        names = [x for x in names if not x.endswith(("ology", "ologic", "ological")) and x not in ("u.s", "u.k") and
                 not (x.startswith(("non", "co-")) and (_english(x[3:].lstrip("-")) or x[3:].lstrip("-") in _VOCAB))]
        if not names:
            continue
        if names[0] in _ORG_EXEMPT_FIRST or any(x in _ORG_EXEMPT_ANY or x in _ORG_GENERIC_BODY for x in names):
            continue
        before = re.search(r"(\S+)[ ]\Z", low[max(0, base + run[0].start() - 20):base + run[0].start()])
        if care:
            ok = any(x not in _VOCAB and x not in _ORG_NAME_COMMON and x not in _CARE_KINDS and len(x) > 2 and
                     not (x.endswith(("ing", "ed")) and _english(x)) for x in names)
        elif (before and before.group(1) in _ARM_DETERMINERS and head not in _ORG_KIND_HEADS) or any(
                _is_drugish(x) or re.search(r"\d", x) or not re.search(r"[aeiouy]", x) for x in names):
            continue  # an arm of a trial ("in the folfox group", "the egfr tki group"), a drug or an acronym
        else:
            ok = any(x not in _VOCAB and x not in ew and not (x.endswith("s") and x[:-1] in ew) and len(x) > 3 and
                     len(re.findall(r"[aeiou]", x)) >= 2 for x in names)  # a name, not an acronym: "ecx group"
        if not ok:
            continue
        s = base + run[0].start()
        e = he
        if head in _ORG_KIND_HEADS:
            if re.search(r"(?:,|\band|&)[ ]\Z", low[max(0, s - 5):s]):
                continue  # "the jones, smith and davis orchestra": the firm-name rule takes the names
            e = hs - 1  # "the [ORGANIZATION_1] orchestra": the kind of body identifies no one, the name does
        elif low[e - 1] == "." and head not in ("inc", "ltd", "corp", "co"):
            e -= 1
        if out and s < out[-1][1]:  # "boston consulting group": one name with two heads
            out[-1] = (out[-1][0], max(e, out[-1][1]))
            continue
        out.append((s, e))
    for m in _iter(_ORG_UNIV_OF_RE_I, low):
        before = re.search(r"(\S+)[ ]\Z", low[max(0, m.start() - 20):m.start()])
        bw = before.group(1) if before else ""
        if bw and ((bw in _ORG_EXEMPT_FIRST and bw != "the") or (bw in _VOCAB and bw not in _ORG_LEAD_DROP)):
            continue  # "national cancer institute of canada": a body named by what it is
        e = m.start(1)
        for w in re.finditer(r"\S+", m.group(1)):
            f = _fold(w.group().strip(".,;:"))
            if f == "the" and e == m.start(1):
                continue
            if f in _HARD_STOP or f in _VOCAB or f in _ORG_STOP_PREPS or f in _NOTE_VERBS:
                break
            e = m.start(1) + w.start() + len(w.group().rstrip(".,;:"))
        if e > m.start(1):
            s = m.start()
            for k, (a, b) in enumerate(out):  # "university of iowa hospitals": one name with the head after it
                if a < e and s < b:
                    s, e = min(a, s), max(b, e)
                    out[k] = (-1, -1)
            out.append((s, e))
    return sorted((s, e) for s, e in out if s >= 0 and mask.free(s, e))


def _orgs(text: str, toks: list[tuple[int, int]], starts: dict[int, int], mask: _Mask,
          lower_mode: bool) -> list[tuple[int, int]]:
    out = []
    if lower_mode:
        return _lower_orgs(text, _lowered(text), mask)
    import bisect
    tstarts = [t[0] for t in toks]
    for m in _iter(_ORG_HEAD_RE, text):
        hs, he = m.start(), m.end()
        k = bisect.bisect_left(tstarts, hs)  # token index of head start
        j = k - 1
        first = None
        ands = 0  # "Berg, Ruiz and Tamm Orchestra": commas may join the names before one "and"
        comma_first = None  # the first name after a comma: where a second "and" sends the start back to
        while j >= 0 and k - j <= 7:
            ts, te = toks[j]
            gap = text[te:toks[j + 1][0]] if j + 1 < len(toks) else ""
            bad = [c for c in gap.replace("'s", "").replace("’s", "") if c not in " \t.&-"]
            if "\n" in gap or (bad and not (bad == [","] and ands == 1)):
                break
            if bad and (text[toks[j + 1][0]:toks[j + 1][1]].lower() in ("and", "&") or
                        _fold(text[ts:te]) in _COUNTRIES_STATES):
                break  # "California, Chicago, and Princess Margaret Hospital": a list of separate things
            if bad and comma_first is None:
                comma_first = j + 1
            if "." in gap and te - ts > 3:  # "attending Dr. Lindqvist. Clinic: ...": a sentence ends there
                break
            w = text[ts:te]
            f = w.lower()
            if f in ("and", "&") and first is None and j == k - 1 and \
                    m.group().lower().rstrip(".") in ("sons", "brothers", "bros", "partners", "associates", "co"):
                j -= 1  # "Thomas and Sons", "Smith & Co."
                continue
            if f in _ORG_CONNECT and first is not None:
                ands += f in ("and", "&")
                if ands > 1 and comma_first is not None:
                    first = comma_first  # "Berg, Ruiz and Tamm, Oakes and Lind Labs": two names
                    break
                if f == "of" and (j == 0 or text[toks[j - 1][0]:toks[j - 1][1]].lower() not in _ORG_OF_HEADS):
                    break  # "Jeremy Hartmann of Acme Inc": the person is not part of the organisation
                j -= 1
                continue
            if w[0].isupper() and (f not in _ORG_STOP_PREPS or first is None):
                first = j
                j -= 1
                continue
            break  # a capitalised preposition of a Title Case note ends the name: "Seen At Springfield Clinic"
        if first is None:
            continue
        # drop leading connectors / sentence-initial function words
        while first < k and text[toks[first][0]:toks[first][1]].lower() in _ORG_CONNECT | _ORG_LEAD_DROP:
            first += 1
        if first >= k:
            continue
        words = [text[toks[i][0]:toks[i][1]].lower() for i in range(first, k)]
        if words[0] in _ORG_EXEMPT_FIRST or any(w in _ORG_EXEMPT_ANY or w in _ORG_GENERIC_BODY for w in words):
            continue  # research bodies, cooperative groups, national institutes: not identifying
        general = len(words) >= 2 and words[-1] == "general" and words[-2] not in _GENERAL_RANKS  # "Mass General"
        if not general and not any(len(w) >= 3 and not all(x in _VOCAB for x in w.split("-")) for w in words):
            continue
        head = m.group().lower()
        if head.rstrip(".") in _ORG_GENERIC_HEADS and all(w in _VOCAB for w in words) and not general:
            continue
        s = toks[first][0]
        e = he
        if head.rstrip(".") in _ORG_KIND_HEADS:
            e = hs  # "the [ORGANIZATION_1] Orchestra": the kind of body identifies no one, the name does
        else:
            if text[e - 1] == "." and head.rstrip(".") not in ("inc", "ltd", "corp", "co"):
                e -= 1  # a sentence full stop, not an abbreviation
            # "University of X" style continuation
            um = re.match(r"[ ]of[ ](?:the[ ])?((?:[A-Z][\w'’-]{1,40}[ ]?){1,3})", text[e:e + 120])
            if um:
                e = e + um.end(1)
            while True:  # "Allstate Insurance Group", "Gradiant Research LLC": one name with several heads
                nm = re.match(r",?[ ]", text[e:e + 2])
                hm = _ORG_HEAD_RE.match(text, e + nm.end()) if nm else None
                if not hm or (hm.end() < len(text) and text[hm.end() - 1].isalnum() and
                              text[hm.end()].isalnum()):
                    break
                e = hm.end()
                if text[e - 1] == "." and hm.group().lower().rstrip(".") not in ("inc", "ltd", "corp", "co"):
                    e -= 1
        s, e = _trim(text, s, e, " \t,")
        if out and s < out[-1][1]:  # overlaps the previous organisation: start after it ("X LLC and Y Group")
            if e <= out[-1][1]:
                continue
            rest = re.match(r"(?:[ ,]+(?:and|&)?)*[ ,]*", text[out[-1][1]:e])
            s = out[-1][1] + (rest.end() if rest else 0)
            if not text[s:s + 1].isupper():
                continue
        if mask.free(s, e):
            out.append((s, e))
    for m in _iter(_ORG_UNIV_OF_RE, text):
        s, e = _trim(text, m.start(), m.end(1))
        words = m.group(1).lower().split()
        if any(w in _ORG_EXEMPT_ANY or w in _ORG_GENERIC_BODY for w in words):
            continue
        if mask.free(s, e):
            out.append((s, e))
    if "General" in text:
        for m in _ORG_GENERAL_RE.finditer(text):
            s = m.start(1)
            for w in re.finditer(r"\S+", m.group(1)):  # "Transferred Mass General": the name starts after prose
                if _fold(w.group()) in _HARD_STOP or _fold(w.group()) in _TITLES or \
                        _fold(w.group()) in _ORG_EXEMPT_FIRST or _fold(w.group()) in _ORG_GENERIC_BODY:
                    s = m.start(1) + w.end() + 1
            name = text[s:m.end(1)].split()
            if not name or _fold(name[-1]) in _GENERAL_RANKS:
                continue
            e = m.end()
            if m.group(2):
                after = m.group(2).lower()
                if _ORG_HEAD_RE.fullmatch(m.group(2)) or after in _VOCAB or _english(after):
                    continue  # "Mass General Hospital" is found above; "General Information" is a heading
            if not any(a[0] <= s < a[1] or s <= a[0] < e for a in out) and mask.free(s, e):
                out.append((s, e))
    return out


def _org_name_words(text: str, p: int, lower_mode: bool, max_words: int = 5, lower_words: bool = False) -> int:
    """End of the organisation name that starts at ``p``: capitalised words (joined by "&", "and", "of",
    "the"), or in lower-case text up to the first common word; ``p`` when there is none.  ``lower_words``: in
    mixed-case text a name written in lower case after a cue such as "works at" ("works at zillow", "employed by
    walmart"), whose first word is neither common prose nor English ("works at home", "at a bank" stay)."""
    end = p
    prev = 0
    for m in re.finditer(r"([^\W\d_][\w'’&.-]*)([ ]?)", text[p:p + 160]):
        w = m.group(1).rstrip(".")
        if text[p + prev:p + m.start()] not in ("", "& "):
            break  # punctuation ends the name
        prev = m.end()
        if w.lower() in ("and", "of", "the") and end > p:
            if not m.group(2):
                break
            continue
        lw = w.lower()
        lower_ok = lower_mode or (lower_words and w.islower() and (
            end > p or (not _english(lw) and not _is_drugish(_fold(w)) and _fold(w) not in _FIRST_NAMES)))
        if not (w[:1].isupper() or (lower_ok and lw not in _VOCAB)) or _fold(w) in _HARD_STOP:
            break
        if lower_words and w.islower() and end > p and text[p:p + 1].isupper():
            break  # "works at Acme in procurement": a capitalised name ends at a lower-case word
        end = p + m.start(1) + len(w)
        max_words -= 1
        if max_words == 0 or not m.group(2):
            break
    return end


def _uncommon(words: list[str]) -> bool:
    """At least one word that is neither common prose nor an English word or plural (a name, a coined
    brand; compounds count as uncommon: "Newsweek" is not "news" + "week" here)."""
    ew = _english_words()
    return any(lw not in _VOCAB and lw not in ew and not (lw.endswith("s") and lw[:-1] in ew)
               for lw in (w.lower() for w in words))


# Well-known hospitals whose usual name has no head noun ("Brigham and Women's", "Mass General Brigham") and their
# abbreviations.  Only abbreviations that mean nothing else in oncology text: not MSK (musculoskeletal), CHOP (the
# regimen), DFCI (trial names), MSKCC / UCLA (prognostic models, symptom scales).  Case-sensitive, except "MD
# Anderson" (its scales and models, "MD Anderson Symptom Inventory", are protected phrases and stay whole).  New York
# centres named without a head noun ("NYU Langone", "Sloan Kettering", "Mount Sinai") too, but not in a citation's
# "the Memorial Sloan-Kettering experience" or a model's name ("... nomogram").
_KNOWN_ORG_RE = re.compile(
    r"(?<![\w-])(?:Brigham[ ](?:and|&)[ ]Women['’]s|Mass(?:achusetts)?[ ]General[ ]Brigham|Dana[- ]Farber|"
    r"Beth[ ]Israel(?:[ ]Deaconess)?|MGH|BWH|BIDMC|UCSF|UPMC|OHSU|MDACC|NYULH|VUMC|UTSW|"
    r"(?:NYU[ ]Langone(?:[ ]Health)?|New[ ]?York[- ]Presbyterian|Weill[ ]Cornell|"
    r"(?:Memorial[ ])?Sloan[- ]Kettering|Mount[ ]Sinai|Montefiore)"
    r"(?![ ](?:experience|nomogram|model|criteria|score|classification|system|series|prognostic|risk|"
    r"scale|index|categor))|"
    r"(?i:m\.?[ ]?d\.?[ ]anderson))(?![\w-])")  # "MD Anderson": MD is part of the name, not a title


def _known_orgs(text: str, mask: _Mask) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _KNOWN_ORG_RE.finditer(text) if mask.free(m.start(), m.end())]


# Hospitals named in the religious or charitable style that hundreds of them share ("Good Samaritan", "Sacred
# Heart", "Holy Name", "Our Lady of Lourdes", "New Hope"): their words are English, so the uncommon-word rules miss
# them or keep a word ("Good [ORGANIZATION]").  The whole name goes, with its head noun in any case ("GOOD SAMARITAN
# HOSPITAL", "Good Samaritan Hosp."), or without one when written in Title Case ("records from Good Samaritan"; not
# "a good samaritan", not "the Good Samaritan law").
_CARE_NAME_RE = _ci(
    r"(?:good[ ](?:samaritan|shepherd|hope)|new[ ]hope|sacred[ ]heart|holy[ ](?:name|cross|family|redeemer|spirit|"
    r"trinity|rosary)|our[ ]lady[ ]of[ ](?:the[ ])?[^\W\d_][\w'’-]+|little[ ]company[ ]of[ ]mary|blessed[ ]sacrament|"
    r"divine[ ](?:providence|savio(?:u)?r)|precious[ ]blood)"
    r"((?:[ ](?:regional|community|memorial|university|general|medical))?[ ](?:hospitals?|hosp\b\.?|medical[ ]cent(?:er|re)|"
    r"health(?:[ ](?:system|cent(?:er|re)|care))?|cancer[ ]cent(?:er|re)|hospice|clinic|infirmary|nursing[ ]home))?"
    r"(?![\w'’-]|[ ](?:laws?|acts?|statutes?|parable|rule|principle)\b)")


def _care_name_orgs(text: str, low: str, lower_mode: bool) -> list[tuple[int, int]]:
    out = []
    for m in _iter(_CARE_NAME_RE, low):
        stem = text[m.start():m.start(1) if m.group(1) is not None else m.end()]
        title = all(w[0].isupper() and not w.isupper() for w in stem.split(" ") if w.lower() not in ("of", "the"))
        if m.group(1) is not None or (title and not lower_mode):
            out.append((m.start(), m.end()))
    return out


# a hospital called after a saint, named without its head noun after a verb of care or transfer ("transferred
# from St. Barnabas", "admitted to Saint Clare's"; not "St. John's wort", not a street: "at St. Marks Place")
_SAINT_ORG_RE = re.compile(
    r"(?:(?:[Tt]ransferred|[Aa]dmitted|[Rr]eadmitted|[Dd]ischarged|[Ss]een|[Tt]reated|[Rr]eferred|[Ss]ent|[Mm]oved|"
    r"[Tt]aken|[Bb]rought|[Ff]ollowed|[Ww]orks?|[Ww]orked|[Ww]ent|[Rr]ushed|[Pp]resented|[Hh]ospitali[sz]ed|"
    r"[Dd]rive[ ](?:him|her|them)|[Dd]rove[ ](?:him|her|them))[ ](?:from|to|at|in)|"
    r"(?:in|at)[ ](?:the[ ])?hospital[ ]at|ED[ ]at|ER[ ]at|(?:[Ww]as|[Ii]s|[Ss]tayed|[Ss]tays|[Bb]e)[ ]at)[ ]"
    r"(?:the[ ])?((?:St\.?|Saint)[ ]([A-Z][a-z]{2,20})(?:['’]s)?)(?![\w'’-])")
_SAINT_ANCHOR_RE = re.compile(r"(?:St\.?|Saint)[ ][A-Z]")  # cheap anchor for the two patterns
# "St. Luke's hospital", "Saint Clare's medical center": a saint's name before a lower-case head is a hospital with
# it, cue or none (Title Case heads are the organisation rule's)
_SAINT_HEAD_RE = re.compile(
    r"(?<![\w'’-])(?:St\.?|Saint)[ ][A-Z][a-z]{2,20}(?:['’]s)?(?:[ ](?:regional|memorial|general|university|"
    r"children['’]s|community))?[ ](?:hospital|medical[ ]cent(?:er|re)|clinic|hospice|infirmary|"
    r"cancer[ ]cent(?:er|re)|health[ ]cent(?:er|re))(?![\w'’-])")
# a hospital named by one word after a verb of admission or transfer ("admitted to Mercy last week", "transferred
# from presbyterian"); the word alone stays ("asked for mercy")
_ONE_WORD_HOSPITAL_RE = re.compile(
    r"(?:(?:transferred|admitted|readmitted|discharged|seen|treated|hospitali[sz]ed|taken|brought|rushed|airlifted|"
    r"transported|presented|went|sent|referred|followed)[ ](?:from|to|at|in)[ ](?:the[ ])?|"
    r"(?<![\w'’-])(?:ed|er)[ ]at[ ])"
    r"((?:children['’]s[ ])?(?:mercy|presbyterian|methodist|baptist|adventist|lutheran|episcopal)"
    r"(?:[ ](?:memorial|general|regional|medical|health))?(?:[ ](?:hospital|medical[ ]cent(?:er|re)|clinic|hospice|infirmary|cancer[ ]cent(?:er|re)|"
    r"health[ ]cent(?:er|re)))?)(?![\w'’-])")
_ONE_WORD_HOSPITAL_ANCHOR_RE = re.compile(r"mercy|presbyterian|methodist|baptist|adventist|lutheran|episcopal")


# "works at Target", "employed by apple", "works at home depot": right after a work cue a name without an article is
# the employer even when its words are English.  What is no employer there is a closed set: an idiom or a time ("at
# home", "at night", "for himself", "by choice"), a phrase with an article or a possessive ("at a school", "for the
# city"), a plural ("at restaurants") and a workplace named by its common noun ("at grocery store", "at local
# hospital": notes drop the article).
_WORK_IDIOMS = _wordset(
    "home night nights day days daytime weekend weekends times pace ease will random risk length least most first "
    "last once present all hand sea work noon midnight dawn bedside choice contract heart cost now large full free "
    "baseline goal rest self-employed unemployed retired disabled none unknown homemaker student n/a na "
    "himself herself themselves myself yourself itself him her them us me you it one")
_WORKPLACE_NOUNS = _wordset(
    "store shop school hospital clinic factory plant mill restaurant bakery cafe diner bar pub office firm company "
    "farm warehouse site business bank salon center centre market supermarket mall garage station agency church "
    "college university library city state county government town department job post branch practice lab "
    "laboratory duty capacity level shift desk hour place time home daycare")
_WORK_RUN_STOP = _ORG_STOP_PREPS | _ORG_CONNECT | _wordset(
    "as a an his her their my our your this that these those some various several multiple same other another "
    "since until while when where who which part-time full-time and or but most many every each all any no more "
    "less few due because though although after before during over under about around than then later ago")


# words that start a firm's name and are stop words or prose elsewhere ("general motors", "united airlines")
_EMPLOYER_LEADS = _wordset("general united american national international standard pacific atlantic continental "
                           "consolidated allied")
# "retired from teaching", "retired from the army", "retired from police force": after "retired from" a lower-case
# employer needs a firm's shape: a word that is no English ("ford", "ibm"), a firm's first word ("general motors") or
# "<workplace> of <name>" ("bank of america")
_RETIRED_CUE_RE = _ci(r"retired[ ]from[ ]")
# large employers named by words that the rule above reads as a workplace ("state farm", "whole foods")
_KNOWN_WORD_EMPLOYERS_RE = _ci(r"(?:state[ ]farm|whole[ ]foods|dollar[ ](?:general|tree)|family[ ]dollar|food[ ]lion|"
                               r"stop[ ](?:&|and)[ ]shop|waste[ ]management|general[ ](?:mills|dynamics))(?![\w'’-])")


def _word_employer_end(text: str, p: int, lower_mode: bool, retired: bool = False) -> int:
    """End of an employer named by ordinary words right after a work cue at ``p``; ``p`` when there is none.
    ``retired``: after "retired from", where an occupation is likelier than a firm (see ``_RETIRED_CUE_RE``)."""
    known = _KNOWN_WORD_EMPLOYERS_RE.match(text, p)
    if known:
        return known.end()  # "works at state farm", "retired from dollar general"
    words: list[re.Match] = []
    of_at = 0  # index in words of the word after "of" ("bank of america")
    for m in re.finditer(r"[^\W\d_][\w'’&-]*", text[p:p + 80]):
        gap = text[p + (words[-1].end() if words else 0):p + m.start()]
        lw = m.group().lower()
        if gap not in ("", " "):
            break
        if lw == "of" and len(words) == 1 and not of_at and words[0].group().lower() in _WORKPLACE_NOUNS and \
                words[0].group().lower() not in _WORK_IDIOMS:
            nxt = re.match(r"[ ]([^\W\d_][\w'’&-]*)", text[p + m.end():p + m.end() + 40])
            if nxt and nxt.group(1).lower() not in _WORK_RUN_STOP and _fold(nxt.group(1)) not in _HARD_STOP and \
                    (lower_mode or nxt.group(1)[0].isupper() == words[0].group()[0].isupper()):
                words.append(m)
                of_at = len(words)
                continue  # "bank of america", "city of boston"
        if lw in _WORK_RUN_STOP:
            break
        if words and not of_at and (lw in _WORKPLACE_NOUNS or lw[:-1] in _WORKPLACE_NOUNS):
            if all(w.group().lower() not in _VOCAB and not _english(w.group().lower()) for w in words):
                return p + words[-1].end()  # "walmart home office", "kroger warehouse": the brand is the employer
            return p  # "at grocery store", "at local hospital", "at nursing home"
        if (_fold(lw) in _HARD_STOP or lw in _NOTE_VERBS) and (words or lw not in _WORK_IDIOMS) and \
                not (not words and (lw in _EMPLOYER_LEADS or lw in _WORKPLACE_NOUNS and
                                    text.startswith(" of ", p + m.end()))):
            break  # a date or a verb ends the name; an idiom starts one ("home depot") or stays one ("night")
        if words and not lower_mode and m.group()[0].isupper() != words[0].group()[0].isupper():
            break  # "works at Target in sales", "works at target Mondays": the name keeps one case
        words.append(m)
        if len(words) == (4 if of_at else 3):
            break
    if words and words[-1].group().lower() == "of":
        words.pop()
        of_at = 0
    if not words:
        return p
    low = [w.group().lower() for w in words]
    if low[0] in _EMPLOYER_LEADS and (len(low) == 1 or low[1] in _WORKPLACE_NOUNS or low[1][:-1] in _WORKPLACE_NOUNS):
        return p  # "works at general", "works at general store"
    if len(low) == 1 and (low[0] in _WORK_IDIOMS or low[0] in _WORKPLACE_NOUNS or
                          low[0].endswith("s") and _english(low[0][:-1])) or _is_drugish(_fold(low[0])):
        return p
    if not lower_mode and words[0].group()[0].isupper() and text[p - 3:p].strip().istitle():
        return p  # Title Case writing ("Works At Home", "Works At Acme Hardware"): the capitals say nothing here
    if retired and not (of_at or low[0] in _EMPLOYER_LEADS or (
            len(low) == 1 and low[0] not in _VOCAB and not _english(low[0]))) or \
            retired and any(w.endswith("ing") for w in low):
        return p  # "retired from teaching", "retired from police force"
    return p + words[-1].end()


def _cue_orgs(text: str, low: str, mask: _Mask, lower_mode: bool) -> list[tuple[int, int]]:
    """Organisations named by their context rather than by a head noun: "works for Initech", "Vandelay is
    an import-export company", lower-case "... industries inc."."""
    out: list[tuple[int, int]] = []

    def take(s: int, e: int) -> None:
        words = re.findall(r"[^\W\d_][\w'’-]*", text[s:e])
        if e > s and words and _uncommon(words) and _fold(words[0]) not in _TITLES and \
                _fold(words[0]) not in _FIRST_NAMES and mask.free(s, e):
            out.append((s, e))

    if "work" in low or "employ" in low or "job" in low or "intern" in low or "retired" in low:  # cheap pre-checks
        for m in sorted(list(_iter(_ORG_WORK_CUE_RE, low)) + list(_iter(_RETIRED_CUE_RE, low)),
                        key=lambda m: m.start()):
            n = len(out)
            retired = m.re is _RETIRED_CUE_RE
            first = re.match(r"[^\W\d_][\w'’/-]*", text[m.end():m.end() + 30])
            if not (first and first.group().lower() in _WORK_IDIOMS):  # "Employer: self-employed": no name
                take(m.end(), _org_name_words(text, m.end(), lower_mode, lower_words=not retired))
            if len(out) == n:
                e = _word_employer_end(text, m.end(), lower_mode, retired)
                if e > m.end() and mask.free(m.end(), e):
                    out.append((m.end(), e))
    if not lower_mode and ("St" in text or "Saint" in text):
        wins = _windows(_SAINT_ANCHOR_RE, text, 70, 60)
        for m in _iter_win(_SAINT_HEAD_RE, text, wins):  # "St. Luke's hospital"
            if mask.free(m.start(), m.end()):
                out.append((m.start(), m.end()))
        for m in _iter_win(_SAINT_ORG_RE, text, wins):  # "transferred from St. Barnabas", "admitted to Saint Clare's"
            s, e = m.start(1), m.end(1)
            if not re.match(r"[ ]{1,2}(?:wort|day|" + _STREET_TYPES + r")\b", text[e:e + 14], re.I) and \
                    not any(o[0] <= s < o[1] for o in out) and mask.free(s, e):
                out.append((s, e))
    if _ONE_WORD_HOSPITAL_ANCHOR_RE.search(low):
        for m in _iter(_ONE_WORD_HOSPITAL_RE, low):  # "admitted to Mercy last week"
            s, e = m.start(1), m.end(1)
            if not (lower_mode or text[s].isupper() or text[s:e].islower()) or \
                    not lower_mode and text[s].isupper() and re.match(r"[ ][A-Z]", text[e:e + 2]):
                continue  # "admitted to MERCY" in mixed case; "Mercy General": the organisation rule's
            if mask.free(s, e) and not any(o[0] < e and s < o[1] for o in out):
                out.append((s, e))
    if not lower_mode:
        if " is " not in text and " was " not in text:
            return out
        for m in _iter_win(_ORG_IS_A_RE, text, _windows(_ORG_NOUN_RE, low, 260, 0)):
            take(m.start(1), _trim(text, m.start(1), m.end(1))[1])
    else:
        if " is " in low or " was " in low:  # "coden is a design agency", "persint is an investment bank"
            for m in _iter_win(_ORG_IS_A_RE_I, low, _windows(_ORG_NOUN_RE, low, 260, 0)):
                ws = list(re.finditer(r"\S+", m.group(1)))
                k = len(ws)
                while k > 0 and k > len(ws) - 3 and _uncommon([ws[k - 1].group()]) and \
                        _fold(ws[k - 1].group()) not in _HARD_STOP:
                    k -= 1
                if k < len(ws):
                    take(m.start(1) + ws[k].start(), m.start(1) + ws[-1].end())
        for m in _iter_win(_ORG_SUFFIX_LOWER_RE, low, _windows(_ORG_SUFFIX_ANCHOR_RE, low, 130, 1)):
            s = m.start(1)
            for w in re.finditer(r"\S+", m.group(1)):  # the name starts after the last function word
                if _fold(w.group()) in _HARD_STOP:
                    s = m.start(1) + w.end() + 1
            e = _trim(text, s, m.end(), " \t,")[1]
            if s < m.end(1):
                take(s, e)
    return out


_ORG_LINE_WORD_RE = re.compile(r"[^\W\d_][\w'’&.-]*")
_ORG_BEFORE_ADDR_RE = re.compile(
    r"(?:(?<=[\s:;(])|^)((?:[A-Z][\w'’&-]*[ ]){0,3}[A-Z][\w'’&-]*),[ ]{1,2}\Z")


def _free_line(text: str, mask: _Mask, a: int, b: int) -> bool | None:
    """True when no letter or digit of text[a:b] is redacted yet, False when all are, None when some are."""
    alnum = [k for k in range(a, b) if text[k].isalnum()]
    taken = sum(mask.m[k] for k in alnum)
    return True if taken == 0 else False if taken == len(alnum) else None


def _org_line_ok(line: str, lower_mode: bool) -> bool:
    """A letterhead line that reads as an organisation: 1-5 words, no digits or sentence punctuation, an
    uncommon word or an organisation head ("Flintmoor", "Baxter Ridge Movers", "hale, orr and pike")."""
    if not line or len(line) > 60 or re.search(r"[\d:@/|?!=;]", line):
        return False
    if line.endswith(".") and not re.search(r"(?i)\b(?:inc|ltd|co|corp|llc)\.$", line):
        return False
    words = _ORG_LINE_WORD_RE.findall(line)
    names = [w for w in words if w.lower().rstrip(".") not in _ORG_CONNECT]
    if not names or len(words) > 5 or not all(w[0].isupper() or lower_mode for w in names):
        return False
    return _uncommon([w.rstrip(".") for w in names]) or _ORG_HEAD_RE.search(line) is not None


def _block_orgs(text: str, final: list[list], mask: _Mask, lower_mode: bool) -> list[tuple[int, int]]:
    """Organisations placed by an address block: the letterhead line above it (name, title, company,
    street: the nearest line above the street that is not already redacted) and a venue or company
    named right before it on the same line ("meet at Flintmoor, 12 Ash Road")."""
    out: list[tuple[int, int]] = []
    for s, _e, typ, _k in final:
        if typ != "ADDRESS":
            continue
        ls = text.rfind("\n", 0, s) + 1
        if text[ls:s].strip(_LINE_LEAD):  # the address starts inside a line
            if not lower_mode:
                m = _ORG_BEFORE_ADDR_RE.search(text, max(0, s - 80), s)
                if m and _uncommon(m.group(1).split()) and mask.free(m.start(1), m.end(1)):
                    out.append((m.start(1), m.end(1)))
            continue
        b = ls - 1
        for _ in range(3):  # up to three lines above, over lines already redacted (the person's name)
            if b <= 0:
                break
            a = text.rfind("\n", 0, b) + 1
            la, lb = a, b
            while la < lb and text[la] in _LINE_LEAD:
                la += 1
            while lb > la and text[lb - 1] in " \t":
                lb -= 1
            free = _free_line(text, mask, la, lb) if lb > la else None
            if free is False:
                b = a - 1
                continue
            if free and _org_line_ok(text[la:lb], lower_mode):
                out.append((la, lb))
            break
    return out


_GREETINGS = {"hi", "hello", "hey", "dear", "thanks", "thank", "user", "attn", "cc"}


def _cue_possible(text: str, pos: int) -> bool:
    """Cheap pre-check before looking for a cue phrase ending at ``pos``: cue phrases end with a
    lower-case word, a colon / question mark, or a greeting ("Dear", "Hi")."""
    i = pos - 1
    while i >= 0 and text[i] in " \t\n":
        i -= 1
    if i < 0:
        return False
    c = text[i]
    if c in ":?":
        return True
    if not c.isalpha():
        return False
    j = i
    while j > 0 and (text[j - 1].isalpha() or text[j - 1] in "'’"):
        j -= 1
    w = text[j:i + 1]
    return w.islower() or w.lower() in _GREETINGS


def _sentence_start(text: str, pos: int) -> bool:
    i = pos - 1
    while i >= 0 and text[i] in " \t\"'“‘(":
        i -= 1
    return i < 0 or text[i] in ".!?\n:;>*•-"


# ---------------------------------------------------------------------------------------------------
# Person names
# ---------------------------------------------------------------------------------------------------

# A title before a lower-case name in mixed-case text ("dr. kowalski", "Dr. o'brien", "nurse j. smith").  "mr"/"ms"
# also mean mitral regurgitation / multiple sclerosis or milliseconds, so they count only with their full stop.
_LOWER_TITLE_RE = re.compile(r"(?:dr\.?|prof\.|mrs?\.|ms\.|nurse)[ ]{1,2}\Z", re.I)
# Initials ("seen by MT", "pt MT", "Dr. MT"): two or three capitals right after one of these cues.  Bare "by" and
# "with" are no cue ("confirmed by CT", "treated with RT"), nor "seen with" ("seen with HIV infection").
_INITIALS_CUE_END_RE = _ci(
    r"(?:\b(?:seen|reviewed|evaluated|examined|signed|dictated|covered|staffed|accompanied)[ ]by|"
    r"\b(?:discussed|consulted|spoke|spoken|talked|met|followed[ ]up|follow[ -]up)[ ]with|\b(?:pt|patient|per)|"
    r"\b(?:dr|drs|prof)\.?|\b(?:mr|mrs|ms|mx)\.)[ ]{1,2}\Z")
# Capitals that are services, roles, tests or shorthand, not someone's initials, after those cues
# ("seen by PT", "discussed with IR", "per NCCN", "pt NPO", "pt DNR").
_NOT_INITIALS = frozenset("""
PT OT ST SLP RT RN NP PA MD DO ENT GI ID IR IM ICU ED ER OR PCP ONC GYN HEM BMT SW CM RD MSW CNS RO MO GU OB URO
NSG PMR PC PCT APP LPN CNA MA TB MTB MDT HO ACP PI FDA NCI WHO NIH CT MRI PET US XR CXR EKG ECG EEG EMG EUS EGD
FNA IHC PCR NGS MSI TMB HR PR CR SD PD NED AWD DOD OS PFS DFS EFS ORR AE SAE NPO SOB DNR DNI HTN DM CAD CHF AKI
UTI DVT PE MI CVA TIA AF OK NA NOS WNL ROS HPI PMH PSH FH SH CV GCS AOX CBC BMP CMP LFT INR PTT WBC ANC HGB PLT
CEA PSA AFP LDH IV PO SC SQ SL PRN BID TID QD QID HS AM PM UK USA EU MG ML GY CM MM KG FU DX TX RX HX SX BX
ADT TKI AI ICI CRT HCT SCT BCG KPS EOL GOC HCP POA ACD IDT NEG POS AND THE NOT TNM HIV HBV HCV
AML APL CLL CML MDS MPN HCC RCC SCC BCC NHL HL CRC MCL MZL SLL NPC MTC ATC PTC GBM NET NEC CUP MCC UPS RMS
MRN DOB SSN FIN CSN DOS MBI
DR DRS MR MRS MS MX
""".split())  # the third last line: cancers ("Pt AML in CR1": the disease the consult reads); the second
              # last line: form labels ("pt MRN: 4481920"); the last: titles ("Seen by DR SMITH"), the name
              # after them is rule 1b's
_LABEL_CUE_RE = _ci(
    r"((?:(?:patient|pt|full|first|last|maiden|middle|given|family|legal|preferred|patient's|"
    r"contact|client|member|insured|subscriber|guarantor|employee)[ ]name|name|patient|pt|signed(?:[ ]by)?|"
    r"electronically[ ]signed(?:[ ]by)?|attending(?:[ ]physician)?|physician|provider|surgeon|"
    r"oncologist|radiologist|pathologist|referring(?:[ ]physician|[ ]provider)?|pcp|cc|"
    r"emergency[ ]contact|contact|contact[ ]person|next[ ]of[ ]kin|guardian|mother|father|spouse|"
    r"husband|wife|son|daughter|caregiver|interpreter|witness|nurse|np|pa|resident|fellow|"
    r"rn|lpn|md|pharmacist|chaplain|social[ ]worker|sw|case[ ]manager|dietitian|scribe|hcp|poa|"
    r"(?:health[ ]?care[ ])?proxy|translator|navigator|"
    r"dictated[ ]by|reviewed[ ]by|user|author|by|from|to|attn|re))[ \t]*:[ \t]{0,12}(?:\n[ \t]{0,12})?")
# labels after which ALL-CAPS and common words are still taken as the name
_NAME_LABELS = {"name", "patient name", "pt name", "full name", "first name", "last name", "maiden name",
                "middle name", "given name", "family name", "legal name", "preferred name",
                "patient's name", "signed", "signed by", "electronically signed", "electronically signed by",
                "contact name", "client name", "member name", "insured name", "subscriber name",
                "guarantor name", "employee name"}
_VERB_CUE_RE = _ci(
    r"(?:(?:referred|dictated|reviewed|seen|evaluated|examined|signed|prepared|authored|verified|"
    r"approved|performed|interpreted|transcribed|attended|treated|managed|operated|consented|"
    r"accompanied|covered)[ ]by|"
    r"(?:seen|discussed|spoke|speak|spoken|met|consulted|talked|follow[ -]up|followed[ ]up|"
    r"appointment|visit|visits|consult|consultation)[ ]with|"
    r"my[ ]name[ ]is|name[ ]is|(?:first|last|maiden|middle|full|your)[ ]name(?:[ ]is)?\??|"
    r"names?[ ]are|i[ ]am|i'm|this[ ]is|call[ ]me|calls[ ]me|called|named|known[ ]as|"
    r"(?:named|called|call)[ ](?:him|her|them|it)|"
    r"name[ ]on[ ]the[ ]account\??|(?:it's[ ]|it[ ]is[ ])?under(?:[ ]my(?:[ ][\w']{1,20}){0,3}[ ]name)?|"
    r"said|says|told|tell|asked|ask|thanks?|dear|hi|hello|hey|shouted[ ]at|"
    r"(?:my|our|her|his|their)[ ](?:kid|son|daughter|wife|husband|partner|brother|sister|mother|father|"
    r"friend|doctor|nurse|oncologist|surgeon|neighbou?r|cousin|uncle|aunt|nephew|niece|grandson|"
    r"granddaughter|grandmother|grandfather|caregiver|colleague|boss)(?:[ ](?:is|was|named))?|"
    r"add|tribute[ ]to|player|producer|commenter|songwriter|director|author|actor|actress|singer|"
    r"writer|colleague|neighbou?r|cousin|uncle|aunt|nephew|niece|grandson|granddaughter|"
    r"grandmother|grandfather|husband|wife|fianc[ée]e?|boyfriend|girlfriend|"
    r"was[ ]called|is[ ]called|change[ ]it[ ]to|correct[ ]it[ ]to|speak[ ]to|contact|"
    r"heard|(?:(?:was|is)[ ])?(?:written|directed|sung|recorded|produced|composed|painted|arranged)[ ]by|"
    r"features|featuring|starring|with[ ]guest|(?:not[ ])?by)"
    r"[ \t]{1,6}")

_LABEL_CUE_END_RE = re.compile(_LABEL_CUE_RE.pattern + r"\Z")
_CLAUSE_END_RE = re.compile(r"[ \t]*(?:[,;(\n]|\.?\Z|\.\s|[ ](?:RN|NP|LPN|PA|MD|DO|PharmD|RPh)\b)")
# Care-team roles: never part of the name they stand before ("Pharmacist Jane Doe", "Dietitian Lee")
_ROLE_WORDS = _wordset(
    "pharmacist pharmacists dietitian dietician nutritionist navigator therapist physiotherapist counselor "
    "counsellor technician technologist phlebotomist interpreter translator scribe coordinator hospitalist "
    "intensivist radiologist psychologist psychiatrist anesthesiologist anaesthetist")
# care-team roles written before a name without a colon ("Pharmacist Rose", "social worker Joy"); "worker" and
# "manager" only after the words given
_ROLE_TITLE_WORDS = _wordset(
    "pharmacist therapist physiotherapist chaplain dietitian dietician nutritionist navigator counselor counsellor "
    "interpreter translator coordinator technician technologist phlebotomist psychologist hospitalist worker "
    "manager practitioner aide doula midwife volunteer rn np lpn cna fellow resident intern attending")
_ROLE_TITLE_FIRST = {"worker": _wordset("social"), "manager": _wordset("case care"),
                     "practitioner": _wordset("nurse"), "aide": _wordset("home health nursing care")}
# verbs of the note after such a name: "Pharmacist Rose reviewed", "Case manager Hope will call"
_ROLE_NAME_VERBS = _NOTE_VERBS - _wordset(
    "also then today tonight now again already still just personally herself himself who which that as about re "
    "regarding aware") | _wordset("to present here available helps drives manages cares brings takes handles "
                                  "coordinates assists accompanies")
# a service or role before a credential ("Onc RN", "Charge RN", "Heme NP"): no name
_SERVICE_WORDS = _wordset(
    "onc oncology heme hem hemonc rad radonc surg gyn gynonc uro neuro pall palliative infusion charge "
    "triage primary clinic floor unit night day research study trial transplant bmt icu er ed peds staff "
    "float home hospice wound psych nutrition dietitian pharmacy nurse navigator")
_NICKNAME_RE = re.compile(
    r"(?i:(?:called|calls[ ](?:him|her)self|goes[ ]by|go[ ]by|nicknamed?|known[ ]as|a\.?k\.?a\.?|prefers)"
    r"(?:[ ]the[ ]name)?):?[ ][\"“'‘]([A-Z][a-z'’-]{1,20})[\"”'’]")
_KIN_CUE_END_RE = re.compile(
    r"(?<![\w-])(?:partner|wife|husband|spouse|son|daughter|brother|sister|mother|father|mom|dad|niece|"
    r"nephew|"
    r"friend|caregiver|hcp|poa|contact|fianc[ée]e?|girlfriend|boyfriend|neighbou?r|aunt|uncle|cousin|"
    r"grandson|granddaughter|sibling)[ \t]*(?:\(\w{1,10}\))?[ \t]*[:,]?[ \t]{1,3}\Z")
_VERB_CUE_END_RE = re.compile(_VERB_CUE_RE.pattern + r"\Z")
# first names that are words of virtue or of flowers and gems, never adjectives ("his wife is hope,"; not "her son
# is young", "he is frank")
_WORD_GIVEN_NAMES = _wordset("hope grace faith joy charity patience prudence constance felicity rose violet lily iris "
                             "ivy daisy holly ruby pearl amber jade crystal dawn june april ginger olive penny vera "
                             "rosa marina aurora eve")
# a relative with the name in brackets: "son (grant)", "husband (Dale)"
_BRACKETED_WORD_RE = re.compile(r"\(([^\W\d_][\w'’-]{1,30})\)")
_KIN_BEFORE_BRACKET_RE = re.compile(
    r"(?<![\w-])(?:partner|wife|husband|spouse|son|daughter|brother|sister|mother|father|mom|dad|niece|nephew|"
    r"friend|caregiver|fianc[ée]e?|girlfriend|boyfriend|neighbou?r|aunt|uncle|cousin|grandson|granddaughter|"
    r"grandmother|grandfather|daughter-in-law|son-in-law|sibling)[ ]?\Z")


_TRIAL_WORDS_RE = re.compile(r"\b(?:trials?|study|studies|phase|randomi[sz]ed|multicent(?:re|er)|open-label)\b")
_BRACKETED_RE = re.compile(r"[(\[]([^\W\d_]{2,12})[)\]]")


def _acronym_of(words: list[str], abbr: str) -> bool:
    """``abbr`` spells the start of a word among ``words`` (the words before it) and then letters of the following
    words in order, each word starting a letter: "loss of heterozygosity" -> loh, "whole-exome sequencing" -> wes."""
    for a in range(len(words)):
        if not words[a].startswith(abbr[0]):
            continue
        rest = "".join(words[a:])
        k = 0
        for c in rest:
            if k < len(abbr) and c == abbr[k]:
                k += 1
        if k == len(abbr):
            return True
    return False


def _shouted_non_names(low: str, toks: list[tuple[int, int]], lowers: list[str]) -> tuple[frozenset[str], set[int]]:
    """Acronyms and trial names of an ALL-CAPS text read in lower case, which look like names there: the words
    defined in brackets after the words they abbreviate ("whole-exome sequencing (wes)": no name anywhere in the
    text) and the tokens of trial names where they stand (glued to a number: "ariel2", "krystal-1"; right before
    "trial" / "study"; in brackets before one, a trial link or a colon and trial words: "(noah) study",
    "[katherine](/clinicaltrials/...)", "(juliet): a multicentre ... phase 2")."""
    acronyms: set[str] = set()
    trial_at: set[int] = set()
    starts = {s0: i for i, (s0, _e0) in enumerate(toks)}
    for m in _BRACKETED_RE.finditer(low):
        abbr = m.group(1)
        before = re.findall(r"[^\W\d_]+", low[max(0, m.start() - 100):m.start()])[-8:]
        before = [w for w in before if w not in ("and", "or", "of", "the", "for", "with", "in")] or before
        after = low[m.end() - 1:m.end() + 20]
        if _acronym_of(before, abbr):
            acronyms.add(_fold(abbr))
        elif re.match(r"[)\]]{1,2}[ ]?(?:trials?|study|studies)\b|\]\(/clinicaltrials", after) or \
                (re.match(r"[)\]]{1,2}:", after) and _TRIAL_WORDS_RE.search(low, m.end(), m.end() + 150)):
            k = starts.get(m.start(1))
            if k is not None:
                trial_at.add(k)
    for i, (_s0, e0) in enumerate(toks):
        if re.match(r"-?\d|[ ]?(?:trials?|study|studies|protocol|regimen)\b", low[e0:e0 + 12]):
            trial_at.add(i)
    return frozenset(acronyms), trial_at


def _names(text: str, low: str, toks: list[tuple[int, int]], starts: dict[int, int],
           ends: dict[int, int], mask: _Mask, lower_mode: bool,
           shouted: bool = False) -> list[tuple[int, int, tuple[str, ...]]]:
    """Person-name spans as (start, end, key).  ``shouted``: the text was ALL-CAPS and is read in lower case,
    where acronyms abound ("CAUSED BY HL", "FOLLOWED BY IFRT"): a short word is a name only when listed."""
    n = len(toks)
    if n == 0:
        return []
    words = [text[s:e] for s, e in toks]
    lowers = [w.lower() for w in words]
    folds = [_fold(w) for w in words]
    free = [mask.free(s, e) for s, e in toks]
    # "North Carolina", "New Jersey": a state or country, not a person with a first name
    for m in _COUNTRY_PHRASE_RE.finditer(low):
        for k, (s0, e0) in enumerate(toks):
            if m.start() <= s0 and e0 <= m.end():
                free[k] = False

    capv = [w[0].isupper() and (len(w) == 1 or (not w.isupper() and not w[1].isupper())) for w in words]
    # an ALL-CAPS text read in lower case: its acronyms and trial names look like names ("LOSS OF HETEROZYGOSITY
    # (LOH)", "THE [KATHERINE](/CLINICALTRIALS/...) TRIAL", "ARIEL2", "THE MARIANNE STUDY"): standing alone, such
    # a word is no name
    acronyms, trial_at = _shouted_non_names(low, toks, lowers) if shouted else (frozenset(), set())

    def cap(i: int) -> bool:
        return capv[i]

    def initial(i: int) -> bool:
        w = words[i]
        return len(w) == 1 and (w.isupper() or lower_mode) and w.isalpha()

    def joinable(i: int) -> bool:
        """Token i continues the name that token i-1 belongs to."""
        if i <= 0 or i >= n:
            return False
        g = text[toks[i - 1][1]:toks[i][0]]
        if g in (" ", "  ", "\t"):
            return True
        if g in (". ", ".  ") and (initial(i - 1) or lowers[i - 1] in ("st", "ste")):
            return True
        return False

    def first_name(k: int) -> bool:
        """A listed first name, or a double one made of listed first names ("Mary-Ann", "jean-pierre")."""
        return folds[k] in _FIRST_NAMES or ("-" in folds[k] and all(p in _FIRST_NAMES for p in folds[k].split("-")))

    def after_first_name(k: int) -> bool:
        """Token k follows a first name, perhaps across initials ("JOSEPH L. PATER")."""
        p = k - 1
        while p >= 0 and joinable(p + 1) and initial(p):
            p -= 1
        return p >= 0 and joinable(p + 1) and first_name(p)

    def note_verb(k: int, first: bool) -> bool:
        """Token k is a verb or function word of the note, not part of a name ("dr. smith saw", "my father
        retired", "Dr. Smith Recommended").  Capitalised, only right after a name, and census names stay names
        ("Dr. Ahmed Said"; "Saw D, Lau WH" in a citation)."""
        lw = lowers[k]
        verb = lw in _NOTE_VERBS or _past_tense(lw)
        if words[k].islower() or (words[k].isupper() and len(lw) > 1):
            return verb and (lw in _NOTE_VERBS or (folds[k] not in _FIRST_NAMES and folds[k] not in _CENSUS_NAMES))
        return verb and not first and folds[k] not in _FIRST_NAMES and folds[k] not in _CENSUS_NAMES

    def namey(i: int, allow_vocab: bool = False) -> bool:
        if not free[i]:
            return False
        w = words[i]
        if ("'" in w or "’" in w) and re.split(r"['’]", lowers[i])[0] in _CONTRACTION_HEADS:
            return False
        if not (cap(i) or (lower_mode and w.islower())):
            return False
        f = folds[i]
        if lower_mode and len(w) <= 4 and (w.upper() in _NOT_INITIALS or shouted) and f not in _FIRST_NAMES and \
                not (shouted and f in _CENSUS_NAMES):
            return False  # a service, test or shorthand: "pt seen by ot", "PT SEEN BY OT" read in lower case
        if shouted and f not in _FIRST_NAMES and f not in _CENSUS_NAMES and (_english(lowers[i]) or _is_drugish(f)) \
                and not after_first_name(i):
            return False  # an English or medical word in capitals ("CAUSED BY THAWING"; not "JOSEPH L. PATER")
        if (f in acronyms or i in trial_at) and not after_first_name(i) and \
                not (i + 1 < n and joinable(i + 1) and folds[i + 1] in _CENSUS_NAMES):
            return False  # an acronym or trial name of the text ("(LOH)", "ARIEL2"); not "LAURA SMITH"
        if f in _HARD_STOP or f in _EPONYMS or f in _UNITS or f in _TITLES or f in _ROLE_WORDS or _is_drugish(f) or \
                f in _LANGUAGES or (f in _LANGUAGE_VERBS and _sentence_start(text, toks[i][0]) and
                                    not _TITLE_BEFORE_RE.search(text, max(0, toks[i][0] - 16), toks[i][0])) or \
                (f.endswith("s") and f[:-1] in _DAY_MONTH_NAMES) or _TNM_RE.fullmatch(w):  # "on Tuesdays", "Tisb"
            return False
        if toks[i][0] > 0 and text[toks[i][0] - 1].isalnum():  # glued to digits: "p.Cys525Alafs", "HbA1c"
            return False
        if "-" in w and _clinical_compound(w) and not first_name(i):  # "T-cell", not "Mary-Ann"
            return False
        if note_verb(i, first=not joinable(i)):
            return False
        if f in _SERVICE_WORDS and f not in _FIRST_NAMES and f not in _CENSUS_NAMES:
            return False  # "Geri Onc clinic", "Peds Heme": a service
        if f in _COUNTRIES_STATES and not allow_vocab:  # "Dr. Virginia Hale" is a person
            return False
        if lowers[i] in _VOCAB and (not allow_vocab or lower_mode) and f not in _FIRST_NAMES:
            return False
        if lowers[i] in _VOCAB and f in _AMBIGUOUS_NAMES and not allow_vocab:
            return False
        return True

    def head_follows(j: int) -> bool:
        if j + 1 >= n:
            return False
        g = text[toks[j][1]:toks[j + 1][0]]
        if g.strip(" '’s-") != "":
            return False
        return lowers[j + 1] in _CLINICAL_HEADS

    def extend(i: int, vocab_first: bool, vocab_after: bool, allcaps: bool = False,
               max_names: int = 4, eponym: bool = True) -> int | None:
        """Last token of the name that starts at token i, or None; with ``eponym``, None also when a clinical head
        noun follows ("Kowalski tumor" reads as an eponym; after "Dr." it does not)."""
        last = None
        count = 0
        k = i
        while k < n and count < max_names:
            if k > i and not joinable(k):
                break
            if note_verb(k, first=k == i):
                break
            if k > i and lowers[k] in _VOCAB and text[toks[k][1]:toks[k][1] + 1] == ":":
                break  # a section label after the name: "Dr. Kowalski Plan: ..."
            if initial(k) and free[k]:
                k += 1
                continue
            if lowers[k] in _PARTICLES and k + 1 < n and joinable(k + 1) and (
                    cap(k + 1) or lower_mode or (lowers[k + 1] in _PARTICLES and k + 2 < n and cap(k + 2))) \
                    and free[k]:
                k += 1
                continue
            ok = namey(k, vocab_first if k == i else vocab_after)
            if not ok and allcaps and free[k] and len(words[k]) > 1 and words[k].isupper() and \
                    folds[k] not in _HARD_STOP and folds[k] not in _EPONYMS:
                ok = True
            if not ok:
                break
            last = k
            count += 1
            k += 1
        if last is not None and eponym and head_follows(last):
            return None
        return last

    found: list[tuple[int, int]] = []  # token index ranges (inclusive)

    # 1. titles: "Dr. Jane Doe", "Mrs. O'Neil", "Pt. Smith"
    for i in range(n - 1):
        li = lowers[i]
        if li in _TITLES and (cap(i) or lower_mode) and free[i]:
            g = text[toks[i][1]:toks[i + 1][0]]
            if g not in (" ", ". ", ".  ", "  "):
                continue
            strong = li in _STRONG_TITLES
            if li in _RANK_TITLES:
                j = extend(i + 1, True, True)
                k = i + 1  # the name ends before the first word that is neither a census name nor (capitalised) new
                while j is not None and k <= j and (folds[k] in _CENSUS_NAMES or initial(k) or (
                        not lower_mode and cap(k) and lowers[k] not in _VOCAB and not _english(lowers[k]))):
                    k += 1
                j = k - 1 if k > i + 1 else None
            else:
                j = extend(i + 1, strong, strong, eponym=not strong)  # "Dr. Kowalski Tumor Board": a person
            k = i + 1
            if j is None and li in ("nurse", "sister", "brother") and not lower_mode and cap(k) and free[k] and \
                    folds[k] in _AMBIGUOUS_NAMES and (_CLAUSE_END_RE.match(text, toks[k][1]) or (
                        k + 1 < n and joinable(k + 1) and words[k + 1].islower() and
                        (lowers[k + 1] in ("to", "is", "was", "says", "said") or _past_tense(lowers[k + 1])))):
                j = k  # "Nurse Rose to call", "Nurse Rose called"; "Nurse Will call back" is prose
            if j is None and strong and not lower_mode and cap(k) and free[k] and folds[k] in _AMBIGUOUS_NAMES and \
                    folds[k] in _HARD_STOP:
                # "Dr. Will Hope", "Dr. Will saw pt", "Mrs. May called": a first name that is a function word
                if k + 1 < n and joinable(k + 1) and cap(k + 1) and free[k + 1] and (
                        folds[k + 1] in _CENSUS_NAMES or not _english(lowers[k + 1])):
                    j = k + 1
                elif _CLAUSE_END_RE.match(text, toks[k][1]) or (
                        k + 1 < n and joinable(k + 1) and words[k + 1].islower() and
                        (lowers[k + 1] in _ROLE_NAME_VERBS or _past_tense(lowers[k + 1]))):
                    j = k
            if j is not None:
                found.append((i + 1, j))

    # 1a. a first name that is also a word right after a care-team role without a colon ("Pharmacist Rose reviewed
    #     the list", "social worker Joy met the family", "Case manager Hope to call"): a name when it ends its clause
    #     or a verb of the note follows, as after "Nurse"; "Pharmacist Will review", "Case manager Hope for
    #     discharge" are prose.  In a lower-case or ALL-CAPS note only a virtue or flower name counts ("PHARMACIST
    #     ROSE REVIEWED MEDS"; "resident will call" stays)
    for i in range(n - 1):
        li = lowers[i]
        if li not in _ROLE_TITLE_WORDS or not (lower_mode or words[i].islower() or cap(i) or words[i].isupper()):
            continue
        if li in _ROLE_TITLE_FIRST and not (i > 0 and lowers[i - 1] in _ROLE_TITLE_FIRST[li] and joinable(i)):
            continue  # "worker", "manager" only in "social worker", "case manager"
        k = i + 1
        if not (joinable(k) and free[k] and folds[k] in _AMBIGUOUS_NAMES and
                (cap(k) if not lower_mode else folds[k] in _WORD_GIVEN_NAMES)):
            continue
        nxt_cap = k + 1 < n and joinable(k + 1) and (cap(k + 1) if not lower_mode else words[k + 1].islower())
        nxt_flat = k + 1 < n and joinable(k + 1) and words[k + 1].islower()
        if nxt_cap and namey(k + 1) and (folds[k + 1] in _CENSUS_SURNAMES or not _english(lowers[k + 1])) and \
                not (lower_mode and (lowers[k + 1] in _VOCAB or _english(lowers[k + 1]))):
            found.append((k, k + 1))  # "Case manager Hope Delgado"
        elif _CLAUSE_END_RE.match(text, toks[k][1]) or (
                nxt_flat and
                (lowers[k + 1] in _ROLE_NAME_VERBS or _past_tense(lowers[k + 1]) or
                 (lowers[k + 1].endswith("ed") and len(lowers[k + 1]) > 4 and
                  (_english(lowers[k + 1][:-1], False) or _english(lowers[k + 1][:-2], False))))):
            found.append((k, k))  # "Case manager Hope arranged", "Dietitian Faith to follow"

    # 1b. a lower-case title in mixed-case text: "discussed with dr. kowalski" (lower-case text has rule 1), or an
    #     ALL-CAPS one ("DR SMITH TO FOLLOW UP", "Seen by DR. KOWALSKI"), whose case says nothing either.  The
    #     name is a word that is neither prose nor English ("kowalski"), a listed surname ("smith") or an
    #     unambiguous first name; "dr. said" and "DR. REVIEWED" stay
    def lower_name(k: int, upper: bool, after_first: bool = False) -> bool:
        """Token k, lower case (or ALL-CAPS with ``upper``), reads as a name; right after a first name a census
        surname that is also a rare word counts too ("jane doe")."""
        f = folds[k]
        return free[k] and (words[k].isupper() if upper else words[k].islower()) and len(f) > 1 and \
            f not in _HARD_STOP and f not in _TITLES and f not in _EPONYMS and f not in _UNITS and \
            not _is_drugish(f) and not (upper and words[k] in _NOT_INITIALS) and (
                (lowers[k] not in _VOCAB and not _english(lowers[k])) or f in _SURNAMES or
                (f in _FIRST_NAMES and f not in _AMBIGUOUS_NAMES) or
                (after_first and f in _CENSUS_SURNAMES and lowers[k] not in _VOCAB and not note_verb(k, False)))
    #     The title may be capitalised ("Dr. kowalski", "Dr. SMITH"); "nurse" counts too, as the title of such a
    #     name ("nurse j. smith", "NURSE KOWALSKI"; "nurse navigator" is English).  An initial ("j.") and name
    #     particles ("dr. van der berg") may stand between title and surname.
    if not lower_mode:
        for i in range(n - 1):
            if not ((words[i].islower() or words[i].isupper() or cap(i)) and
                    (lowers[i] in _STRONG_TITLES or lowers[i] == "nurse") and
                    free[i] and _LOWER_TITLE_RE.match(text, toks[i][0], toks[i + 1][0])):
                continue
            k = i + 1
            upper = words[k].isupper() and not (len(words[k]) == 1 and k + 1 < n and words[k + 1].islower())

            def flat(x: int) -> bool:
                return words[x].isupper() if upper else words[x].islower()
            if len(words[k]) == 1 and flat(k) and k + 1 < n and \
                    text[toks[k][1]:toks[k + 1][0]] in (". ", " ") and free[k]:
                k += 1  # "nurse j. smith"
            while k + 1 < n and lowers[k] in _PARTICLES and flat(k) and free[k] and \
                    text[toks[k][1]:toks[k + 1][0]] == " ":
                k += 1  # "dr. van der berg", "dr. de la cruz"
            if not lower_name(k, upper):
                continue
            j = k
            if k == i + 1 and first_name(k):  # "dr. anna kowalski", "DR. JOHN A. SMITH", "dr. mary-ann o'neil"
                m = k + 1
                if m + 1 < n and len(words[m]) == 1 and flat(m) and text[toks[k][1]:toks[m][0]] == " " and \
                        text[toks[m][1]:toks[m + 1][0]] in (". ", " "):
                    m += 1  # a middle initial
                if m < n and text[toks[m - 1][1]:toks[m][0]] in (" ", ". ") and lower_name(m, upper, True) and \
                        not note_verb(m, first=False):
                    j = m
            found.append((i + 1, j))

    # 1c. initials after a cue: "seen by MT", "pt MT reports", "Dr. MT"; not an abbreviation the text defines
    #     ("independent review committee (IRC) ... per IRC assessment"), not before "+", "-", "/" ("pt ER+"),
    #     and not after an all-capitals cue: in "PT SEEN BY OT" or an all-capitals note every word is capitals
    if not lower_mode:
        for i in range(n):
            w = words[i]
            nxt = text[toks[i][1]:toks[i][1] + 1]
            if not (2 <= len(w) <= 3 and w.isupper() and w.isascii() and free[i] and w not in _NOT_INITIALS and
                    f"({w})" not in text and not nxt.isalnum() and nxt not in ("+", "-", "/")):
                continue
            m = _INITIALS_CUE_END_RE.search(low, max(0, toks[i][0] - 25), toks[i][0])
            if m and any(c.islower() for c in text[m.start():m.end()]):
                found.append((i, i))

    # 1d. a nickname in quotes ('prefers to be called "Buddy"', "goes by 'Bud'") and, in mixed-case text, a
    #     lower-case listed first name after a relative or contact ("partner jamal", "contact: jamal"), with a
    #     lower-case surname after it
    if '"' in text or "'" in text or "“" in text or "‘" in text:
        for m in _NICKNAME_RE.finditer(text):
            k = starts.get(m.start(1))
            if k is not None and free[k] and folds[k] not in _HARD_STOP and not _is_drugish(folds[k]):
                found.append((k, k))
    if not lower_mode:
        for i in range(n):
            if not free[i]:
                continue
            if cap(i) and not initial(i) and namey(i) and (first_name(i) or (
                    lowers[i] not in _VOCAB and not _english(lowers[i]))) and \
                    _KIN_CUE_END_RE.search(low, max(0, toks[i][0] - 20), toks[i][0]):
                found.append((i, i))  # "Husband Vittorio, son Luca": a Title Case relative before the name
                continue
            if cap(i) and folds[i] in _AMBIGUOUS_NAMES and not initial(i) and \
                    _KIN_CUE_END_RE.search(low, max(0, toks[i][0] - 20), toks[i][0]):
                # "Daughter Hope Johnson is HCP", "son Will is HCP": a first name that is a word, with a surname,
                # ending its clause or before a verb, as after a role ("son Will be there" stays)
                if i + 1 < n and joinable(i + 1) and cap(i + 1) and namey(i + 1) and (
                        folds[i + 1] in _CENSUS_SURNAMES or not _english(lowers[i + 1])):
                    found.append((i, i + 1))
                elif _CLAUSE_END_RE.match(text, toks[i][1]) or (
                        i + 1 < n and joinable(i + 1) and words[i + 1].islower() and
                        (lowers[i + 1] in _ROLE_NAME_VERBS or _past_tense(lowers[i + 1]))):
                    found.append((i, i))
                continue
            if not (words[i].islower() and first_name(i) and folds[i] not in _AMBIGUOUS_NAMES and
                    lowers[i] not in _VOCAB and not _english(lowers[i]) and
                    _KIN_CUE_END_RE.search(low, max(0, toks[i][0] - 20), toks[i][0])):
                continue
            j = i
            if i + 1 < n and joinable(i + 1) and lower_name(i + 1, False, after_first=True) and \
                    not note_verb(i + 1, False):
                j = i + 1
            found.append((i, j))

    if "(" in text:
        for m in _BRACKETED_WORD_RE.finditer(low):
            if not _KIN_BEFORE_BRACKET_RE.search(low, max(0, m.start() - 24), m.start()):
                continue
            k = starts.get(m.start(1))
            if k is not None and free[k] and ends.get(m.end(1)) == k and (
                    folds[k] in _FIRST_NAMES or folds[k] in _AMBIGUOUS_NAMES) and folds[k] not in _HARD_STOP and \
                    words[k].upper() not in _NOT_INITIALS and (lower_mode or cap(k)):
                found.append((k, k))  # "SON (GRANT) IS HCP", "husband (Dale)"

    # cue phrases are looked up right before candidate tokens (cheaper than scanning the whole text)
    label_hits: list[tuple[re.Match, int]] = []
    verb_hits: list[tuple[re.Match, int]] = []
    if lower_mode:
        for m in _iter(_LABEL_CUE_RE, low):
            k = starts.get(m.end())
            if k is not None:
                label_hits.append((m, k))
        for m in _iter(_VERB_CUE_RE, low):
            k = starts.get(m.end())
            if k is not None:
                verb_hits.append((m, k))
    else:
        for i in range(n):
            if not free[i] or not words[i][0].isupper():
                continue
            s0 = toks[i][0]
            j = s0 - 1
            while j >= 0 and text[j] in " \t\n":
                j -= 1
            if j >= 0 and text[j] == ":":
                m = _LABEL_CUE_END_RE.search(low, max(0, s0 - 70), s0)
                if m and not (m.start() and (low[m.start() - 1].isalnum() or low[m.start() - 1] == "_")):
                    label_hits.append((m, i))
            # vocabulary words are looked at too: after a naming cue ("maiden name is Key") they are names
            if cap(i) and folds[i] not in _HARD_STOP and _cue_possible(text, s0):
                m = _VERB_CUE_END_RE.search(low, max(0, s0 - 50), s0)
                if m and not (m.start() and (low[m.start() - 1].isalnum() or low[m.start() - 1] == "_")):
                    verb_hits.append((m, i))

    # 2. form labels: "Name: John Smith", "Patient: ...", "Signed: Anna Berg RN"
    for m, k in label_hits:
        label = re.sub(r"\s+", " ", m.group(1).lower())
        strong = label in _NAME_LABELS
        if label == "pt" and text[m.start(1):m.start(1) + 2] == "PT" and not shouted:
            continue  # "PT: Ambulating 100 ft": physical therapy, not the patient
        j = extend(k, strong, True, allcaps=strong)
        word_name = False
        if j is None and not lower_mode and cap(k) and (first_name(k) or folds[k] in _AMBIGUOUS_NAMES) and \
                label not in ("cc", "re"):
            # a first name that is also a word ("Nurse: Rose", "Daughter: Grace"): a name when it ends its clause
            # or a surname follows; "Nurse: Will call back" is prose
            j = extend(k, True, True)
            if j == k and not _CLAUSE_END_RE.match(text, toks[k][1]):
                j = None
            word_name = j is not None
        if j is None and not strong and not lower_mode and words[k].isupper():
            # an ALL-CAPS name after another label ("PATIENT: HARRIET QUELLWOOD"; not "PATIENT: STABLE"): words
            # that are names or no English, as after an ALL-CAPS title
            j = k
            while j + 1 < n and j + 1 - k < 4 and joinable(j + 1) and \
                    lower_name(j + 1, True, after_first=first_name(j)):
                j += 1
            if not lower_name(k, True):
                continue
        if j is None:
            continue
        if not strong and not word_name:
            nm = [x for x in range(k, j + 1) if not initial(x)]
            if not nm or (len(nm) == 1 and folds[nm[0]] not in _FIRST_NAMES and lowers[nm[0]] in _VOCAB):
                continue
            if len(nm) == 1 and folds[nm[0]] not in _CENSUS_NAMES and folds[nm[0]] not in _FIRST_NAMES and \
                    _english(lowers[nm[0]]):
                continue  # "Pt: Ambulating with walker", "Chaplain: Visited, prayed with pt"
        # "Pt: HOLLOWAY, RUTH A.", "Name: Smith, John": the given name after the surname and a comma
        # a given name not on the lists counts when it reads as a name in the surname's case ("KIM, SOO-YEON")
        def given(x: int) -> bool:
            return free[x] and words[x].isupper() == words[j].isupper() and (first_name(x) or (
                lower_name(x, True) if words[x].isupper() else namey(x)))
        if j + 1 < n and text[toks[j][1]:toks[j + 1][0]] == ", " and given(j + 1):
            j += 1
            # then initials, listed middle names and particles before a name ("GARCIA, MARIA DEL CARMEN",
            # "Lopez, Jose Luis", "HOLLOWAY, RUTH A.")
            for _ in range(3):
                if j + 1 < n and joinable(j + 1) and free[j + 1] and (initial(j + 1) or (
                        first_name(j + 1) and given(j + 1))):
                    j += 1
                elif j + 2 < n and lowers[j + 1] in _PARTICLES and joinable(j + 1) and free[j + 1] and \
                        joinable(j + 2) and given(j + 2):
                    j += 2
                else:
                    break
        found.append((k, j))

    # 3. verbal cues: "seen by", "my name is", "follow up with", "said", "Hi ..."
    for m, k in verb_hits:
        if text[toks[k][1]:toks[k][1] + 1] == ":" or lowers[k] in _GREETINGS:
            continue  # "...name on the account? User: Ann Lee": a speaker label, the name follows it
        if re.search(r"(?:my|our|her|his|their)[ ](?!name\b)\w+[ ](?:is|was)[ \t]+\Z", m.group()) and \
                not first_name(k) and \
                (lowers[k] in _VOCAB or _english(lowers[k])):
            if folds[k] in _WORD_GIVEN_NAMES and _CLAUSE_END_RE.match(text, toks[k][1]):
                found.append((k, k))  # "his wife is hope, cell ..."
            continue  # "his wife is deceased", "her son is deployed"; "his wife is ngozi" is a name
        naming = bool(re.search(r"name|call|known", m.group()))
        j = extend(k, naming, True)
        if j is not None and shouted and (re.fullmatch(r"(?:not[ ])?by[ \t]*", m.group()) or
                                          low[max(0, m.start() - 5):m.start()] == "also ") and \
                folds[k] not in _FIRST_NAMES and folds[k] not in _CENSUS_NAMES and \
                sum(1 for x in range(k, j + 1) if not initial(x)) < 2:
            continue  # "EVIDENCED BY LOH", "FOLLOWED BY FOLFOX6", "ALSO KNOWN AS LACTOTROPH": a bare "by" in capitals
        if j is not None:
            found.append((k, j))

    # 4. credentials: "J. Smith, MD", "Anna Berg RN"
    for m in _iter(_CRED_RE, text):
        pm = _CRED_PRE_RE.search(text, max(0, m.start() - 6), m.start())
        if pm is None:
            continue
        j = ends.get(pm.start())
        if j is None:
            continue
        i = j
        while i - 1 >= 0 and joinable(i) and (cap(i - 1) or initial(i - 1)) and free[i - 1] and \
                folds[i - 1] not in _HARD_STOP and j - i < 3:
            i -= 1
        while i <= j and lowers[i] in _TITLES:
            i += 1
        toks_in = [x for x in range(i, j + 1) if not initial(x)]
        if not toks_in or not all(namey(x, True) for x in toks_in):
            continue
        if not any(folds[x] in _CENSUS_NAMES or folds[x] in _FIRST_NAMES or not _english(lowers[x]) for x in toks_in):
            continue  # "Histiocyte Society CNS" (central nervous system), not a nurse specialist
        if all(lowers[x] in _SERVICE_WORDS for x in toks_in):
            continue  # "Onc RN:", "Charge RN", "Infusion RN": a service, not a nurse's name
        if len(toks_in) == 1 and i == j and lowers[j] in _VOCAB:
            continue
        found.append((i, j))

    # 5. known first names (+ surname)
    for i in range(n):
        f = folds[i]
        if f not in _FIRST_NAMES or not free[i]:
            continue
        if not (cap(i) or (lower_mode and words[i].islower())):
            continue
        amb = f in _AMBIGUOUS_NAMES or lowers[i] in _VOCAB or f in _COUNTRIES_STATES  # "Georgia", "Virginia"
        if head_follows(i):
            continue
        if amb:
            if lower_mode:
                if f in _WORD_GIVEN_NAMES and _CLAUSE_END_RE.match(text, toks[i][1]) and \
                        _KIN_CUE_END_RE.search(low, max(0, toks[i][0] - 20), toks[i][0]):
                    found.append((i, i))  # "with daughter faith."
                continue
            j = extend(i, True, False)
            if j is None or j == i:
                continue
        else:
            j = extend(i, True, not lower_mode)
            if j is None:
                continue
        found.append((i, j))

    # 5b. known surnames on their own: "Pt. seen with Castellano", "Johnson reports"
    if not lower_mode:
        for i in range(n):
            if folds[i] in _SURNAMES and cap(i) and free[i] and namey(i) and not head_follows(i):
                j = extend(i, False, True)
                found.append((i, i if j is None else j))

    # 5c. double-barrelled surnames: "Ramsey-Johnson", "Vasquez-Tillman" (eponym pairs such as
    #     "Bloom-Richardson score" have a clinical head after them or are eponyms)
    if not lower_mode:
        for i in range(n):
            parts = folds[i].split("-")
            if len(parts) == 2 and free[i] and words[i][0].isupper() and folds[i] not in _EPONYMS and all(
                    p in _CENSUS_SURNAMES and p not in _EPONYMS and p not in _VOCAB for p in parts) and \
                    all(q[:1].isupper() for q in words[i].split("-")) and not head_follows(i):
                found.append((i, i))

    # 6. sequences of capitalised non-vocabulary words: "Zargan Vedzizhev", "Csanád P Gere"
    if not lower_mode:
        i = 0
        while i < n:
            if not namey(i):
                i += 1
                continue
            k = i + 1
            names_in = 1
            last = i
            while k < n and joinable(k):
                if initial(k) and free[k]:
                    k += 1
                    continue
                if lowers[k] in _PARTICLES and k + 1 < n and joinable(k + 1) and (
                        cap(k + 1) or (lowers[k + 1] in _PARTICLES and k + 2 < n and joinable(k + 2)
                                       and cap(k + 2))):
                    k += 1
                    continue
                if namey(k):
                    names_in += 1
                    last = k
                    k += 1
                    continue
                break
            # at least one word that is a name or no English at all ("Histiocyte Society" is neither)
            if names_in >= 2 and not head_follows(last) and any(
                    folds[x] in _FIRST_NAMES or folds[x] in _SURNAMES or not _english(lowers[x])
                    for x in range(i, last + 1) if not initial(x)):
                found.append((i, last))
            i = max(k, i + 1)

    # 7. dialogue speakers: "Matthew: Remember me"; once one speaker is a known first name, the other
    #    speakers of the dialogue that are not ordinary words are people too ("Ubul:", "Destiny:")
    speakers = [k for k in (starts.get(m.start(1)) for m in _SPEAKER_RE.finditer(text)) if k is not None]
    dialogue = len(speakers) >= 2 and any(folds[k] in _FIRST_NAMES and cap(k) for k in speakers)
    for k in speakers:
        if not free[k] or not (cap(k) or lower_mode) or folds[k] in _HARD_STOP:
            continue
        if folds[k] in _FIRST_NAMES or (dialogue and cap(k) and (
                (lowers[k] not in _VOCAB and not _english(lowers[k])) or folds[k] in _AMBIGUOUS_NAMES)):
            found.append((k, k))

    # 7b. a lone unknown capitalised word acting as a person: "Irenka is very reliable", "Kuba, can I",
    #     "Franciska's kid", vocatives "..., Mark!"
    for i in range(n):
        if not free[i] or not (cap(i) or lower_mode):
            continue
        f = folds[i]
        known = f in _FIRST_NAMES or f in _SURNAMES
        if not (namey(i) or (known and cap(i))) or f in _NAME_LIST_STOP:
            continue
        e = toks[i][1]
        # "had given Belle his address", "told Angel her results": the recipient of a giving verb
        recipient = known and re.search(r"\b(?:gave|given|give|gives|sent|send|told|tell|showed|show|handed|"
                                        r"offered|asked)[ ]\Z", text[max(0, toks[i][0] - 10):toks[i][0]]) \
            and re.match(r"[ ](?:his|her|their|my|our)\b", text[e:e + 7])
        if recipient:
            found.append((i, i))
            continue
        if _PERSON_VERB_RE.match(text, e) or _KIN_RE.match(text, e) or (
                re.match(r"[ \t]?[!?]", text[e:e + 2]) and re.search(r",[ \t]$", text[max(0, toks[i][0] - 2):toks[i][0]])):
            if lower_mode and not known:
                continue
            found.append((i, i))
    # 7d. a lone capitalised word inside a sentence that is neither English (Webster's, plurals allowed)
    #     nor clinical vocabulary, an eponym, a drug or a place: "the true gender of Vehbija", "by
    #     ex-Zombie Ogasahara".  Camel case ("CheckMate"), ALL CAPS (genes, trials) and short words
    #     ("Tis") are left alone.
    if not lower_mode:
        for i in range(n):
            w = words[i]
            if not free[i] or not cap(i) or len(w) < 4 or any(c.isupper() for c in w[1:]) or "-" in w:
                continue
            if not namey(i) or _sentence_start(text, toks[i][0]) or head_follows(i):
                continue
            if _english(lowers[i]) or folds[i] in _NAME_LIST_STOP or lowers[i].endswith(_DEMONYM_ENDINGS):
                continue
            # Title Case headings ("Treatment of Histiocyte Disorders"): a capitalised ordinary word beside it
            if (i + 1 < n and joinable(i + 1) and cap(i + 1) and (lowers[i + 1] in _VOCAB or _english(lowers[i + 1]))
                    and folds[i + 1] not in _FIRST_NAMES and folds[i + 1] not in _SURNAMES) or \
                    (i > 0 and joinable(i) and cap(i - 1) and lowers[i - 1] in _VOCAB and lowers[i - 1] not in _TITLES
                     and lowers[i - 1] not in _GREETINGS and folds[i - 1] not in _FIRST_NAMES):
                continue
            # after "in/from/to ..." (possibly "to New ...") it is a place: the location rules take it
            p0 = toks[i - 1][0] if i > 0 and lowers[i - 1] in _PLACE_PREFIXES and joinable(i) else toks[i][0]
            if _PREP_CUE_END_RE.search(low, max(0, p0 - 8), p0) or _CITY_CUE_END_RE.search(low, max(0, p0 - 40), p0):
                continue
            found.append((i, i))
    if lower_mode:
        # a line made only of 2-4 unknown words is a name line ("emidio p lombardo")
        for m in re.finditer(r"(?m)^[ \t>?*•-]{0,8}([^\W\d_]+(?:[ ][^\W\d_]+\.?){1,3})[ \t]*$", text):
            k = starts.get(m.start(1))
            if k is None:
                continue
            j = k
            while j + 1 < n and toks[j + 1][1] <= m.end(1):
                j += 1
            ws = list(range(k, j + 1))
            first_line = not text[:m.start()].strip(" \t\n>?*•-")
            if all(initial(x) or namey(x) for x in ws) and sum(1 for x in ws if not initial(x)) >= 2 and \
                    (first_line or any(folds[x] in _FIRST_NAMES for x in ws)):
                found.append((k, j))

    # "REFERRING: DR. NWACHUKWU, OBIORA", "Dr. Okafor, Chidi": a surname found alone, then a comma and the given name
    # (a listed first name or a word that is no English) closing the line or the bracket
    for r, (a, b) in enumerate(found):
        if a != b or b + 1 >= n or text[toks[b][1]:toks[b + 1][0]] != ", " or not free[b + 1]:
            continue
        if not ((a > 0 and lowers[a - 1] in _TITLES and lowers[a - 1] != "drs") or
                re.search(r":[ \t]*\Z", text[max(0, toks[a][0] - 4):toks[a][0]])):
            continue  # right after a title or a label only: "Drs. Feldman, Okonkwo, Lindqvist" are three people
        g = b + 1
        if words[g].isupper() != words[b].isupper() or not (cap(g) or words[g].isupper()) or len(words[g]) < 3:
            continue
        if not (first_name(g) or (lowers[g] not in _VOCAB and not _english(lowers[g]) and
                                  folds[g] not in _HARD_STOP and not _is_drugish(folds[g]))):
            continue
        e = g
        if e + 1 < n and joinable(e + 1) and initial(e + 1):
            e += 1
        if re.match(r"[ \t.]*(?:$|\n|[);(])", text[toks[e][1]:toks[e][1] + 4]):
            found[r] = (a, e)

    is_person = [False] * n
    for a, b in found:
        for x in range(a, b + 1):
            is_person[x] = True

    def add_run(a: int, b: int) -> bool:
        if any(is_person[x] for x in range(a, b + 1)):
            return False
        found.append((a, b))
        for x in range(a, b + 1):
            is_person[x] = True
        return True

    # 7c. a coordinated list of >= 2 unknown capitalised words: "Kadiev and Adams", "Gerste, Johnson and
    #     Johnson" (brand-name drugs are in the vocabulary, so "Keytruda and Opdivo" is left alone)
    if not lower_mode:
        for m in _COORD_LIST_RE.finditer(text):
            items = [starts.get(m.start() + x.start()) for x in re.finditer(r"[^\W\d_][\w'’-]*", m.group())]
            items = [k for k in items if k is not None and lowers[k] not in ("and", "or", "&")]
            if len(items) < 2 or any(k is None for k in items):
                continue
            strict = [k for k in items if (namey(k) and not _english(lowers[k]) and
                                           not any(c.isupper() for c in words[k][1:])) or
                      ((folds[k] in _FIRST_NAMES or folds[k] in _SURNAMES) and cap(k))]
            # beside a clear name, a census name that is also a word or an eponym is a name too
            # ("Muslija and Brown", "Vizirov, Barrett and Jones")
            known = any(folds[k] in _FIRST_NAMES or folds[k] in _SURNAMES for k in strict)
            good = [k for k in items if k in strict or (strict and folds[k] in _CENSUS_NAMES and (
                known or lowers[k] not in _VOCAB))]
            if len(strict) >= 1 and len(good) >= 2 and len(good) == len(items) and \
                    all(cap(k) and free[k] and folds[k] not in _HARD_STOP for k in items) and \
                    not head_follows(items[-1]):
                for k in items:
                    if _sentence_start(text, toks[k][0]) and k not in good:
                        continue
                    found.append((k, k))

    def verb_phrase(k: int, after_comma: bool) -> bool:
        """Token k opens a clause of a Title Case note, not a name: a verb ("Works", "Sees", "Smokes",
        "Enjoys") that is no listed name, before a preposition, a title, an article, a number, a capitalised
        ordinary word or (after a comma) a line end: "Lives In Springfield, Works At Acme Hardware",
        "..., Plays Golf"."""
        lw, f = lowers[k], folds[k]
        stem = lw[:-3] + "y" if lw.endswith("ies") else \
            lw[:-2] if lw.endswith(("ches", "shes", "sses")) else lw[:-1]
        if not (lw in _NOTE_VERBS or _past_tense(lw) or
                (lw.endswith("s") and len(lw) > 3 and _english(stem, False) and f not in _SURNAMES)) or \
                f in _FIRST_NAMES:
            return False
        after = text[toks[k][1]:toks[k][1] + 30]
        nxt = re.match(r"[ ]{1,2}([^\W\d_][\w'’-]*)", after)
        if nxt is None:
            return bool(re.match(r"[ ]{1,2}\d", after) or
                        (after_comma and re.match(r"[ \t]*(?:[.;,\n]|\Z)", after)))
        w2 = nxt.group(1)
        nw = w2.lower()
        if nw in ("and", "or", "&"):
            return False
        return nw in _ORG_STOP_PREPS or nw in _TITLES or nw in _ARM_DETERMINERS or nw in _ORG_CONNECT or \
            nw in ("daily", "nightly", "weekly", "alone", "part", "full", "home", "here", "there",
                   "socially") or \
            (w2[:1].islower() and nw in _VOCAB) or \
            (w2[:1].isupper() and (nw in _VOCAB or _english(nw)) and _fold(w2) not in _FIRST_NAMES and
             _fold(w2) not in _SURNAMES)

    # 8. coordination: "Kateřina, James and Emily", "Park and Mann"
    coord_r = re.compile(r"[ \t]*,[ \t]*(?:and[ \t]+|&[ \t]*)?|[ \t]+(?:and|&|or)[ \t]+")
    coord_l = re.compile(r"(?:,[ \t]*|[ \t]+(?:and|&|or)[ \t]+)$")
    queue = sorted(set(found))
    seen_runs: set[tuple[int, int]] = set()
    while queue:  # each run is examined once; newly added neighbours are examined in turn
        a, b = queue.pop()
        if (a, b) in seen_runs:
            continue
        seen_runs.add((a, b))
        # right neighbour
        mr = coord_r.match(text, toks[b][1])
        if mr:
            k = starts.get(mr.end())
            if k is not None and not is_person[k] and not verb_phrase(k, "," in mr.group()):
                j = extend(k, False, False, max_names=2)
                if j is not None and not (j == k and lowers[k] in _VOCAB) and add_run(k, j):
                    queue.append((k, j))
        # left neighbour
        ml = coord_l.search(text, max(0, toks[a][0] - 8), toks[a][0])
        if ml:
            j = ends.get(ml.start())
            if j is not None and not is_person[j]:
                i = j
                while i - 1 >= 0 and joinable(i) and (namey(i - 1) or initial(i - 1)) and j - i < 2:
                    i -= 1
                if namey(i) and all(namey(x) or initial(x) for x in range(i, j + 1)) and add_run(i, j):
                    queue.append((i, j))

    # 9. propagation: later bare mentions of a surname / first name already found
    name_tokens: dict[str, int] = {}
    for a, b in found:
        for x in range(a, b + 1):
            if not initial(x) and lowers[x] not in _PARTICLES and len(words[x]) > 1:
                name_tokens.setdefault(folds[x], 0)
    for i in range(n):
        if is_person[i] or folds[i] not in name_tokens or not free[i]:
            continue
        if not (cap(i) or lower_mode):
            continue
        if lowers[i] in _VOCAB and folds[i] not in _FIRST_NAMES:
            continue
        if folds[i] in _HARD_STOP or head_follows(i):
            continue
        add_run(i, i)

    # a run inside a longer one ("Clara" within "Clara R. Dickson") would split the name: keep the longest
    runs: list[list[int]] = []
    for a, b in sorted(set(found), key=lambda r: (r[0], -r[1])):
        if runs and a <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], b)
        else:
            runs.append([a, b])
    out = []
    for a, b in runs:
        key = tuple(folds[x] for x in range(a, b + 1) if not initial(x) and lowers[x] not in _PARTICLES)
        if not key:
            continue
        out.append((toks[a][0], toks[b][1], key))
    return out


# Full names the rules above miss because of their case, in mixed-case text only (where case is a choice): an
# ALL-CAPS name ("JOHN SMITH presents with AML", a header line "SMITH, JOHN A") and a lower-case one after
# "patient" ("patient bob jones").  Both words must be listed names: a first name of the built-in or
# unambiguous census list and a common surname, neither a word of oncology prose, a unit, a service or test
# abbreviation nor a drug.
_CAPS_NAME_RE = re.compile(
    # the second word in a look-ahead, so that "AML JOHN SMITH" is tried at "JOHN" too
    r"([A-Z][A-Z'’-]+)[ ](?=([A-Z][A-Z'’-]+)(?:[ ]([A-Z])\.?)?(?![\w'’-]))")
_CAPS_NAME_COMMA_RE = re.compile(
    r"^[ \t>*•-]{0,6}([A-Z][A-Z'’-]+),[ ]?([A-Z][A-Z'’-]+)(?:[ ]([A-Z])\.?)?(?=[ \t]*(?:\n|$|,|;))", re.M)
_LOWER_NAME_RE = re.compile(r"[Pp](?:atient|t\.?)[ ]([a-z][a-z'’-]+)[ ]([a-z][a-z'’-]+)(?![\w'’-])")


def _cased_names(text: str, mask: _Mask) -> list[tuple[int, int, tuple[str, ...]]]:
    def plain(f: str) -> bool:
        return f not in _VOCAB and f.upper() not in _NOT_INITIALS and f not in _EPONYMS and \
            f not in _UNITS and f not in _HARD_STOP and f not in _TITLES and f not in _COUNTRIES_STATES and \
            not _is_drugish(f)

    def first(f: str) -> bool:
        return (f in _LISTED_FIRST_NAMES or (f in _FIRST_NAMES and f not in _AMBIGUOUS_NAMES)) and plain(f)

    def last(f: str) -> bool:
        return f in _SURNAMES and plain(f)

    out = []
    for rx, order in ((_CAPS_NAME_RE, 0), (_CAPS_NAME_COMMA_RE, 1), (_LOWER_NAME_RE, 0)):
        for m in rx.finditer(text):
            if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_'’-"):
                continue
            names = (_fold(m.group(1)), _fold(m.group(2)))
            given, family = names[order], names[1 - order]
            if first(given) and last(family) and given != family:
                s, e = m.start(1), m.end(m.lastindex or 2)
                if mask.free(s, e):
                    out.append((s, e, names))
    return out


# ---------------------------------------------------------------------------------------------------
# Locations (sub-state geography)
# ---------------------------------------------------------------------------------------------------

_CITY_STATE_RE = re.compile(
    r"\b([A-Z][\w'’.-]{1,40}(?:[ ][A-Z][\w'’.-]{1,40}){0,2}),[ ]{1,2}(?:" + "|".join(sorted(_US_STATE_ABBR))
    + r")\b(?![\w-])")


# "Duluth MN 55802": the words right before a US state and a ZIP code name a city (the ZIP is redacted on its own)
_CITY_ZIP_AFTER = (r"(?:,?[ ]{1,2}(?:" + "|".join(sorted(_US_STATE_ABBR)) + r")[ ]{1,2}\d{5}(?:-\d{4})?(?![\w-])|"
                   r",?[ ]{1,2}(?:" + "|".join(sorted(_CA_PROVINCE_ABBR)) + r")[ ]{1,2}" + _CA_POSTAL_RE.pattern + ")")
# ("Toronto ON M5G 2M9": a Canadian province and postal code likewise)
_CITY_ZIP_RE = re.compile(r"((?:[A-Z][\w'’.-]{1,40}[ ]){0,2}[A-Z][\w'’.-]{1,40})(?=" + _CITY_ZIP_AFTER + ")")
_CITY_ZIP_AFTER_RE = re.compile(_CITY_ZIP_AFTER)
_STATE_ZIP_ANCHOR_RE = re.compile(r"[A-Z]{2}[ ]{1,2}(?:\d{5}|[A-Z]\d[A-Z][ ]\d)")
_CITY_CUE_END_RE = re.compile(_CITY_CUE_RE.pattern + r"\Z")
_PLACE_PAREN_RE = re.compile(
    r"[ ]\([A-Z](?:[^\W\d_]|['’.-]){1,40}(?:[ ][A-Z](?:[^\W\d_]|['’.-]){1,40}){0,2}\)")
_PLACE_FOLLOWERS = _wordset("in at on for with and or since until till to from by last this that where who which "
                            "before after during when while but then now is was")
_LOWER_PLACE_CUE_RE = re.compile(
    r"(?:female|male|man|woman|gentleman|lady|patient|pt|resident|native|veteran|farmer|family)[ ]from[ ]|"
    r"(?:treated|seen|hospitali[sz]ed|admitted|diagnosed|transferred|referred|operated|staying|stays|works|"
    r"worked|raised)[ ](?:in|at|from|near)[ ]")
_PROSE_AFTER_RE = re.compile(r"[,;(]|[ ](?!(?:the|a|an|of|and|or|in|on|for|to|with|at|by|from|vs)\b)[a-z]")


# New York's boroughs and a few of its best-known districts: below state level, so a place, but missed by the place
# rules when they stand alone ("Brooklyn resident", "Flushing, Queens", "Transportation from Staten Island") or
# look like a surname ("Queens", "Bronx").  Capitalised in mixed-case text (not the MANHATTAN trial in capitals,
# not "Brooklyn Smith", a person, not a word before "trial"/"study"); in a lower-case note only after "in", "from",
# "to", "near", "at" ("lives in the bronx").  A capitalised district or town right before ", <borough>" goes with it
# ("Astoria, Queens", "Flushing, Queens": "flushing" alone is a symptom).
_DISTRICTS = (r"brooklyn|queens|(?:the[ ])?bronx|staten[ ]island|manhattan|harlem|spanish[ ]harlem|east[ ]harlem|"
              r"long[ ]island(?:[ ]city)?|coney[ ]island|jackson[ ]heights|bay[ ]ridge|park[ ]slope|bushwick|"
              r"bed-stuy|bedford-stuyvesant|williamsburg|greenpoint|astoria|flatbush|crown[ ]heights|"
              r"washington[ ]heights|upper[ ](?:east|west)[ ]side|lower[ ]east[ ]side|south[ ]bronx|"
              r"(?:east[ ])?new[ ]york[ ]city")
_DISTRICT_RE = re.compile(rf"(?i:{_DISTRICTS})(?![\w'’-])")
_DISTRICT_ANCHOR_RE = _ci(r"brooklyn|queens|bronx|staten|manhattan|harlem|island|heights|ridge|slope|bushwick|"
                          r"stuy|williamsburg|greenpoint|astoria|flatbush|side|new[ ]york")
_DISTRICT_STOP_AFTER_RE = re.compile(r"[ ](?:[A-Z][a-z]|trial|study|studies|cocktail|project|criteria)")
_DISTRICT_LOWER_CUE_RE = re.compile(r"(?:in|from|to|near|at|of|lives|resident)[ ]{1,2}\Z")
_DISTRICT_OK_AFTER_RE = re.compile(r"[ ](?:NY|NYC|New[ ]York|Borough|County|Hospital|Medical|Heights|Island)\b")
_NEIGHBOURHOOD_BEFORE_RE = re.compile(r"(?<![\w'’-])((?:[A-Z][a-z'’-]{2,30}[ ]){0,2}[A-Z][a-z'’-]{2,30}),[ ]\Z")


def _districts(text: str, low: str, mask: _Mask, lower_mode: bool) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    if not _DISTRICT_ANCHOR_RE.search(low):
        return out
    for m in _iter(_DISTRICT_RE, text, "-"):
        s, e = m.start(), m.end()
        v = text[s:e]
        if v.lower().startswith("the "):
            s += 4
            v = v[4:]
        if lower_mode or v.islower():
            if not (v.islower() and _DISTRICT_LOWER_CUE_RE.search(low, max(0, m.start() - 12), m.start())):
                continue
        else:
            if not all(w[:1].isupper() and (len(w) == 1 or not w[1:].replace("-", "").isupper())
                       for w in v.split(" ")):
                continue  # "queens" in prose, the MANHATTAN trial
            if _DISTRICT_STOP_AFTER_RE.match(text, e) and not _DISTRICT_OK_AFTER_RE.match(text, e):
                continue  # "Brooklyn Smith", "Manhattan trial"
            nb = _NEIGHBOURHOOD_BEFORE_RE.search(text, max(0, s - 70), s)
            if nb and mask.free(nb.start(1), nb.end(1)) and not _sentence_start(text, nb.start(1)) or \
                    nb and _PREP_CUE_END_RE.search(low, max(0, nb.start(1) - 8), nb.start(1)):
                s = nb.start(1)  # "Flushing, Queens", "lives in Astoria, Queens"
        if out and s < out[-1][1]:  # "Astoria, Queens": one place
            out[-1] = (out[-1][0], e)
        elif mask.free(s, e):
            out.append((s, e))
    return out


# "Dorchester, Boston", "Hackney, London", "the South Side of Chicago": after a residence cue, one to three words
# right before ", <large city>" (or " of <large city>") name a district of that city.  The city anchors the rule, so
# districts need no list of their own (most are English words or surnames: "South Side", "Hyde Park"); district and
# city go together, as one place.  Title Case in mixed-case text, lower case in a lower-case note.
_KNOWN_CITIES = _name_file("cities.txt")
_RESIDENCE_CUE = (r"(?:(?:lives?|lived|living|resides?|resided|residing|stays?|stayed|staying|born|raised|grew[ ]up|"
                  r"moved(?:[ ]here|[ ]back)?|relocated|home)[ ](?:in|to|from|near)|from|resident[ ]of|native[ ]of)"
                  r"[ ]{1,2}(?:the[ ])?")
_CITY_DISTRICT_RE = re.compile(
    rf"(?i:{_RESIDENCE_CUE})((?:[^\W\d_][\w'’-]{{1,30}}[ ]){{0,2}}[^\W\d_][\w'’-]{{1,30}})(?:,[ ]{{1,2}}|[ ]of[ ])"
    rf"((?i:{'|'.join(sorted((re.escape(c) for c in _KNOWN_CITIES), key=len, reverse=True))}))(?![\w'’-])")
_CITY_DISTRICT_ANCHOR_RE = re.compile(r",[ ]|[ ]of[ ]")
# words that are no part of a district's name: the cue's own function words, pronouns, kin ("lives with son, ...")
_NOT_DISTRICT_WORDS = _wordset("a an the his her their my our its this that with and or alone here there by at in "
                               "to from near of for on him them us son daughter wife husband family parents friends")


def _city_districts(text: str, low: str, mask: _Mask, lower_mode: bool) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    if not _CITY_DISTRICT_ANCHOR_RE.search(text):
        return out
    for m in _iter(_CITY_DISTRICT_RE, low if lower_mode else text):
        s, e = m.start(1), m.end(2)
        words = m.group(1).split(" ")
        # "Dorchester, Boston": Title Case district and city (not "the SOUTH side"), or both in lower case
        ok = all(w.islower() for w in words) and m.group(2).islower() or not lower_mode and \
            all(w[0].isupper() and not w[1:].replace("-", "").isupper() for w in words) and text[m.start(2)].isupper()
        if not ok or any(_fold(w) in _NOT_DISTRICT_WORDS or _fold(w) in _HARD_STOP or w.lower() in _CLINICAL_HEADS
                         or _is_drugish(_fold(w)) for w in words):
            continue
        if mask.free(s, e):
            out.append((s, e))
    return out


def _locations(text: str, low: str, toks: list[tuple[int, int]], starts: dict[int, int],
               mask: _Mask, lower_mode: bool) -> list[tuple[int, int]]:
    out = []
    hits = []
    residence: set[int] = set()  # Title Case words after a lower-case "lives in": a town even when a word
    if lower_mode:
        hits = [starts.get(m.end()) for m in _iter(_CITY_CUE_RE, low)]
        # weaker cues of a lower-case note ("93 year old female from ypsilanti", "treated in kalamazoo"): the word
        # after them is a place only when it is no English word either
        after_phi = [m for m in re.finditer(r"[ ](?:in|near)[ ]", low)
                     if m.start() > 0 and not mask.free(m.start() - 1, m.start())]
        for m in list(_iter(_LOWER_PLACE_CUE_RE, low)) + after_phi:  # "[ORGANIZATION_1] in lansing" too
            k = starts.get(m.end())
            if k is not None:
                w = low[toks[k][0]:toks[k][1]]
                nxt = re.match(r"[ ]([a-z]+)", low[toks[k][1]:toks[k][1] + 30])
                if len(re.findall(r"[aeiou]", w)) >= (1 if len(w) >= 5 else 2) and \
                        not _english(w, endings=m.re is _LOWER_PLACE_CUE_RE) and \
                        w not in _VOCAB and not _is_drugish(w) and _fold(w) not in _EPONYMS and \
                        _fold(w) not in _HARD_STOP and not (nxt and nxt.group(1) in _VOCAB and
                                                            nxt.group(1) not in _PLACE_FOLLOWERS):
                    hits.append(k)  # not "treated in folfox arm", "diagnosed in pdac"
    else:
        for i, (s0, e0) in enumerate(toks):
            if text[s0].isupper() and low[s0 - 1:s0] in (" ", "\t") and _cue_possible(text, s0) and \
                    mask.free(s0, e0):
                m = _CITY_CUE_END_RE.search(low, max(0, s0 - 40), s0)
                if m and not (m.start() and (low[m.start() - 1].isalnum() or low[m.start() - 1] == "_")):
                    hits.append(i)
                    if _RESIDENCE_IN_RE.match(text, m.start()) and text[s0 + 1:e0].islower():
                        residence.add(i)
                    elif _MOVED_RE.match(text, m.start()) and text[s0 + 1:e0].islower() and \
                            low[s0:e0] not in _DWELLINGS and _TOWN_ALONE_AFTER_RE.match(text, e0):
                        residence.add(i)  # "moved here from Independence in 2019"
    for m in re.finditer(r"\bann[ ]arbor\b", low):
        if _arbor_home(low, m.start(), m.end()) and m.start() in starts:
            hits.append(starts[m.start()])  # "grew up in Ann Arbor": "Ann" is also a word of the staging
            residence.add(starts[m.start()])
    weak: set[int] = set()
    strong_hits = set(hits)
    if not lower_mode:
        for i, (s0, e0) in enumerate(toks):
            if i in strong_hits or not text[s0].isupper() or s0 < 3:
                continue
            w = text[s0:e0]
            lw = w.lower()
            prefix = lw in _PLACE_PREFIXES and i + 1 < len(toks) and toks[i + 1][0] == e0 + 1 and \
                text[e0] == " " and text[toks[i + 1][0]].isupper() and \
                text[toks[i + 1][0]:toks[i + 1][1]].lower() not in _VOCAB
            if text.startswith(",", e0) and len(w) > 3 and _STATE_AFTER_RE.match(text, e0) and \
                    not any(c.isupper() for c in w[1:]) and lw not in _DWELLINGS and mask.free(s0, e0):
                pm = _PREP_CUE_END_RE.search(low, max(0, s0 - 8), s0)
                if pm and not (pm.start() and (low[pm.start() - 1].isalnum() or low[pm.start() - 1] == "_")):
                    hits.append(i)  # "74F from Mobile, AL": a word before a state is a town
                    continue
            if len(w) <= 2 or any(c.isupper() for c in w[1:]) or (lw in _VOCAB and not prefix) or \
                    _fold(w) in _EPONYMS or \
                    _clinical_compound(w) or \
                    _fold(w) in _FIRST_NAMES or (_fold(w) in _HARD_STOP and not prefix) or _is_drugish(lw) or \
                    _fold(w) in _LANGUAGES:
                continue
            pm = _PREP_CUE_END_RE.search(low, max(0, s0 - 8), s0)
            prev_word = re.search(r"([^\W\d_]+)[ ]$", text[max(0, pm.start() - 30):pm.start()]) if pm else None
            if prev_word and prev_word.group(1)[0].isupper() and prev_word.group(1).lower() in _VOCAB and \
                    not _PROSE_AFTER_RE.match(text, e0) and prev_word.group(1).lower() not in _PLACE_VERBS and \
                    prev_word.group(1).lower() not in _STREET_TYPE_ABBR and \
                    not _TITLE_BEFORE_RE.search(text, max(0, pm.start() - 50),
                                                max(0, pm.start() - 30) + prev_word.start(1)):
                # ("77 Beacon St in Boston"; "Dr. Hope in Tupelo": a name after a title is no heading word)
                # Title Case heading ("... Research to Generate ...", "Evidence to Tip the Scales", "Factors in
                # Folliculotropic Mycosis"), not prose ("at Vantor Global in Oslo, which ...": punctuation or a
                # lower-case content word follows).  Read so: an English word, or any word with a capitalised
                # clinical word after it.  A word after a verb of care or residence ("Treated In Reading Last Year")
                # or a word that is no English before a time, a date or a preposition ("Seen In Duluth On ...") is a
                # town in a Title Case note
                nxt = re.match(r"[ ]([A-Z][a-z]+)\b", text[e0:e0 + 30])
                if _english(lw) or (nxt and nxt.group(1).lower() in _VOCAB and
                                    _fold(nxt.group(1)) not in _HARD_STOP and nxt.group(1).lower() not in _TIME_WORDS):
                    continue
            if pm and text[pm.start()].isupper() and not _sentence_start(text, pm.start()) and _english(lw) and \
                    not (prev_word and prev_word.group(1).lower() in _PLACE_VERBS):
                continue  # Title Case: "Interested In Reading Materials"; "Treated In Reading" stays a place
            if pm and lw in _CARE_TIMES_PLACES and text[pm.start()].isupper() and \
                    not _sentence_start(text, pm.start()):
                # "Dr. Patel At Bedside": a capitalised preposition inside a sentence is Title Case writing, where a
                # capital says nothing; a time or place of care after it is no town (a city that is an English word,
                # "In Reading", "At Mobile", still counts)
                continue
            if pm and not (pm.start() and (low[pm.start() - 1].isalnum() or low[pm.start() - 1] == "_")):
                m = re.match(r"(?:[ ]?['’]s)?[ ]([a-z]+)", text[e0:e0 + 30])
                if m and m.group(1) in _CLINICAL_HEADS:
                    continue
                hits.append(i)
                weak.add(i)
    for k in hits:
        if k is None:
            continue
        last = None
        j = k
        while j < len(toks) and j - k < 5:
            s, e = toks[j]
            if j > k:
                g = text[toks[j - 1][1]:s]
                if g not in (" ", "  ", "' ", "’ ", "-", ". ") or (
                        g == ". " and len(text[toks[j - 1][0]:toks[j - 1][1]]) > 3):  # "St. Paul", not a sentence end
                    break
            w = text[s:e]
            lw = w.lower()
            if not mask.free(s, e):
                break
            if j > k and lw in ("de", "del", "la", "le", "du", "des", "da", "do", "di", "of", "sur", "am",
                                "an", "der", "den", "y", "o"):
                j += 1
                continue
            alone = False  # the first word is a town whatever it means: "lives in Mobile, AL", "LIVES IN FLUSHING"
            if j == k and lw not in _DWELLINGS and lw not in _NOT_RESIDENCES and \
                    not lw.endswith(("ally", "ously", "ively", "ently", "antly", "ingly", "edly", "fully")):
                # (not an adverb: "residing in histologically and functionally normal kidney")
                if lower_mode:
                    alone = bool(_LOWER_RESIDENCE_IN_RE.search(low, max(0, s - 24), s) and (
                        _TOWN_ALONE_AFTER_RE.match(low, e) or _STATE_AFTER_RE_I.match(low, e)))
                    state = alone and _STATE_AFTER_RE_I.match(low, e)
                else:
                    state = alone = bool(w[0].isupper() and _STATE_AFTER_RE.match(text, e))
                if (alone and _fold(w) in _HARD_STOP and not (state and len(lw) > 3) and
                        lw not in _STOP_WORD_TOWNS):
                    alone = False
            elif j == k and lower_mode and _LOWER_RESIDENCE_IN_RE.search(low, max(0, s - 24), s):
                break  # "LIVES IN SHELTER", "lives in assisted living"
            if not (w[0].isupper() or alone or (j == k and k in residence) or
                    (lower_mode and lw not in _VOCAB)):
                break
            if j > k and w[0].isupper() and lw in _PLACE_SUFFIXES and not w.isupper():
                last = j  # "Jersey City", "Oak Park", "Palm Springs": a place word after a place name is its end
                break
            if k in weak and (w.isupper() and len(w) > 1 or (j > k and lw in _VOCAB)):
                break
            if alone:
                last = j
                break
            if j == k and lw in _PLACE_PREFIXES and j + 1 < len(toks) and text[e:e + 1] == " " and \
                    text[toks[j + 1][0]].isupper() and toks[j + 1][0] == e + 1:
                last = j
                j += 1
                continue
            if j == k and (lw in _VOCAB and k not in residence or (w.isupper() and len(w) <= 3) or
                           lw in _NOT_RESIDENCES):
                break
            if j > k and w[0].isupper() and lw in _PLACE_SUFFIXES:
                last = j  # "Jersey City", "Oak Park", "Palm Springs": a place word after a place name is its end
                break
            if _fold(w) in _HARD_STOP and not (j == k and k in residence and lw in _STOP_WORD_TOWNS):
                break  # "Lives in Mobile with her daughter" is a town
            last = j
            j += 1
        if last is None:
            continue
        s, e = toks[k][0], toks[last][1]
        pz = re.match(r"[ ](\d{4,5}|\d{3}[ ]\d{2})(?![\w.,]\d|\w)", text[e:e + 8])
        if pz and not re.fullmatch(r"(?:19|20)\d\d", pz.group(1)):
            e += pz.end()
        phrase = _fold(text[s:e])
        if phrase in _COUNTRIES_STATES or phrase in _COUNTRY_PHRASES:
            continue
        pp = _PLACE_PAREN_RE.match(text, e)  # "Brookvale (Tarrant)": the county or district in brackets
        if pp and not lower_mode and mask.free(e, pp.end()):
            e = pp.end()
        if mask.free(s, e):
            out.append((s, e))
    if not lower_mode:
        for m in _CITY_STATE_RE.finditer(text):
            s, e = m.start(1), m.end(1)
            cut = m.group(1).rfind(". ")  # "... Cancer Treatment. Bethesda, MD": the city starts after the period
            if cut >= 0:
                s += cut + 2
            words = text[s:e].split()
            if all(w.lower() in _VOCAB for w in words) or any(len(w) > 1 and w[1].isupper() for w in words):
                continue
            if any(c.isdigit() for c in text[s:e]) or any(_clinical_compound(w) for w in words) or \
                    re.fullmatch(r"(?:[A-Za-z]\.){2,}", text[s:e]):
                continue  # "T3, T4, OR N1" (Oregon?), "B-LYMPHOCYTE, OR", "(E.G., CT)": a list in capitals
            if mask.free(s, e):
                out.append((s, e))
        for m in _iter_win(_CITY_ZIP_RE, text, _windows(_STATE_ZIP_ANCHOR_RE, text, 130, 16)):
            words = list(re.finditer(r"\S+", m.group(1)))
            k = len(words) - 1  # the last word always; earlier ones while they are no ordinary word (or "New", "Fort")
            while k > 0 and (words[k - 1].group().lower() not in _VOCAB or
                             words[k - 1].group().lower() in _PLACE_PREFIXES):
                k -= 1
            s, e = m.start(1) + words[k].start(), m.end(1)
            while s < e and not mask.free(s, e):  # a word before the city already taken ("Dr. Ames Duluth")
                k += 1
                if k >= len(words):
                    s = e
                    break
                s = m.start(1) + words[k].start()
            if s < e and _fold(text[s:e]) not in _COUNTRIES_STATES:
                out.append((s, e))
        # a town that is a word, once found ("from Mobile, AL"), is that town again after a preposition ("treated at
        # Providence in Mobile")
        towns = {text[s:e] for s, e in out if " " not in text[s:e] and (
            text[s:e].lower() in _VOCAB or _fold(text[s:e]) in _HARD_STOP) and text[s:e][:1].isupper()}
        taken = set(out)
        for t in towns:
            for m in re.finditer(r"(?<![\w'’-])" + re.escape(t) + r"(?![\w'’-])", text):
                if (m.start(), m.end()) not in taken and mask.free(m.start(), m.end()) and \
                        _PLACE_PREP_END_RE.search(text, max(0, m.start() - 7), m.start()) and \
                        not any(a < m.end() and m.start() < b for a, b in out):
                    out.append((m.start(), m.end()))
    return out


# ---------------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------------

def _norm_key(typ: str, surface: str) -> str:
    if typ in ("PHONE", "SSN", "ID"):
        d = re.sub(r"[^0-9A-Za-z]", "", surface).lower()
        return d or surface.lower()
    return re.sub(r"\s+", " ", _fold(surface)).strip(" .,")


def _detect(text: str) -> list[tuple[int, int, str, object]]:
    """All accepted spans as (start, end, TYPE, key), non-overlapping, sorted."""
    # Windows and old Mac line ends read as "\n" (same length, so offsets hold): the rules spell a line end "\n",
    # and with "\r\n" an address block used to fall apart into pieces that partly survived
    text = text.replace("\r\n", " \n").replace("\r", "\n")
    n = len(text)
    upper = sum(map(str.isupper, text))
    letters = sum(map(str.isalpha, text))
    # an ALL-CAPS note carries no case information either: it is read as a lower-case one (its names used to
    # survive: "HARRIET QUELLWOOD PRESENTED WITH ...")
    as_written = text
    shouted = letters > 0 and (letters - upper) * 50 < letters
    if shouted:
        text = _lowered(text)
        upper = 0
    low = _lowered(text)
    lower_mode = letters > 0 and upper * 400 < letters
    mask = _Mask(n)

    # protected clinical phrases are claimed first so that nothing else redacts them
    # ("Ann Arbor, MI 48109" is the city, not the staging)
    protected = [(m.start(), m.end()) for m in _iter(_PROTECTED_PHRASES_RE, low)
                 if not _CITY_ZIP_AFTER_RE.match(text, m.end()) and not _arbor_home(low, m.start(), m.end())]

    cands = _structured(text, low, lower_mode, as_written if shouted else "")
    table = _table_cells(text) if "|" in text or "\t" in text else []
    cands += [c for c in table if c[2] not in ("PERSON", "HEADER")]
    protected += [(c[0], c[1]) for c in table if c[2] == "HEADER"]
    # overlapping / abutting address pieces form one address; a bare leading number joins it too
    addr = sorted((c[0], c[1]) for c in cands if c[2] == "ADDRESS")
    cands = [c for c in cands if c[2] != "ADDRESS"]
    blocks: list[list[int]] = []
    for a_s, a_e in addr:
        if blocks and (a_s <= blocks[-1][1] or re.fullmatch(r"[ \t]{1,2}", text[blocks[-1][1]:a_s])):
            blocks[-1][1] = max(blocks[-1][1], a_e)
        else:
            blocks.append([a_s, a_e])
    for b in blocks:
        lm = re.search(r"(?<![\w.,/:()-])\d{1,6}[ ]{1,2}$", text[max(0, b[0] - 10):b[0]])
        if lm:
            b[0] -= len(lm.group())
        b[0] = _cross_street_start(text, b[0], lower_mode)
        cands.append((b[0], b[1], "ADDRESS"))
    cands.sort(key=lambda c: (-_PRIO[c[2]], -(c[1] - c[0]), c[0]))
    pmask = _Mask(n)
    for s, e in protected:
        pmask.take(s, e)
    accepted: list[list] = []
    for s, e, kind in cands:
        if e <= s or not mask.free(s, e):
            continue
        typ = _OUT_TYPE.get(kind, kind)
        if typ in ("ADDRESS", "LOCATION", "PHONE", "ID") and not pmask.free(s, e):
            continue
        mask.take(s, e)
        accepted.append([s, e, typ, None])

    # merge neighbouring address pieces and extend address blocks
    accepted.sort(key=lambda a: a[0])
    merged: list[list] = []
    for a in accepted:
        if merged and merged[-1][2] == "ADDRESS" and a[2] in ("ADDRESS", "LOCATION") and \
                re.fullmatch(r"[ \t,]*\n?[ \t>?*•-]*", text[merged[-1][1]:a[0]]):
            merged[-1][1] = a[1]
            continue
        merged.append(a)
    for a in merged:
        if a[2] == "ADDRESS":
            new_e = _extend_address(text, a[0], a[1], mask, lower_mode)
            if new_e > a[1]:
                mask.take(a[1], new_e)
                a[1] = new_e
    # a second merge pass (extension may have joined blocks)
    final: list[list] = []
    for a in sorted(merged, key=lambda a: a[0]):
        if final and final[-1][2] == "ADDRESS" and a[2] in ("ADDRESS", "LOCATION") and \
                (a[0] <= final[-1][1] or re.fullmatch(r"[ \t,]*\n?[ \t>?*•-]*(?:[A-Z]{2}[ \t]{1,2})?",
                                                      text[final[-1][1]:a[0]])):
            final[-1][1] = max(final[-1][1], a[1])
            continue
        final.append(a)

    for s, e in protected:
        if mask.free(s, e):
            mask.take(s, e)

    toks = _tokens(text)
    starts = {s: i for i, (s, _) in enumerate(toks)}
    ends = {e: i for i, (_, e) in enumerate(toks)}

    orgs = _orgs(text, toks, starts, mask, lower_mode) + _cue_orgs(text, low, mask, lower_mode) + \
        _known_orgs(as_written, mask)  # after the others: "Brigham and Women's Hospital" is one span with its head
    care_names = _care_name_orgs(text, low, lower_mode)
    for k, (s, e) in enumerate(care_names):  # "Good Samaritan Hospital of Suffern": one name with what overlaps it
        over = [o for o in orgs if o[0] < e and s < o[1]]
        care_names[k] = (min([s] + [o[0] for o in over]), max([e] + [o[1] for o in over]))
        orgs = [o for o in orgs if o not in over]
    for s, e in care_names + orgs:
        if mask.free(s, e):
            mask.take(s, e)
            final.append([s, e, "ORGANIZATION", None])

    for s, e in _districts(text, low, mask, lower_mode) + _city_districts(text, low, mask, lower_mode):
        if mask.free(s, e):  # before the names: "Queens", "Staten Island", "Hyde Park, Chicago" are places
            mask.take(s, e)
            final.append([s, e, "LOCATION", None])

    for s, e, key in _names(text, low, toks, starts, ends, mask, lower_mode, shouted=shouted):
        if mask.free(s, e):
            mask.take(s, e)
            final.append([s, e, "PERSON", key])
    for s, e, key in _cased_names(text, mask) if not lower_mode and not shouted else ():
        if mask.free(s, e):
            mask.take(s, e)
            final.append([s, e, "PERSON", key])

    for s, e, _kind in table:  # a name under a name column that the name rules let through
        if _kind == "PERSON" and mask.free(s, e):
            mask.take(s, e)
            final.append([s, e, "PERSON", tuple(w.lower() for w in re.findall(r"[^\W\d_]+", text[s:e]))])

    # "Barnett, Melton and Garcia": three or more bare surnames in a comma list name a firm (law firms,
    # practices); one placeholder, so the "and" between them does not stay behind as a clue
    final.sort(key=lambda a: a[0])
    merged_final: list[list] = []
    for a in final:
        merged_final.append(a)
        k = len(merged_final)
        run = []
        while k >= 1 and merged_final[k - 1][2] == "PERSON" and merged_final[k - 1][3] and \
                len(merged_final[k - 1][3]) == 1:
            run.insert(0, k - 1)
            if k >= 2 and re.fullmatch(r",[ ]|,?[ ](?:and|&)[ ]", text[merged_final[k - 2][1]:merged_final[k - 1][0]]):
                k -= 1
                continue
            break
        if len(run) >= 3 and re.fullmatch(r",?[ ](?:and|&)[ ]", text[merged_final[run[-2]][1]:merged_final[run[-1]][0]]) \
                and all(text[merged_final[x][1]:merged_final[x + 1][0]] == ", " for x in run[:-2]) \
                and not re.search(r"(?i)\bdrs?\.?[ ]$", text[max(0, merged_final[run[0]][0] - 5):merged_final[run[0]][0]]) \
                and not any(merged_final[x][3][0] in _FIRST_NAMES and merged_final[x][3][0] not in _CENSUS_SURNAMES
                            for x in run):
            s0, e0 = merged_final[run[0]][0], merged_final[run[-1]][1]
            del merged_final[run[0]:]
            merged_final.append([s0, e0, "ORGANIZATION", None])
            mask.take(s0, e0)
    final = merged_final

    # "treated in Houston", "Springfield IL 62704": a lone surname-like word right after "in" / "near" or before a
    # state and a ZIP code, with no other cue and never seen elsewhere as (part of) a person's name, is a place; it
    # stays redacted, as a LOCATION
    if not lower_mode:
        lone: dict[str, list[list]] = {}
        other: set[str] = set()
        for a in final:
            if a[2] != "PERSON" or not a[3]:
                continue
            if len(a[3]) == 1 and text[a[0]].isupper() and (_PLACE_PREP_END_RE.search(text, max(0, a[0] - 7), a[0])
                                                            or _CITY_ZIP_AFTER_RE.match(text, a[1])) \
                    and not _TITLE_BEFORE_RE.search(text, max(0, a[0] - 16), a[0]) \
                    and not _NOT_PLACE_AFTER_RE.match(text, a[1]) \
                    and a[3][0] not in _LISTED_FIRST_NAMES:  # "confided in Maria" (a census first name may be a city)
                lone.setdefault(a[3][0], []).append(a)
            else:
                other.update(a[3])
        for tok, spans_ in lone.items():
            if tok not in other:
                for a in spans_:
                    a[2], a[3] = "LOCATION", None

    for s, e in _block_orgs(text, final, mask, lower_mode):
        if mask.free(s, e):
            mask.take(s, e)
            final.append([s, e, "ORGANIZATION", None])

    for s, e in _locations(text, low, toks, starts, mask, lower_mode):
        if mask.free(s, e):
            mask.take(s, e)
            final.append([s, e, "LOCATION", None])

    final.sort(key=lambda a: a[0])
    # an address block over several lines is redacted line by line: the line breaks and the indentation, quoting
    # or list markers in front of its lines stay, so the note keeps its layout; every line of the block gets the
    # block's placeholder (one address)
    out: list[tuple[int, int, str, object]] = []
    for s, e, typ, key in final:
        if typ != "ADDRESS" or "\n" not in text[s:e]:
            out.append((s, e, typ, key))
            continue
        block = ("A", _norm_key(typ, text[s:e]))
        for m in re.finditer(r"[^\n]+", text[s:e]):
            a, b = s + m.start(), s + m.end()
            while a < b and text[a] in _LINE_LEAD + ",":
                a += 1
            while b > a and text[b - 1] in " \t\r,":
                b -= 1
            if a < b:
                out.append((a, b, typ, block))
    return out


# Text pasted from Word, the web or a terminal carries look-alikes and invisible characters that hid
# identifiers from the rules ("617\u00a0555\u00a00199", "Mar\u200bgaret", "m.x\uff20example.org",
# "\uff19\uff13-year-old") and control sequences that could hide text on a reviewer's terminal
# ("\x1b[8m").  The text is read, and stored, in plain form: ESC/CSI/OSC sequences and control, zero-width,
# bidi and tag characters dropped (a control that breaks a line becomes "\n"), Unicode spaces made " ",
# hyphens (and en dashes inside a dashed number) "-", full-width forms, ligatures, mathematical letters and
# non-ASCII digits NFKC'd.  Not NFKC for the whole text: it would turn "10\u2079/L" into "109/L".
_ODD_RE = re.compile(  # an escape sequence, or any character but printable ASCII, "\t", "\n" and "\r"
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[PX^_][^\x1b\n]*(?:\x1b\\)?|[ -/]*[0-~]?)"
    r"|\x9b[0-?]*[ -/]*[@-~]?|\x9d[^\x07\x9c\n]*[\x07\x9c]?|[^\t\n\r -~]")
_DIGITS_BEFORE_RE = re.compile(r"(?<!\d)(\d+[\u2013-])?\d+\Z")
_DIGITS_AFTER_RE = re.compile(r"\d+([\u2013-]\d)?")
_LINE_BREAKING = frozenset("\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029")
_INVISIBLE = frozenset("\u034f\u115f\u1160\u3164\uffa0") | {chr(c) for c in range(0xfe00, 0xfe10)}  # + Cc, Cf
_HYPHENS = frozenset("\u2010\u2011\u2012\u2212\ufe63\uff0d")


@functools.lru_cache(maxsize=4096)
def _plain_char(ch: str) -> str:
    """The plain form of one character (not of an en dash: see ``_plain``)."""
    if ch in _LINE_BREAKING:
        return "\n"
    cat = unicodedata.category(ch)
    if cat in ("Cc", "Cf") or ch in _INVISIBLE:
        return ""
    if cat == "Zs":
        return " "
    if ch in _HYPHENS:
        return "-"
    if cat == "Nd":
        return str(unicodedata.decimal(ch))
    if "\uff01" <= ch <= "\uff5e" or "\ufb00" <= ch <= "\ufb06" or "\U0001d400" <= ch <= "\U0001d7ff":
        return unicodedata.normalize("NFKC", ch)  # full-width forms, ligatures, mathematical letters, digits
    return ch


def _plain(m: re.Match) -> str:
    v, text = m.group(), m.string
    if len(v) > 1 or v in "\x1b\x9b\x9d":
        return ""  # an escape sequence
    if v == "\u2013":  # en dash: a hyphen in a number of three groups or more ("123\u201345\u20136789"),
        # else a dash (a range: "pp 1319\u20131331", "22\u201324 January 2010"; "Digestive\u2013Société")
        before = _DIGITS_BEFORE_RE.search(text, max(0, m.start() - 16), m.start())
        after = _DIGITS_AFTER_RE.match(text, m.end())
        return "-" if before and after and (before.group(1) or after.group(1)) else v
    return _plain_char(v)


@dataclass(frozen=True)
class _Plain:
    """``text`` in plain form, with what maps its offsets back to the original."""
    text: str
    starts: tuple[int, ...] = ()  # the replaced pieces: start in ``text``,
    ends: tuple[int, ...] = ()  # end in ``text``,
    orig: tuple[tuple[int, int], ...] = ()  # (start, end) in the original

    def span(self, s: int, e: int) -> tuple[int, int]:
        """The original span of ``text[s:e]`` (a replaced piece it touches is taken whole)."""
        if not self.starts:
            return s, e
        j = bisect.bisect_right(self.starts, s) - 1  # the last piece starting at or before s
        if j >= 0:
            s = self.orig[j][0] if s < self.ends[j] else self.orig[j][1] + s - self.ends[j]
        k = bisect.bisect_left(self.ends, e)  # the first piece ending at or after e
        if k < len(self.ends) and self.starts[k] < e:  # e falls inside it
            return s, self.orig[k][1]
        k -= 1  # the last piece ending before e
        return s, (self.orig[k][1] + e - self.ends[k]) if k >= 0 else e


def _plain_text(text: str) -> _Plain:
    if _ODD_RE.search(text) is None:
        return _Plain(text)
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    orig: list[tuple[int, int]] = []
    pos = n = 0
    for m in _ODD_RE.finditer(text):
        rep = _plain(m)
        if rep == m.group():
            continue
        out.append(text[pos:m.start()])
        n += m.start() - pos
        starts.append(n)
        out.append(rep)
        n += len(rep)
        ends.append(n)
        orig.append((m.start(), m.end()))
        pos = m.end()
    out.append(text[pos:])
    return _Plain("".join(out), tuple(starts), tuple(ends), tuple(orig))


def redact(text: str) -> Redaction:
    """Redact PHI from ``text``.  Never raises; a non-string input is converted with ``str()``.

    The redacted text is that of ``text`` in plain form (see ``_ODD_RE``); ``spans`` point into ``text``
    itself."""
    return _redact(text, {})


def redact_after(text: str, context: str | Iterable[str] = ()) -> Redaction:
    """Redact ``text`` that will be read alongside ``context``, already redacted text (a case, a draft).

    New placeholders are numbered after the highest number of each type found in ``context`` (and in ``text``), so
    they cannot be taken for an identifier of the context: a reviewer's note "Discussed with John Smith on
    01/07/2025", stored with a case that holds ``[PERSON_2]`` and ``[DATE_1]``, reads "Discussed with [PERSON_3]
    on [DATE_2]".  Placeholders the text already holds (copied from the context) keep their meaning.  The
    redactor cannot tell that a name in ``text`` is one the context redacted, so such a name gets a new number.
    Dates keep their intervals within ``text`` only: its first parseable date anchors them and every interval
    names that anchor ("[DATE_3]", "[DATE_4 (+3 days from DATE_3)]"); none is given from a date of the context,
    whose calendar dates are unknown here; but an age the context keeps ("72-year-old") shortens the span those
    intervals may cover, as one in ``text`` would (a kept age plus an interval is an age).  Never raises."""
    offset: dict[str, int] = {}
    joined = ""
    try:
        parts = [context] if isinstance(context, str) else list(context or ())
        joined = "\n".join(p if isinstance(p, str) else str(p) for p in parts)
        for m in PLACEHOLDER_RE.finditer(joined):
            offset[m.group(1)] = max(offset.get(m.group(1), 0), int(m.group(2)))
    except Exception:  # pragma: no cover - defensive: an unreadable context adds no offset
        pass
    return _redact(text, offset, joined)


def _redact(text: str, context_offset: dict[str, int], context: str = "") -> Redaction:
    if text is None:
        text = ""
    if not isinstance(text, str):
        try:
            text = str(text)
        except Exception:  # pragma: no cover - pathological __str__
            text = ""
    plain = _plain_text(text)
    text = plain.text
    if not text:
        return Redaction(text="", counts={}, spans=())
    if context:
        context = _plain_text(context).text
    try:
        found = _detect(text)
    except Exception:  # pragma: no cover - defensive: fall back to the structured detectors only
        found = _fallback_detect(text)

    # placeholder identity: people cluster on shared name tokens ("John Smith" ~ "Smith" ~ "Dr. John A.
    # Smith"); everything else on its normalised surface string
    clusters: list[set[str]] = []
    person_cluster: dict[tuple[str, ...], int] = {}
    for s, e, typ, key in found:
        if typ != "PERSON" or not key or key in person_cluster:
            continue
        ks = set(key)
        idx = None
        for ci, toks in enumerate(clusters):
            if (len(ks) == 1 and ks <= toks) or (len(ks) > 1 and (toks <= ks or ks <= toks)):
                idx = ci
                break
        if idx is None:
            clusters.append(set(ks))
            idx = len(clusters) - 1
        else:
            clusters[idx] |= ks
        person_cluster[key] = idx

    # dates: one placeholder per calendar date, and each carries its interval to an anchor date.  A date of birth
    # (that calendar date anywhere in the text) never has one nor anchors one.  Dates form groups whose span stays
    # within max_span; a date that fits no group anchors a new one, and no interval links two groups.
    parsed: dict[int, tuple[date, bool]] = {}
    birth: set[object] = set()
    for s, e, typ, _ in found:
        if typ == "DATE" and (pd := _parse_date(text[s:e])) is not None:
            parsed[s] = pd
            if _BIRTH_CUE_END_RE.search(text, max(0, s - 40), s):
                birth.add(("D",) + pd)
    max_span = _max_interval_span(text + "\n" + context if context else text) if parsed else 0
    groups: list[_DateGroup] = []

    numbering: dict[str, dict[object, int]] = {}
    suffix: dict[object, str] = {}  # DATE ident -> " (+63 days)" etc.
    # placeholders already in the text (a reviewer's edit of a redacted report) keep their meaning: new
    # ones are numbered after them
    offset: dict[str, int] = dict(context_offset)  # and after those of the text it is read with (redact_after)
    for m in PLACEHOLDER_RE.finditer(text):
        offset[m.group(1)] = max(offset.get(m.group(1), 0), int(m.group(2)))
    out_parts: list[str] = []
    spans: list[tuple[str, int, int]] = []
    pos = 0
    for s, e, typ, key in found:
        if typ == "PERSON" and key:
            ident: object = ("P", person_cluster[key])
        elif s in parsed:
            ident = ("D",) + parsed[s]
        elif key is not None:  # the lines of one address block share its placeholder
            ident = key
        else:
            ident = _norm_key(typ, text[s:e])
        table = numbering.setdefault(typ, {})
        if ident not in table:
            table[ident] = len(table) + 1
            if s in parsed and ident not in birth:
                day = parsed[s][0]
                for g in groups:
                    if (max(g.hi, day) - min(g.lo, day)).days <= max_span:
                        suffix[ident] = _interval(g.anchor, parsed[s], g.anchor_no)
                        g.lo, g.hi = min(g.lo, day), max(g.hi, day)
                        break
                else:
                    groups.append(_DateGroup(parsed[s], table[ident] + offset.get(typ, 0), day, day))
        out_parts.append(text[pos:s])
        out_parts.append(f"[{typ}_{table[ident] + offset.get(typ, 0)}{suffix.get(ident, '')}]")
        spans.append((typ, *plain.span(s, e)))
        pos = e
    out_parts.append(text[pos:])
    counts = {t: len(v) for t, v in numbering.items()}
    return Redaction(text="".join(out_parts), counts=counts, spans=tuple(spans))


# Date parsing for interval-preserving placeholders.  Formats are tried in order; the first that fits
# wins, so for numeric dates the preferred reading (US m/d/y for "/" and "-", d.m.y for ".") comes first.
# %Y takes exactly four digits, so two-digit years never parse.  (format, day precision)
_DATE_FORMATS: tuple[tuple[str, bool], ...] = (
    ("%Y-%m-%d", True), ("%Y/%m/%d", True), ("%Y.%m.%d", True),
    ("%m/%d/%Y", True), ("%d/%m/%Y", True),
    ("%m-%d-%Y", True), ("%d-%m-%Y", True),
    ("%d.%m.%Y", True), ("%m.%d.%Y", True),
    ("%m/%Y", False),
    ("%B %d %Y", True), ("%b %d %Y", True), ("%d %B %Y", True), ("%d %b %Y", True), ("%Y %b %d", True),
    ("%B %Y", False), ("%b %Y", False),
)
# the time part that the DATE patterns may include ("2022-03-14T10:00", "March 4, 2021 at 3:15 pm")
_DATE_TIME_TAIL_RE = re.compile(r"(?:,?\s*(?:at\s)?|T)\d{1,2}:\d{2}.*$", re.S)


def _parse_date(surface: str) -> tuple[date, bool] | None:
    """(calendar date, day precision) of a DATE span, or None where it cannot be read unambiguously."""
    t = _DATE_TIME_TAIL_RE.sub("", surface.strip())
    if re.search(r"[A-Za-z]", t):  # "Mar. 14th, 2022", "14th of March", "14-MAR-2022" -> "Mar 14 2022"
        t = re.sub(r"(?<=\d)(?:st|nd|rd|th)\b", "", t, flags=re.I)
        t = re.sub(r"\bof\b|[.,-]|(?<=\d)(?=[A-Za-z])|(?<=[A-Za-z])(?=\d)", " ", t, flags=re.I)  # "05MAR2024"
        t = re.sub(r"\bsept\b", "Sep", " ".join(t.split()), flags=re.I)
    for fmt, day_precision in _DATE_FORMATS:
        try:
            return datetime.strptime(t, fmt).date(), day_precision
        except ValueError:
            continue
    return None


def _interval(anchor: tuple[date, bool], other: tuple[date, bool], anchor_no: int) -> str:
    """Placeholder suffix giving ``other``'s signed distance from the anchor: " (+63 days)"."""
    (a, a_day), (d, d_day) = anchor, other
    if a_day and d_day:
        n, unit = (d - a).days, "day"
    else:  # month precision on either side: whole calendar months
        n, unit = (d.year * 12 + d.month) - (a.year * 12 + a.month), "month"
    unit += "" if abs(n) == 1 else "s"
    ref = "" if anchor_no == 1 else f" from DATE_{anchor_no}"
    return f" ({n:+d} {unit}{ref})"


@dataclass
class _DateGroup:
    """Dates shown as intervals from one anchor; lo..hi is the span they cover (the anchor included)."""
    anchor: tuple[date, bool]
    anchor_no: int
    lo: date
    hi: date


def _max_interval_span(text: str) -> int:
    """Widest span, in days, that the dates shown with an interval may cover together.

    Any two dates shown with an interval could be a birth and a visit (an unlabelled date of birth, or one
    whose cue the rules miss), and an age kept in the text (<= 89) plus an interval is an age as well: so the
    span stays under 89 years minus the oldest age kept.  Counted as 365-day years, less 31 days because a
    month-precision date ("March 2021") may be read up to a month early: the limit errs on the short side."""
    ages = (int(m.group(1) or m.group(2)) for m in _KEPT_AGE_RE.finditer(_lowered(text)))
    oldest = max((a for a in ages if a <= 89), default=0)  # an age over 89 is redacted: it adds nothing
    return (89 - oldest) * 365 - 31


def _fallback_detect(text: str) -> list[tuple[int, int, str, object]]:
    try:
        cands = _structured(text, _lowered(text), False)
    except Exception:
        return []
    cands.sort(key=lambda c: (-_PRIO[c[2]], -(c[1] - c[0]), c[0]))
    mask = _Mask(len(text))
    out = []
    for s, e, kind in cands:
        if e > s and mask.free(s, e):
            mask.take(s, e)
            out.append((s, e, _OUT_TYPE.get(kind, kind), None))
    out.sort(key=lambda a: a[0])
    return out


# ---------------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------------

# dataset label type -> redaction type
_LABEL_MAP = {
    "PERSON": "PERSON", "PER": "PERSON", "NAME": "PERSON",
    "STREET_ADDRESS": "ADDRESS", "ADDRESS": "ADDRESS",
    "DATE_TIME": "DATE", "DATE": "DATE",
    "PHONE_NUMBER": "PHONE", "PHONE": "PHONE", "FAX": "PHONE",
    "EMAIL_ADDRESS": "EMAIL", "EMAIL": "EMAIL",
    "US_SSN": "SSN", "SSN": "SSN",
    "IP_ADDRESS": "IP", "IP": "IP",
    "DOMAIN_NAME": "URL", "URL": "URL",
    "CREDIT_CARD": "ID", "IBAN_CODE": "ID", "US_DRIVER_LICENSE": "ID", "US_PASSPORT": "ID",
    "US_BANK_NUMBER": "ID", "US_ITIN": "ID", "MEDICAL_LICENSE": "ID", "ID": "ID", "MRN": "ID",
    "ZIP_CODE": "LOCATION", "GPE": "LOCATION", "LOCATION": "LOCATION", "LOC": "LOCATION",
    "AGE": "AGE",
    "ORGANIZATION": "ORGANIZATION", "ORG": "ORGANIZATION",
}
# label types that are not identifiers at all (job titles / honorifics, nationality-religion-politics)
_NOT_IDENTIFIER_LABELS = {"TITLE", "NRP"}
# scored per type but left out of the overall figure (not one of the Safe Harbor identifiers)
_NOT_IN_OVERALL = {"ORGANIZATION"}
_WEEKDAY_RE = re.compile(
    r"(?i)\s*(?:(?:on|this|next|last|every)\s+)?(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)"
    r"(?:day)?s?\.?(?:\s+(?:morning|afternoon|evening|night))?\s*")


def _exclusion(label: str, value: str) -> str | None:
    """Why a labelled item is not counted as an identifier (None = it is counted)."""
    if label in _NOT_IDENTIFIER_LABELS:
        return f"{label}: not an identifier"
    v = value.strip()
    if label in ("DATE_TIME", "DATE"):
        if re.fullmatch(r"\d{4}", v):
            return "DATE_TIME: bare year (Safe Harbor keeps years)"
        if _WEEKDAY_RE.fullmatch(v):
            return "DATE_TIME: weekday name only"
    if label == "AGE":
        if re.fullmatch(r"\d{1,3}", v) and int(v) <= 89:
            return "AGE: 89 or under (Safe Harbor keeps ages <= 89)"
    if label in ("GPE", "LOCATION", "LOC"):
        f = re.sub(r"\s+", " ", _fold(v)).strip(" .,")
        if f == "nan":
            return "GPE: 'nan' generator artefact"
        if f in _COUNTRIES_STATES or f in _COUNTRY_PHRASES:
            return "GPE: country or US state (not below state level)"
    return None


class PhiDataError(ValueError):
    """A labelled PHI file that cannot be read; the message is written for a person."""


def load_records(path: str | Path) -> list[dict]:
    """Read a JSONL file of ``{"text", "spans": [{"type", "start", "end"}, ...]}`` records (the shape of
    presidio-research / ``phi_dev.jsonl``).  Raises :class:`PhiDataError` naming the file and line."""
    import json

    p = Path(path)
    if not p.is_file():
        raise PhiDataError(f"no such file: {p}")
    records: list[dict] = []
    with p.open(encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PhiDataError(f"{p}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(rec, dict) or not isinstance(rec.get("text"), str) or \
                    not isinstance(rec.get("spans", []), list):
                raise PhiDataError(f'{p}:{lineno}: expected an object with "text" (string) and "spans" (list)')
            for sp in rec.get("spans", []):
                ok = isinstance(sp, dict) and isinstance(sp.get("start"), int) and isinstance(sp.get("end"), int)
                if not ok or not 0 <= sp["start"] <= sp["end"] <= len(rec["text"]) or "type" not in sp:
                    raise PhiDataError(f'{p}:{lineno}: each span needs "type" and integer "start" <= "end" '
                                       f"inside the text")
            records.append(rec)
    if not records:
        raise PhiDataError(f"{p}: no records")
    return records


def evaluate(records: Iterable[dict]) -> dict:
    """Score :func:`redact` on labelled records.

    Each record is ``{"text": str, "spans": [{"type", "start", "end", "value"}, ...]}``.

    * Recall: a labelled identifier counts as removed only when none of its alphanumeric tokens (``\\w+`` in
      ``text[start:end]``) survives, i.e. every token's characters lie inside some redacted span.  The
      check is positional, so the same word elsewhere in the text neither helps nor hurts.
    * Excluded from recall (not identifiers under HIPAA Safe Harbor, see ``_exclusion``): TITLE and NRP
      labels; DATE_TIME values that are a bare 4-digit year or only a weekday name; AGE values <= 89;
      GPE values that are a country or US state (or the generator artefact "nan").  ORGANIZATION is
      scored per type but left out of the overall recall (organisation names are not one of the 18
      Safe Harbor identifiers; the redactor targets healthcare institutions).
    * Precision is character based: the fraction of redacted characters that overlap any labelled span
      (of any label type, excluded ones included), overall and per redaction type.

    Returns ``{"recall", "precision", "by_type": {TYPE: {"recall", "precision", "support", "removed",
    "redacted_chars"}}, "by_label": {DATASET_LABEL: {"recall", "support", "removed"}}, "support",
    "removed", "excluded": {reason: n}, "records": n}``.  ``by_type`` uses the redactor's types (a
    STREET_ADDRESS label is scored as ADDRESS, ZIP_CODE and GPE as LOCATION); ``by_label`` keeps the
    file's own label names.
    """
    lab_sup: dict[str, int] = {}
    lab_hit: dict[str, int] = {}
    sup: dict[str, int] = {}
    hit: dict[str, int] = {}
    red_chars: dict[str, int] = {}
    good_chars: dict[str, int] = {}
    excluded: dict[str, int] = {}
    n_rec = 0
    for rec in records:
        n_rec += 1
        text = rec.get("text") or ""
        labels = rec.get("spans") or []
        r = redact(text)
        covered = bytearray(len(text))
        for _, s, e in r.spans:
            covered[s:e] = b"\x01" * (e - s)
        labelled = bytearray(len(text))
        for lab in labels:
            s, e = int(lab["start"]), int(lab["end"])
            labelled[s:e] = b"\x01" * max(0, min(e, len(text)) - s)
        for typ, s, e in r.spans:
            red_chars[typ] = red_chars.get(typ, 0) + (e - s)
            good_chars[typ] = good_chars.get(typ, 0) + labelled[s:e].count(1)
        for lab in labels:
            ltype = str(lab.get("type", ""))
            s, e = int(lab["start"]), int(lab["end"])
            value = text[s:e] if 0 <= s <= e <= len(text) else str(lab.get("value", ""))
            why = _exclusion(ltype, value)
            if why is not None:
                excluded[why] = excluded.get(why, 0) + 1
                continue
            cat = _LABEL_MAP.get(ltype, ltype)
            sup[cat] = sup.get(cat, 0) + 1
            lab_sup[ltype] = lab_sup.get(ltype, 0) + 1
            toks = [(s + m.start(), s + m.end()) for m in re.finditer(r"\w+", value)]
            if all(covered.find(0, ts, te) == -1 for ts, te in toks):
                hit[cat] = hit.get(cat, 0) + 1
                lab_hit[ltype] = lab_hit.get(ltype, 0) + 1
    by_type: dict[str, dict] = {}
    for cat in sorted(set(sup) | set(red_chars)):
        n = sup.get(cat, 0)
        by_type[cat] = {
            "recall": (hit.get(cat, 0) / n) if n else None,
            "precision": (good_chars.get(cat, 0) / red_chars[cat]) if red_chars.get(cat) else None,
            "support": n,
            "removed": hit.get(cat, 0),
            "redacted_chars": red_chars.get(cat, 0),
        }
    tot = sum(n for c, n in sup.items() if c not in _NOT_IN_OVERALL)
    tot_hit = sum(hit.get(c, 0) for c in sup if c not in _NOT_IN_OVERALL)
    all_red = sum(red_chars.values())
    return {
        "recall": tot_hit / tot if tot else 1.0,
        "precision": sum(good_chars.values()) / all_red if all_red else 1.0,
        "by_type": by_type,
        "by_label": {lab: {"recall": lab_hit.get(lab, 0) / n, "support": n, "removed": lab_hit.get(lab, 0)}
                     for lab, n in sorted(lab_sup.items())},
        "support": tot,
        "removed": tot_hit,
        "excluded": excluded,
        "records": n_rec,
    }
