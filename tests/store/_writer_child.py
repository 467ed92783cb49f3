"""Child process for the crash tests: writes rows until killed.

Usage: python _writer_child.py DIR COMPACT_EVERY VERSION_BASE [MAX_ROUNDS]

Each round writes one `answers` row for BATCH consecutive ids (a key space of
KEYS ids, so ids are rewritten) concurrently, with `attempts` as the row's
version, and prints `durable <id> <version>` once its write has returned.
"""

from __future__ import annotations

import asyncio
import sys
import time

from arena.store import RunLog

KEYS = 300
BATCH = 40


def row(key: int, version: int) -> dict[str, object]:
    """One answers row; `attempts` carries the version."""
    now = time.time()
    return {
        "id": f"a-{key}",
        "status": "ok" if version % 3 else "failed",
        "provider": "sim",
        "attempts": version,
        "started_at": now,
        "finished_at": now,
        "question_id": f"q{key % 7}",
        "model": "m",
        "answer_turns": [f"answer {key} v{version}", "x" * (key % 50)],
    }


async def main(directory: str, compact_every: int, base: int, max_rounds: int) -> None:
    """Write rounds until killed or max_rounds is reached."""
    async with RunLog(directory).writer(compact_every=compact_every) as writer:
        print("ready", flush=True)

        async def one(key: int, version: int) -> None:
            await writer.write("answers", row(key, version))
            sys.stdout.write(f"durable a-{key} {version}\n")
            sys.stdout.flush()

        for r in range(max_rounds):
            start = (r * BATCH) % KEYS
            await asyncio.gather(*(one((start + i) % KEYS, base + r) for i in range(BATCH)))
    print("done", flush=True)


if __name__ == "__main__":
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 10**9
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), rounds))
