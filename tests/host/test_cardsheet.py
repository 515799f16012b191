"""Card sheets: every field of every card, text that fits its box, in one file or a named folder;
rendered in a real browser (headless Chromium) to check that no text runs out of its box."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from mausbox import cardsheet
from mausbox.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

MEASURE = """<pre id="result"></pre><script>
const bad = [];
let n = 0;
for (const t of document.querySelectorAll("text[data-box]")) {
  const [x, y, w, h] = t.dataset.box.split(" ").map(Number);
  const b = t.getBBox();
  n++;
  const tol = 0.3;  // mm: antialiasing and glyph overshoot
  if (b.x < x - tol || b.x + b.width > x + w + tol || b.y < y - tol - 0.25 * h || b.y + b.height > y + h + tol)
    bad.push([t.textContent, [x, y, w, h], [b.x, b.y, b.width, b.height]]);
}
document.getElementById("result").textContent = JSON.stringify({n: n, bad: bad});
</script>"""


def render_and_measure(html_path, tmp_path) -> dict:
    page = tmp_path / "measure.html"
    page.write_text(html_path.read_text().replace("</body>", MEASURE + "</body>"))
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=300)
    m = re.search(r'<pre id="result">(.*?)</pre>', proc.stdout, re.S)
    assert m, proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                      .replace("&gt;", ">"))


@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="no chromium (apt-get install chromium)")
def test_no_text_runs_out_of_its_box_in_a_browser(tmp_path):
    assert CHROMIUM, "chromium is needed for this test (.ci/run installs it)"
    long_cat = tmp_path / "long.json"
    long_cat.write_text(json.dumps({
        "game": "mg", "format": 1, "colours": ["red"], "types": ["hat"], "cheeses": ["emmental"],
        "mice": [{"id": 1, "wears": ["a very very long red hat with feathers", "extraordinarily bright "
                                     "yellow glasses", "green scarf", "blue boots", "red tie", "orange bow"],
                  "cheese": "emmental"}],
        "clothing": [{"id": 1, "item": "Donaudampfschifffahrtsgesellschaftskapitänsmütze"}],
        "cheese_cards": [{"id": 1, "cheese": "emmental"}]}))
    for args in (["--catalog", "mg"], ["--catalog", "mim"], ["--catalog", str(long_cat)]):
        out = tmp_path / "sheet.html"
        assert main(["cards", "print", *args, "-o", str(out)]) == 0
        got = render_and_measure(out, tmp_path)
        assert got["n"] > 20 and got["bad"] == [], got["bad"][:5]


def test_every_field_is_printed_without_a_catalog(tmp_path, capsys):
    out = tmp_path / "one.svg"
    assert main(["cards", "print", "mg/clothing/16", "mg/mouse/7", "mim/card/12", "game/mms", "-o", str(out)]) == 0
    text = " ".join(t.text or "" for t in ET.fromstring(out.read_text()).iter("{http://www.w3.org/2000/svg}text"))
    assert "item: red bow" in text
    assert "wears:" in text and "cheese:" in text  # the mouse's outfit and its cheese
    assert "objects:" in text and "letters:" in text and "(" in text  # German word with its English gloss
    assert "Mucks Mäuschen Still" in text and "Mausgeflippt · clothing item" in text
    assert "mausbox:mg/clothing/16" in text.replace(" ", "")


def test_sheet_goes_to_one_file_or_a_named_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["cards", "print", "--catalog", "mg"]) == 0  # default: one HTML file in the current folder
    assert [p.name for p in tmp_path.iterdir()] == ["cards.html"]
    html = (tmp_path / "cards.html").read_text()
    assert html.count("<svg ") == 12  # 1 game card + 32 mice + 58 clothing + 9 cheeses = 100 cards, 9 a page
    for ident in ("mausbox:game/mausgeflippt", "mausbox:mg/mouse/32", "mausbox:mg/clothing/58", "mausbox:mg/cheese/9"):
        assert ident.split(":")[1].split("/")[-1] in html
    assert main(["cards", "print", "--catalog", "mg", "-o", str(tmp_path / "pages") + "/"]) == 0
    pages = sorted((tmp_path / "pages").glob("*.svg"))
    assert [p.name for p in pages][:2] == ["page-01.svg", "page-02.svg"] and len(pages) == 12
    for p in pages:
        ET.fromstring(p.read_text())
    capsys.readouterr()
    assert main(["cards", "print", "--catalog", "mg", "-o", str(tmp_path / "all.svg")]) == 2
    assert "one SVG holds one" in capsys.readouterr().err and not (tmp_path / "all.svg").exists()
    assert main(["cards", "print", "--catalog", "mg", "--kind", "cheese", "-o", str(tmp_path / "c.svg")]) == 0
    assert main(["cards", "print", "mouse 7", "-o", str(tmp_path / "x.svg")]) == 2
    assert "not a card identity" in capsys.readouterr().err
    # a well-formed identity past the catalog's last card: the card does not exist, and which ones do
    assert main(["cards", "print", "mg/mouse/99", "-o", str(tmp_path / "y.svg")]) == 2
    err = capsys.readouterr().err
    assert "no card mg/mouse/99 in the mg catalog (it has mg/mouse/01 to mg/mouse/32)" in err, err
    assert "not a card identity" not in err
    assert main(["cards", "print", "mg/hat/3", "-o", str(tmp_path / "y.svg")]) == 2
    assert "has no kind 'hat'" in capsys.readouterr().err


def test_fit_shrinks_and_wraps_to_the_box():
    size, lines = cardsheet.fit("Mausgeflippt", 55, 22, 11, 5, bold=True)
    assert lines == ["Mausgeflippt"] and cardsheet.text_width("Mausgeflippt", size, True) <= 55
    size, lines = cardsheet.fit("wears: red hat, yellow bag, blue shirt, green boots", 55, 10, 3.6, 2.2)
    assert all(cardsheet.text_width(ln, size) <= 55 for ln in lines) and len(lines) * size * 1.25 <= 10
    size, lines = cardsheet.fit("x" * 400, 20, 5, 3, 2)  # cannot fit: cut with an ellipsis, never over the box
    assert lines[-1].endswith("…") and all(cardsheet.text_width(ln, size) <= 20 for ln in lines)
