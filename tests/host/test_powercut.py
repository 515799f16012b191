"""Power cuts at the block-device level, exhaustively, on the real MicroPython unix port.

littlefs (vfs.VfsLfs2) on a RAM block device loses power after its Nth block write or erase, for every N
during a game of 102 records (three of the ESP32's 4 KB blocks); every third cut tears the write it hits
half-way. The surviving image is remounted and recovered. test_powercut_random.py cuts at random points and
during recovery; `make bench` (bench_logs.py) runs every cut of a 202-record game on 4 KB blocks and of a
252-record game on 512-byte blocks, 1,000 random cuts and a denser recovery campaign.
"""

from powercutkit import campaign


def test_every_cut_during_a_100_event_game_esp32_blocks():
    # 100 events, not bench's 200: every cut costs a mount and two recoveries, and the cuts grow with the game
    # (1,871 cuts: ~29 s of CPU here against ~83 s); the log still spans three 4 KB blocks.
    s = campaign("every", "24", "100", "4096")
    assert s["records"] == 102 and s["block_size"] == 4096
    assert s["cuts"] == s["ops"] + 1 > 1800
    assert s["lost"] == 0 and s["mount_failures"] == 0 and s["crashes"] == 0 and s["bad"] == 0
    assert 0 < s["dropped"] < s["cuts"]
