# The boot steps that run before the main loop is loaded, each unloaded again after use (main()).
from maus import call_unloaded


def prepare(hw, root=""):
    """-> (problems of the board file, names of the logs recovered). The board file is checked against
    the ESP32 pin rules, and a game cut short by a power loss gets its log closed."""
    problems = ["board: " + e for e in call_unloaded("maus.board", "validate", hw.board)]
    from maus.logstore import LogStore

    return problems, call_unloaded("maus.gamelog", "recover", LogStore(root))
