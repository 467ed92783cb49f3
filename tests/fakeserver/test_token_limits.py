"""The fake server charges real token usage against its tpm bucket."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from arena.fakeserver import FakeServer, FakeServerConfig


def _status(url: str, text: str) -> int:
    body = {"model": "m", "messages": [{"role": "user", "content": text}], "max_tokens": 1000}
    request = urllib.request.Request(
        url + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": "Bearer k", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_tpm_is_enforced_when_a_reservation_exceeds_the_bucket() -> None:
    # 600 tpm: a 10-token bucket. Each request reserves 1000+ tokens (clipped to 10)
    # and uses about 110: the usage beyond the clipped reservation must be charged,
    # not erased by refunding the unclipped reservation.
    config = FakeServerConfig.model_validate({"limits": {"tpm": 600}})
    with FakeServer(config) as server:
        assert _status(server.url, "first") == 200
        assert _status(server.url, "second") == 429
        assert server.stats()["counts"]["rate_limited"] == 1
