"""Importing the CLI's code with the cyclic garbage collector paused (see `kanban.cli.main`).

Importing click and the board core creates ~100,000 objects and no garbage worth collecting, yet
the collector would run over them again and again while they are created and once more at exit.
`load_paused` imports a module with the collector off and then moves what exists to the permanent
generation (`gc.freeze`), where no later collection looks at it. A module already imported costs
nothing and freezes nothing. Standard library only: `kanban.cli` imports it first.
"""

import gc
import importlib
import sys
from types import ModuleType


def load_paused(name: str) -> ModuleType:
    """The module `name`, imported (the first time) with the collector paused."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    collecting = gc.isenabled()
    gc.disable()
    try:
        return importlib.import_module(name)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
