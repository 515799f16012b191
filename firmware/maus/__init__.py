# Mausbox firmware: the unit's MicroPython application.
# Pure modules (rules, scoring, logs, catalogs) never import `machine`; hardware lives in maus.hw.
VERSION = "0.1.0"
