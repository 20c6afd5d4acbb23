"""An `OptionList` that also moves with j/k, so a keyboard-only operator never has to reach for
the arrows inside a dialog (the move menu, the dependency picker), and whose Enter is said in the
dialog's footer: the registry's bindings come first, so its `enter` is the one shown."""

from textual.widgets import OptionList

from .. import registry


class MenuList(OptionList):
    BINDINGS = [*registry.bindings_for(registry.MENU), *OptionList.BINDINGS]
