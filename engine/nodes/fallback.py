"""Fallback: a safe refusal. Never a made-up answer; quotes the best evidence (if any) for the clinician to read."""

from __future__ import annotations

import re
from dataclasses import replace

from engine.context import NodeContext
from engine.safety import display_text, drop_instruction_sentences
from engine.state import ConsultState

REFUSALS = {
    "en": ("I cannot give a safe recommendation for this case. Please review it with the multidisciplinary "
           "tumour board or the treating oncologist."),
    # The OncoAgent paper's safe refusal is in Spanish; this is our wording of it.
    "es": ("No puedo ofrecer una recomendación segura para este caso. Por favor, revíselo con el comité "
           "multidisciplinario de tumores o con el oncólogo tratante."),
}


# A question the gate refused is (most often) outside the indexed guidelines: sending it to a tumour board would be
# odd advice for "how do I bake sourdough?", so it gets its own first line.
OUT_OF_SCOPE = {
    "en": ("This question is outside the guidelines in the knowledge base, so no recommendation is given. oncotui "
           "answers oncology questions from the indexed guidelines only."),
    "es": ("Esta pregunta queda fuera de las guías de la base de conocimiento, por lo que no se da ninguna "
           "recomendación. oncotui solo responde preguntas de oncología a partir de las guías indexadas."),
}
# An oncology question too vague to retrieve for ("what should I do for my patient with cancer?") is refused by the
# gate like an off-topic one, but the clinician needs to hear what to add, not that oncology is out of scope.
TOO_VAGUE = {
    "en": ("This question is too general to answer from the guidelines. Please describe the case: the cancer type, "
           "its stage or extent, relevant markers, treatment so far, and the decision you need help with."),
    "es": ("La pregunta es demasiado general para responderla con las guías. Describa el caso: el tipo de cáncer, "
           "su estadio o extensión, los marcadores relevantes, el tratamiento previo y la decisión que necesita."),
}
_ONCOLOGY_RE = re.compile(r"\b(?:cancers?|tumou?rs?|oncolog\w*|malignan\w*|carcinomas?|metasta\w*|neoplasms?|"
                          r"chemo\w*|lymphomas?|leuka?emias?|sarcomas?|melanomas?|myelomas?)\b", re.IGNORECASE)
QUOTE_CHARS = 700  # per quoted passage in a refusal


def too_vague(state: ConsultState) -> bool:
    """The gate refused an oncology question that names no cancer type: ask for the case, don't call it off-topic."""
    r = state.retrieval
    return (r is not None and not r.gate_passed and r.closest_title is not None and state.facts.cancer_type is None
            and bool(_ONCOLOGY_RE.search(state.case_text)))


NO_MODEL = ("No language model could be loaded, so no answer was drafted; an engineer must fix the model settings "
            "(`oncotui models list` shows each tier's model and what is wrong with it).")


def no_model(error: str) -> bool:
    """Did the consult stop because no model of the tier or its fallback chain could load? (engine/models)"""
    return "ModelUnavailable:" in (error or "")


# The model backends' words for a prompt longer than the model's context (engine/models: llama_cpp's ModelError
# quotes llama.cpp's "exceed context window", transformers_bf16 says "too long for models.profiles.X.n_ctx")
_TOO_LONG_RE = re.compile(r"too long for|exceed(?:s|ed)? (?:the )?context (?:window|length)|context length exceeded|"
                          r"maximum context length", re.IGNORECASE)
_N_CTX_RE = re.compile(r"(models\.profiles\.[\w.-]+\.n_ctx) = (\d+)")


def too_long(error: str) -> str | None:
    """The clinician's reason when the consult stopped because the prompt (the case text with the passages) did
    not fit in the model's context window; None for any other error."""
    if not error or not _TOO_LONG_RE.search(error):
        return None
    key = _N_CTX_RE.search(error)
    setting = (f"`{key.group(1)}` = {key.group(2)} tokens in config.toml" if key
               else "the tier's `n_ctx` in config.toml ([models.profiles.NAME])")
    return (f"The case text is too long for the model's context window ({setting}): shorten it to what the decision "
            "needs (the diagnosis, stage, markers, treatment so far and the question) and ask again; an engineer "
            "can raise that setting if the model allows it.")


