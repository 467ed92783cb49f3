"""`Tournament.config_hash`: keys at their defaults are left out, so a key a later
version adds with a default never changes the hash of an existing tournament."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml
from pydantic import Field

from arena.config import ReviewConfig, Tournament, TournamentConfig, load_tournament
from tests.conftest import small_tournament


def _load(tmp_path: Path, **extra: object) -> Tournament:
    return load_tournament(small_tournament(tmp_path, extra={"output": None, **extra}))


class _LaterReview(ReviewConfig):
    """The `review:` section of a later version, with one more defaulted key."""

    cache_hint: bool = False


class _LaterConfig(TournamentConfig):
    """A later version's schema: a new top-level key and a new nested key, both defaulted."""

    review: _LaterReview = Field(default_factory=_LaterReview)
    pacing: str | None = None


def test_a_key_spelled_at_its_default_hashes_as_if_omitted(tmp_path: Path) -> None:
    plain = _load(tmp_path)
    spelled = _load(
        tmp_path,
        unpriced="error",
        alerts=None,
        metrics_file=None,
        review={"temperature": 0.0, "max_tokens": 1024},
        sampling={"strategy": "full"},
        prices={},
    )
    assert spelled.config_hash() == plain.config_hash()


def test_a_new_defaulted_key_leaves_the_hash_unchanged(tmp_path: Path) -> None:
    t = _load(tmp_path)
    data = yaml.safe_load(t.path.read_text())
    later = _LaterConfig.model_validate({**data, "models": t.config.model_dump()["models"]})
    assert later.model_dump()["review"]["cache_hint"] is False  # the new keys are there
    assert replace(t, config=later).config_hash() == t.config_hash()


def test_a_value_off_its_default_changes_the_hash(tmp_path: Path) -> None:
    base = _load(tmp_path).config_hash()
    assert _load(tmp_path, unpriced="allow").config_hash() != base
    assert _load(tmp_path, review={"temperature": 0.5}).config_hash() != base
    assert _load(tmp_path, alerts={}).config_hash() != base  # a section present is on


def test_the_hash_of_a_fixed_tournament_is_stable(tmp_path: Path) -> None:
    """The hash is recorded in run directories (tournament.json): a change to how it is
    computed must be deliberate (and said in the release notes)."""
    assert _load(tmp_path).config_hash() == "aaea7b2b24c06afa"
