"""Settings: one validated tree loaded from TOML, with ONCOTUI_* environment overrides.

Lookup order for the file: explicit path (``--config``) > $ONCOTUI_CONFIG > $XDG_CONFIG_HOME/oncotui/config.toml >
the repository's ``config.toml`` (editable installs) > built-in defaults. Environment overrides use a double
underscore between levels, e.g. ``ONCOTUI_ENGINE__HITL_CONFIDENCE_FLOOR=0.4``; values are parsed as TOML literals
when they can be (numbers, booleans, arrays) and taken as plain strings otherwise.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

REPO_CONFIG = Path(__file__).resolve().parent.parent / "config.toml"
ENV_PREFIX = "ONCOTUI_"


class ConfigError(Exception):
    """A settings problem explained for a person: which key, which value, what is allowed."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PathsConfig(_Section):
    data_dir: str = ""  # empty: $XDG_DATA_HOME/oncotui (~/.local/share/oncotui)


class ModelProfile(_Section):
    backend: Literal["llama_cpp", "transformers", "openai"]
    path: str = ""  # GGUF file, HF folder, or "embedded:NAME"
    n_ctx: int = Field(4096, ge=256)
    n_threads: int = Field(0, ge=0)  # 0: one per core
    n_gpu_layers: int = Field(0, ge=-1)  # -1: all layers on the GPU
    chat_format: str = ""  # empty: the template stored in the GGUF
    lora_path: str = ""
    max_tokens: int = Field(512, ge=16)
    temperature: float = Field(0.2, ge=0.0, le=2.0)
    timeout_s: float = Field(180.0, gt=0)
    base_url: str = ""  # openai backend: e.g. http://127.0.0.1:8080/v1
    model_name: str = ""  # openai backend: model id sent to the server
    api_key: str = ""  # openai backend, for servers that ask for one
    label: str = ""  # shown in the UI; "tiny" embedded models say so here
    evidence_locked: bool = False  # with engine.evidence_locked = "auto": only select retrieved sentences


DEFAULT_PROFILES = {
    "smollm2": ModelProfile(backend="llama_cpp", path="embedded:smollm2", n_ctx=4096, max_tokens=384,
                            label="SmolLM2-135M (tiny demo model, clinically useless)", evidence_locked=True),
    "qwen-coder": ModelProfile(backend="llama_cpp", path="embedded:qwen-coder-0.5b", n_ctx=4096,
                                    max_tokens=512, label="Qwen2.5-Coder-0.5B (tiny demo model, clinically useless)",
                                    evidence_locked=True),
}


class ModelsConfig(_Section):
    tier1: str = "smollm2"
    tier2: str = "qwen-coder"
    fallback_chain: list[str] = ["qwen-coder", "smollm2"]
    profiles: dict[str, ModelProfile] = Field(default_factory=lambda: dict(DEFAULT_PROFILES))

    @field_validator("profiles")
    @classmethod
    def _profiles_not_empty(cls, v: dict[str, ModelProfile]) -> dict[str, ModelProfile]:
        if not v:
            raise ValueError("at least one model profile is required")
        return v


