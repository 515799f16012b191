"""The host's one link to a unit: the frame format (`frame`), finding ports (`ports`), the session with the
unit's host service (`unit.UnitLink`), and the raw REPL for deploy and recovery (`repl`). docs/protocol.md."""

from mausbox.link.errors import FrameGap, LinkError, LinkLost, LinkTimeout, NoService, UnitError
from mausbox.link.frame import PROTO, Frame, Parser, encode
from mausbox.link.ports import (
           BAUD,
           BUSY_HINT,
           PortInfo,
           list_ports,
           open_error,
           resolve_port,
           unit_ports,
           usb_kind,
)
from mausbox.link.unit import UnitLink

__all__ = ["BAUD", "BUSY_HINT", "PROTO", "Frame", "FrameGap", "LinkError", "LinkLost", "LinkTimeout", "NoService",
           "Parser", "PortInfo", "UnitError", "UnitLink", "encode", "list_ports", "open_error", "resolve_port",
           "unit_ports", "usb_kind"]
