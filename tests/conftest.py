import sys
from pathlib import Path

# The worktree tests share helpers that are plain modules beside them.
sys.path.insert(0, str(Path(__file__).parent))
