"""Write docs/benchmarks.md from the benchmarks' stored results: one table per benchmark, each
with the date, machine, load and command of the run it comes from. No figure is typed by hand.

    python benchmarks/report.py [--results benchmarks/results] [--out docs/benchmarks.md]

The results are the JSON lines a benchmark prints, kept by running it with `--save` (see
benchmarks/record.py): `benchmarks/results/<name>.jsonl`, one file per benchmark, replaced by each
saved run. tests/walls/test_docs.py fails when docs/benchmarks.md is not what this script writes
from the stored results.
"""

import argparse
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
PAGE = HERE.parent / "docs" / "benchmarks.md"
STAMP = ("benchmark", "date", "machine", "command", "load_at_start", "load", "note")

Line = dict[str, Any]


def number(value: Any) -> str:
    """A figure as a person reads it: thousands separated, booleans as yes/no, absent as -."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}".rstrip("0").rstrip(".") if value else "0"
    if isinstance(value, list):
        return ", ".join(number(item) for item in value)
    return str(value).replace("|", "\\|")


def table(header: list[str], rows: Iterable[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(number(cell) for cell in row) + " |" for row in rows]
    return [*lines, ""]


def flat(line: Line, prefix: str = "") -> list[tuple[str, Any]]:
    """A line's figures (the stamp left out), nested objects spelled `outer.inner`."""
    pairs: list[tuple[str, Any]] = []
    for key, value in line.items():
        if not prefix and key in STAMP:
            continue
        if isinstance(value, dict):
            pairs += flat(value, f"{prefix}{key}.")
        else:
            pairs.append((f"{prefix}{key}", value))
    return pairs


def figures(line: Line) -> list[str]:
    """One line as a figure | value table."""
    return table(["figure", "value"], ([key, value] for key, value in flat(line)))


def checks(lines: list[Line]) -> list[str]:
    """The targets a run checked (its summary lines), as check | met."""
    rows = [
        [f"`{key}`", value]
        for line in lines
        if "summary" in line
        for key, value in flat(line)
        if key != "summary"
    ]
    return ["Targets the run checked:", "", *table(["check", "met"], rows)] if rows else []


def span(values: list[float]) -> str:
    low, high = min(values), max(values)
    return number(low) if low == high else f"{number(low)}-{number(high)}"


# -- one renderer per benchmark: what it measures, then its tables --------------------------------


def claim(lines: list[Line]) -> list[str]:
    sqlite = [ln for ln in lines if ln.get("backend") == "sqlite" and "workers" in ln]
    postgres = [ln for ln in lines if ln.get("backend") == "postgres" and "workers" in ln]
    server = next((ln for ln in lines if "server_version" in ln), None)
    out = [
        "N spawned processes call `claim_next` on a board where every dependency is done "
        "(`ready`) and on one where about 40% of the todo tasks wait on an unfinished dependency "
        "(`mixed`). The ceiling is the raw single-row autocommit UPDATE rate of a copy of the same "
        "file, taken right before each run; CPU is the claiming processes' user + system time per "
        "claim, which moves far less with the machine's load than claims/s. The rows with a pause "
        "have each worker sleep 0-2x the `think_ms` between claims, as agents do.",
        "",
    ]
    if sqlite:
        out += table(
            ["board", "workers", "pause ms", "claims/s", "p50 ms", "p99 ms", "ratio to ceiling",
             "CPU us/claim", "failed", "double claims"],
            ([ln["board"], ln["workers"], ln.get("think_ms"), ln["claims_per_s"], ln["p50_ms"],
              ln["p99_ms"], ln.get("ratio"), ln["cpu_us_per_claim"], ln["failed"],
              ln["double_claims"]] for ln in sqlite),
        )  # fmt: skip
        ceilings = [ln["ceiling_commits_per_s"] for ln in sqlite if "ceiling_commits_per_s" in ln]
        if ceilings:
            out += [f"Ceiling in this run: {span(ceilings)} commits/s.", ""]
    if postgres:
        facts = (
            f" (PostgreSQL {server['server_version'].split()[0]}, synchronous_commit="
            f"{server['synchronous_commit']}, fsync={server['fsync']})"
            if server
            else ""
        )
        out += [f"The same boards and workers on PostgreSQL{facts}:", ""]
        out += table(
            ["board", "workers", "claims/s", "p50 ms", "p99 ms", "client CPU us/claim",
             "server CPU us/claim", "failed", "double claims"],
            ([ln["board"], ln["workers"], ln["claims_per_s"], ln["p50_ms"], ln["p99_ms"],
              ln.get("cpu_us_per_claim"), ln.get("server_cpu_us_per_claim"), ln["failed"],
              ln["double_claims"]] for ln in postgres),
        )  # fmt: skip
    return out + checks(lines)


