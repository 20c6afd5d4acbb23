"""Imported first by each benchmark script (`import script_path`). Python puts a script's own
folder first on `sys.path`, where `http.py` and `tui.py` (named for what they measure) hide the
standard library's `http` package (httpx and the MCP SDK import `http.client`) and the project's
`tui` package. This moves the folder to the end, so sibling imports (`from claim import ...`)
still work, and puts the project's root first, so a checkout runs without installing."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))
sys.path.append(str(HERE))
