"""BatchEval prompts: the template files and rendering a batch into one prompt.

Three procedures, as in the paper (`stages: 1 | 2 | 3`): two-stage analyses
every sample first and then gives all the scores at once (`{score_format}`:
`Float Scores: [Sample1: <score>, ...]`); one-stage analyses and scores each
sample in turn (`{sample_format}`: `Analysis of Sample1: ...` then `Score of
Sample1: <score>`, sample after sample); three-stage analyses every sample,
then compares them in a ranking (`Ranking: Sample2 > Sample1 > ...`), then
gives all the scores at once, as two-stage does.

`scores: integer` asks for whole numbers: `load_template` turns the
template's "decimal number(s)" into "whole number(s)" and its
`{score_format}` into `{integer_score_format}` (`Integer Scores: [Sample1:
<score>, ...]`). With the default `scores: decimal` the template is returned
as written, so its prompts and batch ids are those of earlier runs.

`{examples}` is where the `examples:` section's scored items go (empty
without the section). The shipped templates do not hold it: with examples
configured (`load_template(..., examples=True)`) it is put right before
`{samples}`, and without them they render exactly the prompts of earlier
runs. A user template must hold it when examples are configured.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from arena.batcheval._samples import Sample
from arena.config import CONFIGS_DIR, BatchEvalConfig, ConfigError, CriterionConfig, ExamplePool

__all__ = [
    "DEFAULT_TEMPLATES",
    "check_pool",
    "PROCEDURE_PLACEHOLDERS",
    "REQUIRED_PLACEHOLDERS",
    "integer_score_format",
    "integer_template",
    "load_template",
    "render_prompt",
    "sample_format",
    "score_format",
    "with_batch_examples",
]

DEFAULT_TEMPLATES: dict[str, Path] = {
    "two-stage": CONFIGS_DIR / "prompts" / "batcheval_two_stage.txt",
    "one-stage": CONFIGS_DIR / "prompts" / "batcheval_one_stage.txt",
    "three-stage": CONFIGS_DIR / "prompts" / "batcheval_three_stage.txt",
}
REQUIRED_PLACEHOLDERS = ("{samples}", "{score_format}")  # the two-stage template's
PROCEDURE_PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "two-stage": REQUIRED_PLACEHOLDERS,
    "one-stage": ("{samples}", "{sample_format}"),
    "three-stage": REQUIRED_PLACEHOLDERS,
}
# `scores: integer`: the wording a template's decimal requests become.
_INTEGER_WORDING = (
    ("decimal numbers", "whole numbers"),
    ("a decimal number", "a whole number"),
    ("{score_format}", "{integer_score_format}"),
)


def integer_template(template: str) -> str:
    """A template asking for whole-number scores (`scores: integer`)."""
    for old, new in _INTEGER_WORDING:
        template = template.replace(old, new)
    return template


def with_batch_examples(template: str) -> str:
    """A template with the `{examples}` placeholder (before `{samples}` when it has none)."""
    if "{examples}" in template:
        return template
    return template.replace("{samples}", "{examples}\n\n{samples}", 1)


def load_template(cfg: BatchEvalConfig, config_file: Path, *, examples: bool = False) -> str:
    """The prompt template of a batcheval section (relative paths from the YAML's folder).

    `examples`: the `examples:` section applies to BatchEval, so the template
    gets the `{examples}` placeholder (a user template must hold it).
    """
    if cfg.template is None:
        path = DEFAULT_TEMPLATES[cfg.procedure]
    else:
        path = Path(cfg.template)
        if not path.is_absolute():
            path = config_file.parent / path
        if not path.is_file():
            raise ConfigError(config_file, "batcheval.template", f"template file not found: {path}")
    template = path.read_text(encoding="utf-8")
    for placeholder in PROCEDURE_PLACEHOLDERS[cfg.procedure]:
        if placeholder not in template:
            raise ConfigError(
                config_file,
                "batcheval.template",
                f"template {path} lacks the placeholder {placeholder}",
            )
    if examples:
        if cfg.template is not None and "{examples}" not in template:
            raise ConfigError(
                config_file,
                "batcheval.template",
                f"template {path} lacks the placeholder {{examples}}, which the "
                "`examples:` section needs",
            )
        template = with_batch_examples(template)
    return integer_template(template) if cfg.scores == "integer" else template


def check_pool(pool: ExamplePool, cfg: BatchEvalConfig) -> None:
    """The pool's scored items fit the section: known criteria, scores on their scales, and
    items for every criterion; ConfigError naming the pool file, the line and the field."""
    path = pool.path or Path(pool.config.pool)
    criteria = {c.name: c for c in cfg.criteria}
    for e in pool.scored:
        criterion = criteria.get(e.criterion)
        if criterion is None:
            raise ConfigError(
                path,
                f"line {e.line}: criterion",
                f"unknown criterion '{e.criterion}' (known: {', '.join(criteria)})",
            )
        low, high = criterion.scale.low, criterion.scale.high
        if not low <= e.score <= high:
            raise ConfigError(
                path,
                f"line {e.line}: score",
                f"{e.score:g} is outside the scale of '{e.criterion}' ({low:g} to {high:g})",
            )
    have = {e.criterion for e in pool.scored}
    for name in criteria:
        if name not in have:
            raise ConfigError(path, "", f"no scored item of criterion '{name}' in the pool")


def score_format(n: int) -> str:
    """The fixed line the scores must come in: `Float Scores: [Sample1: <score>, ...]`."""
    return "Float Scores: [" + ", ".join(f"Sample{k}: <score>" for k in range(1, n + 1)) + "]"


def integer_score_format(n: int) -> str:
    """The scores line of `scores: integer`: `Integer Scores: [Sample1: <score>, ...]`."""
    return "Integer Scores: [" + ", ".join(f"Sample{k}: <score>" for k in range(1, n + 1)) + "]"


def sample_format(n: int) -> str:
    """The one-stage lines: an analysis, then the score, of each sample in turn."""
    return "\n".join(
        f"Analysis of Sample{k}: <analysis>\nScore of Sample{k}: <score>" for k in range(1, n + 1)
    )


def _anchors(criterion: CriterionConfig) -> str:
    if not criterion.anchors:
        low, high = criterion.scale.low, criterion.scale.high
        return f"- {low:g}: the worst possible\n- {high:g}: the best possible"
    return "\n".join(
        f"- {point:g}: {text.strip()}" for point, text in sorted(criterion.anchors.items())
    )


def _sample_block(k: int, sample: Sample) -> str:
    body = sample.text.strip()
    if sample.context:
        body = f"[Context]\n{sample.context.strip()}\n[Response]\n{body}"
    return f"[The start of Sample{k}]\n{body}\n[The end of Sample{k}]"


_LAST_RE = re.compile(r"\{(examples|samples)\}")


def render_prompt(
    template: str, criterion: CriterionConfig, samples: Sequence[Sample], examples: str = ""
) -> str:
    """Fill the template for one batch (plain replacement; examples and samples go in last,
    in one pass, so that no text of theirs is taken for a placeholder)."""
    blocks = "\n\n".join(_sample_block(k, s) for k, s in enumerate(samples, 1))
    last = {"examples": examples, "samples": blocks}
    filled = (
        template.replace("{n}", str(len(samples)))
        .replace("{criterion}", criterion.name)
        .replace("{description}", criterion.description.strip())
        .replace("{low}", f"{criterion.scale.low:g}")
        .replace("{high}", f"{criterion.scale.high:g}")
        .replace("{anchors}", _anchors(criterion))
        .replace("{score_format}", score_format(len(samples)))
        .replace("{integer_score_format}", integer_score_format(len(samples)))
        .replace("{sample_format}", sample_format(len(samples)))
    )
    return _LAST_RE.sub(lambda m: last[m.group(1)], filled)
