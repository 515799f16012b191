# The raw REPL's checked commands (maus.host.cexec): a command whose crc32 does not match is refused before it is
# compiled; one that matches runs in the globals it is given.
import binascii

from maus.host.cexec import MBX_DAMAGED, _mbx_x


def _cmd():
    return b"ran.append(1)\nx = 40 + 2\n"


def test_a_sound_command_runs_in_the_globals_given():
    g = {"ran": []}
    src = _cmd()
    _mbx_x(src, binascii.crc32(src), g)
    assert g["ran"] == [1] and g["x"] == 42


def test_every_single_bit_flip_is_refused_and_nothing_runs():
    src = _cmd()
    crc = binascii.crc32(src)
    g = {"ran": []}
    for i in range(len(src)):
        for bit in range(8):
            bad = bytearray(src)
            bad[i] ^= 1 << bit
            try:
                _mbx_x(bytes(bad), crc, g)
                raise AssertionError("ran a damaged command")
            except OSError as e:
                assert e.args[0] == MBX_DAMAGED
    for bit in range(32):  # a damaged checksum: refused too
        try:
            _mbx_x(src, crc ^ (1 << bit), g)
            raise AssertionError("ran with a damaged crc")
        except OSError as e:
            assert e.args[0] == MBX_DAMAGED
    assert g["ran"] == []
