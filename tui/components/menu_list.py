"""An `OptionList` that also moves with j/k, so a keyboard-only operator never has to reach for
the arrows inside a dialog (the move menu, the dependency picker)."""

from textual.widgets import OptionList

from .. import registry


class MenuList(OptionList):
    BINDINGS = [*OptionList.BINDINGS, *registry.bindings_for(registry.MENU)]
