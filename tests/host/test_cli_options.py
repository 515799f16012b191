"""One convention for the whole CLI: --port, --timeout, --json and -v go before or after the command's words,
and every command's --help ends with examples that parse."""

import argparse
import shlex

import pytest
from mausbox import cli

PARSER, MODULES = cli.build_parser()
COMMON = ("--port", "--timeout", "--json", "-v", "--verbose")


def _parsers(p=PARSER, words=("mausbox",)):
    yield words, p
    for name, q in cli._subparsers(p).items():
        yield from _parsers(q, words + (name,))


ALL = list(_parsers())
EXAMPLES = sorted({ln.split("#")[0].strip() for m in MODULES.values() for ln in m.EXAMPLES.splitlines()
                   if ln.strip()})


def _parse(argv):
    return vars(PARSER.parse_args(cli.hoist(PARSER, argv)))


@pytest.mark.parametrize("words,p", ALL[1:], ids=[" ".join(w[1:]) for w, _ in ALL[1:]])
def test_every_help_shows_an_example_of_its_command(words, p):
    text = p.format_help()
    assert "examples:" in text
    lines = [ln.strip() for ln in text.split("examples:", 1)[1].splitlines() if ln.strip()]
    assert lines and all(ln.startswith("mausbox ") for ln in lines)
    assert all(ln.startswith(" ".join(words)) for ln in lines) or not cli._subparsers(p) or len(words) == 2


@pytest.mark.parametrize("line", EXAMPLES)
def test_every_example_parses(line):
    argv = shlex.split(line)[1:]
    assert _parse(argv)["command"] == argv[0]


def _moved_front(argv, depth):
    """The common options of argv moved to just after its first `depth` words (0: before the command)."""
    words, opts, rest, i = argv[:depth], [], [], depth
    while i < len(argv):
        if argv[i] in ("--port", "--timeout"):
            opts += argv[i:i + 2]
            i += 2
            continue
        (opts if argv[i] in COMMON else rest).append(argv[i])
        i += 1
    return words + opts + rest


@pytest.mark.parametrize("line", [e for e in EXAMPLES if any(o in shlex.split(e) for o in COMMON)])
def test_common_options_anywhere_mean_the_same(line):
    argv = shlex.split(line)[1:]
    want = _parse(argv)
    nwords = 1 + bool(cli._subparsers(cli._subparsers(PARSER)[argv[0]]))
    for depth in range(nwords + 1):
        assert _parse(_moved_front(argv, depth)) == want, _moved_front(argv, depth)


def test_the_issues_command_lines():
    assert _parse(["config", "get", "--port", "P"])["port"] == "P"
    assert _parse(["logs", "--port", "P", "pull"])["port"] == ["P"]  # pull's --port repeats
    assert _parse(["--port", "P", "logs", "pull", "--port", "Q"])["port"] == ["P", "Q"]
    a = _parse(["--json", "--timeout", "3", "doctor", "--port=P"])
    assert (a["json"], a["timeout"], a["port"]) == (True, 3.0, "P")
    assert _parse(["-v", "logs", "pull"])["verbose"] is True
    assert _parse(["logs", "pull"])["timeout"] == 10.0  # each command's own default stays
    assert _parse(["cards", "print", "--catalog", "mg", "--", "-v"])["cards"] == ["-v"]  # after --: positional


def test_an_option_the_command_does_not_take_is_refused(capsys):
    with pytest.raises(SystemExit) as e:
        PARSER.parse_args(cli.hoist(PARSER, ["--port", "P", "boards", "list"]))
    assert e.value.code == 2 and "--port" in capsys.readouterr().err


def test_main_hoists(monkeypatch):
    seen = {}
    monkeypatch.setattr(MODULES["doctor"], "run", lambda args: seen.update(vars(args)) or 0)
    monkeypatch.setattr(cli, "build_parser", lambda: (PARSER, MODULES))
    assert cli.main(["--port", "/dev/null", "doctor", "--json"]) == 0
    assert seen["port"] == "/dev/null" and seen["json"] is True
    assert isinstance(PARSER, argparse.ArgumentParser)


GROUPS = [name for name, p in cli._subparsers(PARSER).items() if cli._subparsers(p)]


@pytest.mark.parametrize("group", GROUPS)
def test_a_group_alone_shows_its_help_with_every_action(group, capsys):
    assert {"boards", "cards", "clock", "config", "logs"} <= set(GROUPS)
    assert cli.main([group]) == 2  # a usage error, as `mausbox` alone
    out = capsys.readouterr().out
    assert out.startswith(f"usage: mausbox {group}") and "examples:" in out
    for action in cli._subparsers(cli._subparsers(PARSER)[group]):
        assert action in out


def _options(name):
    for words, p in ALL:
        for a in p._actions:
            if name in a.option_strings and a.default is not argparse.SUPPRESS:
                yield " ".join(words), a


def test_the_same_option_means_the_same_everywhere():
    """--port, --timeout, --json, --dry-run and --board: one meaning, said in one way, on every command."""
    seen = {o: list(_options(o)) for o in ("--port", "--timeout", "--json", "--dry-run", "--board")}
    assert all(seen.values()), seen
    for cmd, a in seen["--port"]:
        assert a.help and a.help.startswith("serial port"), (cmd, a.help)
    for cmd, a in seen["--timeout"]:
        assert a.type is float and a.help.startswith("seconds to wait for each"), (cmd, a.help)
        assert "default" in a.help or "cards" in cmd, (cmd, a.help)
    for cmd, a in seen["--json"]:
        assert a.help and "print" in a.help and "JSON" in a.help, (cmd, a.help)
    assert {c for c, _ in seen["--dry-run"]} == {"mausbox flash", "mausbox deploy"}
    for cmd, a in seen["--dry-run"]:
        assert a.help.startswith("say what") and a.help.endswith("touch no port"), (cmd, a.help)
    for cmd, a in seen["--board"]:
        assert "board file" in a.help, (cmd, a.help)


def test_flash_json_is_only_its_plan(capsys):
    assert cli.main(["flash", "--json"]) == 2
    assert "--json goes with --dry-run" in capsys.readouterr().err
    assert cli.main(["flash", "--json", "--dry-run"]) == 0  # no --board: the plan the board's chip completes
    assert '"version"' in capsys.readouterr().out


def test_counts_take_their_nouns_number(tmp_path, capsys):
    from mausbox.shown import plural

    assert [plural(n, "card") for n in (0, 1, 2)] == ["0 cards", "1 card", "2 cards"]
    assert plural(1, "press") == "1 press" and plural(3, "press") == "3 presses"
    assert cli.main(["cards", "print", "mg/mouse/07", "-o", str(tmp_path / "one.svg")]) == 0
    assert "wrote 1 card:" in capsys.readouterr().out
    assert cli.main(["logs", "stats", "--store", str(tmp_path / "none.sqlite")]) == 0
    assert capsys.readouterr().out.startswith("0 games\n")


def test_deploy_dry_run_says_the_plan_and_touches_no_port(capsys, tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # no unit known: a real deploy would say "no unit"
    assert cli.main(["deploy", "--dry-run", "--json", "--board", "esp32-devkitc-6p"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["board"] == "esp32-devkitc-6p" and plan["files"] > plan["python_files"] > 50
    assert cli.main(["deploy", "--dry-run", "--board", "no-such-board"]) == 2
    assert "no board named 'no-such-board'" in capsys.readouterr().err
