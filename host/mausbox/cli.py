"""The `mausbox` command: each subcommand is a module `mausbox/cmd_<name>.py` with `HELP`, `add_parser(p)`
and `run(args) -> int`. Modules keep heavy imports inside `run`, so start-up stays fast.

Exit codes: 0 success, 1 the command ran and found a problem, 2 bad usage or input,
3 no unit or port, 4 the unit answered wrongly or the link failed.
"""

from __future__ import annotations

import argparse
import importlib
import sys

import mausbox


def command_modules() -> dict[str, str]:
    import pkgutil

    return {m.name[4:]: f"mausbox.{m.name}" for m in pkgutil.iter_modules(mausbox.__path__)
            if m.name.startswith("cmd_")}

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_NO_UNIT, EXIT_LINK = 0, 1, 2, 3, 4


class UserError(Exception):
    """An expected failure: printed as one friendly line, no traceback."""

    def __init__(self, message: str, code: int = EXIT_PROBLEM):
        super().__init__(message)
        self.code = code


def unit_options(p, timeout: float = 10.0, json: bool = True, under: bool = False) -> None:
    """--port, --timeout (and --json) for a command that talks to a unit. `under`: on an action's own parser
    as well (`mausbox clock set --port P` as `mausbox clock --port P set`); there they only override."""
    d = {"default": argparse.SUPPRESS} if under else {}
    p.add_argument("--port", help="serial port (default: the only unit connected)", **({} if not under else d))
    p.add_argument("--timeout", type=float, help="seconds to wait for each answer of the unit "
                   f"(default {timeout:g}; a silent or babbling unit fails within it)",
                   **(d if under else {"default": timeout}))
    if json:
        p.add_argument("--json", action="store_true", help="print the result as JSON", **d)


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    parser = argparse.ArgumentParser(prog="mausbox", description=mausbox.__doc__)
    parser.add_argument("--version", action="version", version=f"mausbox {mausbox.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = {}
    for name, modname in sorted(command_modules().items()):
        mod = importlib.import_module(modname)
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_parser(p)
        modules[name] = mod
    return parser, modules


def main(argv: list[str] | None = None) -> int:
    parser, modules = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(modules[args.command].run(args) or 0)
    except UserError as e:
        from mausbox.shown import shown

        print(f"mausbox {args.command}: {shown(e, lines=True)}", file=sys.stderr)  # may quote the device
        return e.code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `mausbox logs show 1 | head`: the reader has all it wants
        return _quiet_pipe()
    except Exception as e:  # noqa: BLE001 - a bug: one line, never a traceback (MAUSBOX_DEBUG=1 shows it)
        import os

        if os.environ.get("MAUSBOX_DEBUG"):
            raise
        from mausbox.shown import shown

        print(f"mausbox {args.command}: internal error ({type(e).__name__}: {shown(e)}); "
              "please report it (MAUSBOX_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_PROBLEM


def _quiet_pipe() -> int:
    """Standard output was closed: say nothing more (not even at exit, when Python flushes it)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # as a shell reports a command ended by SIGPIPE