def claim_floor(lines: list[Line]) -> list[str]:
    rows = [ln for ln in lines if "variant" in ln]
    server: dict[str, Any] = next(
        (ln["server"] for ln in lines if isinstance(ln.get("server"), dict)), {}
    )
    settings = ", ".join(f"{key}={value}" for key, value in server.items() if key != "server")
    out = [
        "The least a correct Postgres claim can cost on the same server, without the board: "
        "`floor` is one prepared statement in one round trip (the `SKIP LOCKED` pick, the guarded "
        "`UPDATE`, the event `INSERT`); `unprepared` plans it on every call; `notify` adds the "
        "board's NOTIFY; `board` is the board's own `claim_next`, for the ratio. Server CPU counts "
        "that cluster's processes only: the backends serving the claimers, and the server's own "
        "background processes (WAL writer, checkpointer, autovacuum), which work in lumps. Each "
        "variant runs in interleaved rounds; the targets are of the rounds' medians.",
        "",
    ]
    if settings:
        out += [f"Server: {settings}.", ""]
    out += table(
        ["claim", "workers", "round", "claims/s", "p50 ms", "p99 ms", "client CPU us/claim",
         "server CPU us/claim", "of it background", "double claims"],
        ([ln["variant"], ln["workers"], ln.get("round"), ln["claims_per_s"], ln["p50_ms"],
          ln["p99_ms"], ln["client_cpu_us_per_claim"], ln.get("server_cpu_us_per_claim"),
          ln.get("background_cpu_us_per_claim"), ln["double_claims"]]
         for ln in rows),
    )  # fmt: skip
    return out + checks(lines)


def claim_tail(lines: list[Line]) -> list[str]:
    out = [
        "A diagnostic, not a target: where the slow claims' time goes at many claiming "
        "processes. The writer turn is timed from outside the library; for the claims slower "
        "than the threshold, their time split into windows, how long their own process waited "
        "for a core, and what the holders of the turn were doing meanwhile.",
        "",
    ]
    for line in lines:
        out += [f"**{line.get('view', 'view')}** (pause {number(line.get('think_ms'))} ms, "
                f"pragma {line.get('pragma')}):", ""]  # fmt: skip
        out += figures({k: v for k, v in line.items() if k not in ("view", "think_ms", "pragma")})
    return out


def cli(lines: list[Line]) -> list[str]:
    calls = [ln for ln in lines if ln.get("measurement") == "cli_startup"]
    mcp = [ln for ln in lines if ln.get("measurement") == "mcp_startup"]
    out = [
        "Agents call the CLI in loops, so its start-up is part of every claim: each command is "
        "timed against a bare `python -c pass` in interleaved rounds, so a burst of load hits "
        "both alike. The ratio is the median's; the ratio of the minimums is the least noisy.",
        "",
    ]
    out += table(
        ["command", "median ms", "min ms", "ratio", "ratio of minimums", "within 3x", "CPU ms",
         "CPU ratio"],
        ([f"`{ln['process']}`", ln["median_ms"], ln["min_ms"], ln["ratio"],
          ln["ratio_of_minimums"], ln["within_3x"], ln.get("cpu_median_ms"),
          ln.get("cpu_ratio")] for ln in calls),
    )  # fmt: skip
    if any("instructions_ratio" in ln for ln in calls):
        out += table(
            ["command", "instructions (M)", "ratio"],
            ([f"`{ln['process']}`", ln.get("instructions_m"), ln.get("instructions_ratio")]
             for ln in calls),
        )  # fmt: skip
    if mcp:
        out += [
            "`kanban mcp` from spawn to its first `claim_next` result through the SDK's client, "
            "beside the SDK's own import (the floor of any server on it):",
            "",
        ]
        out += table(
            ["process", "median ms", "min ms", "CPU ms", "ratio"],
            ([f"`{ln['process']}`", ln["median_ms"], ln["min_ms"], ln["cpu_median_ms"],
              ln["ratio"]] for ln in mcp),
        )  # fmt: skip
    return out


