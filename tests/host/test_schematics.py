"""Schematics generated from boards/: up to date, every pin drawn and tabled, valid SVG; `mausbox boards`."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from maus.hw import board as boardmod
from mausbox import schematic
from mausbox.cli import main
from mausbox.paths import BOARDS_DIR, REPO_ROOT
from mausbox.schematic import tables

SVG_NS = "{http://www.w3.org/2000/svg}"
SCHEMATICS = REPO_ROOT / "schematics"
NAMES = sorted(p.stem for p in BOARDS_DIR.glob("*.json"))


def load(name: str) -> dict:
    return boardmod.load(str(BOARDS_DIR / f"{name}.json"))


def svg_root(text: str) -> ET.Element:
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == SVG_NS + "svg", root.tag
    return root


def svg_texts(root: ET.Element) -> list[ET.Element]:
    return list(root.iter(SVG_NS + "text"))


def table_rows(md: str, heading: str) -> list[list[str]]:
    """The rows of the first Markdown table after `heading`."""
    body = md.split(heading, 1)[1]
    rows = []
    for line in body.splitlines():
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
        elif rows:
            break
    return rows[2:]  # skip header and rule


def test_boards_exist():
    assert {"esp32-devkitc", "esp32-devkitc-6p", "esp32-s3-devkitc", "sim"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_committed_files_are_up_to_date(name):
    files = schematic.render(load(name))
    assert sorted(files) == sorted(schematic.FILES)
    for fname, text in files.items():
        path = SCHEMATICS / name / fname
        assert path.exists(), f"{path} missing: run `mausbox boards diagram --all`"
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run `mausbox boards diagram --all`"


@pytest.mark.parametrize("name", NAMES)
def test_every_pin_in_diagram_on_a_wire(name):
    b = load(name)
    root = svg_root((SCHEMATICS / name / "wiring.svg").read_text(encoding="utf-8"))
    labels = {t.text: t for t in svg_texts(root) if t.get("class") == "g" and (t.text or "").startswith("GPIO")}
    wire_ys = {float(ln.get("y1", "nan")) for ln in root.iter(SVG_NS + "line") if ln.get("class") == "wire"}
    pins = boardmod.pins(b)
    assert len(pins) == len(labels)
    for where, pin, _ in pins:
        label = labels.get(f"GPIO{pin}")
        assert label is not None, f"{name}: GPIO{pin} ({where}) not in wiring.svg"
        assert float(label.get("y", "nan")) - 4 in wire_ys, f"{name}: GPIO{pin} has no wire"


@pytest.mark.parametrize("name", NAMES)
def test_every_pin_in_table(name):
    b = load(name)
    rows = table_rows((SCHEMATICS / name / "pins.md").read_text(encoding="utf-8"), "## Signals")
    got = [(r[0], r[-1].strip("`")) for r in rows]
    want = [(f"GPIO{pin}", re.sub(r" \(player \d\)", "", where)) for where, pin, _ in boardmod.pins(b)]
    assert sorted(got) == sorted(want)


@pytest.mark.parametrize("name", NAMES)
def test_svg_is_valid_svg(name):
    text = (SCHEMATICS / name / "wiring.svg").read_text(encoding="utf-8")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = svg_root(text)
    w, h = float(root.get("width", "0")), float(root.get("height", "0"))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    for el in root.iter():
        for attr in ("x", "x1", "x2", "cx"):
            if el.get(attr) is not None:
                assert 0 <= float(el.get(attr, "0")) <= w, (el.tag, el.attrib)
        for attr in ("y", "y1", "y2", "cy"):
            if el.get(attr) is not None:
                assert 0 <= float(el.get(attr, "0")) <= h, (el.tag, el.attrib)


def test_a_pin_change_changes_the_drawing_and_table():
    b = load("esp32-devkitc")
    before = schematic.render(b)
    moved = copy.deepcopy(b)
    moved["buttons"][0] = 32  # a free pin on this board
    assert boardmod.validate(moved) == []
    after = schematic.render(moved)
    texts = [t.text for t in svg_texts(svg_root(after["wiring.svg"]))]
    assert "GPIO32" in texts
    assert not any("GPIO13" in (t or "") for t in texts)
    assert "| GPIO32 | P1 button |" in after["pins.md"] and "GPIO13" not in after["pins.md"]
    assert before["bom.md"] == after["bom.md"]


def test_invalid_board_is_not_drawn():
    b = load("esp32-devkitc")
    b["parts"]["buzzer"]["pin"] = 35
    with pytest.raises(ValueError, match="GPIO 35 is input-only"):
        schematic.render(b)


def test_variants_draw_their_circuits():
    b = load("esp32-devkitc")
    base = schematic.render(b)
    assert "10 kΩ pull-up" not in base["pins.md"]
    assert ">1 MΩ<" in base["wiring.svg"] and "BAT54S" in base["wiring.svg"] and "VBIAS" in base["wiring.svg"]
    v = copy.deepcopy(b)
    v["pull"] = "external"
    v["parts"]["piezo"] = {"mode": "digital", "pin": 35}
    out = schematic.render(v)
    svg_root(out["wiring.svg"])
    assert out["wiring.svg"].count(">10 kΩ<") == 4
    assert "LM393" in out["wiring.svg"] and "1 MΩ" not in out["wiring.svg"]
    assert "### Piezo (digital)" in out["pins.md"]
    bare = copy.deepcopy(b)
    bare["parts"] = {}
    out = schematic.render(bare)
    texts = [t.text for t in svg_texts(svg_root(out["wiring.svg"]))]
    assert [t for t in texts if t and t.startswith("GPIO")] == ["GPIO13", "GPIO14", "GPIO27", "GPIO33"]
    assert "WS2812" not in out["bom.md"]


def test_text_is_escaped():
    b = load("sim")
    b["title"] = "Kids & <friends>"
    root = svg_root(schematic.render(b)["wiring.svg"])
    assert any(t.text == "Kids & <friends>" for t in svg_texts(root))


def test_bom_quantities_follow_the_board():
    for name in NAMES:
        b = load(name)
        rows = tables.bom(b)
        if b["family"] == "sim":
            assert rows[0]["qty"] == 0
            continue
        by = {r["part"]: r["qty"] for r in rows}
        assert by["Arcade push button, 30 mm, normally open"] == b["players"]
        assert by["WS2812B LED on a breakout (with 100 nF)"] == b["players"]
        assert ("Resistor 10 kΩ 1/4 W (button pull-ups)" in by) == (b["pull"] == "external")
        assert by["NFC stickers, one card set"] == 99 + 23 + 3
        md = (SCHEMATICS / name / "bom.md").read_text(encoding="utf-8")
        assert f"| {b['players']} | Arcade push button" in md


def test_power_budget():
    p = tables.power(load("esp32-devkitc"))
    assert p["total_wifi_off_ma"] == 80 + 4 * 60 + 26 + 20 + 30
    assert p["total_wifi_on_ma"] == 240 + 4 * 60 + 26 + 20 + 30 == 556
    assert p["led_max_brightness_wifi_off_pct"] == 100
    assert p["led_max_brightness_wifi_on_pct"] == (500 - 240 - 76) * 100 // 240
    six = tables.power(load("esp32-devkitc-6p"))
    assert six["total_wifi_on_ma"] == 240 + 6 * 60 + 76
    md = (SCHEMATICS / "esp32-devkitc-6p" / "power.md").read_text(encoding="utf-8")
    assert "WS2812 × 6 at full white" in md and "over by 176 mA" in md


def test_cli_list_and_check(capsys, tmp_path):
    assert main(["boards", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == NAMES and all(r["valid"] for r in rows)
    assert main(["boards", "list"]) == 0
    assert "esp32-devkitc-6p" in capsys.readouterr().out
    assert main(["boards", "check", "esp32-devkitc"]) == 0
    assert "ok" in capsys.readouterr().out
    bad = load("esp32-devkitc")
    bad["name"] = "mine"
    bad["buttons"][0] = 6
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(bad))
    assert main(["boards", "check", str(path)]) == 1
    assert "buttons[0] (player 1): GPIO 6 is wired to the SPI flash" in capsys.readouterr().out
    assert main(["boards", "check", "--json", str(path)]) == 1
    res = json.loads(capsys.readouterr().out)
    assert res["valid"] is False and len(res["errors"]) == 1
    assert main(["boards", "check", "no-such-board"]) == 2
    assert "known boards: esp32-devkitc" in capsys.readouterr().err
    (tmp_path / "broken.json").write_text("{")
    assert main(["boards", "check", str(tmp_path / "broken.json")]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    other = load("sim")
    (tmp_path / "other.json").write_text(json.dumps(other))
    assert main(["boards", "check", str(tmp_path / "other.json")]) == 1
    assert "differs from the file name" in capsys.readouterr().out


def test_cli_diagram(capsys, tmp_path: Path):
    assert main(["boards", "diagram", "esp32-devkitc", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in (tmp_path / "esp32-devkitc").iterdir()) == sorted(schematic.FILES)
    assert main(["boards", "diagram", "esp32-devkitc", "--out", str(tmp_path), "--check"]) == 0
    (tmp_path / "esp32-devkitc" / "pins.md").write_text("old")
    assert main(["boards", "diagram", "esp32-devkitc", "--out", str(tmp_path), "--check"]) == 1
    assert "out of date" in capsys.readouterr().out
    assert main(["boards", "diagram", "--all", "--check"]) == 0  # the committed schematics/
    assert main(["boards", "diagram"]) == 2
    bad = load("esp32-devkitc")
    bad["name"] = "bad"
    bad["parts"]["oled"]["sda"] = 36
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    assert main(["boards", "diagram", str(tmp_path / "bad.json"), "--out", str(tmp_path)]) == 1
    assert not (tmp_path / "bad").exists()


def test_the_docs_show_the_boot_summary_the_board_gives_and_check_says_it_in_words(capsys):
    """build.md and boards.md print esp32-devkitc's boot-screen summary: the one maus.hw.board.summary gives
    (it drifted: `irq` where the board file says `poll`), and `boards check` says each line in plain words."""
    import json
    import re

    from maus.hw import board as boardmod
    from mausbox.paths import BOARDS_DIR, REPO_ROOT

    want = boardmod.summary(json.loads((BOARDS_DIR / "esp32-devkitc.json").read_text()))
    for doc in ("docs/build.md", "docs/boards.md"):
        blocks = re.findall(r"```\n(esp32-devkitc\n.*?)```", (REPO_ROOT / doc).read_text(), re.S)
        assert blocks and all(b.strip() == want for b in blocks), (doc, blocks)
    assert main(["boards", "check", "esp32-devkitc"]) == 0
    out = capsys.readouterr().out
    assert "jmp piezo-a       latency-test jumper, piezo on an analog (ADC) pin" in out
    assert "ESP32-WROOM-32E, no PSRAM" in out and "none PSRAM" not in out
    assert "polling loop" in out
