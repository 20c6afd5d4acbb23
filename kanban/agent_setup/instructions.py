"""The agent instructions `kanban init` writes into AGENTS.md (and points CLAUDE.md at).

Every number and name in them comes from a declaration the CLI or the MCP server uses, so the
text cannot drift from what the board does: the exit codes and their meanings
(`kanban.cli.exitcodes`), each refusal reason (`boardlib.errors.Reason`) with the next step the
MCP server gives for it (`kanban.mcp.hints`, in CLI words), the lease and how often to renew it
(`boardlib.config`, `kanban.mcp.catalog`), and the tools of the configured tool set.

The shell commands are written to run as they stand, against this board, under this agent's
name: a test extracts them and runs them.
"""

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, replace

from boardlib.attention import APPROVE, REVIEW, UNLANDED
from boardlib.attention import LAND as LAND_ACTION
from boardlib.errors import Reason
from kanban.cli import exitcodes
from kanban.mcp.catalog import TOOL_SETS, minutes_text, renew_every_ms
from kanban.mcp.hints import CLI_VERBS, hint_for

from .harnesses import HARNESSES


@dataclass(frozen=True)
class Briefing:
    """What the instructions are about: the board, who the agent is, and how it is served."""

    board: str  # the location as the configs carry it (an absolute path or a URL)
    agent: str
    role: str | None
    tool_set: str
    lease_ms: int
    settings: Mapping[str, str]  # board settings that differ from the defaults (KANBAN_*)
    command: str = "kanban"  # how to start kanban here: "kanban" when PATH finds it, else a path
    per_session: bool = False  # each session as AGENT-PID (`kanban init --per-session`)

    def environment(self) -> dict[str, str]:
        """The variables a process needs to act on this board as this agent (per session, the
        MCP server adds its session's suffix: `kanban mcp --per-session`)."""
        return {"KANBAN_DB": self.board, "KANBAN_AGENT": self.agent, **self.settings}


@dataclass(frozen=True)
class Identity:
    """Who a runtime set up in this repository acts as: its MCP entry's agent, role, tool set."""

    agent: str
    role: str | None
    tool_set: str

    @classmethod
    def of(cls, briefing: Briefing) -> "Identity":
        return cls(briefing.agent, briefing.role, briefing.tool_set)


# The runtimes the block speaks for, kept in the block itself (one JSON line in a comment) so an
# init for one runtime keeps what the others were told: AGENTS.md is read by every runtime. A
# CRLF file's line ends in `\r` before `$` (each init forgot the other runtimes).
_RUNTIMES = re.compile(r"^<!-- kanban:runtimes (\{.*\}) -->\r?$", re.MULTILINE)


def runtimes_line(runtimes: Mapping[str, Identity]) -> str:
    document = {
        harness: {"agent": who.agent, "role": who.role, "tools": who.tool_set}
        for harness, who in runtimes.items()
    }
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=True)
    text = text.replace(">", "\\u003e")  # still JSON, and never the comment's end
    return f"<!-- kanban:runtimes {text} -->"


def read_runtimes(body: str) -> dict[str, Identity]:
    """The runtimes an earlier block recorded; none from a block that recorded none (or that
    cannot be read: this run's runtime is then the only one said)."""
    found = _RUNTIMES.search(body)
    if found is None:
        return {}
    try:
        document = json.loads(found.group(1))
        return {
            str(harness): Identity(str(who["agent"]), who["role"], str(who["tools"]))
            for harness, who in document.items()
            if harness in HARNESSES
            and who["tools"] in TOOL_SETS  # a set this kanban no longer has is not said
            and (who["role"] is None or isinstance(who["role"], str))
        }
    except (ValueError, TypeError, KeyError, AttributeError):
        return {}


# A shell's session name (`boardlib.actors.session_agent`): the agent's name, `-` and the
# runtime's process id, the shell's parent, as the MCP server's is. Each session of a runtime then
# acts under a name of its own, its shell commands and its MCP server under the same one; under the
# runtime's one name, two sessions could not judge each other's work (self_review).
SESSION_SUFFIX = "-$PPID"


def session_name(agent: str) -> str:
    """`agent`'s session name as a shell word."""
    return shlex.quote(agent) + SESSION_SUFFIX


def agent_word(agent: str, briefing: Briefing) -> str:
    """`agent` as the shell lines name it: per session, with the session's suffix."""
    return session_name(agent) if briefing.per_session else shlex.quote(agent)


def export_line(briefing: Briefing) -> str:
    words = [
        f"{key}={agent_word(value, briefing) if key == 'KANBAN_AGENT' else shlex.quote(value)}"
        for key, value in briefing.environment().items()
    ]
    said = "   # -$PPID: a name of this session's own" if briefing.per_session else ""
    return "export " + " ".join(words) + said


