"""A classroom's units at once: each unit's name beside its id, names two units share, who answers on a port
(`probe`, also for `mausbox ports`), and one command run over every connected unit in parallel (`--all`) with a
table of name, result and time. A failure on one unit is its
row's result: it never stops the others."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

MAX_PARALLEL = 32  # threads: each waits on its own port, the host's work per unit is small


def label(unit: str | None, name: str | None) -> str:
    """How a unit is called to a teacher: `Tisch 3 (5e1db134)`, or the id alone when it has no name."""
    from mausbox.shown import shown

    uid = shown(unit or "?")
    return f"{shown(name)} ({uid})" if name else uid


def shared_names(named: Iterable[tuple[str | None, str | None]]) -> set[str]:
    """The names that more than one unit carries, from (unit id, name) pairs (one unit seen twice counts once)."""
    units: dict[str, set[str]] = {}
    for unit, name in named:
        if name:
            units.setdefault(name.casefold().strip(), set()).add(unit or "?")
    return {n for n, us in units.items() if len(us) > 1}


def is_shared(name: str | None, shared: set[str]) -> bool:
    return bool(name) and name.casefold().strip() in shared  # type: ignore[union-attr]


@dataclass
class Row:
    port: str
    unit: str | None = None
    name: str | None = None
    ok: bool = False
    result: str = ""
    seconds: float = 0.0
    code: int = 0  # the exit code this unit's run alone would have given
    data: object = None  # what the command's function returned (--json)


def over_all(ports: list[str], fn: Callable[[str, Row], str], on_row: Callable[[Row], None] | None = None) -> list[Row]:
    """fn(port, row) for every port in parallel: it fills row.unit/row.name as soon as it knows them and returns
    the result's text; a UserError (or any error) becomes the row's failed result. Rows in the ports' order."""
    from mausbox.errors import EXIT_PROBLEM, UserError

    lock = threading.Lock()

    def one(port: str) -> Row:
        row = Row(port)
        t0 = time.monotonic()
        try:
            row.result = fn(port, row) or "ok"
            row.ok = True
        except UserError as e:
            row.result, row.code = str(e), e.code or EXIT_PROBLEM
        except Exception as e:  # noqa: BLE001 - one unit's surprise is its row, the others go on
            row.result, row.code = f"{type(e).__name__}: {e}", EXIT_PROBLEM
        row.seconds = time.monotonic() - t0
        if on_row is not None:
            with lock:
                on_row(row)
        return row

    if not ports:
        return []
    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(ports))) as ex:
        return list(ex.map(one, ports))


def table(rows: list[Row], title: str = "result") -> list[str]:
    """The rows as text lines: unit (name and id), port, result, seconds; shared names flagged."""
    from mausbox.shown import one_line, shown

    shared = shared_names((r.unit, r.name) for r in rows if r.unit)
    names = [label(r.unit, r.name) if r.unit else "-" for r in rows]
    nw = max([4] + [len(n) for n in names])
    pw = max([4] + [len(r.port) for r in rows])
    out = [f"{'unit':<{nw}}  {'port':<{pw}}  {'time':>6}  {title}"]
    from mausbox.shown import wrapped

    for r, n in zip(rows, names):
        res = ("" if r.ok else "FAILED: ") + one_line(r.result)
        if is_shared(r.name, shared):
            res += f"  (!! another unit is also named {shown(r.name)!r}: `mausbox name set` one of them)"
        head = f"{n:<{nw}}  {shown(r.port):<{pw}}  {r.seconds:5.1f}s  "
        out += wrapped(head + res, len(head) if len(head) <= 40 else 4)
    ok = sum(r.ok for r in rows)
    out.append(f"{ok} of {len(rows)} units ok" + ("" if ok == len(rows) else f", {len(rows) - ok} failed"))
    return out


def exit_code(rows: list[Row]) -> int:
    from mausbox.errors import EXIT_OK

    bad = [r.code for r in rows if not r.ok]
    if not bad:
        return EXIT_OK
    return bad[0] if len(set(bad)) == 1 and len(bad) == len(rows) else 1


def all_ports() -> list[str]:
    """Every connected unit's port (a virtual unit counts), or UserError: none."""
    from mausbox.errors import EXIT_NO_UNIT, UserError
    from mausbox.link import unit_ports

    found = unit_ports()
    if not found:
        raise UserError("no unit connected (plug them in, or start `mausbox sim --serial`)", EXIT_NO_UNIT)
    return found


