# Freeze or install the Mausbox firmware (micropython-lib style manifest): `make image` freezes it into an
# ESP32 image (FROZEN_MANIFEST). maus/sim (the virtual unit) is frozen too but never imported on a board.
metadata(description="Mausbox: referee for mouse-themed tabletop games", version="0.1.0")
package("maus")
