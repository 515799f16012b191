"""Power cuts at the block-device level, exhaustively, on the real MicroPython unix port.

littlefs (vfs.VfsLfs2) on a RAM block device loses power after its Nth block write or erase, for every N
during a game of 202 records on the ESP32's 4 KB blocks; every third cut tears the write it hits half-way.
The surviving image is remounted and recovered. test_powercut_random.py cuts at random points and during
recovery; `make bench` also runs every cut of a 252-record game on 512-byte blocks and 1,000 random cuts.
"""

from powercutkit import campaign


def test_every_cut_during_a_200_event_game_esp32_blocks():
    s = campaign("every", "24", "200", "4096")
    assert s["records"] == 202 and s["block_size"] == 4096
    assert s["cuts"] == s["ops"] + 1 > 3000
    assert s["lost"] == 0 and s["mount_failures"] == 0 and s["crashes"] == 0 and s["bad"] == 0
    assert 0 < s["dropped"] < s["cuts"]
