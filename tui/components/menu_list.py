"""An `OptionList` that also moves with j/k, so a keyboard-only operator never has to reach for
the arrows inside a dialog (the move menu, the dependency picker)."""

from textual.widgets import OptionList

from .. import keymap


class MenuList(OptionList):
    BINDINGS = [*OptionList.BINDINGS, *keymap.MENU_BINDINGS]
