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

# How a command fails (mausbox.errors), also for the commands that take it from here
from mausbox.errors import EXIT_LINK, EXIT_NO_UNIT, EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, UserError  # noqa: F401


def command_modules() -> dict[str, str]:
    import pkgutil

    return {m.name[4:]: f"mausbox.{m.name}" for m in pkgutil.iter_modules(mausbox.__path__)
            if m.name.startswith("cmd_")}


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


# The options every command that has them takes anywhere on its line: `mausbox --port P logs pull`,
# `mausbox logs --port P pull` and `mausbox logs pull --port P` are one command. Each command declares them
# on its own parser (its defaults, `append` and all); `hoist` moves them behind the command's words.
COMMON_VALUED = ("--port", "--timeout")
COMMON_FLAGS = ("--json", "-v", "--verbose")


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def hoist(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """argv with the common options that come before the command's last word (`logs`, `pull`) moved right
    after it, where the command's own parser reads them."""
    kept: list[str] = []
    moved: list[str] = []
    p, i = parser, 0
    while i < len(argv):
        tok = argv[i]
        name = tok.split("=", 1)[0]
        if tok == "--":
            break
        if name in COMMON_VALUED:
            moved.append(tok)
            if "=" not in tok and i + 1 < len(argv):
                moved.append(argv[i + 1])
                i += 1
        elif tok in COMMON_FLAGS:
            moved.append(tok)
        elif tok.startswith("-"):
            kept.append(tok)
        elif tok in _subparsers(p):
            kept.append(tok)
            p = _subparsers(p)[tok]
            if not _subparsers(p):
                i += 1
                break
        else:
            break
        i += 1
    return kept + moved + argv[i:]


def _epilogs(p: argparse.ArgumentParser, examples: list[str], words: str) -> None:
    """Every parser's --help ends with the examples of its command (those of its action, for an action)."""
    mine = [e for e in examples if e.startswith(words + " ") or e == words] or examples
    p.epilog = "examples:\n" + "\n".join("  " + e for e in mine)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    for name, q in _subparsers(p).items():
        _epilogs(q, mine, f"{words} {name}")


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    parser = argparse.ArgumentParser(
        prog="mausbox", description=mausbox.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="--port, --timeout, --json and -v go before or after the command: `mausbox --port P logs pull` "
               "is `mausbox logs pull --port P`.\nEvery command's --help shows examples, e.g. "
               "`mausbox logs pull --help`.")
    parser.add_argument("--version", action="version", version=f"mausbox {mausbox.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = {}
    for name, modname in sorted(command_modules().items()):
        mod = importlib.import_module(modname)
        p = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_parser(p)
        _epilogs(p, [ln.strip() for ln in mod.EXAMPLES.splitlines() if ln.strip()], f"mausbox {name}")
        modules[name] = mod
    return parser, modules


def main(argv: list[str] | None = None) -> int:
    parser, modules = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    from mausbox import fleet

    if fleet.wants_all(argv):  # every connected unit at once (mausbox/fleet.py): the same command with --port each
        rest = [a for a in argv if a != "--all"]
        parser.parse_args(hoist(parser, rest))  # a usage error is one, before any unit is touched
        try:
            return fleet.run_everywhere(rest, "--json" in rest)
        except UserError as e:
            from mausbox.shown import one_line, shown

            print(f"mausbox {shown(argv[0])}: {one_line(e)}", file=sys.stderr)
            return e.code
    args = parser.parse_args(hoist(parser, argv))
    if not args.command:
        parser.print_help()
        return EXIT_USAGE
    group = _subparsers(parser)[args.command]
    actions = [a for a in group._actions if isinstance(a, argparse._SubParsersAction)]
    if actions and getattr(args, actions[0].dest, None) is None:
        # a command group without its action (`mausbox clock`): its help lists the actions, exit 2 as a usage
        # error, as `mausbox` alone does
        group.print_help()
        return EXIT_USAGE
    try:
        return int(modules[args.command].run(args) or 0)
    except UserError as e:
        from mausbox.shown import one_line

        _json_error(args, e)
        print(f"mausbox {args.command}: {one_line(e)}", file=sys.stderr)  # may quote the device: one line
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

        _json_error(args, e)
        print(f"mausbox {args.command}: internal error ({type(e).__name__}: {shown(e)}); "
              "please report it (MAUSBOX_DEBUG=1 shows the traceback)", file=sys.stderr)
        return EXIT_PROBLEM


def _json_error(args, e: Exception) -> None:
    """With --json, a command that fails still prints one JSON document on stdout: {"error", "port"} (the line
    on stderr says the same for a person)."""
    if not getattr(args, "json", False):
        return
    import json

    from mausbox.shown import json_safe, one_line

    port = getattr(e, "port", None) or getattr(args, "port", None)
    if isinstance(port, list):
        port = port[0] if len(port) == 1 else port
    doc = {"error": one_line(e), "port": port, "exit": getattr(e, "code", EXIT_PROBLEM)}
    try:
        print(json_safe(json.dumps(doc)), flush=True)
    except (OSError, ValueError):
        pass


def _quiet_pipe() -> int:
    """Standard output was closed: say nothing more (not even at exit, when Python flushes it)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # as a shell reports a command ended by SIGPIPE
