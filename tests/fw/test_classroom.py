# A classroom's unit: its name and seats on flash, the host's name / seats / copied requests, hello naming
# the unit, and a game's start recording both (maus.settings.classroom).
import json

import logfs
from fwtest import raises
from hostkit import Console, Ctx, answer, request
from maus import unit_name
from maus.host.service import HostService
from maus.settings import classroom


def _svc(root):
    con = Console()
    ctx = Ctx(root)
    ctx.root = root + "/"
    return HostService(ctx, inp=con.inp, out=con.out, ready=con.ready), con, ctx


def test_name_round_trips_and_hello_says_it():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        con.send(request(1, "hello"))
        assert answer(svc, con, 1)[0]["name"] is None
        con.send(request(2, "name", name="Tisch 3"))
        assert answer(svc, con, 2)[0]["name"] == "Tisch 3"
        assert unit_name(ctx.root) == "Tisch 3" and classroom.read_name(ctx.root) == "Tisch 3"
        con.send(request(3, "hello"))
        assert answer(svc, con, 3)[0]["name"] == "Tisch 3"
        con.send(request(4, "name"))
        assert answer(svc, con, 4)[0]["name"] == "Tisch 3"
        con.send(request(5, "name", name="x" * 17))
        r = answer(svc, con, 5)[0]
        assert r["error"] == "value" and "16" in r["msg"] and unit_name(ctx.root) == "Tisch 3"  # kept
        con.send(request(6, "name", name="a\nb"))
        assert answer(svc, con, 6)[0]["error"] == "value"
        con.send(request(7, "name", name="Küche"))
        assert answer(svc, con, 7)[0]["name"] == "Küche"
        con.send(request(8, "name", name=""))
        assert answer(svc, con, 8)[0]["name"] is None and unit_name(ctx.root) is None


def test_seats_are_checked_and_kept():
    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        con.send(request(1, "seats"))
        assert answer(svc, con, 1)[0]["seats"] == {}
        con.send(request(2, "seats", seats={"1": "Anna", "2": "Ben"}))
        assert answer(svc, con, 2)[0]["seats"] == {"1": "Anna", "2": "Ben"}
        for bad in ({"7": "Anna"}, {"1": ""}, {"1": 3}, ["Anna"], {"1": "x" * 25}):
            con.send(request(3, "seats", seats=bad))
            assert answer(svc, con, 3)[0]["error"] == "value", bad
        assert classroom.read_seats(ctx.root) == {"1": "Anna", "2": "Ben"}
        assert classroom.start_fields(ctx.root) == {"seats": {"1": "Anna", "2": "Ben"}}
        classroom.write_name(ctx.root, "Tisch 3")
        assert classroom.start_fields(ctx.root) == {"name": "Tisch 3", "seats": {"1": "Anna", "2": "Ben"}}
        con.send(request(4, "seats", seats={}))
        assert answer(svc, con, 4)[0]["seats"] == {} and classroom.read_seats(ctx.root) is None
        raises(ValueError, lambda: classroom.write_name(ctx.root, "   "))


def test_a_damaged_name_file_is_no_name():
    with logfs.Fs() as fs:
        root = fs.root + "/"
        with open(root + classroom.NAME_FILE, "wb") as f:
            f.write(b"\xff\xfe")
        assert classroom.read_name(root) is None
        with open(root + classroom.SEATS_FILE, "w") as f:
            f.write("[1, 2")
        assert classroom.read_seats(root) is None and classroom.start_fields(root) == {}


def test_copied_is_shown_on_the_menu_only():
    class Fb:
        def __init__(self):
            self.shown = []

        def text(self, t):
            self.shown.append(t)

        def sound(self, s):
            self.shown.append("sound:" + s)

    with logfs.Fs() as fs:
        svc, con, ctx = _svc(fs.root)
        ctx.fb = Fb()
        said = []
        ctx._say = lambda key, **kw: said.append((key, kw))
        con.send(request(1, "copied", n=3))
        assert answer(svc, con, 1)[0]["shown"] is True and said == [("copied", {"n": 3})]
        assert ctx.fb.shown == ["sound:ok"]
        ctx.mode = "play"
        con.send(request(2, "copied", n=3))
        assert answer(svc, con, 2)[0]["shown"] is False and len(said) == 1


def test_the_texts_have_the_copied_screen():
    for lang in ("de", "en"):
        with open(classroom.__file__.rsplit("/", 2)[0] + "/texts/unit.%s.json" % lang) as f:
            t = json.load(f)
        assert "{n}" in t["copied"] and t["menu"].startswith("{name}")
