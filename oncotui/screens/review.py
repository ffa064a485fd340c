"""Review screen: a reviewer reads the redacted draft and signs approve / approve with edits / reject with a note.

It shows what is being signed for: the case and question as stored (identifiers redacted), the reasons and the
draft. It says who is signing, in which role, and who asked. The reviewer id is a field, prefilled from ``ui.reviewer``
(else the OS user): on a shared workstation the clinician who asked cannot approve their own item by default, so a
colleague at the same terminal types their own id. As the id changes, the sign-off rules (engine/signoff.py
``refusal``: hitl.reviewers and roles, no self-approval) are applied to it: the screen says why an action is refused
and disables it; the engine applies the same rules when signing and also records the OS account.
While a reviewer edits, the critic's rules check the text as it stands (``check``), as the engine will when signing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Button, Footer, Input, Label, Markdown, Static, TextArea

from oncotui.clock import shown
from oncotui.widgets.literal import literal

ACTION_LABELS = {"approve": "Approve", "approve_with_edits": "Approve with edits", "reject": "Reject"}


@dataclass(frozen=True)
class ReviewResult:
    approval_id: str
    action: str  # approve | approve_with_edits | reject
    note: str
    edited_text: str = ""
    reviewer: str = ""  # the id typed in the review screen (who signs)


@dataclass(frozen=True)
class ReviewDraft:
    """What a reviewer typed and chose but did not sign: kept (in memory) when the screen is closed without a
    decision, and put back when the item is opened again. Esc by mistake, or to read the evidence pane, used to
    throw away an edited draft and the note."""

    action: str | None
    edited_text: str
    note: str
    reviewer: str


# reviewer id -> (role or "" when the id may not sign, why approving is refused or "", may reject)
Rules = Callable[[str], tuple[str, str, bool]]


class ReviewScreen(ModalScreen[ReviewResult | None]):
    # The case is context for the draft: a few lines, scrolled when longer (the draft keeps the most room; at 24
    # lines the case gets two). Below 40 lines the editor replaces the preview while editing, below 30 the
    # dialog also drops its blank lines (app.tcss): at 80x24 the two had shared the rows, borders only.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-medium"), (40, "-tall")]  # noqa: RUF012 (as Textual's)
    DEFAULT_CSS = """
    #review-case { height: auto; max-height: 4; background: $boost; padding: 0 1; scrollbar-size-vertical: 1; }
    ReviewScreen.-short #review-case { max-height: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close without deciding", id="review_close",
                tooltip="Close undecided (edits kept)"),
        # the app's F1 does not reach a modal screen
        Binding("f1", "app.help", "Keys", id="review_help", show=False, tooltip="Show the list of keys"),
    ]

    def __init__(self, item: Any, reviewer: str, action: str | None = None, *, case_text: str = "", role: str = "",
                 refusal: str = "", may_reject: bool = True,
                 check: Callable[[str], tuple[str, ...]] | None = None, rules: Rules | None = None,
                 draft: ReviewDraft | None = None, keep: Callable[[str, ReviewDraft | None], None] | None = None,
                 ) -> None:
        """``case_text``: the case and question as stored (redacted). ``role`` / ``refusal`` / ``may_reject``: the
        rules' verdict on ``reviewer``; ``rules`` gives the verdict on another id typed into the reviewer field
        (without it the id is fixed). ``draft``: what was left unsigned last time (put back); ``keep`` is told
        what is left unsigned when the screen closes without a decision (None: nothing, or it was signed)."""
        super().__init__()
        self.draft = draft
        self.keep = keep
        self.case_text = case_text
        self.check = check  # the critic's rules on an edited text (engine.safety.review_edits over the evidence)
        self.rules = rules
        self._check_timer: Timer | None = None
        self.item = item
        self.reviewer = reviewer
        self.opened_by = reviewer  # the id the screen opened with (ui.reviewer or the OS user)
        self.requested = action  # what the reviewer asked for when opening (kept while the id is refused)
        self.action = action
        self.role = role
        self.refusal = refusal  # why this reviewer may not approve ("" when allowed)
        self.may_reject = may_reject

    def compose(self) -> ComposeResult:
        item = self.item
        with Vertical(id="review-dialog"):
            yield Label(f"[b]Review {literal(item.id)}[/b] · {literal(item.thread_id)} · waiting since "
                        f"{literal(shown(item.created_at))}", id="review-title")
            yield Static("\n".join(f"[yellow]•[/yellow] {literal(r)}" for r in item.reasons) or "review requested",
                         id="review-reasons")
            with VerticalScroll(id="review-case"):
                yield Static("[dim]Case and question (identifiers redacted):[/dim] "
                             + (literal(self.case_text.strip()) or "[dim](not stored)[/dim]"), id="review-case-text")
            with VerticalScroll(id="review-preview"):
                yield Markdown(item.preview)
            yield TextArea(item.preview, id="review-edit", language="markdown", soft_wrap=True)
            with VerticalScroll(id="review-checks-box"):  # scrolls when the findings outgrow their rows
                yield Static("", id="review-checks")
            with Horizontal(id="review-who"):
                yield Label("Reviewer id ", id="review-reviewer-label")
                yield Input(self.reviewer, placeholder="your reviewer id", id="review-reviewer", compact=True,
                            disabled=self.rules is None)
            yield Input(placeholder="Note recorded with the decision (Enter signs the chosen action)",
                        id="review-note", compact=True)
            with Horizontal(id="review-buttons"):
                yield Button("Approve", id="approve", variant="success", compact=True)
                yield Button("Approve with edits", id="approve_with_edits", variant="warning", compact=True)
                yield Button("Reject", id="reject", variant="error", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
            yield Static(self._signing_text(), id="review-signing")  # wraps: the refusal can be long
        yield Footer(compact=True)  # this screen's keys (Esc), not those of the pane behind it

    def _signing_text(self) -> str:
        asked = f" · asked by {literal(self.item.clinician)}" if getattr(self.item, "clinician", "") else ""
        if self.refusal:
            other = " · another reviewer can sign with their own id (Reviewer id)" if self.rules is not None else ""
            return f"[b red]{literal(self.refusal)}[/b red]{asked}{other}"
        chosen = f"[b]{ACTION_LABELS[self.action]}[/b] — " if self.action else ""
        role = f" ({literal(self.role)})" if self.role else ""
        return (f"{chosen}signing as [b]{literal(self.reviewer)}[/b]{role}{asked}. Recorded: decision, time, note, "
                "hashes of the draft and evidence, and the OS account.")

    def _allowed(self, action: str) -> bool:
        return action == "reject" and self.may_reject or not self.refusal

    def on_mount(self) -> None:
        if self.draft is not None:
            self._restore(self.draft)
        self._apply_rules()
        self._show_editor(self.action == "approve_with_edits")
        self.query_one("#review-edit" if self.action == "approve_with_edits" else "#review-note").focus()

    def _restore(self, draft: ReviewDraft) -> None:
        self.query_one("#review-edit", TextArea).text = draft.edited_text
        self.query_one("#review-note", Input).value = draft.note
        if self.rules is not None and draft.reviewer != self.reviewer:  # a colleague had typed their id
            self.query_one("#review-reviewer", Input).value = draft.reviewer
            self.reviewer = draft.reviewer
            self.role, self.refusal, self.may_reject = self.rules(draft.reviewer)
        if self.action is None:  # opened to look (Enter): carry on with what was chosen
            self.action = self.requested = draft.action

    def unsent(self) -> ReviewDraft | None:
        """What was typed and not signed; None when the draft, the note and the reviewer id are as they opened."""
        edited = self.query_one("#review-edit", TextArea).text
        note = self.query_one("#review-note", Input).value
        reviewer = self.query_one("#review-reviewer", Input).value.strip()
        if edited == self.item.preview and not note.strip() and reviewer == self.opened_by:
            return None
        action = self.action or ("approve_with_edits" if edited != self.item.preview else None)
        return ReviewDraft(action, edited, note, reviewer)

    def action_close(self) -> None:
        """Close without deciding; what was typed is kept for the next time this item is opened."""
        if self.keep is not None:
            self.keep(self.item.id, self.unsent())
        self.dismiss(None)

    def _apply_rules(self) -> None:
        """Enable what the rules allow the current reviewer id; drop a chosen action they refuse (and bring back
        the one asked for at opening once an id may take it)."""
        for button in self.query(Button):
            if button.id in ACTION_LABELS:
                button.disabled = not self._allowed(button.id)
        if self.action is not None and not self._allowed(self.action):
            self.action = None
        elif self.action is None and self.requested is not None and self._allowed(self.requested):
            self.action = self.requested
        self.query_one("#review-signing", Static).update(self._signing_text())

    @on(Input.Changed, "#review-reviewer")
    def _reviewer_changed(self, event: Input.Changed) -> None:
        if self.rules is None:
            return
        self.reviewer = event.value.strip()
        self.role, self.refusal, self.may_reject = self.rules(self.reviewer)
        before = self.action
        self._apply_rules()
        if self.action != before:  # the editor is open only while approve with edits is the chosen action
            self._show_editor(self.action == "approve_with_edits")

    @on(Input.Submitted, "#review-reviewer")
    def _reviewer_submitted(self) -> None:
        self.query_one("#review-note").focus()

    def _show_editor(self, shown: bool) -> None:
        self.set_class(shown, "-editing")  # below 40 lines the editor takes the preview's rows (app.tcss)
        self.query_one("#review-edit").display = shown
        self.query_one("#review-checks-box").display = shown
        if shown:
            self._update_checks()

    @on(TextArea.Changed, "#review-edit")
    def _edited(self) -> None:
        # the rules take tens of milliseconds on a long draft: check once typing pauses, not on every key
        if self._check_timer is not None:
            self._check_timer.stop()
        if self.query_one("#review-edit").display:
            self._check_timer = self.set_timer(0.3, self._update_checks)

    def _update_checks(self) -> None:
        if self.check is None:
            return
        findings = self.check(self.query_one("#review-edit", TextArea).text)
        text = ("[green]Critic rules: nothing found in the edited text.[/green]" if not findings else
                f"[yellow]Critic rules on the edited text ({len(findings)}; recorded with your signature):[/yellow]\n"
                + "\n".join(f"[yellow]•[/yellow] {literal(f)}" for f in findings[:6])
                + (f"\n… and {len(findings) - 6} more" if len(findings) > 6 else ""))
        self.query_one("#review-checks", Static).update(text)

    @on(Input.Submitted, "#review-note")
    def _note_submitted(self) -> None:
        if self.action is None:
            self.notify("Choose Approve, Approve with edits or Reject.", severity="warning")
            return
        self._sign(self.action)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        button = event.button.id or ""
        if button == "cancel":
            self.action_close()
        elif button == "approve_with_edits" and self.action != button:
            # first press opens the editor on the draft; the second signs
            self.action = button
            self._show_editor(True)
            self.query_one("#review-edit").focus()
            self.query_one("#review-signing", Static).update(self._signing_text())
        elif button in ACTION_LABELS:
            self._sign(button)

    def _sign(self, action: str) -> None:
        if not self._allowed(action):
            self.notify(self.refusal, severity="error", title="Sign-off refused", markup=False)
            return
        edited = self.query_one("#review-edit", TextArea).text if action == "approve_with_edits" else ""
        if action == "approve_with_edits" and not edited.strip():
            self.notify("Approve with edits needs the edited text.", severity="error")
            return
        note = self.query_one("#review-note", Input).value.strip()
        if action == "reject" and not note:  # the clinician reads why, with the safe refusal (as `hitl reject`)
            self.notify("Reject needs a note saying why.", severity="error")
            self.query_one("#review-note").focus()
            return
        if self.keep is not None:
            self.keep(self.item.id, None)  # signed: nothing left to keep
        self.dismiss(ReviewResult(self.item.id, action, note, edited, self.reviewer))
