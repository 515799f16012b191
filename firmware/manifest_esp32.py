# The frozen manifest of the ESP32 image `make image` builds. FROZEN_MANIFEST replaces the port's own, so it is
# included first: ports/esp32/boards/manifest.py freezes _boot.py (which mounts the filesystem and runs boot.py and
# main.py), neopixel, asyncio and the rest a stock image has. Then the app (manifest.py, without the simulator).
# A board with a manifest of its own (e.g. ARDUINO_NANO_ESP32) needs that one here instead.
include("$(PORT_DIR)/boards/manifest.py")
include("manifest.py")
