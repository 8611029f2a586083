"""The `lawindex` command: thin, every command a call into the library.

Command modules import the library inside their functions, so `lawindex --help` stays fast. They do
not use `from __future__ import annotations`: typer reads every command's parameters at every start, and
string annotations it compiles and evaluates four times each (340 compiles, a twentieth of the start);
names imported only for the type checker are quoted instead.
"""

from __future__ import annotations

import gc
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

__all__ = ["app", "main"]


def _app() -> typer.Typer:
    """The application with every command added (each module adds its own when imported)."""
    from indexer.cli import ask, eval, history, load, node, plugin, serve, verify  # noqa: F401
    from indexer.cli.application import app

    if not getattr(app, "_lawindex_literal_help", False):
        _literal_help(app)
        app._lawindex_literal_help = True  # type: ignore[attr-defined]
    return app


def __getattr__(name: str) -> typer.Typer:
    """`from indexer.cli import app`: the whole application, imported on first use, without main()'s
    settings of the process (tests and other programs keep their own)."""
    if name == "app":
        return _app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _literal_help(typer_app: typer.Typer, seen: set[int] | None = None) -> None:
    """Every help text of `typer_app`'s commands and options made literal, once, where they are registered.

    Typer renders help as Rich markup, in which `[default: 120]` or `[env: LAWINDEX_TIMEOUT; default 10]`
    is a style tag and vanishes: `load --help` read "Replicas of each new index ." and `--url` lost its
    default. No help here is meant as markup, so each is escaped (`\\[`) and shows as written: once, though an
    option is shared by commands of several groups (`seen`, the options escaped so far)."""
    import inspect
    import typing

    from rich.markup import escape
    from typer.models import ParameterInfo

    seen = set() if seen is None else seen
    for command in typer_app.registered_commands:
        if command.callback is None:
            continue
        if command.help is None:
            command.help = escape(inspect.getdoc(command.callback) or "")
        hints = typing.get_type_hints(command.callback, include_extras=True)
        defaults = [p.default for p in inspect.signature(command.callback).parameters.values()]
        metadata = [m for hint in hints.values() for m in getattr(hint, "__metadata__", ())]
        for info in (*metadata, *defaults):
            if isinstance(info, ParameterInfo) and info.help and id(info) not in seen:
                seen.add(id(info))
                info.help = escape(info.help)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _literal_help(group.typer_instance, seen)


def main() -> None:
    """Entry point of the console script. A standard output that cannot be written (a closed pipe, a full
    disk) ends the command quietly, with a non-zero exit: 141 for a closed pipe, 1 and one line otherwise."""
    import sys

    # numpy's OpenBLAS starts a thread per core when numpy is imported, and that thread spins for a while
    # before it sleeps: 40 ms of CPU for nothing (lawindex multiplies no matrices), taken on a busy 2-core
    # machine from the command itself. One thread, unless the environment says otherwise.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # A command is a short process whose objects nearly all live until it ends: its imports make some
    # 40,000 (typer, pydantic, numpy), a state's laws and statistics 40,000 more, and almost none of them
    # is garbage. At the default threshold (700) the collector walked them 130 times, 60 ms of the 1 s
    # that `ask TX --from FILE` takes for 3,000 questions; at 10,000, seven times (30-40 ms: the laws are
    # pydantic models, slow to walk); at 100,000 not once. A long batch still collects: what each question
    # makes is freed as it goes, and only what outlives it counts toward the threshold. Set before typer
    # is imported: its own import makes a third of those objects.
    gc.set_threshold(100_000)
    # opensearch-py imports aiohttp, where it is installed, for an async client that lawindex never uses: 0.17-0.24 s
    # of CPU of the 0.6 s its import takes (3.2.0), on every command. Refused here (its import fails, which
    # opensearch-py expects of a machine without it), unless something in the process already imported it.
    sys.modules.setdefault("aiohttp", None)  # type: ignore[arg-type]

    from indexer.cli._common import OutputFailed, guard_stdout, output_failed

    app = _app()
    guard_stdout()
    try:
        try:
            app()
        finally:
            # The command is done and the process ends: at exit the interpreter collects garbage again
            # and again over every object the command made, 80 ms of the 1.3 s of CPU that `ask TX --from
            # FILE --json` took (3,000 questions on a generated Texas) and nothing to find. Frozen
            # objects are left out of every collection; the process's memory goes back all the same.
            gc.freeze()
            sys.stdout.flush()
    except OutputFailed as failed:
        raise SystemExit(output_failed(failed)) from None
