# What the unit's parts share with its entry point, maus.unit (which imports it from here, as they do: no
# part imports the package that loads it): the games on the menu, the calibration file, the crash count.
# menu key -> (identity of the game card, module, players lo, hi, variants, young players allowed,
#              piezo detector needed, module with the catalog's load_catalog, catalog name: catalogs/<name>.json,
#              the game's GAME; the catalog is built before the game's own modules load: maus.unit.play)
GAMES = {
    "mausgeflippt": ("game/mausgeflippt", "maus.games.mausgeflippt.rules", 2, 6, (None,), True, False,
                     "maus.games.mausgeflippt.cards", "mg"),
    "mim": ("game/mim", "maus.games.mim.rules", 2, 5, ("A", "B", "C"), False, False, "maus.games.mim.rules", "mim"),
    "mms": ("game/mms", "maus.games.mms.rules", 2, 4, (None,), False, True, "maus.games.mms.castle", "mms"),
}
CALIB_FILE = "calib.json"


def crash_count(hw, n=None):
    # RTC memory byte 0 (main.py's layout): the boots in a row that have not yet run healthy or stopped cleanly
    data = hw.rtc_load()
    cur = data[0] if data and len(data) >= 2 and data[1] == 0xA5 else 0
    if n is not None:
        hw.rtc_save(bytes((n, 0xA5)) + (data[2:] if data else b""))  # later bytes: the watchdog's, the boot id
    return cur