DEFAULT_RARE_CANCERS = (
    "pancreatic", "cholangiocarcinoma", "bile duct", "gallbladder", "sarcoma", "mesothelioma", "glioblastoma",
    "neuroendocrine", "gastrointestinal stromal tumor", "gist", "thymoma", "thymic carcinoma", "adrenocortical",
    "anal", "penile", "vulvar", "merkel cell", "uveal melanoma", "small cell lung", "carcinoid", "wilms",
    "neuroblastoma", "retinoblastoma",
)
DEFAULT_GENES = (
    "EGFR", "ALK", "ROS1", "BRAF", "KRAS", "NRAS", "HER2", "ERBB2", "BRCA1", "BRCA2", "PIK3CA", "MET", "RET",
    "NTRK", "IDH1", "IDH2", "FGFR2", "FGFR3", "KIT", "PDGFRA", "TP53", "PALB2", "ATM", "ESR1", "FLT3", "NPM1", "JAK2",
)
DEFAULT_TREATMENT_KEYWORDS = (
    "chemotherapy", "chemo", "radiotherapy", "radiation", "surgery", "resection", "resected", "mastectomy",
    "lobectomy", "whipple", "immunotherapy", "folfirinox", "folfox", "gemcitabine", "cisplatin", "carboplatin",
    "pembrolizumab", "nivolumab", "osimertinib", "trastuzumab", "tamoxifen", "letrozole", "progressed on",
    "treated with", "received", "status post", "s/p", "relapsed after",
    # drugs and combined modalities a case note names as history ("completed concurrent chemoradiation")
    "chemoradiation", "chemoradiotherapy", "pemetrexed", "paclitaxel", "docetaxel", "capecitabine", "oxaliplatin",
    "irinotecan", "durvalumab", "atezolizumab", "bevacizumab", "cetuximab", "rituximab", "r-chop", "anastrozole",
    "exemestane", "olaparib", "abiraterone", "enzalutamide", "alectinib", "sorafenib", "lenvatinib",
    "ipilimumab", "palbociclib", "ribociclib", "abemaciclib", "fulvestrant", "trastuzumab deruxtecan", "venetoclax",
    "ibrutinib", "lenalidomide", "bortezomib", "daratumumab",
    # GIST, RCC, NET, bladder, MDS/AML, glioma and prostate histories (a QA pass's NET on octreotide and bladder
    # cancer after BCG had read as untreated)
    "imatinib", "sunitinib", "regorafenib", "cabozantinib", "everolimus", "octreotide", "lanreotide", "bcg",
    "azacitidine", "decitabine", "temozolomide", "leuprolide", "degarelix",
)


class RouterConfig(_Section):
    threshold: float = Field(0.5, ge=0.0, le=10.0)
    weights: dict[str, float] = {
        "rare_cancer": 0.40,
        "unknown_primary": 0.30,
        "stage_iv": 0.25,
        "stage_iii": 0.15,
        "multiple_mutations": 0.30,
        "single_mutation": 0.15,
        "prior_treatment": 0.10,
    }
    rare_cancers: list[str] = list(DEFAULT_RARE_CANCERS)
    genes: list[str] = list(DEFAULT_GENES)
    treatment_keywords: list[str] = list(DEFAULT_TREATMENT_KEYWORDS)

    @field_validator("weights")
    @classmethod
    def _known_weights(cls, v: dict[str, float]) -> dict[str, float]:
        allowed = {"rare_cancer", "unknown_primary", "stage_iv", "stage_iii", "multiple_mutations",
                   "single_mutation", "prior_treatment"}
        unknown = set(v) - allowed
        missing = allowed - set(v)
        if unknown or missing:
            raise ValueError(f"weights must name exactly {sorted(allowed)}; unknown {sorted(unknown)}, "
                             f"missing {sorted(missing)}")
        # a NaN or negative weight scored a Tier 2 case below the threshold: released without a reviewer
        bad = {k: w for k, w in v.items() if not 0.0 <= w <= 10.0}
        if bad:
            raise ValueError(f"weights must be numbers from 0 to 10; got {bad}")
        return v


class EmbeddingConfig(_Section):
    model: str = "embedded:bge-small-en-v1.5-int8"  # local model folder or embedded:NAME (see kb.models)
    device: str = "cpu"
    batch_size: int = Field(32, ge=1)
    max_tokens: int = Field(256, ge=16, le=512)  # inputs are truncated to this many tokens


class RerankConfig(_Section):
    model: str = "embedded:ms-marco-minilm-l12-int8"  # ONNX cross-encoder folder or embedded:NAME
    max_tokens: int = Field(256, ge=32, le=512)  # query + passage, truncated longest-first
    order: Literal["rerank", "recall"] = "recall"  # Stage 3: keep recall order, or cross-encoder order (kb/EVAL.md)