def mcp_tools(lines: list[Line]) -> list[str]:
    sets = [ln for ln in lines if ln.get("measurement") == "mcp_tool_list"]
    tokenizer = next((ln["tokenizer"] for ln in sets), "ceil(utf8_bytes / 4)")
    out = [
        "What `kanban mcp`'s tool list costs a model's context, for each tool set a session may "
        "be started with (`kanban mcp --tools`): every tool's name, description and input schema "
        "as the SDK's client receives them, as compact JSON, against a 4,000-token budget. The "
        f"estimate is `{tokenizer}`; the exact cl100k_base and o200k_base counts (when the run "
        "had bpe-openai) calibrate it, as Claude's tokenizer is not public. The baseline is the "
        "same tools with the schemas pydantic generates, counted in the same run.",
        "",
    ]
    out += table(
        ["tool set", "tools", "chars", "tokens (estimate)", "with instructions", "cl100k_base",
         "o200k_base", "of budget", "within budget", "baseline tokens", "ratio to baseline"],
        ([ln["tool_set"], ln["tools"], ln["chars"], ln["approx_tokens"],
          ln["with_instructions_approx_tokens"], ln.get("cl100k_base_tokens"),
          ln.get("o200k_base_tokens"), ln["budget_ratio"], ln["within_budget"],
          ln["baseline_approx_tokens"], ln["ratio_to_baseline"]] for ln in sets),
    )  # fmt: skip
    return out


def http(lines: list[Line]) -> list[str]:
    claims = [ln for ln in lines if ln.get("measure") in ("claim_next", "ceiling")]
    reads = [ln for ln in lines if str(ln.get("measure", "")).startswith("GET")]
    out = [
        "Spawned httpx keep-alive clients call `POST /api/board/claim-next` on the real `kanban "
        "serve`, against the same number of processes calling the library's `claim_next` on a "
        "copy of the board in the same run; the ceiling rows serve the server's own answer to a "
        "claim (its body and headers, read off a claim on a copy of the board) from a bare ASGI "
        "app, the same app claiming a task with the store's own SQL first (BEGIN IMMEDIATE, the "
        "claim statement, the event, COMMIT: the least a server writing the claim can do) and a "
        "minimal FastAPI route to the same clients. Cores bound is cores / (server + "
        "client CPU per request): the rate the machine's CPU allows, which load moves far less "
        "than claims/s. The server and ceiling rows run in interleaved rounds; the targets take "
        "the rounds' medians.",
        "",
    ]

    def via(line: Line) -> str:
        if line["via"] == "library":
            return f"library, {line['workers']} processes"
        round_ = f" (round {line['round']})" if "round" in line else ""
        if line["via"] == "http":
            return (
                f"`kanban serve --workers {line['server_workers']}`, {line['clients']} clients"
                f"{round_}"
            )
        return f"ceiling: {line['via']}{round_}"

    out += table(
        ["via", "claims/s", "p50 ms", "p99 ms", "ratio to library", "server CPU ms/claim",
         "client CPU ms/request", "cores bound /s", "double claims", "5xx"],
        ([via(ln), ln.get("claims_per_s", ln.get("requests_per_s")), ln["p50_ms"], ln["p99_ms"],
          ln.get("ratio_to_library", 1 if ln["via"] == "library" else None),
          ln.get("server_cpu_ms_per_claim", ln.get("server_cpu_ms_per_request")),
          ln.get("client_cpu_ms_per_request"), ln.get("cores_bound_per_s"),
          ln.get("double_claims"), ln.get("status_5xx")] for ln in claims),
    )  # fmt: skip
    if reads:
        out += table(
            ["request", "tasks or files", "p50 ms", "p99 ms", "bytes"],
            ([f"`{ln['measure']}`", ln.get("listed", ln.get("files_changed")), ln["p50_ms"],
              ln["p99_ms"], ln.get("bytes")] for ln in reads),
        )  # fmt: skip
    return out + checks(lines)


