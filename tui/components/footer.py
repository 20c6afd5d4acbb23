"""The footer every screen shows: Textual's, but a key hint that does not fit whole beside the
palette key (docked on the right) is left out whole (Textual's laid hints out past the edge, under
the palette key: at 80x24 the inbox showed a lone `?`). The hints are fitted after each layout of
the footer's screen, with the sizes that layout gave them; a recompose forgets the removed hints'
bindings (Textual kept them alive: ~30,000 objects per drawer opened); and the footer recomposes
once for the binding refreshes of one frame, only when the hints would change (opening the drawer
asked five times). The hints go in the registry's order for footers (`footer_rank`): the
task's deciding keys first, each in the registry's word for the app's state (`footer_title`:
`p` says Resume while paused). A dialog has its own footer, saying its keys (the screen behind's
did not work there); a screen may word or leave out a hint (`footer_words`: a question's `y` says
its verb). docs/architecture.md#the-footer says why each is needed.
"""

from collections.abc import Hashable, Mapping
from typing import Protocol, runtime_checkable

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel

from ..registry import footer_rank, footer_title


@runtime_checkable
class WordsItsKeys(Protocol):
    """A screen whose footer words some hints its own way, by binding id: a word, or None to
    leave the hint out (a key that does nothing on this screen now)."""

    def footer_words(self) -> Mapping[str, str | None]: ...


class HintFooter(Footer):
    _composed_from: Hashable = None  # what the hints shown were composed from
    _recompose_due = False  # a recompose is asked for, after the next refresh

    def on_mount(self) -> None:
        self.screen.screen_layout_refresh_signal.subscribe(self, self._laid_out)

    def on_unmount(self) -> None:
        self.screen.screen_layout_refresh_signal.unsubscribe(self)

    def compose(self) -> ComposeResult:
        self._forget_removed_hints()
        self._composed_from = self._hints_from()
        yield from self._ranked(self._worded(list(super().compose())))

    def _paused(self) -> bool:
        """The board's pause (a dialog's own test app has none)."""
        return bool(getattr(self.app, "paused", False))

    def _worded(self, widgets: list[Widget]) -> list[Widget]:
        """Each key hint in the registry's word for the app's state (`footer_title`), found by
        its key as bound now (a remapped key included)."""
        bindings = self.screen.active_bindings
        paused = self._paused()
        own = self._screen_words()
        kept: list[Widget] = []
        for widget in widgets:
            active = bindings.get(widget.key) if isinstance(widget, FooterKey) else None
            binding_id = (active.binding.id if active is not None else None) or ""
            if binding_id in own and own[binding_id] is None:
                continue  # the screen says the key does nothing now
            word = own.get(binding_id) or footer_title(binding_id or None, paused=paused)
            if word is not None and isinstance(widget, FooterKey):
                widget.description = word
            kept.append(widget)
        return kept

    def _screen_words(self) -> Mapping[str, str | None]:
        """The screen's own words for its hints (`WordsItsKeys`), none for most screens."""
        screen = self.screen
        return dict(screen.footer_words()) if isinstance(screen, WordsItsKeys) else {}

    def _ranked(self, widgets: list[Widget]) -> list[Widget]:
        """Textual's hints in the registry's footer order (`registry.footer_rank`): the keys
        that decide the task first where they apply, greyed inapplicable ones last."""
        bindings = self.screen.active_bindings
        units: list[list[Widget]] = []
        palette: list[Widget] = []
        for widget in widgets:
            if widget.has_class("-command-palette"):
                palette.append(widget)
            elif isinstance(widget, FooterLabel) and units:
                units[-1].append(widget)
            else:
                units.append([widget])

        def rank(unit: list[Widget]) -> int:
            key = unit[0]
            active = bindings.get(key.key) if isinstance(key, FooterKey) else None
            if active is None:
                return 1
            screen = getattr(active.node, "SCREEN", None)  # the registry's name for its screen
            return footer_rank(active.binding.id, enabled=active.enabled, screen=screen)

        return [widget for unit in sorted(units, key=rank) for widget in unit] + palette

    def _hints_from(self) -> Hashable:
        """What `Footer.compose` makes the hints of: equal, and a recompose shows the same."""
        if not self._bindings_ready:
            return None
        bindings = self.screen.active_bindings
        palette = (
            bindings.get(self.app.COMMAND_PALETTE_BINDING) if self.show_command_palette else None
        )
        shown = tuple(
            (active.binding, active.enabled, active.tooltip)
            for active in (*bindings.values(), palette)
            if active is not None and (active.binding.show or active is palette)
        )
        words = tuple(sorted((str(key), str(word)) for key, word in self._screen_words().items()))
        return shown, self._paused(), words

    def bindings_changed(self, screen: Screen[object]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._recompose_due:
            self._recompose_due = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._recompose_due = False
        if self.is_attached and self._hints_from() != self._composed_from:
            await self.recompose()

    def _forget_removed_hints(self) -> None:
        """Drop the watchers of removed widgets, as Textual does when the value changes."""
        watchers: dict[str, list[tuple[object, object]]] = getattr(self, "__watchers", {})
        for bound in watchers.values():
            bound[:] = [pair for pair in bound if not getattr(pair[0], "_closing", False)]

    def _laid_out(self, _screen: Screen[object]) -> None:
        self.fit_hints()

    def hints(self) -> list[list[Widget]]:
        """The hints in order, each the widgets that say it (a key group and its label are one);
        the palette key apart."""
        units: list[list[Widget]] = []
        for child in self.children:
            if child.has_class("-command-palette"):
                continue
            if isinstance(child, FooterLabel) and units:
                units[-1].append(child)
            else:
                units.append([child])
        return units

    def fit_hints(self) -> None:
        """Show each hint that fits whole left of the palette key, in order; hide the rest. A
        hidden hint keeps its place in the row (the rest do not move), so its right edge is
        counted from the widths of the widgets before it, hidden or not."""
        if any(child.display and not child.outer_size.width for child in self.children):
            return  # composed, not laid out yet: the layout that sizes them fits them
        palette = [child for child in self.children if child.has_class("-command-palette")]
        edge = self.content_region.x + self.content_region.width
        if palette and palette[0].display:
            edge = min(edge, palette[0].region.x)
        x = self.content_region.x
        for unit in self.hints():
            right = x
            for widget in unit:
                margin = widget.styles.margin
                right = x + margin.left + widget.outer_size.width
                x = right + margin.right
            for widget in unit:
                widget.visible = right <= edge
