# Runs first at every start and soft reset, also when the host enters the raw REPL (main.py does not
# run then). The watchdog the app starts survives a soft reset: keep it fed while no app runs (the REPL,
# mpremote, safe mode); the app takes it over again when it starts.
try:
    import maus.hw

    maus.hw.keep_watchdog()
except Exception as e:  # noqa: BLE001 - the REPL must stay reachable whatever happened
    print("boot.py:", e)
