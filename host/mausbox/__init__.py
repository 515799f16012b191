"""Mausbox host tools: flash, deploy, pull logs, manage cards and run the virtual unit."""

from mausbox.mpshim import install as _install_mpshim

_install_mpshim()

__version__ = "0.1.0"
