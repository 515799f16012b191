# The unit shell's words, in German and English. Games bring their own TEXT (see maus.game).
TEXT = {
    "en": {
        "boot": "Mausbox {version}\n{board}",
        "selftest_fail": "Check: {part}\n{why}",
        "safe_mode": "SAFE MODE\n{n} crashes\nGames off.\nUSB REPL free.",
        "menu": "Choose:\n> {item}\n\nP1: click=next\nhold=choose\nor tap game card",
        "variant": "{game}\nVariant: {v}\nP1 click=next\nhold=choose",
        "join": "{game}\nPress to join\n{hold}Joined: {n}\nDouble press\n= start",
        "join_young": "hold 2s: young\n",
        "joined": "Player {p} in{young}",
        "need_players": "Need {lo}-{hi}\nplayers",
        "abort_confirm": "Abort game?\nTap the game\ncard again",
        "aborted": "Game aborted",
        "end": "Game over!\n{scores}\nP1 click: again\nhold: menu",
        "unknown_card": "Unknown card",
        "bad_catalog": "Card data bad:\n{why}",
        "wrong_game": "Card of another\ngame: {game}",
        "settings": "Settings\n{key}\n= {value}\nP1 next, P2 +\nhold: save",
        "log_degraded": "Log full!\nGame goes on",
        "log_room": "Made room:\n{n} old logs gone",
        "latency": "Latency test\n{n} toggles...",
        "latency_done": "Capture delay us\nmin {min} med {med}\np99 {p99}\nmax {max}",
        "latency_none": "No jumper fitted",
        "calibrate": "Calibrate:\nquiet please",
        "calibrate_tap": "Now tap the\ncastle gently,\n3 times",
        "calibrate_done": "Calibrated\nthreshold {base}\nnoise {floor}",
        "calibrate_fail": "No tap felt:\ncalibration\nnot changed",
        "stuck": "Button {p} stuck\n(ignored)",
        "m_mausgeflippt": "Mausgeflippt",
        "m_mim": "M is for Mouse",
        "m_mms": "Mucks Maeuschen",
        "m_settings": "Settings",
        "m_latency": "Latency test",
        "m_calibrate": "Calibrate piezo",
        "m_lang": "Sprache: Deutsch",
    },
    "de": {
        "boot": "Mausbox {version}\n{board}",
        "selftest_fail": "Pruefen: {part}\n{why}",
        "safe_mode": "SICHERER MODUS\n{n} Abstuerze\nSpiele aus.\nUSB-REPL frei.",
        "menu": "Waehlen:\n> {item}\n\nS1: kurz=weiter\nhalten=waehlen\noder Spielkarte",
        "variant": "{game}\nVariante: {v}\nS1 kurz=weiter\nhalten=waehlen",
        "join": "{game}\nDruecken = dabei\n{hold}Dabei: {n}\nDoppeldruck\n= Start",
        "join_young": "2s halten: klein\n",
        "joined": "Spieler {p} da{young}",
        "need_players": "Braucht {lo}-{hi}\nSpieler",
        "abort_confirm": "Abbrechen?\nSpielkarte\nnochmal legen",
        "aborted": "Spiel abgebrochen",
        "end": "Spielende!\n{scores}\nS1 kurz: nochmal\nhalten: Menue",
        "unknown_card": "Karte unbekannt",
        "bad_catalog": "Kartendaten\nfehlerhaft:\n{why}",
        "wrong_game": "Karte von einem\nanderen Spiel: {game}",
        "settings": "Einstellungen\n{key}\n= {value}\nS1 weiter, S2 +\nhalten: sichern",
        "log_degraded": "Speicher voll!\nSpiel geht weiter",
        "log_room": "Platz gemacht:\n{n} alte Logs weg",
        "latency": "Latenztest\n{n} Schaltungen",
        "latency_done": "Erfassung us\nmin {min} med {med}\np99 {p99}\nmax {max}",
        "latency_none": "Keine Bruecke",
        "calibrate": "Kalibrieren:\nbitte leise",
        "calibrate_tap": "Jetzt 3x sanft\nan die Burg\nklopfen",
        "calibrate_done": "Kalibriert\nSchwelle {base}\nRauschen {floor}",
        "calibrate_fail": "Kein Klopfen:\nKalibrierung\nunveraendert",
        "stuck": "Taste {p} klemmt\n(ignoriert)",
        "m_mausgeflippt": "Mausgeflippt",
        "m_mim": "M wie Maus",
        "m_mms": "Mucks Maeuschen",
        "m_settings": "Einstellungen",
        "m_latency": "Latenztest",
        "m_calibrate": "Piezo kalibrier.",
        "m_lang": "Language: English",
    },
}


def fmt(table, lang, key, kw):
    """Look a key up in a TEXT table (falling back to English, then the key) and fill it in."""
    t = table.get(lang) or {}
    s = t.get(key)
    if s is None:
        s = table.get("en", {}).get(key, key)
    try:
        return s.format(**kw)
    except (KeyError, IndexError, ValueError):
        return s