def tui(lines: list[Line]) -> list[str]:
    out = [
        "The terminal board in a real pseudo-terminal, measured from outside as an operator runs "
        "it: first frame with the cards, peak memory, keystroke to frame while moving through "
        "the cards, and what one agent write costs on the wire; idle, it must write nothing. "
        "Boards of several sizes run back to back in each round (a larger one is a year of work: "
        "90% finished, over two years), and the summary compares the largest with the smallest "
        "of the same round; the load is the one-minute load average as each line was written.",
        "",
    ]
    boards = [line for line in lines if "summary" not in line]
    if len(boards) < 2:
        for line in boards:
            out += figures(line)
        return out + checks(lines)
    header = ["figure"] + [
        f"{number(line.get('tasks'))} tasks, round {line.get('round', 1)}" for line in boards
    ]
    keys = list(dict.fromkeys(key for line in boards for key, _ in flat(line)))
    values = [dict(flat(line)) for line in boards]
    rows = [["load", *(line.get("load") for line in boards)]]
    rows += [[key, *(value.get(key) for value in values)] for key in keys if key != "round"]
    out += table(header, rows)
    summaries = [line for line in lines if "summary" in line]
    if summaries:
        out += ["Each round's largest board against its smallest:", ""]
        skeys = [key for key, _ in flat(summaries[0]) if key not in ("summary", "round")]
        out += table(
            ["figure", *(f"round {line.get('round')}" for line in summaries)],
            [["load", *(line.get("load") for line in summaries)]]
            + [[key, *(dict(flat(line)).get(key) for line in summaries)] for key in skeys],
        )
    return out


def tui_drawer(lines: list[Line]) -> list[str]:
    out = [
        "The task drawer on a board with real git worktrees: opening it, the first screen of a "
        "small and of a 20,000-line diff, and scrolling the big one; a search on the big one "
        "(in process, and keystroke to `match 1/1` on screen); a 200,000-line diff's first "
        "screen, `G` to its last line and side by side; each beside a baseline measured in the "
        "same run (a cursor move on the board, the small diff). `huge` is the 200,000-line diff.",
        "",
    ]
    for line in lines:
        out += figures(line)
    return out


def tui_postgres(lines: list[Line]) -> list[str]:
    out = [
        "The same terminal board on a PostgreSQL board: the live view follows LISTEN/NOTIFY "
        "instead of the file's data_version.",
        "",
    ]
    for line in lines:
        out += figures(line)
    return out


def worktrees(lines: list[Line]) -> list[str]:
    out = [
        "Each worktree operation against the bare git work a provision cannot avoid (`git "
        "worktree add -b` and committing five files), alternated in the same repository.",
        "",
    ]
    return out + table(
        ["operation", "n", "p50 ms", "max ms", "ratio to raw git"],
        ([f"`{ln['op']}`", ln["n"], ln["p50_ms"], ln["max_ms"], ln.get("ratio")] for ln in lines),
    )  # fmt: skip


