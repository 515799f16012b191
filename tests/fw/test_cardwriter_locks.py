# The card writer and the NTAG static lock bits (page 2, bytes 2-3): a tag whose identity pages are
# locked is reported read-only before anything is written, so its old content survives even with force.
from rfidkit import reader, uid  # first: the emulator is the biggest compile (96 KB heap)

# isort: split
from maus.cards import writer as cardwriter
from maus.sim.mfrc522_emu import NTAG

U7 = uid(0x04, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26)


def _written(ident):
    emu, r = reader()
    tag = NTAG(U7)
    emu.add_tag(tag)
    assert cardwriter.write_identity(r, ident)[0] == cardwriter.W_OK
    return r, tag


def _lock(tag, page):
    if page < 8:
        tag.mem[10] |= 1 << page
    else:
        tag.mem[11] |= 1 << (page - 8)


def test_locked_page_is_read_only_and_untouched():
    for page in (4, 5, 8, 11):
        r, tag = _written("mg/mouse/07")
        before = bytes(tag.mem)
        _lock(tag, page)
        locked = bytes(tag.mem)
        res = cardwriter.write_identity(r, "mg/mouse/08", force=True)
        assert res[0] == cardwriter.W_READ_ONLY, (page, res)
        assert bytes(tag.mem) == locked and locked[16:] == before[16:]  # the old identity survives


def test_lock_bits_beyond_the_identity_do_not_matter():
    r, tag = _written("mg/mouse/07")
    _lock(tag, 15)  # past the pages an identity needs
    _lock(tag, 3)  # the capability container
    assert cardwriter.write_identity(r, "mg/cheese/3", force=True)[0] == cardwriter.W_OK
