"""`python -m arena` runs the CLI (and `program` is the `arena` command)."""

from arena.runtime import defer_signals


def program() -> None:
    """The `arena` program: SIGINT and SIGTERM are noted from here on, before the CLI's
    modules import (arena.runtime), then the command line runs."""
    defer_signals()
    from arena.cli import main

    main()


if __name__ == "__main__":
    program()
