# Freeze or install the Mausbox firmware (micropython-lib style manifest): the app as a board holds it, compiled at
# -O3 as a deploy compiles it (mausbox.build.FIRMWARE_OPT: no asserts, no line numbers). `make image` freezes it into
# an ESP32 image through manifest_esp32.py (which keeps the port's own frozen modules); the test harness freezes it
# into the unix port with sim=True (maus/sim, the virtual unit, too; mausbox.mpbuild.ensure_frozen). The data files
# (texts, catalogs) cannot be frozen: `mausbox deploy` writes them to /maus-data (maus.data_dir, docs/build.md).
import os

options.defaults(sim=False)
metadata(description="Mausbox: referee for mouse-themed tabletop games", version="0.1.0")
_sim = os.path.join("maus", "sim")
package("maus", opt=3, files=sorted(
    os.path.relpath(os.path.join(d, f), "maus")
    for d, _, names in os.walk("maus") if "__pycache__" not in d and (options.sim or not d.startswith(_sim))
    for f in names if f.endswith(".py")))