def stats(lines: list[Line]) -> list[str]:
    out = [
        "Each figure of `kanban stats` over the 24-hour window (and the whole call, for 24 hours "
        "and 7 days) on generated boards, against a `SELECT count(*)` of the table it reads in "
        "the same run; then the write path against its twin (a run's open and close with no "
        "budget, claims on the same file without the stats indexes).",
        "",
    ]
    reads = [ln for ln in lines if "ms" in ln]
    out += table(
        ["backend", "tasks", "events", "window", "figure", "ms", "max ms", "baseline", "ms",
         "ratio"],
        ([ln["backend"], ln["tasks"], ln["events"], ln["window"], f"`{ln['figure']}`", ln["ms"],
          ln["max_ms"], ln["baseline"], ln["baseline_ms"], ln["ratio"]] for ln in reads),
    )  # fmt: skip
    writes = [ln for ln in lines if "us" in ln]
    out += table(
        ["figure", "us", "baseline", "baseline us", "ratio"],
        ([ln["figure"], ln["us"], ln["baseline"], ln["baseline_us"], ln["ratio"]]
         for ln in writes),
    )  # fmt: skip
    loads = [ln for ln in lines if "s" in ln and "ms" not in ln]
    return out + table(
        ["backend", "tasks", "events", "step", "s"],
        ([ln["backend"], ln["tasks"], ln["events"], ln["figure"], ln["s"]] for ln in loads),
    )


def distance(lines: list[Line]) -> list[str]:
    rows = [ln for ln in lines if "workers" in ln]
    verbs = [ln for ln in lines if ln.get("via") == "postgres verbs"]
    out = [
        "Claimers at a network distance, on one machine: benchmarks/delay_proxy.py delays every "
        "byte by the one-way delay, each way. `postgres`: spawned processes run the board's "
        "`claim_next` with Postgres behind the proxy; `kanban serve`: the server is local to its "
        "board and httpx clients reach it through the proxy. The round trip is measured through "
        "the same proxy in the same run (`SELECT 1`, `GET /healthz`); flights per claim are the "
        "client-to-server chunks the proxy carried per claim (set-up included), which says how "
        "many round trips a claim takes whatever the machine's load. The ceilings, through the "
        "same proxy in the same run: `postgres floor` is benchmarks/claim_floor.py's floor "
        "statement (one prepared statement, one round trip, no board) and `bare asgi` a bare "
        "ASGI app answering a canned claim; what they take over the round trip is the machine's "
        "(clients, proxy and server queue for the same cores), so the board is held to its "
        "ceiling's p50 + 1.5 ms as well as to the round trip's.",
        "",
    ]
    out += table(
        ["via", "one-way ms", "workers", "round", "claims/s", "p50 ms", "p99 ms", "round trip ms",
         "flights/claim", "double claims"],
        ([ln["via"], ln["one_way_ms"], ln["workers"], ln.get("round"), ln["claims_per_s"],
          ln["p50_ms"], ln["p99_ms"], ln["round_trip_ms"], ln.get("flights_per_claim"),
          ln["double_claims"]]
         for ln in rows),
    )  # fmt: skip
    best: dict[tuple[str, float], float] = {}
    for ln in rows:
        if ln["via"] in ("postgres floor", "bare asgi"):  # ceilings carry no agent
            continue
        key = (ln["via"], ln["one_way_ms"])
        best[key] = max(best.get(key, 0.0), ln["claims_per_s"])
    if best:
        out += [
            "How many agents one server carries, from the best claims/s of each row above, for "
            "an agent making 4 lease calls a minute (a claim, two heartbeats, a complete: one "
            "task a minute); on this shared 2-core machine, a floor, not a forecast:",
            "",
        ]
        out += table(
            ["via", "one-way ms", "best claims/s", "agents per server"],
            ([via, delay, rate, int(rate * 15)] for (via, delay), rate in sorted(best.items())),
        )
    for line in verbs:
        out += [
            "Each lease verb through the largest delay, one process (p50, and p50 over the "
            "measured round trip: the round trips it takes):",
            "",
            *figures({k: v for k, v in line.items() if k != "via"}),
        ]
    return out + checks(lines)