class KBConfig(_Section):
    collection: str = "guidelines"
    chroma_url: str = ""  # empty: embedded PersistentClient under data_dir; else http://host:port
    chunk_chars: int = Field(900, ge=200)
    recall_k: int = Field(15, ge=1)
    distance_threshold: float = Field(0.0, ge=0.0, le=2.0)  # 0: calibrated (collection) > built-in default
    hybrid: bool = False  # Stage 1 fuses BM25 (SQLite FTS5) with dense recall; off: dense only (kb/EVAL.md)
    lexical_weight: float = Field(0.25, ge=0.0, le=1.0)  # BM25's weight in the rank fusion (dense: 1)
    # each extra phrasing's weight in multi-query recall (the case's question alone, a facts query); 0 = off
    multi_query_weight: float = Field(0.5, ge=0.0, le=1.0)
    rerank_k: int = Field(5, ge=1)
    # treatment options lists added after the rerank_k passages (kb/outline.py); 0 = none
    options_lists: int = Field(3, ge=0, le=5)
    char_budget: int = Field(6000, ge=500)


class RagConfig(_Section):
    grader: Literal["cross_encoder", "llm"] = "cross_encoder"
    # cross-encoder logit at or above which a passage counts as relevant (finite: NaN refused every consult,
    # -inf switched grading off)
    relevance_min_score: float = Field(-3.0, ge=-50.0, le=50.0)
    # a passage whose section fits the case (its stage, receptor status, line ...) is relevant down to
    # relevance_min_score - fit_margin (kb/EVAL.md round 20); 0 = the logit alone
    fit_margin: float = Field(3.0, ge=0.0, le=20.0)
    min_relevant: int = Field(1, ge=1)
    rewrite: Literal["rule", "llm"] = "rule"
    hyde: bool = False
    # a case's focused facts + intent query also scores (grades) the first retrieval's passages: max logit of the
    # two (kb/EVAL.md round 5b); only with a cancer type and two or more sentences
    grade_focused_query: bool = True
    # the gate also judges the focused query when a cancer type is read: a case is in the domain when the
    # whole case or its facts query lies close enough (kb/EVAL.md round 14)
    gate_focused_query: bool = True
    prefer_fitting: bool = True
    # evidence-locked mode offers the case's sentences in their fit-and-kind order fused with each one's
    # cross-encoder relevance to the question (engine.casefit._fused; kb/EVAL.md round 20)
    rank_sentences: bool = True


class EngineConfig(_Section):
    max_retries: int = Field(2, ge=0, le=2)
    node_timeout_s: float = Field(300.0, gt=0)
    hitl_confidence_floor: float = Field(0.3, ge=0.0, le=1.0)
    refusal_language: Literal["en", "es"] = "en"
    history_turns: int = Field(3, ge=0)
    # "auto": the tier profile's evidence_locked flag decides; "on"/"off": every tier (engine/safety.py)
    evidence_locked: Literal["auto", "on", "off"] = "auto"


class UIConfig(_Section):
    theme: str = "textual-dark"  # any Textual theme name, e.g. "textual-light"
    reviewer: str = ""  # reviewer id used when signing off in the app; empty: the OS user
    keymap: dict[str, str] = Field(default_factory=dict)  # binding id -> key(s), e.g. {"export" = "f9"}


class Reviewer(_Section):
    id: str = Field(min_length=1)  # the id a reviewer signs with (CLI --reviewer, ui.reviewer)
    role: str = Field("reviewer", min_length=1)  # recorded with each decision, e.g. "oncologist"


class HitlConfig(_Section):
    clinician: str = ""  # who asks, recorded with each consult; empty: the OS user
    reviewers: list[Reviewer] = Field(default_factory=list)  # empty: every OS user may sign, as "reviewer"
    allow_self_approval: bool = False  # may the clinician who asked approve their own item?

    @field_validator("reviewers")
    @classmethod
    def _unique_ids(cls, v: list[Reviewer]) -> list[Reviewer]:
        ids = [r.id for r in v]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"reviewer ids must be unique; repeated: {dupes}")
        return v


