"""A hostile unit on a pty: it speaks the host protocol's frames well enough to be believed (it answers
`hello`), then misbehaves in a chosen way; or answers every request with a chosen document."""

from __future__ import annotations

import json
import os
import threading
import time
import tty

from mausbox.link.frame import DATA, PART, REQUEST, RESPONSE, Parser, encode

HELLO = {"ok": True, "proto": 1, "proto_min": 1, "fw": "0.1", "unit": "evil01", "board": "sim", "platform": "esp32",
         "micropython": "1.28.0", "app": True, "safe_mode": False, "mode": "menu", "game": None}


class Hostile:
    """kind: "same" (the same valid frame of the answer, forever), "alternate" (two valid frames of the answer
    taking turns, ~2.3 KB/s, forever), "stale" (its answer to `hello` again, forever, whatever is asked),
    "endless" (new valid frames, slowly, forever), "answers" (every op answered from `answers`, a dict op -> document or callable(req) -> bytes)."""

    def __init__(self, kind: str, answers: dict | None = None, period: float = 0.01):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.port = os.ttyname(self.slave)
        self.kind = kind
        self.answers = answers or {}
        self.period = period
        self.ops: list[str] = []
        self.chatter = b""  # console text sent before each answer
        self.hello_seq = 0
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _send(self, data: bytes) -> None:
        try:
            os.write(self.master, data)
        except OSError:
            pass

    def _run(self):
        import select

        p = Parser()
        busy = None  # (seq, op) being "answered" forever
        n = 0
        while not self._stop:
            r, _, _ = select.select([self.master], [], [], self.period)
            if r:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    data = b""
                for f in p.feed(data):
                    if isinstance(f, bytes) or f.kind != REQUEST:
                        continue
                    try:
                        req = json.loads(f.payload)
                    except ValueError:
                        continue
                    op = req.get("op")
                    self.ops.append(op)
                    if op == "hello":
                        self.hello_seq = f.seq
                        self._send(encode(RESPONSE, f.seq, json.dumps(self.answers.get("hello", HELLO)).encode()))
                    elif self.kind == "answers":
                        a = self.answers.get(op, {"ok": True})
                        if self.chatter:
                            self._send(self.chatter)
                        self._send(a(req, f.seq) if callable(a) else encode(RESPONSE, f.seq, json.dumps(a).encode()))
                    else:
                        busy = (f.seq, op)
            if busy is not None:
                seq, op = busy
                if self.kind == "same":
                    self._send(encode(DATA, seq, b"00000000" + b"x" * 64) if op == "read"
                               else encode(PART, seq, b"00001-mg.jsonl 10\n"))
                elif self.kind == "stale":
                    self._send(encode(RESPONSE, self.hello_seq, json.dumps(HELLO).encode()))
                    time.sleep(0.05)
                elif self.kind == "alternate":
                    n += 1
                    self._send(_alternate(op, seq, n % 2))
                    time.sleep(0.2)  # ~460 bytes a frame: ~2.3 KB/s
                elif self.kind == "endless":
                    n += 1
                    self._send(encode(PART, seq, b"%05d-mg.jsonl 10\n" % (n % 100000)) if op != "read"
                               else encode(PART, seq, b""))
                    time.sleep(0.3)

    def close(self):
        self._stop = True
        self._t.join(timeout=3)
        os.close(self.master)
        os.close(self.slave)


def _alternate(op: str, seq: int, which: int) -> bytes:
    """One of two valid frames of an answer to `op`, each new once: a listing's first two parts, a log's first
    two chunks, or two parts."""
    if op == "read":
        return encode(DATA, seq, b"%08x" % (which * 448) + b"x" * 448)
    if op == "logs":
        return encode(PART, seq, b"+%d\n" % which + b"".join(b"%05d-mg.jsonl 10\n" % (which * 21 + i + 1)
                                                           for i in range(21)))
    return encode(PART, seq, b"%d" % which * 440)


def log_answers(logs: dict[str, bytes]) -> dict:
    """Answers of a unit holding `logs` (name -> bytes): listing, reads, marks, as docs/protocol.md has them."""
    import hashlib

    def listing(req, seq):
        body = b"".join(b"%s %d\n" % (n.encode(), len(d)) for n, d in logs.items())
        return encode(PART, seq, body) + encode(RESPONSE, seq, json.dumps({"ok": True, "n": len(logs)}).encode())

    def read(req, seq):
        d = logs[req["name"]]
        off = req["off"]
        out = b"".join(encode(DATA, seq, b"%08x" % i + d[i:i + 1024]) for i in range(off, len(d), 1024))
        return out + encode(RESPONSE, seq, json.dumps({"ok": True, "size": len(d),
                                                       "sha256": hashlib.sha256(d).hexdigest()}).encode())

    return {"logs": listing, "read": read, "mark": {"ok": True, "marked": True}}
