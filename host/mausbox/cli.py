"""The `mausbox` command: a table of subcommands, each a module with `add_parser` and `run`.

Exit codes: 0 success, 1 the command ran and found a problem, 2 bad usage or input,
3 no unit or port, 4 the unit answered wrongly or the link failed.
"""

from __future__ import annotations

import argparse
import importlib
import sys

import mausbox

# name -> (module, one-line help). Modules are imported only when their command runs.
COMMANDS: dict[str, tuple[str, str]] = {
    "sim": ("mausbox.cmd_sim", "run the virtual unit (interactive, scenario, replay, serial pty)"),
}

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_NO_UNIT, EXIT_LINK = 0, 1, 2, 3, 4


class UserError(Exception):
    """An expected failure: printed as one friendly line, no traceback."""

    def __init__(self, message: str, code: int = EXIT_PROBLEM):
        super().__init__(message)
        self.code = code


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    parser = argparse.ArgumentParser(prog="mausbox", description=mausbox.__doc__)
    parser.add_argument("--version", action="version", version=f"mausbox {mausbox.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = {}
    for name, (modname, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        mod = importlib.import_module(modname)
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
        print(f"mausbox {args.command}: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
