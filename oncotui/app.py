"""The Textual app: patient, chat, evidence and approval panes over the headless engine.

The app is one more consumer of ``engine.stream`` / ``engine.resume`` events. Engine work runs in async workers that
only post messages (``oncotui.messages``); handlers here route each event to the pane that shows it. The engine is
built by an injected factory, so tests drive the real engine with a fake model and knowledge base.
"""

from __future__ import annotations

import asyncio
import getpass
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Footer, Input
from textual.worker import Worker, WorkerState

from oncotui.clock import shown
from oncotui.keys import key_name
from oncotui.messages import ConsultEnded, EngineEventPosted
from oncotui.widgets.approval.approvals_pane import ApprovalsPane
from oncotui.widgets.chat.chat_pane import ChatPane
from oncotui.widgets.chat.consult_view import ConsultView
from oncotui.widgets.chat.prompt_input import PromptInput
from oncotui.widgets.evidence.evidence_pane import EvidencePane
from oncotui.widgets.patient.patient_pane import PatientPane, tier_value
from oncotui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from textual.command import Provider

    from engine.config import Settings
    from engine.graph import Engine
    from oncotui.screens.help import HelpRow
    from oncotui.screens.review import ReviewDraft, ReviewResult

log = logging.getLogger("oncotui.app")

EngineFactory = Callable[[], "Engine"]
PANE_FOCUS = {"patients": "#patient-list", "chat": "#prompt", "evidence": "#passages",
              "approvals": "#approval-table"}
# What to do next, by the kind of failure a message names (shown under the engine's own message).
HINTS = (("ModelError", "Check the model profile in config.toml, or run `oncotui models setup`."),
         ("KBError", "Index guidelines with `oncotui kb ingest --demo` (or your own files)."),
         ("Timeout", "The step took too long: try again, or raise engine.node_timeout_s."))


# Help (F1): where a binding works when that is narrower than its pane says, and the keys every list and field has
# (Textual's) that a newcomer still has to be told about. Rows without an id cannot be rebound.
WHERE = {"cancel": "while a consult runs"}
NARROW_STATUS_BELOW = 110  # columns: below, the status line names the model state in its short form
PLAIN_KEYS = (("enter", "Open the highlighted row", "lists"),
              ("enter", "Submit the case and question", "prompt"),
              ("tab", "Next field or pane", "everywhere"),
              ("shift+tab", "Previous field or pane", "everywhere"),
              ("esc", "Restore a zoomed pane", "zoomed, no consult running"))
QUIT_CONFIRM_S = 6.0  # quitting while work would be lost asks first: the quit key again within this many seconds


def hint_for(message: str) -> str:
    return next((hint for key, hint in HINTS if key in message), "")


def _commands() -> type[Provider]:
    # imported when the palette opens, not at start (cold start counts every import)
    from oncotui.commands import OncoCommands

    return OncoCommands


