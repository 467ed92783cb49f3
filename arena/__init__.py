"""arena: rank chat models by letting them review each other."""

from arena.config import ConfigError, Tournament, load_tournament
from arena.types import CallStatus, Verdict

__version__ = "0.1.0"

__all__ = [
    "CallStatus",
    "ConfigError",
    "Tournament",
    "Verdict",
    "__version__",
    "load_tournament",
]
