"""The demo's plan: a small web-shop project of a few dozen tasks, shaped so a newcomer sees every
feature of the board within a minute.

Why generated rather than a fixed list: `--tasks N` scales it, and a seed makes it repeatable. The
shape stays the same at every size: a few high-priority foundation tasks everyone waits on, a web of
dependencies two or three deep, tasks for each role the running agents cover (and some for anyone),
and epics whose children carry a parent link and which themselves wait on those children.
"""

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from boardlib.board import PlanItem

from . import project

# The roles tasks are filed under; agents take them in this order (None: a generalist who claims
# anything). A task whose role no running agent covers is filed role-less, so it cannot starve.
BACKEND = "backend"
FRONTEND = "frontend"
DOCS = "docs"
AGENT_ROLES: tuple[str | None, ...] = (BACKEND, FRONTEND, None, DOCS)

_FOUNDATION: tuple[tuple[str, str | None], ...] = (
    ("Set up the repository and CI", None),
    ("Pick the component library", FRONTEND),  # research: the first work a reviewer judges
    ("Design the database schema", BACKEND),
    ("Write the contributor guide", DOCS),
)

_POOLS: dict[str | None, tuple[str, ...]] = {
    BACKEND: (
        "Add the orders API",
        "Add the payments webhook",
        "Rate-limit the public API",
        "Add login with magic links",
        "Cache product listings",
        "Queue outgoing emails",
        "Add audit logging",
        "Export orders as CSV",
        "Harden input validation",
        "Add inventory reservations",
        "Add the admin API",
        "Expire abandoned carts",
    ),
    FRONTEND: (
        "Build the product grid",
        "Build the cart drawer",
        "Add dark mode",
        "Make the header responsive",
        "Show the order history",
        "Add keyboard shortcuts",
        "Design the empty states",
        "Add toast notifications",
        "Build the account page",
        "Lazy-load product images",
    ),
    DOCS: (
        "Write the quick start",
        "Document the REST API",
        "Write the deployment guide",
        "Record the architecture decisions",
        "Write the troubleshooting page",
        "Draft the release notes",
    ),
    None: (
        "Fix the flaky checkout test",
        "Bump the dependencies",
        "Triage the open bug reports",
        "Add a smoke test for staging",
        "Profile the slow pages",
        "Tidy the logging output",
    ),
}

# (epic title, [(child title, role)]): the epic waits on its children, which name it as parent.
_EPICS: tuple[tuple[str, tuple[tuple[str, str | None], ...]], ...] = (
    (
        "Ship the checkout flow",
        (
            ("Checkout: cart API", BACKEND),
            ("Checkout: payment form", FRONTEND),
            ("Checkout: receipt emails", BACKEND),
            ("Checkout: user guide", DOCS),
        ),
    ),
    (
        "Launch product search",
        (
            ("Search: index the catalogue", BACKEND),
            ("Search: the search box", FRONTEND),
            ("Search: ranking tweaks", BACKEND),
        ),
    ),
)

MIN_TASKS_FOR_EPIC = (12, 24)

# Work that changes no files (kind `research`: no worktree): it goes to review, where a peer or
# the lead judges it. Everything else is code, built in a worktree and judged by the gate.
RESEARCH = "research"
_RESEARCH_TITLES = frozenset(
    {
        "Pick the component library",
        "Triage the open bug reports",
        "Profile the slow pages",
        "Record the architecture decisions",
        *(epic for epic, _children in _EPICS),
    }
)


def _shaped(item: PlanItem) -> PlanItem:
    """The item's kind and its Markdown description (what the drawer's Overview renders)."""
    base = item.title.split(" (part ")[0]
    research = base in _RESEARCH_TITLES
    text = project.description(item.title, research=research)
    return replace(
        item,
        kind=RESEARCH if research else "code",
        description=f"{item.description}\n\n{text}" if item.description else text,
    )  # the first epic from 12 tasks, the second from 24


@dataclass(frozen=True, slots=True)
class DemoPlan:
    """The items to create in one `create_plan`, and the epic -> child links to add right after
    (an epic cannot wait on its own children inside the plan: parent links order creation)."""

    items: tuple[PlanItem, ...]
    epic_links: tuple[tuple[str, str], ...]  # (epic key, child key)


def covered_roles(agent_roles: Sequence[str | None]) -> frozenset[str | None]:
    """Roles some agent will claim: every role when a generalist runs, else the agents' own."""
    if None in agent_roles:
        return frozenset(AGENT_ROLES)
    return frozenset({*agent_roles, None})


def build_plan(tasks: int, agent_roles: Sequence[str | None], rng: random.Random) -> DemoPlan:
    """A plan of exactly `tasks` items for agents of `agent_roles`."""
    covered = covered_roles(agent_roles)

    def role(wanted: str | None) -> str | None:
        return wanted if wanted in covered else None

    items: list[PlanItem] = []
    links: list[tuple[str, str]] = []
    counts: dict[str | None, int] = {}

    def title_for(wanted: str | None) -> str:
        pool = _POOLS[wanted]
        n = counts.get(wanted, 0)
        counts[wanted] = n + 1
        base = pool[n % len(pool)]
        return base if n < len(pool) else f"{base} (part {n // len(pool) + 1})"

    foundation = [f"f{i}" for i in range(min(len(_FOUNDATION), max(1, tasks // 8)))]
    for key, (title, wanted) in zip(foundation, _FOUNDATION, strict=False):
        items.append(
            PlanItem(
                key=key,
                title=title,
                role=role(wanted),
                priority=3,
                description="Foundation work: most of the plan waits on this.",
            )
        )

    epics = [epic for epic, floor in zip(_EPICS, MIN_TASKS_FOR_EPIC, strict=True) if tasks >= floor]
    epic_size = sum(1 + len(children) for _, children in epics)
    for e, (epic_title, children) in enumerate(epics):
        epic_key = f"e{e}"
        items.append(
            PlanItem(
                key=epic_key,
                title=epic_title,
                role=None,
                priority=2,
                description="An epic: ready once all of its child tasks are done.",
            )
        )
        for c, (child_title, wanted) in enumerate(children):
            child_key = f"e{e}c{c}"
            items.append(
                PlanItem(
                    key=child_key,
                    title=child_title,
                    role=role(wanted),
                    priority=2,
                    parent=epic_key,
                    depends_on=(rng.choice(foundation),),
                    description=f"Part of the epic '{epic_title}'.",
                )
            )
            links.append((epic_key, child_key))

    weights = {BACKEND: 5, FRONTEND: 4, DOCS: 2, None: 2}
    choices = list(weights)
    general: list[str] = []
    for i in range(max(0, tasks - len(foundation) - epic_size)):
        wanted = rng.choices(choices, weights=[weights[r] for r in choices])[0]
        key = f"t{i}"
        earlier = general[-8:] or foundation
        deps = set(rng.sample(earlier, k=min(len(earlier), rng.choice((1, 1, 2)))))
        if len(general) < 3:
            deps = {rng.choice(foundation)}
        items.append(
            PlanItem(
                key=key,
                title=title_for(wanted),
                role=role(wanted),
                priority=rng.choice((0, 1, 1, 2)) if wanted != DOCS else rng.choice((0, 1)),
                depends_on=tuple(sorted(deps)),
            )
        )
        general.append(key)
    assert len(items) == tasks, (len(items), tasks)
    return DemoPlan(items=tuple(_shaped(item) for item in items), epic_links=tuple(links))
