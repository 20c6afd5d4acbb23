"""Commands the board suggests for a person to paste, built one way: each word shell-quoted.

A hint such as `kanban budget set --team web --daily-usd N` carries values someone else chose (a
team id, an agent's name, a branch, a path from the repository). Quoted, each stays one word when
pasted, never a second command; a plain word (`TASK-3`, `N`) is left as it is.
"""

import shlex

__all__ = ["shell_command"]


def shell_command(*words: str) -> str:
    """The words as one command line a POSIX shell reads back as exactly these words."""
    return shlex.join(words)
