"""The disk-full scenario, run inside a private mount namespace on a size-limited tmpfs:

    unshare -m --propagation private sh -c \\
        'mount -t tmpfs -o size=4m tmpfs DIR && python -m tests.chaos.diskfull DIR'

A board with committed work, then a filler file takes all but a few pages of the filesystem, and
writes go on through the library, the CLI, a plan (all or nothing) and `kanban serve` until the
disk refuses them. Then the filler is removed and the same writes go through. Prints one JSON
document of what happened; tests/chaos/test_disk_full.py judges it.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from boardlib import Board, BoardError, PlanItem

KANBAN = Path(sys.executable).parent / "kanban"


def contents(db: Path) -> list[Any]:
    with Board(db, read_only=True, reconcile_orphans=False) as board:
        return [task.to_json() for task in board.all_tasks()]


def integrity(db: Path) -> str:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return "; ".join(str(row[0]) for row in conn.execute("PRAGMA integrity_check"))
    finally:
        conn.close()


def cli(db: Path, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KANBAN_")}
    done = subprocess.run(
        [str(KANBAN), *args],
        env=env | {"KANBAN_DB": str(db)},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    return {"code": done.returncode, "out": done.stdout[-300:], "err": done.stderr.strip()}


def main(folder: Path) -> dict[str, Any]:
    db = folder / "board.db"
    report: dict[str, Any] = {}
    board = Board(db)
    for number in range(40):
        task = board.create_task(f"committed {number}", description="kept " * 50)
        if number % 4 == 0:
            claimed = board.claim(task.id, "ada")
            board.log_progress(task.id, "ada", "half way", epoch=claimed.claim_epoch)
    committed = contents(db)

    server = subprocess.Popen(
        [str(KANBAN), "serve", "--port", "0"],
        env={k: v for k, v in os.environ.items() if not k.startswith("KANBAN_")}
        | {"KANBAN_DB": str(db)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert server.stdout is not None
    url = json.loads(server.stdout.readline())["listening"]

    import httpx

    http = httpx.Client(base_url=url, timeout=60)
    filler = folder / "filler"
    stat = os.statvfs(folder)
    free = stat.f_bavail * stat.f_frsize
    with filler.open("wb") as out:
        out.write(b"\0" * max(free - 256 * 1024, 0))

    made, refusal = 0, None
    for number in range(2000):
        try:
            board.create_task(f"filling {number}", description="x" * 4000)
            made += 1
        except BoardError as error:
            refusal = error.to_dict()
            break
    report["libraryMadeBeforeFull"] = made
    report["libraryRefusal"] = refusal
    report["afterRefusal"] = contents(db)
    plan = [PlanItem(key=f"p{i}", title=f"plan {i}", description="y" * 4000) for i in range(20)]
    try:
        board.create_plan(plan)
        report["planRefusal"] = None
    except BoardError as error:
        report["planRefusal"] = error.to_dict()
    report["cliWrite"] = cli(db, "task", "dispatch", "-t", "from the cli", "-d", "z" * 4000)
    report["cliRead"] = cli(db, "task", "list")
    answer = http.post("/api/board", json={"title": "over http", "description": "w" * 4000})
    report["httpWrite"] = {"status": answer.status_code, "doc": answer.json()}
    report["httpRead"] = http.get("/api/board").status_code
    report["whileFull"] = contents(db)
    report["integrityWhileFull"] = integrity(db)

    filler.unlink()
    report["libraryAfterFreeing"] = board.create_task("after freeing").id
    report["cliAfterFreeing"] = cli(db, "task", "dispatch", "-t", "cli after freeing")
    answer = http.post("/api/board", json={"title": "http after freeing"})
    report["httpAfterFreeing"] = answer.status_code
    report["check"] = cli(db, "db", "check")
    report["final"] = contents(db)
    report["committed"] = committed
    http.close()
    os.killpg(server.pid, signal.SIGTERM)
    server.wait(timeout=60)
    report["serverExit"] = server.returncode
    board.close()
    report["integrityAtEnd"] = integrity(db)
    return report


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
