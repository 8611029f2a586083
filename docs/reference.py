"""The generated parts of docs/*.md, written by cog (`scripts/docs`; `scripts/docs --check` in the unit tests).

Each page holds `<!-- [[[cog ... ]]] -->` blocks that call one function here; cog writes what it returns
between the block and its `<!-- [[[end]]] -->`. The text comes from the code itself: the CLI's `--help`, the
service's OpenAPI schema, the modules' docstrings and `indexer/errors.py`, so a page cannot drift from it.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The width the help is rendered at: wide enough for the option tables, fixed so the page is the same
# wherever it is generated.
HELP_WIDTH = 100
# What else Rich reads from the environment to style or size help: none of it may change the page.
HELP_ENV: dict[str, str | None] = {
    "COLUMNS": str(HELP_WIDTH),
    "TERMINAL_WIDTH": None,
    "FORCE_COLOR": None,
    "PY_COLORS": None,
    "GITHUB_ACTIONS": None,
    "NO_COLOR": "1",
}


def _commands() -> list[tuple[str, Any]]:
    """Every command and group of `lawindex` as (its words after `lawindex`, the click command), in the
    order `lawindex --help` lists them, each group before its commands."""
    import typer.main

    from indexer.cli import app

    found: list[tuple[str, Any]] = []

    def walk(prefix: str, command: Any) -> None:
        found.append((prefix, command))
        for name, sub in getattr(command, "commands", {}).items():
            walk(f"{prefix} {name}".strip(), sub)

    walk("", typer.main.get_command(app))
    return found


def cli_help() -> str:
    """`lawindex [COMMAND] --help` of every command and group, each under its own heading."""
    from typer.testing import CliRunner

    from indexer.cli import app

    runner = CliRunner()
    parts = []
    for words, _ in _commands():
        args = [*words.split(), "--help"]
        done = runner.invoke(app, args, prog_name="lawindex", env=HELP_ENV)
        assert done.exit_code == 0, (args, done.output)
        text = "\n".join(line.rstrip() for line in done.output.strip("\n").splitlines()).strip("\n")
        title = f"lawindex {words}".strip()
        parts.append(f"### `{title}`\n\n```text\n{text}\n```\n")
    return "\n".join(parts)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def endpoints() -> str:
    """The service's endpoints from its OpenAPI schema (`create_app().openapi()`): method, path, summary,
    parameters, the body it takes, and every status it can answer with its schema."""
    from indexer.opensearch.cluster.connection import Connection
    from indexer.service.routes import create_app

    schema = create_app(Connection()).openapi()

    def ref(content: dict[str, Any]) -> str:
        body = content.get("application/json", {}).get("schema", {})
        name = body.get("$ref", "").rsplit("/", 1)[-1]
        return f"`{name}`" if name else ""

    parts = [f"{schema['info']['title']} {schema['info']['version']}: {schema['info'].get('summary', '')}\n"]
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            parts.append(f"### `{method.upper()} {path}`\n\n{operation.get('summary', '')}\n")
            parameters = operation.get("parameters", [])
            if parameters:
                rows = ["| parameter | in | required | default | what |", "| --- | --- | --- | --- | --- |"]
                for parameter in parameters:
                    default = parameter.get("schema", {}).get("default")
                    rows.append(
                        f"| `{parameter['name']}` | {parameter['in']} | {'yes' if parameter.get('required') else 'no'} "
                        f"| {'' if default is None else f'`{default}`'} | {_cell(parameter.get('description', ''))} |"
                    )
                parts.append("\n".join(rows) + "\n")
            if "requestBody" in operation:
                parts.append(f"Body: {ref(operation['requestBody'].get('content', {}))} (JSON).\n")
            rows = ["| status | what | body |", "| --- | --- | --- |"]
            for status, response in operation.get("responses", {}).items():
                rows.append(
                    f"| {status} | {_cell(response.get('description', ''))} | {ref(response.get('content', {}))} |"
                )
            parts.append("\n".join(rows) + "\n")
    names = sorted(schema.get("components", {}).get("schemas", {}))
    parts.append("Schemas (in `/openapi.json`): " + ", ".join(f"`{name}`" for name in names) + ".\n")
    return "\n".join(parts)


def _first_line(path: Path) -> str:
    """The first line (sentence, up to its first blank line) of the module docstring of `path`."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    paragraph = docstring.split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def modules() -> str:
    """A table per package of `indexer/`: each module and the first paragraph of its docstring."""
    package = ROOT / "indexer"
    parts = []
    packages = [package, *sorted(p.parent for p in package.rglob("*/__init__.py"))]
    for folder in packages:
        name = folder.relative_to(ROOT).as_posix()
        rows = [
            f"#### `{name}/`\n",
            f"{_first_line(folder / '__init__.py')}\n",
            "| module | what it owns |",
            "| --- | --- |",
        ]
        for path in sorted(folder.glob("*.py")):
            if path.name == "__init__.py":
                continue
            rows.append(f"| `{path.relative_to(ROOT).as_posix()}` | {_cell(_first_line(path))} |")
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


def exit_codes() -> str:
    """Every error of `indexer/errors.py` by exit code: its class, the HTTP status `lawindex serve` answers it with,
    its parent, and its docstring."""
    from indexer import errors

    classes = [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, errors.LawindexError) and value.__module__ == errors.__name__
    ]
    rows = ["| exit | error | HTTP | is a | what |", "| --- | --- | --- | --- | --- |"]
    for error in sorted(classes, key=lambda c: (c.exit_code, len(c.__mro__), c.__name__)):
        parents = ", ".join(f"`{base.__name__}`" for base in error.__bases__ if base is not Exception)
        rows.append(
            f"| {error.exit_code} | `{error.__name__}` | {errors.http_status(error)} | {parents} | "
            f"{_cell(' '.join((error.__doc__ or '').split()))} |"
        )
    return "\n".join(rows) + "\n"


def out(text: str) -> None:
    """Write `text` as the generated part of the block cog is running."""
    import cog  # type: ignore[import-not-found]  # cogapp's module, present while cog runs a page

    cog.out("\n" + text.strip("\n") + "\n\n")
