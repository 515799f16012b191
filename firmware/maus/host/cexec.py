# Checked commands for the raw REPL (deploy, recovery): the host sends each command as
# _mbx_x(b"<code>", <crc32 of code>, globals()) and a command damaged on the wire is refused here, before it is
# compiled, so it never runs; the host sends it again. A unit being deployed may not have this module yet: the
# host sends this file's text first, in each raw-REPL session, and checks that it refuses and runs as it should
# (host/mausbox/link/repl.py, docs/protocol.md).
import binascii

MBX_DAMAGED = "MBX-DAMAGED"


def _mbx_x(src, crc, g):
    if binascii.crc32(src) != crc:
        raise OSError(MBX_DAMAGED)
    exec(src, g)