def _role(briefing: Briefing) -> str:
    return f" --role {shlex.quote(briefing.role)}" if briefing.role else ""


def path_line(briefing: Briefing) -> list[str]:
    """When PATH may not find this kanban, a shell function that does (as the MCP config
    names it by path)."""
    if briefing.command == "kanban":
        return []
    return [f'kanban() {{ {shlex.quote(briefing.command)} "$@"; }}   # PATH may not find kanban']


def other_runtimes_lines(others: Mapping[str, Identity], first: Briefing) -> list[str]:
    """After the export line, a comment for each other runtime: the name it acts under."""
    lines = []
    for label, who in others.items():
        said = f"# in {label} instead: KANBAN_AGENT={agent_word(who.agent, first)}"
        if who.role != first.role:
            said += f", claim-next --role {shlex.quote(who.role)}" if who.role else ", no --role"
        lines.append(said)
    return lines


def work_commands(briefing: Briefing, others: Mapping[str, Identity] | None = None) -> list[str]:
    """The worker's loop, one command a line: claim, renew twice over, finish."""
    return [
        *path_line(briefing),
        export_line(briefing),
        *other_runtimes_lines(others or {}, briefing),
        f"claim=$(kanban task claim-next{_role(briefing)})"
        "   # the task as JSON; exit 3: nothing to claim",
        "id=$(printf '%s' \"$claim\" | jq -r .id)",
        "epoch=$(printf '%s' \"$claim\" | jq -r .claimEpoch)",
        'kanban task log-progress "$id" --epoch "$epoch" --note "what you did"'
        "   # renews the lease",
        'kanban task heartbeat "$id" --epoch "$epoch"   # renews it without a note',
        'kanban task complete "$id" --epoch "$epoch" --summary "what changed, how to check it"',
    ]


def review_commands(briefing: Briefing, others: Mapping[str, Identity] | None = None) -> list[str]:
    """The reviewer's loop, for work another agent did. It starts from the inbox, as the MCP
    steps do: a code task that passed its gate is done, not in review, and waits there to be
    landed (the shell steps looked only at in_review). The task and its verb come from the inbox
    item too (the id was still taken from in_review, so a gate-passed task was never reached and
    `approve` was its wrong verb)."""
    return [
        *path_line(briefing),
        export_line(briefing),
        *other_runtimes_lines(others or {}, briefing),
        f"{INBOX}   # what waits: review (approve) and unlanded (land)",
        f"item=$({PICK})   # the oldest work to judge (--as leaves out yours: self_review)",
        "id=$(printf '%s' \"$item\" | jq -r .taskId)",
        "action=$(printf '%s' \"$item\" | jq -r .action)"
        f"   # {APPROVE} (in review) or {LAND_ACTION} (done by its gate)",
        'kanban task view "$id"   # the task with its comments, dependencies, runs and worktree',
        'kanban task "$action" "$id"   # approve: done; land: approves if need be, then lands',
    ]


# A code task's own checkout: where its files are changed, the handoff that names the command
# judging them, and the complete that runs it. Without the handoff step the gate found no command
# in a scaffolded worktree (init.sh's VERIFY_CMD is empty unless an operator set one) and blocked
# every shell agent's first code task for an operator. A fail gives the task back under a new epoch,
# which the block says (the next call with the old one was refused stale_claim, whose hint says to
# stop work on the task).
WORKTREE_COMMANDS = [
    'ws=$(kanban task workspace provision "$id" --epoch "$epoch" --repo .)   # from this root',
    'cd "$(printf \'%s\' "$ws" | jq -r .worktree.worktreePath)"   # change and commit files here',
    "verify='make test'   # put this project's own test command here (pytest -q, npm test...)",
    'kanban task workspace handoff "$id" --epoch "$epoch" --template'
    ' | jq --arg verify "$verify" \'.runtime = "shell" | .commands.verify = $verify\''
    ' | kanban task workspace handoff "$id" --epoch "$epoch" --file -   # the gate runs it',
    'kanban task workspace complete "$id" --epoch "$epoch" --summary "what changed"'
    "   # a fail: a new claimEpoch",
]