def reason_for(state: ConsultState) -> str:
    if state.error and no_model(state.error):  # a plain reason for the clinician; the detail is for engineers
        return NO_MODEL
    if state.error and (long := too_long(state.error)):
        return long
    if state.error:
        return f"An internal step failed ({state.error})."
    if state.decision and state.decision.action == "reject":
        return f"A reviewer ({state.decision.reviewer}) rejected the draft" + (
            f": {state.decision.note}" if state.decision.note else ".")
    r = state.retrieval
    if too_vague(state):
        return ("The question names no cancer type, so no guideline passage is close enough to it; add the details "
                "above and ask again.")
    if r is not None and not r.gate_passed and r.closest_title is None:
        return ("The guideline knowledge base is empty: run `oncotui kb ingest --demo` (demo set) or "
                "`oncotui kb ingest PATH` with your guidelines.")
    if r is not None and not r.gate_passed:
        mean = (f"; the mean distance of the {r.gate_k} nearest is {r.gate_value:.3f}"
                if r.gate_k > 1 and r.gate_value is not None else "")
        closest = (f" The closest passage was '{r.closest_title}' at distance {r.closest_distance:.3f}" + mean
                   + (f" (the gate admits <= {r.threshold:.3f})." if r.threshold is not None else ".")
                   if r.closest_title and r.closest_distance is not None else "")
        return "No guideline passage in the knowledge base is close enough to this question." + closest
    if r is not None and not any(p.relevant for p in r.passages):
        return "The retrieved passages were graded as not relevant to this question, even after a query rewrite."
    if state.ledger is not None and state.ledger.claims and all(c.state == "blocked" for c in state.ledger.claims):
        return ("Every claim of the draft was blocked by the release governor: "
                + "; ".join(f"{c.id}: {c.reasons[0] if c.reasons else 'blocked'}" for c in state.ledger.claims))
    if state.verdicts and not state.verdicts[-1].passed:
        return (f"The draft failed the safety checks after {len(state.verdicts)} attempt(s): "
                + "; ".join(state.verdicts[-1].issues))
    return state.refusal_reason or "The consult could not be completed safely."


def clip(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` cut to ``limit`` characters at a sentence end (or else a word end), marked with an ellipsis."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = max(head.rfind(". "), head.rfind(".\n"))
    if cut < limit // 2:
        cut = head.rfind(" ")
        return head[:cut if cut > 0 else limit].rstrip() + " …"
    return head[:cut + 1] + " …"


def render(state: ConsultState, language: str) -> str:
    from engine.nodes.formatter import section_label

    r = state.retrieval
    first = (TOO_VAGUE[language] if too_vague(state) else
             OUT_OF_SCOPE[language] if r is not None and not r.gate_passed and r.closest_title else REFUSALS[language])
    lines = [f"**{first}**", "", f"Reason: {reason_for(state)}", ""]
    from engine.casefit import other_cancer

    # passages graded relevant and about the case's cancer (a refusal should not point to another cancer's advice)
    passages = [p for p in (r.passages if r else ()) if p.relevant is not False
                and not other_cancer(p, state.facts)][:3]
    if passages:
        lines += ["## Guideline passages you may want to read", ""]
        for p in passages:
            # line by line, so that a guideline's bullet list stays a list inside the quote; a sentence that
            # addresses the system (a poisoned chunk) is left out and the clinician told
            text = drop_instruction_sentences(p.text)
            quote = [f"> {display_text(line)}" if line.strip() else ">" for line in clip(text).splitlines()]
            note = (["_Left out of this quote: text in the passage that addresses the system rather than the "
                     "clinician (a possible prompt injection); tell whoever maintains the guidelines._", ""]
                    if text != p.text else [])
            lines += [f"**[{p.id}] {p.title} — {section_label(p.section)}**", "", *quote, "", *note]
    return "\n".join(lines)


async def run(state: ConsultState, ctx: NodeContext) -> ConsultState:
    reason = reason_for(state)
    return replace(state, refusal_reason=reason, report=render(state, ctx.settings.engine.refusal_language))
