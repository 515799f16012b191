"""Compiled catalogs (mausbox.catalogc): the shipped .cat files are the ones the .json files compile to,
and a catalog that does not pass its game's checks gets none."""

import json

import pytest
from mausbox import catalogc
from mausbox.paths import FIRMWARE_PKG

CATALOGS = FIRMWARE_PKG / "catalogs"


@pytest.mark.parametrize("short", ["mg", "mim"])
def test_the_shipped_cat_files_are_current(short):
    want = catalogc.compile_text(CATALOGS / f"{short}.json")
    assert want is not None
    assert (CATALOGS / f"{short}.cat").read_text() == want, "run `make catalogs` after changing a catalog"


def test_a_game_whose_catalog_is_not_plain_values_has_none():
    assert catalogc.compile_text(CATALOGS / "mms.json") is None
    assert not (CATALOGS / "mms.cat").exists()


def test_a_bad_catalog_is_refused_with_its_problem(tmp_path):
    data = json.loads((CATALOGS / "mg.json").read_text())
    data["mice"][0]["wears"] = ["purple hat", "yellow glasses"]
    bad = tmp_path / "mg.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="purple hat"):
        catalogc.compile_file(bad)
    assert not (tmp_path / "mg.cat").exists()


def test_a_compiled_catalog_names_its_source(tmp_path):
    src = tmp_path / "mim.json"
    src.write_bytes((CATALOGS / "mim.json").read_bytes())
    out = catalogc.compile_file(src)
    assert out == tmp_path / "mim.cat"
    head, body = out.read_text().splitlines()
    import hashlib

    magic, src_sha, body_sha = head.split()
    assert magic == catalogc.HEADER and src_sha == hashlib.sha256(src.read_bytes()).hexdigest()
    assert body_sha == hashlib.sha256(body.encode()).hexdigest()
    kinds = [k for k, _ in json.loads(body)]
    assert set(kinds) <= {"s", "b", "i"} and "b" in kinds
