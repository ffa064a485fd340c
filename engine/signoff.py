"""Who may sign an approval item, and the record a signature leaves.

Rules (configured in ``[hitl]``):
- Only a reviewer may sign. With ``hitl.reviewers`` empty every OS user of the workstation is a reviewer (role
  "reviewer"); with a list, only the ids listed, each with its role.
- By default the clinician who asked cannot approve their own item (``hitl.allow_self_approval``). Rejecting it is
  allowed: it only withholds the answer.

Identities are declared (CLI ``--reviewer``, ``ui.reviewer``), not authenticated, so each record also carries the
OS account that signed. The engine applies these rules in ``resume`` so no front end can skip them.
"""

from __future__ import annotations

import getpass
import hashlib
from dataclasses import dataclass
from typing import Any

from engine.config import HitlConfig

APPROVING = ("approve", "approve_with_edits")


class SignOffError(Exception):
    """A signature the rules refuse, explained for a person."""


@dataclass(frozen=True)
class Signer:
    id: str
    role: str


@dataclass(frozen=True)
class ShownPassage:
    id: str  # citation id, e.g. "E1"
    chunk_id: str
    sha256: str  # of the passage text as shown


@dataclass(frozen=True)
class DecisionRecord:
    """What a signature binds: who, when, in which role, what was shown, and the note."""

    approval_id: str
    thread_id: str
    consult_id: str
    action: str
    reviewer: str
    role: str
    os_user: str  # the account that ran the signing process
    clinician: str  # who asked
    at: str
    note: str
    draft_sha256: str  # of the draft text the reviewer read
    evidence: tuple[ShownPassage, ...]
    edited_sha256: str = ""  # approve with edits: of the text released instead
    edit_findings: tuple[str, ...] = ()  # what the critic's rules found in that text (signed regardless)


def os_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001  (no passwd entry in some containers)
        return "unknown"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def clinician_id(cfg: HitlConfig, explicit: str | None = None) -> str:
    return (explicit or "").strip() or cfg.clinician.strip() or os_user()


def authorize(cfg: HitlConfig, reviewer: str, clinician: str, action: str) -> Signer:
    """The signer when the rules allow ``reviewer`` to take ``action`` on an item ``clinician`` asked for."""
    reviewer = reviewer.strip()
    if not reviewer:
        raise SignOffError("A decision needs the reviewer's id.")
    if cfg.reviewers:
        roles = {r.id: r.role for r in cfg.reviewers}
        if reviewer not in roles:
            listed = ", ".join(f"{r.id} ({r.role})" for r in cfg.reviewers)
            raise SignOffError(f"{reviewer} is not a reviewer and cannot sign. Reviewers (hitl.reviewers): {listed}.")
        signer = Signer(reviewer, roles[reviewer])
    else:
        signer = Signer(reviewer, "reviewer")
    # ids compared as people read them: "Root" is root (an id typed with another case approved its own
    # consult)
    if action in APPROVING and reviewer.casefold() == clinician.strip().casefold() and \
            not cfg.allow_self_approval:
        raise SignOffError(f"{reviewer} asked for this consult and cannot approve it: another reviewer must sign "
                           "(hitl.allow_self_approval = false). Rejecting it is allowed.")
    return signer


def redact_edits(edited: str, shown: str, context: tuple[str, ...]) -> str:
    """The reviewer's edited text with identifiers redacted in the lines they changed or added. Lines of the
    draft they were ``shown`` and left as they were stay as written: redacting those again had turned the
    footer's model "Qwen2.5" and PDQ's "Roswell Park regimen" into [PERSON_n] (the draft holds no identifiers
    the store does not already hold). Each run of changed lines is redacted whole, so a name split over two
    lines is still seen."""
    from engine.phi import redact_after

    unchanged = {line.strip() for line in shown.splitlines() if line.strip()}
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(redact_after("".join(run), (*context, *out)).text)
            run.clear()

    for line in edited.splitlines(keepends=True):
        if line.strip() and line.strip() in unchanged:
            flush()
            out.append(line)
        else:
            run.append(line)
    flush()
    return "".join(out)


def refusal(cfg: HitlConfig, reviewer: str, clinician: str) -> tuple[Signer | None, str, bool]:
    """For a front end before signing: (signer or None, why not, may still reject)."""
    try:
        signer = authorize(cfg, reviewer, clinician, "approve")
        return signer, "", True
    except SignOffError as exc:
        try:
            return authorize(cfg, reviewer, clinician, "reject"), str(exc), True
        except SignOffError:
            return None, str(exc), False


def record_for(approval_id: str, state: Any, decision: Any, signer: Signer, clinician: str,
               preview: str) -> DecisionRecord:
    """The record of ``decision`` on the item whose draft ``preview`` the reviewer read, with the evidence
    passages of ``state`` (what the evidence pane showed)."""
    passages = state.retrieval.passages if state.retrieval else ()
    return DecisionRecord(
        approval_id=approval_id, thread_id=state.thread_id, consult_id=state.consult_id, action=decision.action,
        reviewer=signer.id, role=signer.role, os_user=os_user(), clinician=clinician, at=decision.at,
        note=decision.note, draft_sha256=sha256_text(preview),
        evidence=tuple(ShownPassage(p.id, p.chunk_id, sha256_text(p.text)) for p in passages),
        edited_sha256=sha256_text(decision.edited_text) if decision.edited_text else "",
        edit_findings=tuple(decision.edit_findings))
