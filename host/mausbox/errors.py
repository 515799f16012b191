"""How a command fails: UserError, an expected failure printed as one friendly line, and the exit codes
(mausbox.cli: 0 success, 1 the command ran and found a problem, 2 bad usage or input, 3 no unit or port, 4 the
unit answered wrongly or the link failed). A leaf: the commands, the link and the fleet import it, and the CLI,
which loads them, hands its names on."""

from __future__ import annotations

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, EXIT_NO_UNIT, EXIT_LINK = 0, 1, 2, 3, 4


class UserError(Exception):
    """An expected failure: printed as one friendly line, no traceback."""

    def __init__(self, message: str, code: int = EXIT_PROBLEM):
        super().__init__(message)
        self.code = code