class OncoApp(App[None]):
    TITLE = "oncotui"
    CSS_PATH = "styles/app.tcss"
    COMMANDS = App.COMMANDS | {_commands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (140, "-wide")]  # noqa: RUF012 (Textual declares it so)
    AUTO_FOCUS = "#patient-list"
    ALLOW_IN_MAXIMIZED_VIEW = "#topbar, Footer"  # the demo-model badge stays visible when a pane is zoomed
    BINDINGS: ClassVar[list[BindingType]] = [
        # description: the footer's one word (at 80 columns every shown key fits beside the palette's, also with the
        # approvals pane focused and a consult running); tooltip: what the key does, in help (F1) and on hover
        Binding("ctrl+q", "quit", "Quit", priority=True, id="quit", tooltip="Quit (asks first if busy)"),
        Binding("f1", "help", "Help", id="help", tooltip="Show this list of keys"),
        # n is quicker, but a text field (the prompt, search) types it: ctrl+n works there too
        Binding("n,ctrl+n", "new_patient", "New", id="new_patient", tooltip="New patient (next PT number)"),
        Binding("escape", "cancel_consult", "Cancel", id="cancel", tooltip="Cancel the running consult"),
        # help (F1) only: the patient pane's "Tier override" control shows and changes the tier too
        Binding("ctrl+t", "cycle_tier", "Tier", id="tier", show=False, tooltip="Next consult tier: auto/1/2"),
        Binding("ctrl+s", "export", "Export", id="export", tooltip="Export consult as Markdown"),
        Binding("ctrl+r", "resume_consult", "Resume", id="resume", show=False,
                tooltip="Continue a stopped consult"),
        Binding("ctrl+o", "zoom", "Zoom pane", id="zoom", show=False, tooltip="Zoom this pane / restore"),
        Binding("f2", "focus_pane('patients')", "Patients", id="focus_patients", show=False,
                tooltip="Go to the patient list"),
        Binding("f3", "focus_pane('chat')", "Chat", id="focus_chat", show=False, tooltip="Go to the chat prompt"),
        Binding("f4", "focus_pane('evidence')", "Evidence", id="focus_evidence", show=False,
                tooltip="Go to evidence (passages)"),
        Binding("f5", "focus_pane('approvals')", "Approvals", id="focus_approvals", show=False,
                tooltip="Go to the approvals queue"),
    ]

    tier_override: reactive[int | None] = reactive(None, init=False)
    current_patient: reactive[str | None] = reactive(None, init=False)

    def __init__(self, engine_factory: EngineFactory | None = None, settings: Settings | None = None,
                 config_path: str | Path | None = None) -> None:
        super().__init__()
        self._engine_factory = engine_factory
        self._config_path = config_path
        self.settings: Settings | None = settings
        self.engine: Engine | None = None
        self.reviewer = "reviewer"
        self._consult: Worker[None] | None = None
        self._consult_active = False  # until its worker's final state change is handled (all events shown)
        self._live: tuple[str, str] | None = None  # (thread id, consult id) of the consult streaming now
        self._busy_approvals: set[str] = set()
        self._review_drafts: dict[str, ReviewDraft] = {}  # approval id -> what a reviewer typed and did not sign
        self._model_status = ("models load on first consult", "no model yet")  # (wide, narrow)
        self._models_ready: set[int] = set()
        self._tier_in_use: dict[str, int] = {}  # consult id -> tier chosen (for the model status line)
        self._model_trouble: set[str] = set()  # consults whose tier model fell back or failed (not "ready")
        self._damaged: set[str] = set()  # damaged checkpoints already named in a notice (StoreError messages)
        self._user_errors: tuple[type[Exception], ...] = ()
        self._quit_asked = -QUIT_CONFIRM_S  # monotonic time of the last "quit?" notice
        self._when_ready: dict[str, Callable[[], Awaitable[None]]] = {}  # keys pressed while starting, by action
        self._start_failed = ""  # why the engine could not start (then nothing waits for it)
        self.last_export: Path | None = None

    def compose(self) -> ComposeResult:
        yield StatusBar(id="topbar")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield PatientPane(id="patients", classes="pane")
                yield ApprovalsPane(id="approvals", classes="pane")
            with Vertical(id="center"):
                yield ChatPane(id="chat", classes="pane")
                yield EvidencePane(id="evidence", classes="pane")
        yield Footer(compact=True)  # at 80 columns every key of the focused pane fits

    # -- start-up -------------------------------------------------------------------------------------------
    def on_mount(self) -> None:
        if self._engine_factory is not None:  # injected (tests): everything it needs is imported already
            self._start_engine()
        else:
            # Settings (pydantic) and the engine's imports take about a second: paint the first frame, load
            # them in a thread, then build the engine on this thread (SQLite connections stay where opened).
            self.call_after_refresh(self._load_engine_modules)

    @work(thread=True, group="startup", exit_on_error=False)
    def _load_engine_modules(self) -> Settings:
        from engine.config import load_settings

        settings = self.settings or load_settings(self._config_path)
        # also warm what the first consult and the first review need, so neither pays an import on the UI thread
        import textual.widgets._markdown  # noqa: F401

        import engine.graph  # noqa: F401
        import oncotui.screens.review  # noqa: F401

        return settings

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group == "startup":
            if event.state == WorkerState.SUCCESS:
                self.settings = worker.result
                self._start_engine()
            elif event.state == WorkerState.ERROR:
                from engine.config import ConfigError

                if isinstance(worker.error, ConfigError):  # as the CLI reports it, after leaving the screen
                    self.exit(return_code=2, message=f"oncotui: {worker.error}")
                else:
                    self._fatal(f"The engine could not start: {worker.error}")
            return
        if worker is self._consult and event.state in (WorkerState.SUCCESS, WorkerState.ERROR,
                                                       WorkerState.CANCELLED):
            # Posted after the worker's last ConsultEnded/EngineEventPosted, so every event is on screen now.
            self._consult_active = False
            self.refresh_bindings()
            pending = self.chat.drop_pending()
            if pending is not None:  # stopped before it posted anything (e.g. cancelled at once)
                await pending.show_stopped("Stopped before the first step: nothing was stored.", "cancelled")
        if event.state == WorkerState.ERROR:  # safety net: _pump reports errors itself
            self.notify(f"Unexpected error: {worker.error}", severity="error", title="oncotui", markup=False)

    def _fatal(self, message: str) -> None:
        self._when_ready.clear()  # never runs; a case sent meanwhile is still in the prompt
        self._start_failed = message
        self.query_one(StatusBar).set_status("engine unavailable")
        self.notify(message, severity="error", title="oncotui", timeout=30, markup=False)

    def _start_engine(self) -> None:
        from engine.errors import user_error_types

        self._user_errors = user_error_types()
        try:
            if self._engine_factory is not None:
                self.engine = self._engine_factory()
            else:
                from engine.graph import Engine

                assert self.settings is not None
                self.engine = Engine(self.settings)  # opens SQLite; models and the KB load on first use
        except self._user_errors as exc:
            self._fatal(str(exc))
            return
        self.settings = self.settings or self.engine.settings
        self._apply_settings(self.settings)
        self.refresh_patients()
        self.refresh_approvals()
        self.set_interval(5.0, self.refresh_approvals)  # items a reviewer signs from the CLI disappear here too
        self._update_status()
        if self._when_ready:
            self.call_later(self._run_when_ready)

    def _queue_until_ready(self, action: str, run: Callable[[], Awaitable[None]], what: str) -> None:
        """A key pressed while the engine is still being built (about a second) does its work once it is ready,
        rather than asking to be pressed again. Pressed twice, it still runs once. When the engine could not start,
        nothing will run: say so again."""
        if self._start_failed:
            why = self._start_failed.removeprefix("The engine could not start: ")
            self.notify(f"The engine is unavailable: {why}", severity="error", markup=False)
            return
        self._when_ready[action] = run
        self.notify(f"Starting: {what} in a moment.", timeout=3, markup=False)

    async def _run_when_ready(self) -> None:
        queued, self._when_ready = list(self._when_ready.values()), {}
        for run in queued:  # in the order pressed: n, then the case sent, goes to the new patient
            await run()

    def _apply_settings(self, settings: Settings) -> None:
        try:
            self.theme = settings.ui.theme
        except Exception:  # noqa: BLE001  (an unknown theme name must not stop the app)
            self.notify(f"Unknown theme {settings.ui.theme!r} in ui.theme; using textual-dark.",
                        severity="warning", markup=False)
        keymap = dict(settings.ui.keymap)
        known = {row[3] for row in self.binding_rows() if row[3]}
        unknown = sorted(set(keymap) - known)
        if unknown:
            self.notify(f"ui.keymap names unknown binding ids {unknown}; F1 lists the ids.", severity="warning",
                        markup=False)
        # a key the prompt edits text with (ctrl+k deletes to the end of the line) never reaches the app while
        # one types: "cancel = ctrl+k" left no way to cancel, though F1 listed it
        prompt_ids = {b.id for b in PromptInput.BINDINGS if isinstance(b, Binding)}
        typing_keys = {k.strip() for b in Input.BINDINGS
                       for k in (b.key if isinstance(b, Binding) else b[0]).split(",")}
        taken = sorted(f"{binding} = {key.strip()}" for binding, keys in keymap.items() if binding in known
                       and binding not in prompt_ids for key in keys.split(",") if key.strip() in typing_keys)
        if taken:
            self.notify(f"ui.keymap: {', '.join(taken)}: the prompt edits text with "
                        f"{'this key' if len(taken) == 1 else 'these keys'}, so while it has the focus the "
                        "key edits text instead; choose another (F1 lists the keys in use).",
                        severity="warning", markup=False, timeout=10)
        self.set_keymap({k: v for k, v in keymap.items() if k in known})
        self.chat.show_welcome()  # it names keys
        self.reviewer = settings.ui.reviewer or _os_user()
        tiers = (settings.models.tier1, settings.models.tier2)
        labels = [settings.models.profiles[name].label.lower() for name in tiers if name in settings.models.profiles]
        self.query_one(StatusBar).show_badge(any("tiny" in label for label in labels))

    # -- panes ----------------------------------------------------------------------------------------------
    @property
    def chat(self) -> ChatPane:
        return self.query_one(ChatPane)

    @property
    def patients_pane(self) -> PatientPane:
        return self.query_one(PatientPane)

    @property
    def evidence(self) -> EvidencePane:
        return self.query_one(EvidencePane)

    @property
    def approvals(self) -> ApprovalsPane:
        return self.query_one(ApprovalsPane)

    def refresh_patients(self) -> None:
        pane = self.query_one_optional(PatientPane)  # None while the app shuts down
        if self.engine is not None and pane is not None:
            pane.set_patients(self.engine.store.patients(), self.current_patient)

    def refresh_approvals(self) -> None:
        # Also runs from a 5 s timer, which can fire after shutdown has removed the panes.
        pane = self.query_one_optional(ApprovalsPane)
        if self.engine is not None and pane is not None:
            pending = self.engine.store.approvals("pending")
            pane.set_items(pending, self._busy_approvals)
            waiting = {item.id for item in pending}  # signed elsewhere (the CLI): its kept edits are moot
            for approval_id in set(self._review_drafts) - waiting:
                del self._review_drafts[approval_id]

    async def open_patient(self, thread_id: str) -> None:
        assert self.engine is not None
        store = self.engine.store
        if self.current_patient not in (None, thread_id) and self.tier_override is not None:
            # an override is a choice for one patient's case: another patient starts on auto again
            self.tier_override = None
            self.notify(f"Tier override reset to auto for {thread_id}.", timeout=3, markup=False)
        self.current_patient = thread_id
        self.refresh_patients()
        history = []
        ended: set[str] = set()  # consults whose latest checkpoint is an answer or waits for a reviewer
        for row in store.consults(thread_id):
            cp = self._checkpoint(thread_id, row["id"])
            pending = store.pending_for(row["id"]) if cp is not None and cp.next_node == "__halt__" else None
            history.append((row, cp, pending.id if pending else None))
            if cp is not None and cp.next_node in ("__end__", "__halt__"):
                ended.add(row["id"])
        running = self._live[1] if self._live and self._live[0] == thread_id and self.consult_running else None
        if running in ended:  # its worker is winding down: its last events went by while another patient showed
            running = None
        await self.chat.show_patient(thread_id, history, running)
        self._show_latest(thread_id)

    def _show_latest(self, thread_id: str, consult_id: str | None = None) -> None:
        """Case summary, routing and evidence from the latest checkpoint (what is stored is redacted)."""
        assert self.engine is not None
        cp = self._checkpoint(thread_id, consult_id)
        state = cp.state if cp is not None else None
        self.patients_pane.show_case(thread_id, state, self.engine.store.consults(thread_id))
        if state is not None and state.retrieval is not None:
            cited = {e for r in (state.draft.recommendations if state.draft else ()) for e in r.evidence}
            self.evidence.show(state.retrieval, cited, ledger=state.ledger)
        else:
            self.evidence.clear()

    def watch_current_patient(self) -> None:
        self._update_status()

    def watch_tier_override(self, tier: int | None) -> None:
        self.patients_pane.set_tier(tier)
        self._update_status()

    def _update_status(self) -> None:
        patient = self.current_patient or "no patient"
        model = self._model_status[0 if self.size.width >= NARROW_STATUS_BELOW else 1]
        self.query_one(StatusBar).set_status(f"{patient} · tier {tier_value(self.tier_override)} · {model}")

    def on_resize(self) -> None:
        self._update_status()

    def set_tier(self, tier: int | None) -> None:
        self.tier_override = tier

    # -- pane messages --------------------------------------------------------------------------------------
    @on(PatientPane.Selected)
    async def _patient_selected(self, message: PatientPane.Selected) -> None:
        if self.engine is not None and message.thread_id != self.current_patient:
            await self.open_patient(message.thread_id)
        self.chat.prompt.focus()

    @on(PatientPane.TypedAhead)
    def _typed_ahead(self, message: PatientPane.TypedAhead) -> None:
        """A case typed or pasted on the patient list (it has the focus at start) starts in the prompt."""
        prompt = self.chat.prompt
        if self.focused is not prompt:
            self.screen.set_focus(prompt)  # now, not after a refresh: the next key must reach the prompt
        prompt.paste(message.text)  # a pasted note's lines joined, as the prompt takes a paste itself

    @on(PatientPane.TierChanged)
    def _tier_changed(self, message: PatientPane.TierChanged) -> None:
        self.tier_override = message.tier

    @on(ChatPane.Submitted)
    async def _submitted(self, message: ChatPane.Submitted) -> None:
        if self.engine is None:
            async def send() -> None:
                if self.chat.prompt.value.strip() == message.text:  # not edited since Enter: never send what was not
                    await self._submitted(message)

            self._queue_until_ready("submit", send, "the case is sent")
            return
        if self.consult_running:
            self.notify("A consult is running: wait for it, or press Esc to cancel it.", severity="warning")
            return
        if self.current_patient is None:
            await self.action_new_patient()
        thread_id = self.current_patient
        assert thread_id is not None
        await self.chat.begin(thread_id, message.text)
        self.evidence.clear()
        self._start_consult_worker(self.run_consult(thread_id, message.text, self.tier_override))

    @on(ApprovalsPane.ReviewRequested)
    def _review_requested(self, message: ApprovalsPane.ReviewRequested) -> None:
        if self.engine is None:
            return
        from oncotui.screens.review import ReviewScreen

        if isinstance(self.screen, ReviewScreen):  # keys typed ahead must not stack a second review
            return
        item = self.engine.store.approval(message.approval_id)
        if item is None or item.status != "pending" or item.id in self._busy_approvals:
            self._review_drafts.pop(message.approval_id, None)  # signed elsewhere (the CLI, another terminal)
            self.notify(f"{message.approval_id} is no longer waiting for a reviewer.", severity="warning",
                        markup=False)
            self.refresh_approvals()
            return
        from engine.signoff import refusal

        hitl = self.engine.settings.hitl

        def rules(reviewer: str) -> tuple[str, str, bool]:
            """The engine's sign-off rules for ``reviewer`` on this item (the review screen's reviewer id field)."""
            signer, why, may_reject = refusal(hitl, reviewer, item.clinician)
            return (signer.role if signer else ""), why, may_reject

        role, why, may_reject = rules(self.reviewer)
        # the refusal is about approving: rejecting (allowed to the clinician who asked) or only reading says
        # nothing
        if why and message.action in ("approve", "approve_with_edits"):
            self.notify(why + " Another reviewer can sign with their own id in the review screen.",
                        severity="warning", title="Sign-off refused", markup=False)
        from engine.safety import review_edits

        try:
            cp = self.engine.store.latest(item.thread_id, item.consult_id)
        except self._store_error() as exc:  # the draft's consult cannot be continued: signing it would fail
            self.notify(f"{item.id} cannot be reviewed: {exc}", severity="error", title="Damaged checkpoint",
                        timeout=12, markup=False)
            return
        passages = cp.state.retrieval.passages if cp and cp.state.retrieval else ()
        case_text = cp.state.case_text if cp else ""  # what the clinician asked, as stored (redacted)
        self.push_screen(ReviewScreen(item, self.reviewer, message.action, case_text=case_text, role=role,
                                      refusal=why, may_reject=may_reject,
                                      check=lambda text: review_edits(text, passages), rules=rules,
                                      draft=self._review_drafts.get(item.id), keep=self._keep_review_draft),
                         self._reviewed)
        if item.id in self._review_drafts:
            self.notify(f"Your unsigned edits to {item.id} are back.", timeout=4, markup=False)

    def _keep_review_draft(self, approval_id: str, draft: ReviewDraft | None) -> None:
        """The review screen closed: keep what the reviewer typed and did not sign (None: nothing, or signed)."""
        if draft is None:
            self._review_drafts.pop(approval_id, None)
            return
        self._review_drafts[approval_id] = draft
        self.notify(f"Not signed. Your edits to {approval_id} are kept: open it again to continue.",
                    title="Review closed", timeout=6, markup=False)

    def _reviewed(self, result: ReviewResult | None) -> None:
        if result is None or self.engine is None:
            return
        item = self.engine.store.approval(result.approval_id)
        if item is None:
            return
        if item.status != "pending":  # signed meanwhile from the CLI or another terminal
            at = f" at {shown(item.decided_at)}" if item.decided_at else ""
            self.notify(f"{item.id} was already decided ({item.status} by {item.reviewer}{at}); your "
                        "decision was not applied.", title="Already decided", severity="error", timeout=10,
                        markup=False)
            self.refresh_approvals()
            return
        self._busy_approvals.add(item.id)
        self.refresh_approvals()
        self.sign(item.id, item.thread_id, item.consult_id, result)

    # -- workers: they only post messages -------------------------------------------------------------------
    @property
    def consult_running(self) -> bool:
        return self._consult_active

    @property
    def escape_to_minimize(self) -> bool:
        # Esc cancels a running consult, as the footer says, also with a pane zoomed; otherwise it restores the pane
        return not self.consult_running and super().escape_to_minimize

    def _start_consult_worker(self, worker: Worker[None]) -> None:
        self._consult = worker
        self._consult_active = True
        self.refresh_bindings()  # Esc (cancel) shows in the footer only while a consult runs

    @work(exclusive=True, group="consult", exit_on_error=False)
    async def run_consult(self, thread_id: str, text: str, tier: int | None) -> None:
        assert self.engine is not None
        engine = self.engine
        await self._pump(thread_id, lambda: engine.stream(thread_id, text, tier_override=tier))

    @work(exclusive=True, group="consult", exit_on_error=False)
    async def resume(self, thread_id: str) -> None:
        assert self.engine is not None
        engine = self.engine
        await self._pump(thread_id, lambda: engine.resume(thread_id))

    @work(group="review", exit_on_error=False)
    async def sign(self, approval_id: str, thread_id: str, consult_id: str, result: ReviewResult) -> None:
        """Reviews run in their own group: signing must not cancel a consult that is running meanwhile."""
        from engine.graph import decision

        assert self.engine is not None
        engine = self.engine

        def start() -> AsyncIterator[Any]:
            dec = decision(result.action, result.reviewer or self.reviewer, result.note, result.edited_text)
            return engine.resume(thread_id, dec, consult_id)

        try:
            await self._pump(thread_id, start, origin="review")
        finally:
            self._busy_approvals.discard(approval_id)

    async def _pump(self, thread_id: str, start: Callable[[], AsyncIterator[Any]], origin: str = "consult") -> None:
        consult_id: str | None = None
        last_step = ""
        try:
            agen = start()
            async with aclosing(agen):  # type: ignore[type-var]
                async for event in agen:
                    consult_id = event.consult_id
                    if event.kind == "NodeFinished":
                        last_step = event.label
                    self.post_message(EngineEventPosted(event, origin))
        except asyncio.CancelledError:
            # closing the generator stopped the running node; the checkpoint stays at the last finished one
            self.post_message(ConsultEnded(thread_id, consult_id, "cancelled", last_step=last_step, origin=origin))
            raise
        except self._user_errors as exc:
            self.post_message(ConsultEnded(thread_id, consult_id, "failed", str(exc), origin=origin))
        except Exception as exc:
            log.exception("consult failed")
            self.post_message(ConsultEnded(thread_id, consult_id, "failed",
                                           f"Unexpected {type(exc).__name__}: {exc}", origin=origin))
        else:
            self.post_message(ConsultEnded(thread_id, consult_id, "done", last_step=last_step, origin=origin))

    # -- engine events → panes ------------------------------------------------------------------------------
    async def _view_for(self, event: Any) -> ConsultView | None:
        assert self.engine is not None
        fresh = event.kind == "NodeStarted" and event.node == "ingestion"

        def question() -> str:
            cp = self._checkpoint(event.thread_id, event.consult_id)
            return cp.state.case_text if cp else ""

        return await self.chat.view_for(event.thread_id, event.consult_id, adopt_pending=fresh, question=question)

    async def on_engine_event_posted(self, message: EngineEventPosted) -> None:
        try:
            await self._route(message.event, message.origin)
        except NoMatches:
            if not (self._exit or self._closing):  # panes vanish only while the app shuts down
                raise

    async def _route(self, event: Any, origin: str) -> None:
        kind = event.kind
        if origin == "consult" and kind == "NodeStarted":
            self._live = (event.thread_id, event.consult_id)
        current = event.thread_id == self.current_patient
        view = await self._view_for(event)
        if view is not None:
            self.chat.follow()
        if kind == "NodeStarted":
            if view:
                view.step_started(event.node, event.label)
            if event.node == "specialist":
                tier = self._tier_in_use.get(event.consult_id)
                if tier is not None and tier not in self._models_ready:
                    self._set_model_status(f"loading Tier {tier} model (first use)…", f"loading T{tier}…")
        elif kind == "NodeFinished":
            if view:
                view.step_finished(event.node, event.label, event.seconds)
            if event.node == "ingestion":
                self._ingested(view, event.thread_id, event.consult_id, current)
            if event.node == "specialist":
                self._model_ready(event.consult_id)
        elif kind == "Token":
            self._model_ready(event.consult_id)
            if view:
                view.token(event.text, event.attempt)
        elif kind == "RoutingDecided":
            r = event.routing
            self._tier_in_use[event.consult_id] = r.tier
            if current:
                self.patients_pane.show_routing(r)
            if view:
                override = f" (override; router said Tier {r.auto_tier})" if r.override else ""
                view.note(f"→ Tier {r.tier} · complexity score {r.score:.2f}{override}")
        elif kind == "EvidenceReady":
            if current:
                self.evidence.show(event)
            if view:
                n = len(event.passages)
                view.note(f"→ {n} passage{'s' if n != 1 else ''} · rag_confidence {event.rag_confidence:.2f}"
                          if event.gate_passed else
                          (f"→ gate refused: closest “{event.closest_title}” at {event.closest_distance}"
                           if event.closest_title else "→ gate refused: the knowledge base is empty (ingest "
                           "guidelines from the command palette)"),
                          "info" if event.gate_passed else "warning")
        elif kind == "CriticChecked":
            if view:
                view.note(f"→ draft {event.attempt} passed the checks" if event.passed else
                          f"→ draft {event.attempt} rejected: " + "; ".join(event.issues),
                          "info" if event.passed else "warning")
        elif kind == "ClaimsGoverned":
            if view:
                blocked = any(state == "blocked" for _, state, _, _ in event.claims)
                view.note(f"→ claims: {event.summary()}", "warning" if blocked else "info")
        elif kind == "Notice":
            from engine.models.manager import fallback_of  # loaded already: a consult is running

            if fell_back := fallback_of(event.message):
                self._model_trouble.add(event.consult_id)
                self._set_model_status(f"Tier {fell_back[0]} model unavailable: using {fell_back[1]}",
                                       f"T{fell_back[0]}→{fell_back[1]}")
            if view:
                view.note(event.message, "warning")
            self.notify(event.message, severity="warning", markup=False)
        elif kind == "ErrorEvent":
            if event.node == "specialist" and (tier := self._tier_in_use.get(event.consult_id)) is not None:
                self._model_trouble.add(event.consult_id)  # the node still finishes (into the safe refusal)
                self._set_model_status(f"Tier {tier} model failed (see the error)", f"T{tier} failed")
            if view:
                view.note(event.message, "error")
            hint = hint_for(event.message)
            self.notify(event.message + (f"\n{hint}" if hint else "") + "\nThe consult ends in a safe refusal.",
                        severity="error", title=f"{event.thread_id}: a step failed", timeout=12, markup=False)
        elif kind == "HitlRequired":
            if view:
                await view.show_waiting(event.approval_id, event.reasons)
            if current:  # the reviewer sees each claim's release state before signing
                self._show_latest(event.thread_id, event.consult_id)
            self.refresh_approvals()
            self.notify(f"{event.thread_id}: waiting for a reviewer ({event.approval_id}). "
                        f"{key_name(self, 'focus_approvals', 'F5')} opens the queue.",
                        severity="warning", markup=False)
        elif kind == "Final":
            if view:
                await view.show_answer(event.report, event.status, progressive=True)
            if current:
                self._show_latest(event.thread_id, event.consult_id)
            else:
                self.notify(f"{event.thread_id}: answer {event.status}.", markup=False)

    def _ingested(self, view: ConsultView | None, thread_id: str, consult_id: str, current: bool) -> None:
        """The case is stored (redacted) and its facts extracted: the chat shows the redacted case instead of the
        typed note (which may hold identifiers), and the patient pane this case's facts (not the previous one's)
        while the rest of the consult runs."""
        assert self.engine is not None
        store = self.engine.store
        cp = self._checkpoint(thread_id, consult_id)
        if cp is None or not cp.state.case_text:  # empty when redaction failed: then nothing was stored
            return
        if view is not None:
            self.chat.prompt.replace_in_history(view.question, cp.state.case_text)  # up-arrow recalls it too
            view.set_question(cp.state.case_text)
        if current:
            self.patients_pane.show_case(thread_id, cp.state, store.consults(thread_id))

    def _model_ready(self, consult_id: str) -> None:
        if consult_id in self._model_trouble:  # a fallback model answered, or none could: not "Tier N ready"
            return
        tier = self._tier_in_use.get(consult_id)
        if tier is not None and tier not in self._models_ready and self.settings is not None:
            self._models_ready.add(tier)
            _, profile = self.settings.profile_for_tier(tier)
            self._set_model_status(f"Tier {tier} model ready", f"T{tier} ready")
            log.info("tier %s model ready: %s", tier, profile.label)

    def _set_model_status(self, text: str, short: str) -> None:
        """``short``: the same in at most 16 characters, for a narrow terminal, where the demo badge leaves the
        status line 38 columns (at 80 the long form was cut, the fallback model's name with it)."""
        self._model_status = (text, short)
        self._update_status()

    async def on_consult_ended(self, message: ConsultEnded) -> None:
        view = None
        if message.thread_id == self.chat.thread_id:
            view = (self.chat.views.get(message.consult_id) if message.consult_id else None) or (
                self.chat.drop_pending() if message.outcome != "done" and message.origin == "consult" else None)
        if message.outcome == "cancelled":
            if message.last_step:
                text = (f"Cancelled after “{message.last_step}”. The consult is saved at that step: "
                        f"{key_name(self, 'resume', 'ctrl+r')} continues it.")
            else:
                text = "Cancelled before the first step finished: nothing was stored. Submit the case again."
            if view:
                await view.show_stopped(text, "cancelled")
            self.notify(text, title="Consult cancelled", markup=False)
        elif message.outcome == "failed":
            hint = hint_for(message.error)
            if view:
                await view.show_stopped(message.error, "failed")
            self.notify(message.error + (f"\n{hint}" if hint else ""), severity="error", title="Consult stopped",
                        timeout=12, markup=False)
        self.refresh_patients()
        self.refresh_approvals()
        if message.thread_id == self.current_patient:
            self.patients_pane.show_case(message.thread_id, self._latest_state(message.thread_id),
                                         self.engine.store.consults(message.thread_id) if self.engine else [])

    def _latest_state(self, thread_id: str) -> Any | None:
        cp = self._checkpoint(thread_id) if self.engine else None
        return cp.state if cp else None

    @staticmethod
    def _store_error() -> type[Exception]:
        from engine.checkpoint import StoreError

        return StoreError

    def _checkpoint(self, thread_id: str, consult_id: str | None = None) -> Any | None:
        """``store.latest``, with a damaged checkpoint (StoreError: cut or edited on disk) named in a notice, once,
        and shown as no checkpoint: the patient's other consults still open."""
        assert self.engine is not None
        try:
            return self.engine.store.latest(thread_id, consult_id)
        except self._store_error() as exc:
            if str(exc) not in self._damaged:
                self._damaged.add(str(exc))
                self.notify(str(exc), severity="error", title="Damaged checkpoint", timeout=12, markup=False)
            return None

    # -- actions --------------------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_consult":
            return self.consult_running  # hidden (and Esc free for other uses) when nothing runs
        return True

    async def action_new_patient(self) -> None:
        if self.engine is None:
            self._queue_until_ready("new_patient", self.action_new_patient, "the new patient opens")
            return
        thread_id = self.engine.store.new_patient_id()  # creates the patient (one write transaction)
        await self.open_patient(thread_id)
        self.chat.prompt.focus()  # the status line and the chat title name the new patient: no toast needed

    async def action_quit(self) -> None:
        """Quit; but while a consult runs, a sign-off is being applied or a review has unsigned edits, the first
        press says what would be lost and the quit key again (within QUIT_CONFIRM_S) quits."""
        losses = self._quit_losses()
        now = time.monotonic()
        if losses and now - self._quit_asked > QUIT_CONFIRM_S:
            self._quit_asked = now
            self.notify("\n".join(losses) + f"\nPress {self.key_display('quit', 'ctrl+q')} again to quit.",
                        title="Quit?", severity="warning", timeout=QUIT_CONFIRM_S, markup=False)
            return
        self.exit()

    def _quit_losses(self) -> list[str]:
        losses = []
        if self.consult_running:
            thread = self._live[0] if self._live else self.current_patient
            losses.append(f"A consult for {thread} is running: quitting stops it at its last finished step "
                          f"({self.key_display('resume', 'ctrl+r')} continues it after a restart)."
                          if thread else "A consult is running: quitting stops it.")
        if self._busy_approvals:
            losses.append(f"A reviewer's decision on {', '.join(sorted(self._busy_approvals))} is being applied.")
        drafts = set(self._review_drafts)
        from oncotui.screens.review import ReviewScreen

        # a review still open holds its typing in the screen, not yet in _review_drafts (kept when it closes)
        drafts |= {screen.item.id for screen in self.screen_stack
                   if isinstance(screen, ReviewScreen) and screen.is_mounted and screen.unsent() is not None}
        if drafts:
            losses.append(f"Unsigned review edits ({', '.join(sorted(drafts))}) are lost on quitting.")
        return losses

    def key_display(self, binding_id: str, default: str) -> str:
        """The first key a binding is on now (after ui.keymap), as the footer shows it."""
        keys = dict(self.settings.ui.keymap).get(binding_id, default) if self.settings else default
        return self.get_key_display(Binding(keys.split(",")[0].strip(), ""))

    def action_cancel_consult(self) -> None:
        if self._consult is not None and not self._consult.is_finished:
            self._consult.cancel()

    def action_resume_consult(self) -> None:
        if self.engine is None or self.current_patient is None:
            self.notify("Select a patient first.", severity="warning")
            return
        if self.consult_running:
            self.notify("A consult is already running.", severity="warning")
            return
        stopped, nothing = self._to_resume(self.current_patient)
        if nothing:  # a notice, not a "Consult stopped" error
            self.notify(nothing, title="Nothing to resume", severity="warning", markup=False)
            return
        if stopped is not None and stopped.state.routing is not None:
            # no RoutingDecided comes again: the status line learns the tier here
            self._tier_in_use[stopped.state.consult_id] = stopped.state.routing.tier
        self._start_consult_worker(self.resume(self.current_patient))

    def _to_resume(self, thread_id: str) -> tuple[Any, str]:
        """(the stopped consult's checkpoint ``resume`` would continue, or None; why there is nothing to continue,
        or "" when there is, or when the store cannot say)."""
        assert self.engine is not None
        try:
            if (stopped := self.engine.store.latest(thread_id, unfinished=True)) is not None:
                return stopped, ""
            latest = self.engine.store.latest(thread_id)
        except Exception:  # noqa: BLE001 - a damaged checkpoint: resume itself says what is wrong
            return None, ""
        if latest is None:
            return None, f"{thread_id} has no consult to continue."
        if latest.next_node == "__halt__":
            return None, (f"The latest consult of {thread_id} is waiting for a reviewer: "
                          f"{key_name(self, 'focus_approvals', 'F5')} opens the queue.")
        if latest.next_node == "__end__":
            return None, f"The latest consult of {thread_id} has already finished; there is nothing to continue."
        return None, ""

    def action_cycle_tier(self) -> None:
        self.tier_override = {None: 1, 1: 2, 2: None}[self.tier_override]
        self.notify(f"Next consult: tier {tier_value(self.tier_override)}.", timeout=2)

    def action_export(self) -> None:
        from oncotui.export import export_consult

        if self.engine is None or self.current_patient is None:
            self.notify("Select a patient with a consult to export.", severity="warning")
            return
        assert self.settings is not None
        if self.consult_running and (self._live is None or self._live[0] == self.current_patient):
            # it would export the consult half way ("Not finished", status running) and then it completes
            self.notify(f"The consult of {self.current_patient} is still running; export it once it has "
                        "finished.", severity="warning", markup=False)
            return
        try:
            path = export_consult(self.engine.store, self.current_patient, self.settings.data_dir / "exports")
        except (LookupError, OSError) as exc:
            self.notify(str(exc), severity="error", title="Export failed", markup=False)
            return
        self.last_export = path
        self.notify(f"Exported to {path}", title="Export", timeout=8, markup=False)

    def action_ingest(self) -> None:
        if self.engine is None or self.settings is None:
            async def open_ingest() -> None:
                self.action_ingest()

            self._queue_until_ready("ingest", open_ingest, "the ingest screen opens")
            return
        from kb.store import DEMO_DIR
        from oncotui.screens.ingest import IngestScreen

        engine = self.engine
        self.push_screen(IngestScreen(engine.kb, self.settings.kb.chunk_chars, DEMO_DIR))

    def action_focus_pane(self, pane: str) -> None:
        self.query_one(PANE_FOCUS[pane]).focus()

    def action_zoom(self) -> None:
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        pane = self._focused_pane()
        if pane is not None:
            screen.maximize(pane, container=False)

    def _focused_pane(self) -> Widget | None:
        node = self.focused
        while node is not None and not node.has_class("pane"):
            node = node.parent if isinstance(node.parent, Widget) else None
        return node

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    def action_help(self) -> None:
        from oncotui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
            return
        self.push_screen(HelpScreen(self.binding_rows(), self.settings.source if self.settings else ""))

    def binding_rows(self) -> list[HelpRow]:
        """Every binding the app defines (own classes only), with the key it is on after the user's keymap."""
        from oncotui.screens.help import HelpScreen
        from oncotui.screens.ingest import IngestScreen
        from oncotui.screens.review import ReviewScreen

        keymap = dict(self.settings.ui.keymap) if self.settings else {}
        sources: list[tuple[str, type[Any]]] = [
            ("everywhere", OncoApp), ("patients", PatientPane), ("chat", ChatPane), ("prompt", PromptInput),
            ("evidence", EvidencePane), ("approvals", ApprovalsPane), ("review", ReviewScreen),
            ("ingest", IngestScreen), ("help", HelpScreen)]
        rows: list[HelpRow] = []
        for where, cls in sources:
            for binding in cls.__dict__.get("BINDINGS", []):
                if isinstance(binding, Binding) and binding.id:
                    keys = keymap.get(binding.id, binding.key)
                    shown = {k.strip(): self.get_key_display(Binding(k.strip(), "")) for k in keys.split(",")}
                    rows.append((" / ".join(shown.values()), binding.tooltip or binding.description,
                                 WHERE.get(binding.id) or _where(where, shown), binding.id))
        rows.append((self.get_key_display(Binding(self.COMMAND_PALETTE_BINDING, "")), "Command palette: all actions",
                     "everywhere", "command_palette"))
        rows.extend((keys, what, where, "") for keys, what, where in PLAIN_KEYS)  # Textual's own: named in words
        return rows


def _where(where: str, keys: dict[str, str]) -> str:
    """Where a binding works: a key that types a character (``keys``: key -> as displayed) is taken by a focused
    text field (prompt, search), so say which of its keys works there."""
    from textual.keys import key_to_character

    typed = [k for k in keys if (char := key_to_character(k)) is not None and char.isprintable()]
    if where != "everywhere" or not typed:
        return where
    others = [shown for k, shown in keys.items() if k not in typed]
    return f"everywhere ({' / '.join(others)} while typing)" if others else "outside text fields"


def _os_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001  (no passwd entry in some containers)
        return "reviewer"


def create_app(engine_factory: EngineFactory | None = None, settings: Settings | None = None, *,
               config_path: str | Path | None = None) -> OncoApp:
    """Build the app. Without a factory it builds the real engine from ``settings`` (loaded from ``config_path``
    or the usual places when not given); models and the knowledge base still load only on first use."""
    return OncoApp(engine_factory, settings, config_path)


def run_app(config: str | Path | None = None) -> int:
    """Entry point for ``oncotui`` with no command. A settings error ends the app and is printed like the CLI's."""
    app = create_app(config_path=config)
    app.run()
    return app.return_code or 0


__all__ = ["OncoApp", "create_app", "run_app"]