class Settings(_Section):
    """The whole settings tree. ``config.toml`` documents each key; a test keeps it equal to these defaults."""

    paths: PathsConfig = PathsConfig()
    models: ModelsConfig = ModelsConfig()
    router: RouterConfig = RouterConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    rerank: RerankConfig = RerankConfig()
    kb: KBConfig = KBConfig()
    rag: RagConfig = RagConfig()
    engine: EngineConfig = EngineConfig()
    ui: UIConfig = UIConfig()
    hitl: HitlConfig = HitlConfig()
    source: str = ""  # where these settings came from (for messages)

    @property
    def data_dir(self) -> Path:
        if self.paths.data_dir:
            return Path(self.paths.data_dir).expanduser()
        base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        return Path(base) / "oncotui"

    @property
    def db_path(self) -> Path:
        return self.data_dir / "oncotui.db"

    @property
    def chroma_dir(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def model_dir(self) -> Path:
        return self.data_dir / "models"

    @model_validator(mode="after")
    def _profiles_exist(self) -> Settings:
        names = set(self.models.profiles)
        for key, name in [("models.tier1", self.models.tier1), ("models.tier2", self.models.tier2)] + [
            (f"models.fallback_chain[{i}]", n) for i, n in enumerate(self.models.fallback_chain)
        ]:
            if name not in names:
                raise ValueError(f"{key} = {name!r} names no profile; defined: {sorted(names)}")
        return self

    def profile_for_tier(self, tier: int) -> tuple[str, ModelProfile]:
        name = self.models.tier1 if tier == 1 else self.models.tier2
        return name, self.models.profiles[name]

    def with_overrides(self, overrides: dict[str, Any]) -> Settings:
        """Return new settings with dotted-key overrides applied (used by tests and the CLI)."""
        raw = self.model_dump(exclude={"source"})
        for key, value in overrides.items():
            _set_dotted(raw, key.split("."), value)
        return _validate(raw, self.source)


def url_for_display(url: str) -> str:
    """``url`` with the password of any user:password@ part as ***: an error message or ``config show`` must
    not carry it into the terminal, a checkpoint or the audit log."""
    return re.sub(r"(?<=://)([^/@:\s]*):[^/@\s]*@", r"\1:***@", url)


def _set_dotted(tree: dict[str, Any], parts: list[str], value: Any) -> None:
    node = tree
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _parse_env_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in environ.items():
        if not key.startswith(ENV_PREFIX) or key == ENV_PREFIX + "CONFIG":
            continue
        dotted = key[len(ENV_PREFIX):].lower().replace("__", ".")
        if dotted == "paths.data_dir" and not value.strip():
            # "" means the default folder: a script's unset variable ($DIR) silently wrote patients' consults
            # there
            raise ConfigError(f"{key} is set but empty; unset it to use the default data folder "
                              "(~/.local/share/oncotui), or give a folder")
        out[dotted] = _parse_env_value(value)
    return out


def _fields_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys allowed under ``loc`` in the settings tree ([] when ``loc`` is not a section or a profile)."""
    node: Any = Settings
    for part in loc:
        if isinstance(node, type) and issubclass(node, BaseModel):
            field = node.model_fields.get(str(part))
            if field is None:
                return []
            node = field.annotation
        elif typing.get_origin(node) in (dict, list):
            node = typing.get_args(node)[-1]  # a dict's value type (a profile) or a list's item type
        else:
            return []
    if isinstance(node, type) and issubclass(node, BaseModel):
        return [k for k in node.model_fields if k != "source"]
    return []


def _did_you_mean(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _describe(err: dict[str, Any]) -> str:
    loc = tuple(err["loc"])
    key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    if not key:  # a whole-tree check already names its key in the message
        return str(err["msg"]).removeprefix("Value error, ")
    if err.get("type") == "model_type":  # a table was expected; pydantic names its class ("instance of Reviewer")
        value = err.get("input")
        if loc[:2] == ("hitl", "reviewers"):
            ident = value if isinstance(value, str) else "dr.lee"
            return (f"{key} = {value!r}: each reviewer is a table with an id and a role, e.g. "
                    f"{{ id = \"{ident}\", role = \"oncologist\" }}")
        if len(loc) == 1:
            return f"{key} = {value!r}: must be a [{key}] table (a section with its own keys), not a single value"
        return f"{key} = {value!r}: must be a table (key = value pairs in {{ }} or a [{key}] section)"
    if err.get("type") == "extra_forbidden":  # a typo, most often: say what was meant
        allowed = _fields_at(loc[:-1])
        return (f"unknown key {key}{_did_you_mean(str(loc[-1]), allowed)}"
                + (f"; allowed here: {', '.join(allowed)}" if allowed else ""))
    if err.get("type") == "missing":
        hint = ""
        if loc[:2] == ("models", "profiles") and len(loc) == 4:  # a profile none of the defaults names
            builtin = ", ".join(DEFAULT_PROFILES)
            meant = _did_you_mean(str(loc[2]), list(DEFAULT_PROFILES))
            hint = f": profile {loc[2]!r} is not a built-in one ({builtin}){meant}, so it must set {loc[3]}"
        return f"{key} is required but not set{hint}"
    value = err.get("input")
    shown = repr(value) if not isinstance(value, dict) else "{...}"
    return f"{key} = {shown}: {err['msg']}"


def _merge_profiles(raw: dict[str, Any]) -> None:
    """Partial ``[models.profiles.NAME]`` tables (from the file or the environment) are laid over the built-in
    profile of that name, and the built-in profiles a file does not mention are kept: a file that sets only
    ``[models.profiles.smollm2] n_threads = 1`` changes that one key. An environment key cannot hold "-", so a
    profile named with "_" where only a "-" spelling exists (QWEN_CODER for qwen-coder) means that profile."""
    models = raw.get("models")
    if not isinstance(models, dict) or not isinstance(models.get("profiles"), dict):
        return
    profiles: dict[str, Any] = models["profiles"]
    for name in list(profiles):
        if name in DEFAULT_PROFILES or not isinstance(profiles[name], dict):
            continue
        same = [n for n in (*profiles, *DEFAULT_PROFILES) if n != name and n.replace("-", "_") == name]
        if same:  # "qwen_coder" from ONCOTUI_MODELS__PROFILES__QWEN_CODER__PATH: the qwen-coder profile
            target = same[0]
            merged = profiles.get(target, {})
            profiles[target] = {**merged, **profiles.pop(name)} if isinstance(merged, dict) else profiles.pop(name)
    for name, default in DEFAULT_PROFILES.items():
        table = profiles.get(name)
        if table is None:
            profiles[name] = default.model_dump()
        elif isinstance(table, dict):
            profiles[name] = {**default.model_dump(), **table}


def _validate(raw: dict[str, Any], source: str) -> Settings:
    try:
        return Settings.model_validate({**raw, "source": source})
    except ValidationError as exc:
        lines = [_describe(e) for e in exc.errors()]
        raise ConfigError(f"Invalid settings in {source}:\n  " + "\n  ".join(lines)) from None


def find_config(explicit: str | Path | None = None, environ: dict[str, str] | None = None) -> Path | None:
    if explicit:
        path = Path(explicit).expanduser()
        if path.is_dir():
            raise ConfigError(f"Config file {path} is a directory; give the settings file itself (config.toml)")
        if not path.is_file():
            raise ConfigError(f"Config file not found: {path}")
        return path
    environ = os.environ if environ is None else environ
    env = environ.get(ENV_PREFIX + "CONFIG")
    if env:
        return find_config(env)
    xdg = Path(environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "oncotui" / "config.toml"
    for candidate in (xdg, REPO_CONFIG):
        if candidate.is_file():
            return candidate
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    """The file's TOML table; ConfigError (naming the file) when it cannot be read, is not UTF-8 or not TOML."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the settings file {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{path} is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); TOML files "
                          "are UTF-8: save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None


def load_settings(path: str | Path | None = None, environ: dict[str, str] | None = None) -> Settings:
    """Load, merge environment overrides and validate. Raises ConfigError with a readable message."""
    found = find_config(path, environ)
    raw: dict[str, Any] = {}
    if found is not None:
        raw = _read_toml(found)
    env = _env_overrides(dict(os.environ if environ is None else environ))
    for key, value in env.items():
        _set_dotted(raw, key.split("."), value)
    _merge_profiles(raw)
    source = str(found) if found else "built-in defaults"
    if env:
        source += " + environment (" + ", ".join(sorted(ENV_PREFIX + k.upper().replace(".", "__") for k in env)) + ")"
    return _validate(raw, source)
