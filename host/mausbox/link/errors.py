"""How the link fails: its exceptions, each a UserError with its exit code (mausbox.errors). A leaf of the link:
the session (unit.py) and the raw REPL it loads when it needs one (repl.py) both raise them."""

from __future__ import annotations

from mausbox.errors import EXIT_LINK, EXIT_PROBLEM, UserError


class LinkError(UserError):
    """The link failed: no answer in time, the port went away, or the answer made no sense."""

    def __init__(self, message: str):
        super().__init__(message, EXIT_LINK)


class LinkTimeout(LinkError):
    pass


class AnswerLost(LinkTimeout):
    """The answer to a quick request is clearly lost on the way (bounds.py, LOST_QUIET): ask again now."""


class LinkLost(LinkError):
    """The port itself failed (unplugged, reset)."""


class NoService(LinkError):
    """The unit shows the MicroPython REPL: no app answers there."""


class UnitError(UserError):
    """The unit answered the request with an error (`error`: its code, `msg`: docs/protocol.md); `code` is the
    exit code, as for every UserError."""

    def __init__(self, port: str, op: str, error: str, msg: str):
        super().__init__(f"{port}: the unit refused `{op}`: {msg}", EXIT_LINK if error == "proto" else EXIT_PROBLEM)
        self.op = op
        self.error = error
        self.msg = msg


class FrameGap(LinkError):
    def __init__(self, message: str, have: int):
        super().__init__(message)
        self.have = have