def sse(lines: list[Line]) -> list[str]:
    fan = [ln for ln in lines if ln.get("part") == "fanout"]
    stalled = [ln for ln in lines if ln.get("part") == "stalled"]
    out = [
        "Many watchers on one `kanban serve`: SSE streams read by raw-socket reader processes "
        "while agents claim and complete through the same server; each event's delivery "
        "latency is its arrival at each subscriber minus its `createdAt`. One subscriber is the "
        "baseline, in the same run. Then streams that stop reading: the server's RSS against "
        "its RSS before, and whether it ended them (`--sse-send-timeout`).",
        "",
    ]
    if fan:
        out += table(
            ["subscribers", "agents", "events", "events/s", "deliveries", "missed", "p50 ms",
             "p99 ms", "max ms", "server CPU ms/event"],
            ([ln["subscribers"], ln["agents"], ln["events"], ln.get("events_per_s"),
              ln["deliveries"], ln["missed"], ln["p50_ms"], ln["p99_ms"], ln["max_ms"],
              ln.get("server_cpu_ms_per_event")] for ln in fan),
        )  # fmt: skip
    for line in stalled:
        out += figures({k: v for k, v in line.items() if k != "part"})
    return out + checks(lines)


def inbox(lines: list[Line]) -> list[str]:
    out = [
        "`Board.inbox()` with the same 100 items needing a person on ever larger boards, beside "
        "one task read by id and every task read, on the same file in the same run.",
        "",
    ]
    return out + table(
        ["tasks", "items", "inbox ms", "one task ms", "every task ms", "every task / inbox"],
        (
            [ln["tasks"], ln["items"], ln["inbox_ms"], ln["one_task_ms"], ln["every_task_ms"],
             round(ln["every_task_ms"] / ln["inbox_ms"])]
            for ln in lines
        ),
    )  # fmt: skip


def year(lines: list[Line]) -> list[str]:
    board = next(ln for ln in lines if ln["part"] == "board")
    out = [
        f"Reads no other benchmark times, on a year's board: {number(board['tasks'])} tasks, 81% "
        f"finished, over {board['teams']} teams, one in 50 with a budget. In process, CPU ms "
        "(the median of 20 calls; 5 for stats and drawing): a text search for a word no task "
        "holds, typed plainly (one LIKE pattern a column) and with a control picture (two), "
        "looked up in the full-text index first (a LIKE over every task before it: 16-34 ms, "
        "stop 55); a team's first task (`born`); the flow figures, the board's and one team's.",
        "",
    ]
    rows = []
    for ln in lines:
        if ln["part"] == "search":
            patterns = "1 pattern" if ln["patterns"] == 1 else f"{ln['patterns']} patterns"
            rows.append(["search", f"{ln['query']}, {patterns}", ln["cpu_ms"]])
        elif ln["part"] == "born":
            owner = "the board" if ln["team"] is None else "a team"
            what = f"{owner}: {number(ln['rows'])} rows, {ln['plan']}"
            rows.append(["born", what, ln["cpu_ms"]])
        elif ln["part"] == "stats":
            owner = "the board" if ln["team"] is None else "a team"
            rows.append(["stats", f"{ln['window']}, {owner}", ln["cpu_ms"]])
    out += table(["part", "read", "CPU ms"], rows)
    out.append(
        "`kanban budget show` with every budgeted task: the store's read and rich's drawing in "
        "process (CPU ms), and the whole command's CPU seconds beside `kanban --version`'s."
    )
    out.append("")
    for ln in lines:
        if ln["part"] == "budget show":
            out += figures({k: v for k, v in ln.items() if k != "part"})
    return out


def new_board(lines: list[Line]) -> list[str]:
    out = [
        "What a new PostgreSQL board costs (`kanban db init`, every `[postgres]` test), per "
        "board: `CREATE SCHEMA` on a connection of its own, `Board(url)` on the empty schema and "
        "`close()`, the made board opened again, and the baseline in the same run: the same "
        "schema sent one statement a round trip with the version bumped per migration, as "
        "opening did before. Round trips are the statements the server logged for one board.",
        "",
    ]
    return out + table(
        ["phase", "boards", "client CPU ms", "server CPU ms", "CPU ms", "wall ms",
         "round trips", "connections"],
        (
            [ln["phase"], ln["boards"], ln["client_cpu_ms"], ln["server_cpu_ms"], ln["cpu_ms"],
             ln["wall_ms"], ln.get("round_trips"), ln.get("connections")]
            for ln in lines
        ),
    )  # fmt: skip


