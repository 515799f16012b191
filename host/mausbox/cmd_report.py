"""`mausbox report`: a self-contained HTML report (inline SVG charts) for a class, from the log store."""

from __future__ import annotations

from mausbox.shown import plural

HELP = "an HTML report for a class: players, reaction-time distributions, scores over sessions"
EXAMPLES = """\
mausbox report -o class.html
mausbox report --game mg --names names.json -o mausgeflippt.html
"""  # shown by --help (mausbox.cli); tests/host/test_cli_options.py parses each


def add_parser(p):
    p.add_argument("--store", help="the SQLite store (default: ~/.local/share/mausbox/logs.sqlite)")
    p.add_argument("--names", help='JSON file of player names: {"<unit>/<player>": "Anna", "<player>": ...}')
    p.add_argument("--title", default="Mausbox class report")
    p.add_argument("--unit")
    p.add_argument("--game", help="mg, mim or mms")
    p.add_argument("-o", "--output", default="mausbox-report.html", help="HTML file to write")


def run(args) -> int:
    from mausbox.cli import EXIT_USAGE, UserError
    from mausbox.cmd_logs import _names, _store
    from mausbox.report import html_report

    store = _store(args)
    text = html_report(store, _names(args), args.title, args.unit, args.game)
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise UserError("cannot write %s: %s" % (args.output, e), EXIT_USAGE) from None
    print("wrote %s (%s)" % (args.output, plural(len(store.games(unit=args.unit, game=args.game)), "game")))
    return 0
