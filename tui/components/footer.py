"""The footer every screen shows: Textual's, but a key hint that does not fit whole beside the
palette key (docked on the right) is left out whole. Textual's lays the hints out past the edge
and docks the palette key over them: at 80x24 the inbox's `? Help` showed as a lone `?`, its
word under the palette key (an exploring helper saw `^pPa lette` in the screenshot).

The hints are fitted after each layout of the footer's screen, with the sizes that layout gave
them: a footer recomposed under a dialog (its screen is not laid out then) once kept the hints it
was fitted before it had sizes, and the inbox showed a lone `?` under every question."""

from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterLabel


class HintFooter(Footer):
    def on_mount(self) -> None:
        self.screen.screen_layout_refresh_signal.subscribe(self, self._laid_out)

    def on_unmount(self) -> None:
        self.screen.screen_layout_refresh_signal.unsubscribe(self)

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
