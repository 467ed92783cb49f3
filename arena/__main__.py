"""`python -m arena` runs the CLI."""

import os
import signal
import sys
from types import FrameType


def _loading_interrupted(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C while the CLI loads: exit 130 (the documented code), no traceback."""
    sys.stderr.write("arena: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


signal.signal(signal.SIGINT, _loading_interrupted)

from arena.cli import main  # noqa: E402 - after the handler

main()
