"""Loading a tournament: the YAML, its questions, references, answer files and template."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from arena.config._base import resolve_relative
from arena.config._errors import ConfigError
from arena.config._examples import load_example_pool
from arena.config._schema import TournamentConfig, declared_verdicts
from arena.config._templates import REVIEW_PLACEHOLDERS, template_variants, unknown_placeholders
from arena.config._tournament import Tournament
from arena.config._validate import parse_config
from arena.config._yaml import NAME_MAX, key_line, read_yaml
from arena.formats import AnswerFile, FormatError, Question, read_answer_file, read_questions
from arena.formats import read_records as _read_records

# Repository-level folder of shipped prompt templates and presets.
CONFIGS_DIR = Path(__file__).resolve().parents[2] / "configs"
DEFAULT_REVIEW_TEMPLATE = CONFIGS_DIR / "prompts" / "review.txt"
# Shipped review templates `review.template` may name instead of a file.
# `cache_friendly` puts every instruction before the question and the answers,
# so reviews of one question share the longest prefix (docs/cost.md).
# `three_class` has the structure of the prompt behind PRD's published ranking
# (in arena's words): a 3-class verdict on helpfulness, relevance, accuracy and
# level of detail, with coding and math variants picked by the question's
# category; its reviews default to the paper's temperature.
REVIEW_TEMPLATES = {
    "default": DEFAULT_REVIEW_TEMPLATE,
    "cache_friendly": CONFIGS_DIR / "prompts" / "review_cache_friendly.txt",
    "three_class": CONFIGS_DIR / "prompts" / "review_three_class.txt",
}


def read_jsonl_objects(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(`line N`, object) for each non-blank line of a JSONL file; ConfigError names the line."""
    try:
        return _read_records(path, allow_array=False)
    except FormatError as exc:
        raise ConfigError(exc.file, exc.where, exc.problem) from None


def load_questions(path: Path, config_file: Path) -> tuple[Question, ...]:
    """Read a questions file in any of the supported shapes (arena.formats)."""
    if not path.is_file():
        raise ConfigError(config_file, "questions", f"questions file not found: {path}")
    try:
        return read_questions(path)
    except FormatError as exc:
        raise ConfigError(exc.file, exc.where, exc.problem) from None


def load_answer_files(
    cfg: TournamentConfig, yaml_path: Path, questions: tuple[Question, ...]
) -> dict[str, AnswerFile]:
    """The answers of every contestant with `answers: PATH`, matched to the questions."""
    files: dict[str, AnswerFile] = {}
    for name in cfg.contestants:
        model = cfg.models[name]
        if model.answers is None:
            continue
        path = resolve_relative(yaml_path, model.answers)
        if not path.is_file():
            raise ConfigError(
                yaml_path, f"models.{name}.answers", f"answers file not found: {path}"
            )
        try:
            files[name] = read_answer_file(path, questions, select=model.model or name)
        except FormatError as exc:
            raise ConfigError(exc.file, exc.where, exc.problem) from None
    return files


def with_references(
    cfg: TournamentConfig, yaml_path: Path, questions: tuple[Question, ...]
) -> tuple[Question, ...]:
    """The questions with the `references:` file's answers as their references."""
    if cfg.references is None:
        return questions
    path = resolve_relative(yaml_path, cfg.references)
    if not path.is_file():
        raise ConfigError(yaml_path, "references", f"references file not found: {path}")
    try:
        found = read_answer_file(path, questions)
    except FormatError as exc:
        raise ConfigError(exc.file, exc.where, exc.problem) from None
    return tuple(
        replace(q, reference=found.answers[q.id]) if q.id in found.answers else q for q in questions
    )


def _check_variants(p: Path, tpath: Path, template: str) -> None:
    """A review template with `{variant: ...}` lines: every variant complete."""
    try:
        variants = template_variants(template)
    except ValueError as exc:
        raise ConfigError(p, "review.template", f"template {tpath}: {exc}") from None
    for name, body in (variants or {}).items():
        for placeholder in ("{question}", "{answer_a}", "{answer_b}"):
            if placeholder not in body:
                raise ConfigError(
                    p,
                    "review.template",
                    f"template {tpath}: variant '{name}' lacks the placeholder {placeholder}",
                )


