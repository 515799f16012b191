# The host service on the REPL's console, for a unit whose app does not run (safe mode, a stopped app): the host
# starts it from the raw REPL (`import maus.host.repl; maus.host.repl.serve()`, docs/protocol.md) and ends it with
# an `exit` request, or it ends after idle_s quiet seconds. What the service needs of a unit is a shelf of its
# files; the hardware is opened only for the requests that need it.
import json

from maus.host.frame import hexs as _hexs
from maus.host.service import HostService


class _Shelf:
    # What the service needs when no app runs (safe mode, a stopped app): the files on flash. The hardware
    # is opened only for the requests that need it.
    mode = "repl"
    game = None
    log = None
    race = False
    rfid = None

    def __init__(self):
        from maus.log.store import LogStore
        from maus.settings.values import Settings

        self.store = LogStore()
        self.settings = Settings()
        self.enrolment = None
        self._hw = None
        self.hw_problem = None  # why the hardware could not be opened
        self._reader = None
        self._looked = False  # for a reader
        try:
            with open("/status.json") as f:
                self.status = json.load(f)
        except (OSError, ValueError):
            self.status = {}
        if not isinstance(self.status, dict):
            self.status = {}
        self.boot, self.crashes = _boot_now()  # status.json may be from an earlier boot: the host compares
        try:
            import maus

            self.status["version"] = maus.VERSION
        except ImportError:
            pass

    @property
    def unit_id(self):
        try:
            import machine

            uid = machine.unique_id()  # a board's, without opening its hardware
        except (ImportError, AttributeError):
            hw = self.hw
            if hw is None:
                return None
            uid = hw.unique_id()
        return _hexs(uid)

    @property
    def hw(self):
        # None when the board cannot be opened (a corrupt board.json: one way into safe mode). The service
        # still answers hello, status and the logs, which need no hardware, and says why.
        if self._hw is None and self.hw_problem is None:
            try:
                from maus.hw import load_board, open_hardware

                self._hw = open_hardware(load_board())
            except Exception as e:  # noqa: BLE001 - whatever is broken, the logs stay reachable
                self.hw_problem = "board: %s" % (e.args[0] if e.args else type(e).__name__)
                probs = self.status.setdefault("problems", [])
                if isinstance(probs, list) and self.hw_problem not in probs:
                    probs.append(self.hw_problem)
        return self._hw

    @property
    def reader(self):
        if not self._looked:
            self._looked = True
            if self.hw is not None and self.hw.spi is not None:
                from maus.drivers.mfrc522 import MFRC522

                self._reader = MFRC522(self.hw.spi, self.hw.rfid_cs, self.hw.rfid_rst)
        return self._reader


def serve(idle_s=60):
    """The service on the REPL's console, for a unit whose app does not run (safe mode, stopped): the host
    starts it from the raw REPL and ends it with an `exit` request, or it ends after idle_s quiet seconds."""
    import time

    svc = HostService(_Shelf(), app=False)
    quiet = 0
    while not svc.done:
        before = svc.requests
        wait = svc.poll(10)
        if svc.requests != before or svc.job is not None:
            quiet = 0
        elif wait:
            for _ in range(wait):  # a request's first byte ends the wait (looked at each ms, as hw.idle does)
                if svc.ready():
                    break
                time.sleep_ms(1)
            quiet += wait
            if quiet > idle_s * 1000:
                break


def _boot_now():
    # (this boot's id, the crashes counted) from RTC memory as main.py keeps it, without opening the hardware
    try:
        import machine

        data = bytes(machine.RTC().memory())
    except (ImportError, AttributeError):  # the virtual unit (maus.sim.hw)
        try:
            with open(".rtcmem", "rb") as f:
                data = f.read()
        except OSError:
            data = b""
    if len(data) < 2 or data[1] != 0xA5:
        return None, None
    return (_hexs(data[3:7]) if len(data) >= 7 else None), data[0]
