# Freeze or install the Mausbox firmware (micropython-lib style manifest): `make image` freezes it into an
# ESP32 image (FROZEN_MANIFEST), and the test harness into a unix port (mausbox.mpbuild.ensure_frozen, the
# frozen-image tests). maus/sim (the virtual unit) is frozen too but never imported on a board. The data files
# (texts, catalogs) cannot be frozen: `mausbox deploy` writes them to /maus-data (maus.data_dir).
# opt=3: as a deploy compiles the firmware (mausbox.build.FIRMWARE_OPT): no asserts, no line numbers.
metadata(description="Mausbox: referee for mouse-themed tabletop games", version="0.1.0")
package("maus", opt=3)
