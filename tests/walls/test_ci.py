"""What the tools cannot check about CI itself: that it runs the README's test command, and that
constraints.txt pins every package the project names, inside the ranges pyproject.toml allows,
at the versions installed here (a venv made without the pins tests something CI does not)."""

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
MARK = "# tests:"


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt pins exact versions only: {line!r}"
            pins[_name(name)] = version.strip()
    return pins


def _declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    texts = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        texts += extra
    return [Requirement(text) for text in texts if not text.startswith("kanban[")]


def test_ci_runs_the_readme_test_command_exactly() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    command = ci[ci.index(MARK) + 1]
    assert "pytest" in command and "-c constraints.txt" in command and ".ci/walls" in command
    assert command in (ROOT / "README.md").read_text().splitlines(), (
        f"README.md must show CI's test command as it is: {command}"
    )


def test_every_declared_package_is_pinned_inside_its_range() -> None:
    pins = _pins()
    for requirement in _declared():
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = _name(requirement.name)
        assert name in pins, f"{name} is not in constraints.txt: run .ci/lock"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {name}=={pins[name]} outside {requirement}: run .ci/lock"
        )


def test_this_environment_has_the_pinned_versions() -> None:
    pins = _pins()
    installed = {_name(d.metadata["Name"]): d.version for d in metadata.distributions()}
    drifted = {
        name: f"{installed[name]} (pinned {version})"
        for name, version in pins.items()
        if name in installed and installed[name] != version
    }
    assert not drifted, (
        f"installed without the pins: {drifted}; pip install -c constraints.txt -e '.[dev]'"
    )
