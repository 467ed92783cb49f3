"""`Tournament`: a validated config with everything it refers to; `model_fingerprint`."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.config._examples import ExamplePool
from arena.config._registry import FILE_PROVIDER, SIM_TYPE
from arena.config._schema import BATCH_PROVIDER_TYPES, ModelConfig, ProviderConfig, TournamentConfig
from arena.config._sim import _LATER_SIM_PARAMS, SIM_RUN_ONLY, SimParams
from arena.formats import AnswerFile, Question


@dataclass(frozen=True)
class Tournament:
    """A validated tournament: config plus everything it refers to, loaded."""

    path: Path
    config: TournamentConfig
    questions: tuple[Question, ...]
    review_template: str
    review_template_path: Path
    output_dir: Path
    # Contestants whose answers come from a file: model name -> the file's answers.
    answer_files: dict[str, AnswerFile] = field(default_factory=dict)
    # (K, N) when this is shard K of N (`arena run --shard K/N`, see arena.shard):
    # `questions` then holds only that shard's questions.
    shard: tuple[int, int] | None = None
    # The `examples:` pool, loaded and checked, when it applies to reviews
    # (`apply_to` lists them); None otherwise.
    examples: ExamplePool | None = None
    # The same pool when it applies to the BatchEval stage; None otherwise.
    batcheval_examples: ExamplePool | None = None

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def contestants(self) -> list[str]:
        return list(self.config.contestants)

    @property
    def reviewers(self) -> list[str]:
        return list(self.config.reviewers or self.config.contestants)

    def model(self, name: str) -> ModelConfig:
        return self.config.models[name]

    def provider_model_id(self, name: str) -> str:
        return self.config.models[name].model or name

    def provider_of(self, name: str) -> str:
        """The provider entry serving a model (FILE_PROVIDER for answers from a file)."""
        return self.config.models[name].provider or FILE_PROVIDER

    def from_file(self, name: str) -> bool:
        """Whether a model's answers come from a file (it makes no calls)."""
        return self.config.models[name].answers is not None

    def used_models(self) -> list[str]:
        """Models that call a provider: contestants, reviewers, BatchEval scorers, named
        discussants, each once, in config order (contestants from a file make no calls)."""
        scorers = self.config.batcheval.scorers if self.config.batcheval else []
        discussants = self.config.discussion.named_discussants() if self.config.discussion else []
        names = dict.fromkeys(self.contestants + self.reviewers + scorers + discussants)
        return [n for n in names if self.config.models[n].provider is not None]

    def model_fingerprint(self, name: str) -> dict[str, Any]:
        """What a model's outputs depend on: provider type, model id, params."""
        return model_fingerprint(name, self.config.models, self.config.providers, self.config.seed)

    def review_settings(self, name: str) -> tuple[float, int]:
        """(temperature, max_tokens) of a model's reviews: its own `review:`, else the section's."""
        own = self.config.models[name].review
        section = self.config.review
        return (
            section.temperature if own.temperature is None else own.temperature,
            section.max_tokens if own.max_tokens is None else own.max_tokens,
        )

    def limited(self, n: int) -> Tournament:
        """The same tournament on its first `n` questions (`arena run --limit N`)."""
        return replace(self, questions=self.questions[:n])

    def batched(self) -> Tournament:
        """This tournament with every provider that has a batch API in batch mode (`--batch`)."""
        providers = {
            name: p
            if p.batch_mode() is not None or p.type not in BATCH_PROVIDER_TYPES
            else p.model_copy(update={"batch": True})
            for name, p in self.config.providers.items()
        }
        return replace(self, config=self.config.model_copy(update={"providers": providers}))

    def answer_file_problems(self) -> list[str]:
        """One line per contestant whose file lacks a usable answer to some question."""
        lines: list[str] = []
        for name, found in self.answer_files.items():
            asked = [q.id for q in self.questions if q.id in found.problems]
            if not asked:
                continue
            shown = "; ".join(f"{qid}: {found.problems[qid]}" for qid in asked[:5])
            more = f"; and {len(asked) - 5} more" if len(asked) > 5 else ""
            lines.append(
                f"models.{name}: {len(asked)} question(s) without a usable answer in "
                f"{found.path}: {shown}{more} (logged as failed answers)"
            )
        return lines

    def input_files(self) -> dict[str, Path]:
        """The files the tournament's calls are made from, by role: `questions`,
        `references`, and `answers.MODEL` for each contestant answering from a file."""
        base = self.path.parent
        files: dict[str, Path] = {}
        for key, value in (
            ("questions", self.config.questions),
            ("references", self.config.references),
        ):
            if value:
                files[key] = Path(value) if Path(value).is_absolute() else base / value
        for name, found in sorted(self.answer_files.items()):
            files[f"answers.{name}"] = found.path
        return files

    def inputs_hash(self) -> str:
        """Hash of the content of `input_files` (tournament.json: the shards of one
        tournament must agree on it, so that shards run on different question sets,
        or with other answers, are never ranked as one run). The content, not the
        names: a file moved or renamed hashes the same; one edited does not."""
        digest = hashlib.sha256()
        for role, path in self.input_files().items():
            digest.update(role.encode() + b"\0")
            try:
                with path.open("rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
            except OSError as exc:  # read at load already: gone since
                digest.update(f"unreadable: {exc.strerror}".encode())
            digest.update(b"\0")
        return digest.hexdigest()[:16]

    def config_hash(self) -> str:
        """Hash of the resolved config and the review template (tournament.json: shards of
        one tournament must agree on it).

        Keys left at their defaults, at any depth, are left out: a key spelled at its
        default hashes as if omitted, and a key a later arena version adds with a
        default never changes the hash of an existing tournament. (A changed
        default does not change it either: give such a change a new key.)
        """
        blob = json.dumps(
            {
                "config": self.config.model_dump(mode="json", exclude_defaults=True),
                "template": self.review_template,
                # stages' own sections only when there are some: older hashes stay
                **({"sections": s} if (s := self.config.sections_json()) else {}),
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def model_fingerprint(
    name: str, models: dict[str, ModelConfig], providers: dict[str, ProviderConfig], seed: int
) -> dict[str, Any]:
    """What a model's outputs depend on: provider type, model id, params.

    Only a simulated model's outputs depend on its sim parameters and the seed;
    a real provider's never do, so changing `seed` never re-runs (and pays
    again for) a real model's calls.
    """
    m = models[name]
    if m.provider is None:  # answers from a file: the answer ids add the text itself
        return {"name": name, "provider_type": "file"}
    prov = providers[m.provider]
    fp: dict[str, Any] = {
        "name": name,
        "provider_type": prov.type,
        "model": m.model or name,
        "temperature": m.temperature,
        "max_tokens": m.max_tokens,
    }
    if m.revision is not None:
        fp["revision"] = m.revision
    if prov.type == SIM_TYPE:
        # Newer parameters enter only when set, so older logs stay current; latency and
        # failures change when a call ends, never what it returns.
        fp["sim"] = {
            k: v
            for k, v in (m.sim or SimParams()).model_dump().items()
            if not (k in _LATER_SIM_PARAMS and v == 0) and k not in SIM_RUN_ONLY
        }
        fp["seed"] = seed
    # Only when set, so that the ids of tournaments written before these existed stay.
    if m.system is not None:
        fp["system"] = m.system
    if m.reasoning_effort is not None:
        fp["reasoning_effort"] = m.reasoning_effort
    if m.extra:
        fp["extra"] = m.extra
    return fp
