"""snake_case in Python and SQL, camelCase in JSON: the one conversion every surface uses."""


def camel(name: str) -> str:
    """`assignee_agent_id` -> `assigneeAgentId`."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def snake(key: str) -> str:
    """`assigneeAgentId` -> `assignee_agent_id`: `camel` undone, for names `camel` made."""
    return "".join(f"_{char.lower()}" if char.isupper() else char for char in key)
