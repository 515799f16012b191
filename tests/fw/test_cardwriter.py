# Writing identities to NTAGs through the emulated reader: refusals, faults, verify.
from rfidkit import reader, uid  # first: the emulator is the biggest compile (96 KB heap)

# isort: split
from maus.cards import reader as rfid
from maus.cards import writer as cw
from maus.drivers import ndef_write
from maus.sim import mfrc522_emu as emu_mod
from maus.sim.mfrc522_emu import NTAG, MifareClassic1K

U7 = uid(0x04, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66)


def _writer_pad():
    emu, r = reader()
    return emu, r


def test_write_blank_then_read():
    emu, r = _writer_pad()
    tag = NTAG(U7, 216)
    emu.add_tag(tag)
    res = cw.write_identity(r, "mg/mouse/7")
    assert res == (cw.W_OK, "04112233445566", None)
    data = ndef_write.tlv(ndef_write.text_record("mausbox:mg/mouse/07"))
    assert tag.mem[16:16 + len(data)] == data
    p = rfid.Presence(r)
    assert p.poll(0) == [("tap", "mg/mouse/07", "04112233445566")]


def test_write_refusals():
    emu, r = _writer_pad()
    assert cw.write_identity(r, "mg/mouse/1")[0] == cw.W_NO_CARD
    assert cw.write_identity(r, "mg/mouse/99")[0] == cw.W_BAD_ID
    emu.add_tag(emu.make_tag("mg/mouse/02"))
    res = cw.write_identity(r, "mg/mouse/03")
    assert res[0] == cw.W_OTHER and res[2] == "mg/mouse/02"
    assert cw.write_identity(r, "mg/mouse/2")[0] == cw.W_SAME
    assert cw.write_identity(r, "mg/mouse/03", force=True)[0] == cw.W_OK
    assert cw.write_identity(r, "mg/mouse/03")[0] == cw.W_SAME
    emu.add_tag(NTAG(U7))
    assert cw.write_identity(r, "mg/mouse/04")[0] == cw.W_SEVERAL
    emu, r = _writer_pad()
    emu.add_tag(MifareClassic1K(uid(1, 2, 3, 4)))
    assert cw.write_identity(r, "mg/mouse/04")[0] == cw.W_NOT_NTAG
    emu, r = _writer_pad()
    t = NTAG(U7)
    t.mem[12:16] = b"\x00\x00\x00\x00"  # no capability container
    emu.add_tag(t)
    assert cw.write_identity(r, "mg/mouse/04")[0] == cw.W_NOT_NDEF
    t.mem[12:16] = b"\xe1\x10\x12\x0f"  # write access: none
    assert cw.write_identity(r, "mg/mouse/04")[0] == cw.W_READ_ONLY
    t.mem[12:16] = b"\xe1\x10\x02\x00"  # 16 bytes of data area only
    assert cw.write_identity(r, "game/mausgeflippt")[0] == cw.W_TOO_BIG
    assert len(cw.WRITE_RESULTS) == cw.W_BAD_ID + 1


def test_write_faults_are_reported():
    # Two lost writes: the empty-message header and the first body page.
    for kind, n, want in ((emu_mod.FAULT_WRITE_NAK, 1, cw.W_IO), (emu_mod.FAULT_WRITE_LOST, 2, cw.W_VERIFY),
                          (emu_mod.FAULT_REMOVE, 1, cw.W_IO)):
        emu, r = _writer_pad()
        tag = NTAG(U7)
        emu.add_tag(tag)
        emu.inject(kind, n)
        res = cw.write_identity(r, "mim/card/7")
        assert res[0] == want, (kind, res)
        # Never half an identity: the tag reads as holding none or the whole one.
        emu.add_tag(tag)
        ev = rfid.Presence(r).poll(0)
        assert len(ev) == 1 and ev[0][1] in (None, "mim/card/07"), ev
        assert cw.write_identity(r, "mim/card/7", force=True)[0] in (cw.W_OK, cw.W_SAME)