def generic(lines: list[Line]) -> list[str]:
    out: list[str] = []
    for line in lines:
        out += figures(line)
    return out


# (file stem, title, renderer), in the page's order
BENCHMARKS: list[tuple[str, str, Callable[[list[Line]], list[str]]]] = [
    ("claim", "Claims", claim),
    ("claim_floor", "The floor of a Postgres claim", claim_floor),
    ("claim_tail", "Where slow claims wait", claim_tail),
    ("cli", "CLI and MCP start-up", cli),
    ("mcp_tools", "The MCP tool list", mcp_tools),
    ("http", "HTTP", http),
    ("tui", "The terminal board", tui),
    ("tui_drawer", "The task drawer", tui_drawer),
    ("tui_postgres", "The terminal board on PostgreSQL", tui_postgres),
    ("worktrees", "Worktrees", worktrees),
    ("land", "Landing", generic),
    ("stats", "The flow figures and budgets", stats),
    ("distance", "Claimers at a network distance", distance),
    ("sse", "Many watchers on one server", sse),
    ("inbox", "The inbox", inbox),
    ("year", "Reads at 100k tasks", year),
    ("new_board", "A new PostgreSQL board", new_board),
]


def read(path: Path) -> list[Line]:
    return [json.loads(text) for text in path.read_text().splitlines() if text.strip()]


def section(name: str, title: str, lines: list[Line], render: Callable[..., list[str]]) -> str:
    first = lines[0]
    loads = [float(ln["load"]) for ln in lines if "load" in ln]
    when = first["date"].replace("T", " ").replace("Z", " UTC")
    run = (
        f"Run {when} on {first['machine']}; load average {number(first['load_at_start'])} at the "
        f"start, {span(loads)} during. `{first['command']}`, kept in `{name}.jsonl`."
    )
    head = [f"## {title}", "", run, ""]
    if first.get("note"):
        head += [f"*{first['note']}*", ""]
    return "\n".join(head + render(lines)).rstrip() + "\n"


def render_page(results: Path) -> str:
    stored = {path.stem: path for path in sorted(results.glob("*.jsonl"))}
    known = {name for name, _, _ in BENCHMARKS}
    order = [entry for entry in BENCHMARKS if entry[0] in stored]
    order += [(name, name, generic) for name in sorted(stored) if name not in known]
    intro = [
        "# Benchmarks",
        "",
        "<!-- Written by python benchmarks/report.py from benchmarks/results/*.jsonl; "
        "do not edit. -->",
        "",
        "What the board costs, measured by the scripts in `benchmarks/`. Each prints one JSON "
        "line per figure, stamped with the run's date, machine, load and command, and compares "
        "itself with a baseline measured in the same run (a raw commit, a bare interpreter, a "
        "bare server, raw git), because wall-clock figures move with whatever else the machine "
        "runs and ratios and CPU per operation far less. Where even a ratio moved more between "
        "runs than its target's margin (the Postgres claim against its floor, `kanban serve` "
        "against a bare ASGI app), the script runs its rows in interleaved rounds (`--rounds`) "
        "and checks the rounds' median, each round's own ratio beside it. Benchmarks are never "
        "assertions in the tests. Run one with `--save` to keep its lines in "
        "`benchmarks/results/<name>.jsonl`, then `python benchmarks/report.py` to rewrite this "
        "page; a test fails when the page and the stored results disagree.",
        "",
        *(f"- [{title}](#{title.lower().replace(' ', '-')})" for _, title, _ in order),
        "",
    ]
    body = [section(name, title, read(stored[name]), render) for name, title, render in order]
    return "\n".join(intro) + "\n" + "\n".join(body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    args.out.write_text(render_page(args.results))
    print(f"wrote {args.out} from {args.results}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
