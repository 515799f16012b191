# Freeze or install the Mausbox firmware (micropython-lib style manifest).
metadata(description="Mausbox: referee for mouse-themed tabletop games", version="0.1.0")
require("ssd1306")
package("maus")
