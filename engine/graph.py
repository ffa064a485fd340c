"""The consult graph: one transition table, and the engine that drives it with checkpoints after every node.

    ingestion -> router -> corrective_rag -> specialist <-> critic -> governor -> hitl_gate -> formatter -> END
                                 |                           |          |            |  (pending: HALT until resume)
                                 +---------> fallback <------+----------+------------+  (gate refused / no parseable
                                                   draft after the retries / every claim blocked / reviewer rejected /
                                                   any error)
The governor (engine/governor.py) gives each claim of the draft a release state; once the retries are spent a
parseable draft still goes there, so its failing claims are blocked one by one instead of refusing the whole answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

from engine.checkpoint import Checkpoint, CheckpointStore, now_iso
from engine.config import EngineConfig, Settings
from engine.context import NodeContext
from engine.events import NODE_LABELS, ErrorEvent, Event, Final, HitlRequired, NodeFinished, NodeStarted
from engine.nodes import corrective_rag, critic, fallback, formatter, governor, hitl_gate, ingestion, router, specialist
from engine.safety import review_edits
from engine.signoff import DecisionRecord, authorize, clinician_id, os_user, record_for, redact_edits
from engine.state import ConsultState, HitlDecision

log = logging.getLogger("oncotui.engine")

START = "ingestion"
END = "__end__"
HALT = "__halt__"  # waiting for a reviewer; resume(thread_id, decision) continues

NodeFn = Callable[[ConsultState, NodeContext], Awaitable[ConsultState]]
NODES: dict[str, NodeFn] = {
    "ingestion": ingestion.run,
    "router": router.run,
    "corrective_rag": corrective_rag.run,
    "specialist": specialist.run,
    "critic": critic.run,
    "governor": governor.run,
    "hitl_gate": hitl_gate.run,
    "formatter": formatter.run,
    "fallback": fallback.run,
}


def _after_rag(s: ConsultState, cfg: EngineConfig) -> str:
    r = s.retrieval
    return "specialist" if r and r.gate_passed and any(p.relevant for p in r.passages) else "fallback"


def _after_critic(s: ConsultState, cfg: EngineConfig) -> str:
    if s.verdicts and s.verdicts[-1].passed:
        return "governor"
    if s.attempts <= cfg.max_retries:  # 1 try + at most 2 retries
        return "specialist"
    return "governor" if s.draft is not None else "fallback"  # the governor blocks the failing claims


def _after_governor(s: ConsultState, cfg: EngineConfig) -> str:
    released = s.ledger is not None and any(c.state != "blocked" for c in s.ledger.claims)
    return "hitl_gate" if released else "fallback"  # every claim blocked: the safe refusal


def _after_gate(s: ConsultState, cfg: EngineConfig) -> str:
    if s.hitl_status == "pending":
        return HALT
    return "fallback" if s.hitl_status == "rejected" else "formatter"


TRANSITIONS: dict[str, Callable[[ConsultState, EngineConfig], str]] = {
    "ingestion": lambda s, cfg: "router",
    "router": lambda s, cfg: "corrective_rag",
    "corrective_rag": _after_rag,
    "specialist": lambda s, cfg: "critic",
    "critic": _after_critic,
    "governor": _after_governor,
    "hitl_gate": _after_gate,
    "formatter": lambda s, cfg: END,
    "fallback": lambda s, cfg: END,
}
# Every target a transition can return, for the reachability test and the Mermaid rendering.
EDGES: dict[str, tuple[str, ...]] = {
    "ingestion": ("router",), "router": ("corrective_rag",), "corrective_rag": ("specialist", "fallback"),
    "specialist": ("critic",), "critic": ("governor", "specialist", "fallback"),
    "governor": ("hitl_gate", "fallback"),
    "hitl_gate": (HALT, "formatter", "fallback"), "formatter": (END,), "fallback": (END,),
}


def mermaid() -> str:
    lines = ["flowchart TD", f"  START --> {START}"]
    for src, targets in EDGES.items():
        lines += [f"  {src} --> {t.strip('_')}" for t in targets]
    lines.append("  halt -->|resume with decision| hitl_gate")
    return "\n".join(lines)


class EngineError(Exception):
    """A request the engine cannot honour, explained for a person (e.g. nothing to resume)."""


def _status(next_node: str, state: ConsultState) -> str:
    if next_node == HALT:
        return "pending_review"
    if next_node == END:
        if state.refusal_reason:
            return "refused"
        return "reviewed" if state.decision else "released"
    return "running"


class Engine:
    """Runs consults. ``stream`` and ``resume`` are async generators of events; the CLI and TUI consume them."""

    def __init__(self, settings: Settings, *, store: CheckpointStore | None = None, models: Any = None,
                 kb: Any = None, nodes: dict[str, NodeFn] | None = None) -> None:
        self.settings = settings
        self.store = store or CheckpointStore(settings.db_path)
        if models is None:
            from engine.models.manager import ModelManager

            models = ModelManager(settings)
        self.models = models
        self._kb = kb
        self.nodes = nodes or NODES  # tests may swap a node to inject a fault

    def kb(self) -> Any:
        if self._kb is None:
            from engine.kbfactory import open_kb

            self._kb = open_kb(self.settings)
        return self._kb

    async def stream(self, thread_id: str, text: str, *, tier_override: int | None = None,
                     clinician: str | None = None) -> AsyncIterator[Event]:
        if tier_override not in (None, 1, 2):
            raise EngineError(f"tier override must be 1, 2 or None (auto); got {tier_override!r}")
        if not text.strip():
            raise EngineError("The case description is empty.")
        try:  # checked before anything is stored: the store cannot write such text, after the consult row exists
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise EngineError(f"The case description has characters that are not valid text (e.g. a lone surrogate "
                              f"{text[e.start]!r} at character {e.start + 1}, left by a bad copy or encoding); "
                              "nothing was stored: paste or type the note again as plain text.") from e
        self.store.ensure_patient(thread_id)
        # who asked: the sign-off rules compare it with the reviewer
        consult_id = self.store.start_consult(thread_id, clinician_id(self.settings.hitl, clinician), os_user())
        state = ConsultState(thread_id=thread_id, consult_id=consult_id, raw_input=text,
                             history=self.store.history(thread_id, self.settings.engine.history_turns),
                             tier_override=tier_override)
        with self.store.running(consult_id):
            async for event in self._drive(state, START):
                yield event

    async def resume(self, thread_id: str, decision: HitlDecision | None = None,
                     consult_id: str | None = None) -> AsyncIterator[Event]:
        """Continue a consult from its last checkpoint: ``consult_id``'s, else (with a decision) the latest
        consult's, else the latest interrupted one (a question asked after a crash does not hide it)."""
        interrupted = decision is None and consult_id is None
        cp = self.store.latest(thread_id, consult_id, unfinished=interrupted)
        if cp is None and interrupted:
            cp = self.store.latest(thread_id)  # nothing interrupted: say what the latest consult is waiting for
        if cp is None:
            raise EngineError(f"{thread_id} has no consult to resume (a consult that stopped before its first "
                              "step finished stored nothing: the raw note is never stored; submit it again).")
        with self.store.running(cp.state.consult_id):
            # read again under the lock: another process may have moved the consult on meanwhile
            cp = self.store.latest(thread_id, cp.state.consult_id)
            assert cp is not None
            async for event in self._continue(cp, decision):
                yield event

    async def _continue(self, cp: Checkpoint, decision: HitlDecision | None) -> AsyncIterator[Event]:
        thread_id = cp.state.thread_id
        if cp.next_node == END:
            a = self.store.decided_for(cp.state.consult_id) if decision is not None else None
            # another reviewer (the CLI, another terminal) signed first: say who, not "finished"
            if a is not None:
                raise EngineError(f"{a.id} was already decided ({a.status} by {a.reviewer}"
                                  + (f" at {a.decided_at}" if a.decided_at else "") + "); this decision was "
                                  "not applied.")
            raise EngineError(f"The latest consult of {thread_id} has already finished.")
        state, node = cp.state, cp.next_node
        if node == HALT:
            if decision is None:
                raise EngineError(f"The consult of {thread_id} is waiting for a reviewer's decision.")
            state, record = self._apply_decision(state, decision)
            node = TRANSITIONS["hitl_gate"](state, self.settings.engine)
            self.store.save(state, "hitl_decision", node, _status(node, state), decision=record)
        elif decision is not None:
            raise EngineError(f"The consult of {thread_id} is not waiting for a reviewer.")
        async for event in self._drive(state, node):
            yield event

    def _apply_decision(self, state: ConsultState,
                        decision: HitlDecision) -> tuple[ConsultState, DecisionRecord]:
        """Apply the sign-off rules (here, so no front end can skip them) and build the decision's record."""
        from engine.phi import redact_after  # the reviewer's note and edits are stored and exported: no identifiers

        # their placeholders are numbered after those of the case and of the draft the reviewer saw (and the edits'
        # after the note's), so a "[PERSON_1]" in the note is never read as the case's [PERSON_1]
        shown = self.store.pending_for(state.consult_id)
        context = (state.case_text,
                   shown.preview if shown else formatter.render(state, formatter.model_label(state, self.settings)))
        note = redact_after(decision.note, context).text
        decision = replace(decision, note=note, edited_text=redact_edits(decision.edited_text, context[1], (
            *context, note)))
        if decision.action == "approve_with_edits" and not decision.edited_text.strip():
            raise EngineError("approve-with-edits needs the edited text.")
        if decision.action == "approve_with_edits":  # a person's text is checked too, and signed as written
            passages = state.retrieval.passages if state.retrieval else ()
            decision = replace(decision, edit_findings=review_edits(decision.edited_text, passages))
        pending = self.store.pending_for(state.consult_id)
        if pending is None:  # halted but never queued (stopped in between): queue it now, as a reviewer sees it
            preview = formatter.render(state, formatter.model_label(state, self.settings))
            pending = self.store.approval(self.store.add_approval(state, preview))
            assert pending is not None
        clinician = self.store.clinician(state.consult_id)
        signer = authorize(self.settings.hitl, decision.reviewer, clinician, decision.action)
        record = record_for(pending.id, state, decision, signer, clinician, pending.preview)
        status = {"approve": "approved", "approve_with_edits": "approved_with_edits", "reject": "rejected"}
        new = replace(state, decision=decision, hitl_status=status[decision.action])  # type: ignore[arg-type]
        return new, record

    async def _drive(self, state: ConsultState, node: str) -> AsyncIterator[Event]:
        cfg = self.settings.engine
        tid, cid = state.thread_id, state.consult_id
        while node not in (END, HALT):
            label = NODE_LABELS[node]
            yield NodeStarted(tid, cid, node, label)
            started = time.perf_counter()
            queue: asyncio.Queue[Event] = asyncio.Queue()
            ctx = NodeContext(settings=self.settings, models=self.models, kb=self.kb, emit=queue.put_nowait)
            task = asyncio.create_task(asyncio.wait_for(self.nodes[node](state, ctx), cfg.node_timeout_s))
            try:
                while not task.done() or not queue.empty():
                    getter = asyncio.ensure_future(queue.get())
                    done, _ = await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                    if getter in done:
                        yield getter.result()
                    else:
                        getter.cancel()
            finally:
                if not task.done():  # the consumer went away (cancel): stop the node, keep the checkpoint as is
                    ctx.stop.set()
                    task.cancel()
            try:
                new_state = task.result()
                next_node = TRANSITIONS[node](new_state, cfg)
            except Exception as exc:  # any failure (timeouts included) ends in the safe refusal
                message = f"{node}: {type(exc).__name__}: {exc}" if str(exc) else f"{node}: {type(exc).__name__}"
                log.warning("node failed: %s", message)
                yield ErrorEvent(tid, cid, node, message)
                if node == "fallback":  # the refusal itself must not fail
                    new_state = replace(state, error=message, refusal_reason=message,
                                        report=f"**{fallback.REFUSALS['en']}**")
                    next_node = END
                else:
                    new_state, next_node = replace(state, error=message), "fallback"
            self.store.save(new_state, node, next_node, _status(next_node, new_state))
            yield NodeFinished(tid, cid, node, label, round(time.perf_counter() - started, 3))
            if next_node == HALT:
                preview = formatter.render(new_state, formatter.model_label(new_state, self.settings))
                approval_id = self.store.add_approval(new_state, preview)
                yield HitlRequired(tid, cid, new_state.hitl_reasons, approval_id)
            elif next_node == END:
                yield Final(tid, cid, new_state.report, _status(END, new_state),
                            new_state.retrieval.rag_confidence if new_state.retrieval else 0.0,
                            new_state.routing.tier if new_state.routing else None)
            state, node = new_state, next_node


def decision(action: str, reviewer: str, note: str = "", edited_text: str = "") -> HitlDecision:
    if action not in ("approve", "reject", "approve_with_edits"):
        raise EngineError(f"decision must be approve, reject or approve_with_edits; got {action!r}")
    if not reviewer.strip():
        raise EngineError("a decision needs the reviewer's id")
    return HitlDecision(action=action, reviewer=reviewer, at=now_iso(), note=note,  # type: ignore[arg-type]
                        edited_text=edited_text)
