"""Review screen: a reviewer reads the redacted draft and signs approve / approve with edits / reject with a note.

It says who is signing, in which role, and who asked. When the sign-off rules (engine/signoff.py) refuse this
reviewer, it says why up front and disables what is refused; the engine applies the same rules when signing.
While a reviewer edits, the critic's rules check the text as it stands (``check``), as the engine will when signing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Button, Input, Label, Markdown, Static, TextArea

ACTION_LABELS = {"approve": "Approve", "approve_with_edits": "Approve with edits", "reject": "Reject"}


@dataclass(frozen=True)
class ReviewResult:
    approval_id: str
    action: str  # approve | approve_with_edits | reject
    note: str
    edited_text: str = ""


class ReviewScreen(ModalScreen[ReviewResult | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close without deciding", id="review_close"),
    ]

    def __init__(self, item: Any, reviewer: str, action: str | None = None, *, role: str = "",
                 refusal: str = "", may_reject: bool = True,
                 check: Callable[[str], tuple[str, ...]] | None = None) -> None:
        super().__init__()
        self.check = check  # the critic's rules on an edited text (engine.safety.review_edits over the evidence)
        self._check_timer: Timer | None = None
        self.item = item
        self.reviewer = reviewer
        self.action = action
        self.role = role
        self.refusal = refusal  # why this reviewer may not approve ("" when allowed)
        self.may_reject = may_reject

    def compose(self) -> ComposeResult:
        item = self.item
        with Vertical(id="review-dialog"):
            yield Label(f"[b]Review {escape(item.id)}[/b] · {escape(item.thread_id)} · waiting since "
                        f"{escape(item.created_at[:16].replace('T', ' '))}", id="review-title")
            yield Static("\n".join(f"[yellow]•[/yellow] {escape(r)}" for r in item.reasons) or "review requested",
                         id="review-reasons")
            with VerticalScroll(id="review-preview"):
                yield Markdown(item.preview)
            yield TextArea(item.preview, id="review-edit", language="markdown", soft_wrap=True)
            yield Static("", id="review-checks")
            yield Input(placeholder="Note recorded with the decision (Enter signs the chosen action)",
                        id="review-note", compact=True)
            with Horizontal(id="review-buttons"):
                yield Button("Approve", id="approve", variant="success", compact=True)
                yield Button("Approve with edits", id="approve_with_edits", variant="warning", compact=True)
                yield Button("Reject", id="reject", variant="error", compact=True)
                yield Button("Cancel", id="cancel", compact=True)
            yield Static(self._signing_text(), id="review-signing")  # wraps: the refusal can be long

    def _signing_text(self) -> str:
        asked = f" · asked by {escape(self.item.clinician)}" if getattr(self.item, "clinician", "") else ""
        if self.refusal:
            return f"[b red]{escape(self.refusal)}[/b red]{asked}"
        chosen = f"[b]{ACTION_LABELS[self.action]}[/b] — " if self.action else ""
        role = f" ({escape(self.role)})" if self.role else ""
        return (f"{chosen}signing as [b]{escape(self.reviewer)}[/b]{role}{asked}. Recorded: decision, time, note, "
                "hashes of the draft and evidence.")

    def _allowed(self, action: str) -> bool:
        return action == "reject" and self.may_reject or not self.refusal

    def on_mount(self) -> None:
        for button in self.query(Button):
            if button.id in ACTION_LABELS and not self._allowed(button.id):
                button.disabled = True
        if self.action is not None and not self._allowed(self.action):
            self.action = None
        self._show_editor(self.action == "approve_with_edits")
        self.query_one("#review-edit" if self.action == "approve_with_edits" else "#review-note").focus()

    def _show_editor(self, shown: bool) -> None:
        self.query_one("#review-edit").display = shown
        self.query_one("#review-checks").display = shown
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
                + "\n".join(f"[yellow]•[/yellow] {escape(f)}" for f in findings[:6])
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
            self.dismiss(None)
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
            self.notify(self.refusal, severity="error", title="Sign-off refused")
            return
        edited = self.query_one("#review-edit", TextArea).text if action == "approve_with_edits" else ""
        if action == "approve_with_edits" and not edited.strip():
            self.notify("Approve with edits needs the edited text.", severity="error")
            return
        self.dismiss(ReviewResult(self.item.id, action, self.query_one("#review-note", Input).value.strip(),
                                  edited))
