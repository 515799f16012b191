"""The virtual unit: the real firmware on the MicroPython unix port, with simulated hardware."""