def load_tournament(path: str | Path, output: str | Path | None = None) -> Tournament:
    """Load and validate a tournament YAML and everything it refers to."""
    p = Path(path)
    cfg = parse_config(read_yaml(p), p)
    qpath = Path(cfg.questions)
    if not qpath.is_absolute():
        qpath = p.parent / qpath
    questions = with_references(cfg, p, load_questions(qpath, p))
    answer_files = load_answer_files(cfg, p, questions)
    if cfg.review.template in REVIEW_TEMPLATES:
        tpath = REVIEW_TEMPLATES[cfg.review.template]
    elif cfg.review.template:
        tpath = Path(cfg.review.template)
        if not tpath.is_absolute():
            tpath = p.parent / tpath
        if not tpath.is_file():
            raise ConfigError(p, "review.template", f"template file not found: {tpath}")
    else:
        tpath = DEFAULT_REVIEW_TEMPLATE
    try:
        template = tpath.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(p, "review.template", f"cannot read {tpath}: {exc}") from None
    for placeholder in ("{question}", "{answer_a}", "{answer_b}"):
        if placeholder not in template and placeholder.upper() not in template:
            raise ConfigError(
                p, "review.template", f"template {tpath} lacks the placeholder {placeholder}"
            )
    _check_variants(p, tpath, template)
    for name in unknown_placeholders(template):
        known = ", ".join("{" + k + "}" for k in sorted(REVIEW_PLACEHOLDERS) if k.islower())
        line = template[: template.index("{" + name + "}")].count("\n") + 1
        raise ConfigError(
            p,
            "review.template",
            f"{tpath}: line {line}: placeholder {{{name}}} is not filled in (known: {known}); "
            "it would reach the reviewer as written",
            key_line(p, ("review", "template")),
        )
    for token in declared_verdicts(cfg.review.verdicts) or {}:
        if token not in template:
            raise ConfigError(
                p,
                "review.verdicts",
                f"the token {token!r} does not occur in the template {tpath}: a reviewer "
                "would never be asked for it",
            )
    out = Path(output) if output is not None else Path(cfg.output or f"runs/{cfg.name}")
    key = "--out" if output is not None else "output" if cfg.output else "name"
    long = [part for part in out.parts if len(os.fsencode(part)) > NAME_MAX]
    if long:
        fix = "shorten it" if key != "name" else "shorten it or set `output:` (or --out)"
        raise ConfigError(
            p,
            key,
            f"the output directory {str(out)[:80]}... has a name of "
            f"{len(os.fsencode(long[0]))} bytes; a file system allows {NAME_MAX}: {fix}",
        )
    for folder in (out, *out.parents):  # the output directory, or what would hold it
        if folder.exists():
            if not folder.is_dir():
                raise ConfigError(
                    p, key if key != "name" else "output", f"not a directory: {folder}"
                )
            break
    pool = None
    if cfg.examples is not None:
        builtin = tpath == DEFAULT_REVIEW_TEMPLATE or tpath in REVIEW_TEMPLATES.values()
        reviews = "reviews" in cfg.examples.apply_to
        if "batcheval" in cfg.examples.apply_to and cfg.batcheval is None:
            raise ConfigError(
                p,
                "examples.apply_to",
                "lists batcheval, but the tournament has no `batcheval:` section",
            )
        if reviews and not builtin and "{examples}" not in template:
            raise ConfigError(
                p,
                "review.template",
                f"template {tpath} lacks the placeholder {{examples}}, which the "
                "`examples:` section needs",
            )
        pool = load_example_pool(cfg.examples, p, cfg.seed)
    return Tournament(
        path=p,
        config=cfg,
        questions=questions,
        review_template=template,
        review_template_path=tpath,
        output_dir=out,
        answer_files=answer_files,
        examples=pool if pool is not None and pool.applies_to("reviews") else None,
        batcheval_examples=pool if pool is not None and pool.applies_to("batcheval") else None,
    )