# The commands the bullets name inline, each in backticks: the extend, block, release and
# explain steps of the loop and the reviewer's reject and land.
EXTEND = 'kanban task extend-lease "$id" --epoch "$epoch" --minutes 60'
BLOCK = 'kanban task block "$id" --epoch "$epoch" --reason "what would unblock it"'
RELEASE = 'kanban task release "$id" --epoch "$epoch"'
REJECT = 'kanban task reject "$id" --reason "what must change"'
LAND = 'kanban task land "$id"'
# Read as this agent (`--as`): its own work, which it may not judge, is left out, so taking the
# oldest item never picks it again and again (the reviewer's step looped on its own work, refused
# self_review each time, and judged nothing else).
INBOX = "kanban inbox --as \"$KANBAN_AGENT\" | jq -c '.items[] | {kind, taskId, action, why}'"
# The inbox items a judge acts on with a CLI verb of the same name: work in review to approve,
# and done work in a worktree to land (an operator's items, an override or an unblock, are not).
PICK = (
    'kanban inbox --as "$KANBAN_AGENT" | jq -c \'first(.items[] | select('
    f'(.kind == "{REVIEW}" and .action == "{APPROVE}") or .kind == "{UNLANDED}"'
    "))'"
)
# A restarted shell has lost `$epoch`: the held task gives it back.
RESUME_EPOCH = 'epoch=$(kanban task get "$id" | jq -r .claimEpoch)'


def explain_command(briefing: Briefing) -> str:
    return f"kanban task claim-next{_role(briefing)} --explain"


def _fence(lines: list[str]) -> str:
    return "```sh\n" + "\n".join(lines) + "\n```"


def _tools(tool_set: str) -> str:
    return f"tool set `{tool_set}` ({len(TOOL_SETS[tool_set])} tools)"


def _mcp_steps(tool_sets: set[str]) -> list[str]:
    """How to go about the work with the tools of `tool_sets`: a worker's loop, a judge's, or
    both."""
    steps = []
    if any("claim_next" in TOOL_SETS[tool_set] for tool_set in tool_sets):
        steps.append(
            "`claim_next`, then `log_progress` as you go (it renews the lease), `complete_task` "
            "with a summary; the server keeps your claim epoch and quotes it for you. A code "
            "task: `provision_workspace` with this repository's path, change files under its "
            "`worktree.worktreePath`, `write_handoff` with `commands.verify`, then "
            "`complete_workspace` (the gate below)."
        )
    if any("land_task" in TOOL_SETS[tool_set] for tool_set in tool_sets):
        # A code task that passes its gate is done, not in review: it waits in the inbox.
        steps.append(
            "Judging others' work: `inbox` lists what waits (work in review, and code that "
            "passed its gate but has not landed); `get_task` with detail; a task with a "
            "worktree: `preview_landing`, then `land_task` (it approves and lands); other work: "
            "`approve_task`, or `reject_task` saying what must change."
        )
    return steps


# What the `-PID` of a session's name is, said once in the MCP paragraph.
_PID = (
    "PID your runtime's process id (each session a name of its own, so one session may judge "
    "another's work; your shell's `$PPID`)"
)


def _runtime(label: str, who: Identity, suffix: str) -> str:
    role = f" (role `{who.role}`)" if who.role else ""
    return f"in {label} as `{who.agent}{suffix}`{role} with {_tools(who.tool_set)}"


def _mcp_paragraph(briefing: Briefing, runtimes: Mapping[str, Identity] | None = None) -> str:
    """What the MCP server does for the agent: as whom, with which tools, how to go about it.
    With runtimes acting under different names, each is said by its label; when their tool sets
    call for different steps, each runtime's steps are its own line (a worker runtime read the
    reviewer's steps in the same sentence as its own)."""
    refusal = "A refusal is a tool error: `reason: message`, then `Next:` what to do."
    suffix, pid = ("-PID", f", {_PID}") if briefing.per_session else ("", "")
    several = runtimes is not None and len(set(runtimes.values())) > 1
    if runtimes and several:
        steps = {label: _mcp_steps({who.tool_set}) for label, who in runtimes.items()}
        if len({tuple(said) for said in steps.values()}) > 1:
            lines = [
                f"- {_runtime(label, who, suffix)}: {' '.join(steps[label])}"
                for label, who in runtimes.items()
            ]
            return "\n".join(
                [
                    f"Over MCP, the `kanban` server acts under each runtime's own name{pid}; "
                    f"each runtime follows its own line below. {refusal}",
                    *lines,
                ]
            )
        each = "; ".join(_runtime(label, who, suffix) for label, who in runtimes.items())
        who_and_tools = f"acts under each runtime's own name{pid}: {each}."
        sets = {who.tool_set for who in runtimes.values()}
    else:
        who_and_tools = (
            f"acts as agent `{briefing.agent}{suffix}` with {_tools(briefing.tool_set)}{pid}:"
        )
        sets = {briefing.tool_set}
    return f"Over MCP, the `kanban` server {who_and_tools} {' '.join(_mcp_steps(sets))} {refusal}"


def _exit_codes() -> str:
    return "Exit codes: " + "; ".join(
        f"{code} {meaning}" for code, meaning in exitcodes.MEANINGS.items()
    )