def print_rows(rows: list[Row], as_json: bool, title: str = "result") -> int:
    import json

    if as_json:
        from mausbox.shown import json_safe

        print(json_safe(json.dumps([{"port": r.port, "unit": r.unit, "name": r.name, "ok": r.ok, "result": r.result,
                                     "seconds": round(r.seconds, 2), "data": r.data} for r in rows], indent=1,
                                   default=str)))
    else:
        print("\n".join(table(rows, title)))
    return exit_code(rows)


# `--all` for commands that talk to one unit: each unit's run is the very command with `--port P`, in a process of
# its own (a flash or a deploy holds its port for minutes, prints its own progress and may fail alone).
FLEET = ("flash", "deploy", "doctor", "config", "clock")


def probe(device: str, timeout: float = 3) -> dict:
    """Ask a port who is there with the host service's `hello` (docs/protocol.md): a unit answers from its
    main loop, a MicroPython REPL takes the request for a comment. Never a Ctrl-C, never raises."""
    from mausbox.errors import UserError
    from mausbox.link import LinkTimeout, NoService, UnitLink

    try:
        with UnitLink(device, timeout=timeout, recover=False) as link:
            info = link.hello()
    except NoService:
        return {"state": "micropython", "detail": "the MicroPython REPL answers: the app is not running"}
    except LinkTimeout as e:
        return {"state": "no answer", "detail": str(e)}
    except UserError as e:
        return {"state": "busy" if "busy" in str(e) else "no answer", "detail": str(e)}
    return {"state": "unit", "firmware": info.get("fw"), "micropython": info.get("micropython"),
            "platform": info.get("platform"), "unit": info.get("unit"), "mode": info.get("mode"),
            "game": info.get("game"), "safe_mode": info.get("safe_mode"), "name": info.get("name")}


def wants_all(argv: list[str]) -> bool:
    return bool(argv) and argv[0] in FLEET and "--all" in argv


def run_everywhere(argv: list[str], as_json: bool = False, ports: list[str] | None = None) -> int:
    """`mausbox <argv> --port P` for every connected unit in parallel; a table of name, result and time."""
    import os
    import subprocess
    import sys

    from mausbox.errors import EXIT_USAGE, UserError
    from mausbox.shown import shown, width

    if "--port" in argv or any(a.startswith("--port=") for a in argv):
        raise UserError("--all or --port, not both", EXIT_USAGE)
    argv = [a for a in argv if a != "--json"]
    ports = ports if ports is not None else all_ports()

    def one(port: str, row: Row) -> str:
        if argv[0] != "flash":  # a board to be flashed may have no firmware to say who it is
            who = probe(port, 3.0)
            row.unit, row.name = who.get("unit"), who.get("name")
        proc = subprocess.run([sys.executable, "-m", "mausbox", *argv, "--port", port], capture_output=True,
                              text=True, env=dict(os.environ, COLUMNS=str(width())), stdin=subprocess.DEVNULL)
        lines = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
        errs = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        row.data = {"exit": proc.returncode, "stdout": proc.stdout[-4000:], "stderr": proc.stderr[-2000:]}
        if proc.returncode:
            raise UserError((errs or lines or ["exit code %d" % proc.returncode])[-1], proc.returncode)
        bad = [ln for ln in lines if ln.startswith("!!")]  # doctor's findings that need a hand
        return "; ".join(bad) if bad else (lines[-1] if lines else "ok")

    def done(row: Row) -> None:  # each unit's own output as it finishes, then the table of all
        if as_json:
            return
        out = row.data if isinstance(row.data, dict) else {}
        print(f"== {label(row.unit, row.name)} on {shown(row.port)}: {'ok' if row.ok else 'FAILED'} "
              f"({row.seconds:.1f} s)")
        text = (out.get("stdout") or "") + (out.get("stderr") or "" if not row.ok else "")
        for ln in text.splitlines():
            print(shown(ln))
        sys.stdout.flush()

    return print_rows(over_all(ports, one, done), as_json, " ".join(argv[:2]) if argv[0] in ("config", "clock")
                      else argv[0])
