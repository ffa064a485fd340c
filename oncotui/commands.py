"""Command palette (ctrl+p): the app's main actions, searchable by name."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from oncotui.app import OncoApp


class OncoCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        app = cast("OncoApp", self.app)
        return [
            ("New patient", "Create the next PT-XXXX and open it", app.action_new_patient),
            ("Ingest guidelines", "Index Markdown/PDF files or folders into the knowledge base (progress shown)",
             app.action_ingest),
            ("Export consult", "Write the current consult (report, evidence, approval record) as Markdown",
             app.action_export),
            ("Approve: review pending items", "Focus the approvals queue (a approve · e edit · r reject)",
             partial(app.action_focus_pane, "approvals")),
            ("Switch tier: auto", "Let the router choose the tier of the next consult",
             partial(app.set_tier, None)),
            ("Switch tier: Tier 1", "Force Tier 1 for the next consult", partial(app.set_tier, 1)),
            ("Switch tier: Tier 2", "Force Tier 2 for the next consult", partial(app.set_tier, 2)),
            ("Toggle light/dark theme", "Switch between textual-dark and textual-light", app.action_toggle_theme),
            ("Resume interrupted consult", "Continue the current patient's latest consult where it stopped",
             app.action_resume_consult),
            ("Keys: help", "Every key binding, its id and where it works", app.action_help),
        ]

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