def _reasons() -> list[str]:
    lines = []
    for reason in Reason:
        code = exitcodes.refusal_code(reason.value)
        exit_note = "" if code == exitcodes.REFUSED else f" (exit {code})"
        lines.append(f"- `{reason.value}`{exit_note}: {hint_for(reason.value, CLI_VERBS)}")
    return lines


def agents_block(briefing: Briefing, runtimes: Mapping[str, Identity] | None = None) -> str:
    """The body of the marked block in AGENTS.md (Markdown, ending in a newline). `runtimes`, by
    harness in a fixed order, are the runtimes set up in this repository (this one among them):
    when they act under different names, the block says each one's, whichever init ran last,
    and the shell commands are written for the first."""
    recorded = runtimes_line(runtimes) if runtimes else None
    labelled = {HARNESSES[name].label: who for name, who in (runtimes or {}).items()}
    several = len(set(labelled.values())) > 1
    others: dict[str, Identity] = {}
    if several:
        first = next(iter(labelled.values()))
        briefing = replace(briefing, agent=first.agent, role=first.role, tool_set=first.tool_set)
        others = dict(list(labelled.items())[1:])
        shell = (
            "From a shell, the same board, each runtime under its own name (the export line is "
            f"for {next(iter(labelled))}; the comments under it say the others'). Each command "
            "prints one JSON document:"
        )
    else:
        shell = (
            "From a shell, the same board under the same name"
            + (", your session's" if briefing.per_session else "")
            + " (each command prints one JSON document):"
        )
    lease = minutes_text(briefing.lease_ms)
    renew = minutes_text(renew_every_ms(briefing.lease_ms))
    refused = exitcodes.REFUSED
    sections = [
        "## The task board (kanban)",
        "Work in this project is shared on a kanban board. Claim a task before you work on it, "
        "keep its lease alive while you work, and finish it into review, where another agent "
        "or a person judges it. Never approve your own work.",
        _mcp_paragraph(briefing, labelled if several else None),
        shell,
        _fence(work_commands(briefing, others)),
        "\n".join(
            [
                f"- **Lease:** a claim holds the task for {lease}. Renew it at least every "
                f"{renew} (`log-progress` or `heartbeat`); before one long quiet step, "
                f"`{EXTEND}`. A lapsed lease gives the task to someone else.",
                "- **Epoch:** pass the claim's `claimEpoch` as `--epoch` on every call about a "
                "task you hold. `stale_claim` means your claim is gone: stop work on it and "
                "claim again; unless it says `heldByYou`: you hold the task under a newer "
                "epoch, its `currentEpoch`, so use that one and go on.",
                f"- **Stuck:** `{BLOCK}`; to give it back untouched, `{RELEASE}`.",
                f"- **Nothing to claim** (exit {exitcodes.IDLE}): `{explain_command(briefing)}` "
                "says why. If the answer lists `heldByYou`, those tasks are still yours (claimed "
                f"before a restart): go on with them, each `id` with its epoch, `{RESUME_EPOCH}`.",
            ]
        ),
        "A code task is worked in a git worktree of its own, never in this checkout: provision "
        "it once claimed, change files there, write the handoff with the command that checks "
        "them (`commands.verify`), and finish with the workspace's complete (the plain one is "
        f"refused, `{Reason.GATE_REQUIRED.value}`): it commits the work and runs the verify "
        "command (the handoff's "
        "`commands.verify`, else `VERIFY_CMD` in the worktree's `init.sh`). A pass is done, to "
        "be landed by another; a fail comes back to you with its output and a new epoch, the "
        f"answer's `claimEpoch`: quote it from then on (`{RESUME_EPOCH}` reads it again), as "
        "the old one is refused, `stale_claim`; no verify command blocks it for an operator.",
        _fence(WORKTREE_COMMANDS),
        "Reviewing work other agents finished (whoever held a task cannot judge it):",
        _fence(review_commands(briefing, others)),
        f"or send it back to todo: `{REJECT}`. A task with a worktree (in review, or an "
        f"`unlanded` item: done by its gate, not landed): `{LAND}` approves it if need be and "
        "lands its work on its base branch, verified on the merged tree first (`--dry-run` "
        "says whether it would).",
        _exit_codes() + ".",
        f'A refusal is one JSON line on stderr, `{{"error": ..., "reason": ...}}`, exit '
        f"{refused} unless noted. What each reason means for you:",
        "\n".join(_reasons()),
    ]
    if recorded is not None:
        sections.append(recorded)
    return "\n\n".join(sections) + "\n"


CLAUDE_IMPORT = "@AGENTS.md"


def claude_block() -> str:
    """The body of the marked block in CLAUDE.md: Claude Code reads CLAUDE.md, not AGENTS.md,
    and imports another file with `@path` (its documented way to share AGENTS.md)."""
    return f"The task board's protocol for agents is in AGENTS.md:\n\n{CLAUDE_IMPORT}\n"
