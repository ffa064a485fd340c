"""Patient pane: the patient list (search, create, select), the case summary, the router's breakdown, tier override."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option

from oncotui.clock import shown
from oncotui.widgets.literal import literal

TIER_CHOICES: list[tuple[str, str]] = [("auto", "auto"), ("Tier 1", "1"), ("Tier 2", "2")]
# A consult's stored status (engine.graph._status) in words for the timeline. "running" is also what a consult
# that crashed or was cancelled mid-way keeps (ctrl+r continues it); "refused" includes a reviewer's rejection.
STATUS_WORDS = {"pending_review": "waiting for review", "released": "answered", "reviewed": "approved",
                "refused": "safe refusal", "running": "not finished"}


def status_words(status: str) -> str:
    return STATUS_WORDS.get(status, status.replace("_", " "))


def tier_value(tier: int | None) -> str:
    return "auto" if tier is None else str(tier)


def tier_from_value(value: object) -> int | None:
    return int(value) if value in ("1", "2") else None  # type: ignore[arg-type]


class PatientPane(Vertical):
    """Lists PT-XXXX threads; Enter selects one. The app owns the data and calls the ``show_*`` methods."""

    ALLOW_MAXIMIZE = True  # ctrl+o zooms a pane; handy at 80x24
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search", id="search_patients", tooltip="Search patients by number"),
        # only while the search field holds text (check_action); otherwise Esc is the app's (cancel a consult)
        Binding("escape", "clear_search", "Clear search", id="clear_search", show=False,
                tooltip="Clear the patient search"),
    ]

    class Selected(Message):
        def __init__(self, thread_id: str) -> None:
            super().__init__()
            self.thread_id = thread_id

    class TierChanged(Message):
        def __init__(self, tier: int | None) -> None:
            super().__init__()
            self.tier = tier

    class TypedAhead(Message):
        """Text typed or pasted while the patient list had the focus: it belongs in the chat prompt (the list
        has it at start, where the chat says 'Type the case')."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Patients"
        self._rows: list[dict[str, Any]] = []
        self._current: str | None = None
        self._typing = False  # text is being passed on to the prompt (until the list loses the focus)

    def compose(self) -> ComposeResult:
        yield Input(placeholder="search PT-… (/)", id="patient-search", compact=True)
        yield OptionList(id="patient-list")
        with VerticalScroll(id="case-info"):
            yield Static("No patient selected. Press n for a new one.", id="case-summary")
            yield Static("", id="routing")
        with Horizontal(id="tier-row"):
            yield Label("Tier override ", id="tier-label")
            yield Select(TIER_CHOICES, value="auto", allow_blank=False, compact=True, id="tier-select")

    # -- called by the app --------------------------------------------------------------------------------
    def set_patients(self, rows: list[dict[str, Any]], current: str | None) -> None:
        self._rows = rows
        self._current = current
        self._fill(self.query_one("#patient-search", Input).value)
        self.border_subtitle = f"{len(rows)} patient{'s' if len(rows) != 1 else ''}"

    def show_case(self, thread_id: str | None, state: Any | None, consults: list[dict[str, Any]]) -> None:
        """Case summary from the latest checkpoint's facts (already redacted), and a dated consult timeline."""
        summary = self.query_one("#case-summary", Static)
        if thread_id is None:
            summary.update("No patient selected. Press [b]n[/b] for a new one.")
            self.show_routing(None)
            return
        lines = [f"[b]{literal(thread_id)}[/b]"]
        if state is None:
            lines.append("[dim]No consult yet: type the case in the chat.[/dim]")
        else:
            f = state.facts
            stage = f.stage
            if f.stage_text and (not f.stage or f.stage.lower() not in f.stage_text.lower()):
                stage = f"{f.stage} ({f.stage_text})" if f.stage else f.stage_text  # e.g. "IV (T3N1M1)"
            for name, value in (("Cancer", f.cancer_type), ("Stage", stage),
                                ("Markers", ", ".join(f.markers)), ("Prior Tx", ", ".join(f.prior_treatments)),
                                ("PS", f.performance_status)):
                lines.append(f"[dim]{name}:[/dim] {literal(value) if value else '[dim]not stated[/dim]'}")
            # shown when stated: each decides which guideline lines apply (case fit)
            lines += [f"[dim]{name}:[/dim] {literal(value)}" for name, value in (
                ("Age", f.age_text), ("Fitness", "; ".join(f.fitness)), ("Site", ", ".join(f.subsites)),
                ("Line", f.line_text), ("Progressed after", ", ".join(f.progressed_after)),
                ("Avoided", ", ".join(f.avoided_names)), ("Groups", ", ".join(f.groups))) if value]
        if consults:
            lines.append("[dim]Timeline[/dim]")
            for c in consults[-6:]:  # the latest few; the export has them all
                when = shown(c.get("started_at") or "")  # local time
                tier = f" T{c['tier']}" if c.get("tier") else ""
                lines.append(f" {when}{tier} {literal(status_words(c.get('status') or ''))}")
        summary.update("\n".join(lines))
        self.show_routing(state.routing if state is not None else None)

    def show_routing(self, routing: Any | None) -> None:
        widget = self.query_one("#routing", Static)
        if routing is None:
            widget.update("")
            return
        lines = [f"[b]Router[/b] score {routing.score:.2f} → [b]Tier {routing.tier}[/b]"
                 + (f" [yellow](override; router said {routing.auto_tier})[/yellow]" if routing.override else "")]
        for factor in routing.factors:
            detail = f" [dim]{literal(factor.detail)}[/dim]" if factor.detail else ""
            lines.append(f" +{factor.weight:.2f} {literal(factor.name)}{detail}")
        if not routing.factors:
            lines.append(" [dim]no complexity factors[/dim]")
        widget.update("\n".join(lines))

    def set_tier(self, tier: int | None) -> None:
        select = self.query_one("#tier-select", Select)
        if select.value != tier_value(tier):
            select.value = tier_value(tier)

    # -- internals ----------------------------------------------------------------------------------------
    def _fill(self, query: str) -> None:
        options = self.query_one("#patient-list", OptionList)
        q = query.strip().lower()
        shown = [r for r in self._rows if q in r["id"].lower()]
        options.clear_options()
        options.add_options([Option(self._label(r), id=r["id"]) for r in shown])
        if q and not shown:  # an empty list read as "no patients at all"
            options.add_option(Option(f"No patient matches {query.strip()!r} (Esc clears)", disabled=True))
        ids = [r["id"] for r in shown]
        if ids:  # Enter must select something even before the cursor has moved
            options.highlighted = ids.index(self._current) if self._current in ids else 0

    def _label(self, row: dict[str, Any]) -> str:
        n = row.get("consults") or 0
        mark = "▶ " if row["id"] == self._current else "  "
        return f"{mark}{literal(row['id'])}  [dim]{n} consult{'s' if n != 1 else ''}[/dim]"

    # -- text typed on the list goes to the prompt ------------------------------------------------------
    def on_key(self, event: events.Key) -> None:
        """A printable key the list has no use for starts the case in the prompt.

        Keys that arrive together (typed fast) are all queued for the list before the focus moves, and reach this
        handler after it has: so once text is passed on, every printable key bubbling here is passed on too (the
        'n' of 'pancreatic' is text, not 'new patient') until the focus comes back to this pane. On its own, with
        the list focused, n still makes a patient and / searches."""
        if not (event.is_printable and event.character):
            return
        if self._typing:
            if self._focus_inside() and not self._list_focused():  # the search field or the tier: theirs
                return
        elif not self._list_focused() or event.key in self.app.active_bindings:
            return
        event.stop()
        event.prevent_default()
        self._pass_on(event.character)

    def on_paste(self, event: events.Paste) -> None:
        if event.text and (self._list_focused() or self._typing and not self._focus_inside()):  # see on_key
            event.stop()
            self._pass_on(event.text)

    def _list_focused(self) -> bool:
        return self.app.focused is self.query_one("#patient-list")

    def _focus_inside(self) -> bool:
        focused = self.app.focused
        return focused is not None and self in focused.ancestors_with_self

    def _pass_on(self, text: str) -> None:
        self._typing = True
        self.post_message(self.TypedAhead(text))

    @on(events.DescendantFocus)
    def _focus_back(self) -> None:
        self._typing = False

    def action_search(self) -> None:
        self.query_one("#patient-search", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_search":
            return bool(self.query_one("#patient-search", Input).value)
        return True

    def action_clear_search(self) -> None:
        self.query_one("#patient-search", Input).value = ""  # Input.Changed refills the whole list
        self.query_one("#patient-list", OptionList).focus()

    @on(Input.Changed, "#patient-search")
    def _search_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    @on(Input.Submitted, "#patient-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        options = self.query_one("#patient-list", OptionList)
        if options.option_count:
            option = options.get_option_at_index(options.highlighted or 0)
            if option.id:
                self.post_message(self.Selected(option.id))
                # the search has done its job: the list shows every patient again (it stayed filtered to one)
                self.query_one("#patient-search", Input).value = ""
        options.focus()

    @on(OptionList.OptionSelected, "#patient-list")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.post_message(self.Selected(event.option.id))

    @on(Select.Changed, "#tier-select")
    def _tier_changed(self, event: Select.Changed) -> None:
        self.post_message(self.TierChanged(tier_from_value(event.value)))
