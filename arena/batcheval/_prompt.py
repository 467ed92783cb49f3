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
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from arena.batcheval._samples import Sample
from arena.config import CONFIGS_DIR, BatchEvalConfig, ConfigError, CriterionConfig

__all__ = [
    "DEFAULT_TEMPLATES",
    "PROCEDURE_PLACEHOLDERS",
    "REQUIRED_PLACEHOLDERS",
    "integer_score_format",
    "integer_template",
    "load_template",
    "render_prompt",
    "sample_format",
    "score_format",
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


def load_template(cfg: BatchEvalConfig, config_file: Path) -> str:
    """The prompt template of a batcheval section (relative paths from the YAML's folder)."""
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
    return integer_template(template) if cfg.scores == "integer" else template


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


def render_prompt(template: str, criterion: CriterionConfig, samples: Sequence[Sample]) -> str:
    """Fill the template for one batch (plain replacement; samples go in last)."""
    blocks = "\n\n".join(_sample_block(k, s) for k, s in enumerate(samples, 1))
    return (
        template.replace("{n}", str(len(samples)))
        .replace("{criterion}", criterion.name)
        .replace("{description}", criterion.description.strip())
        .replace("{low}", f"{criterion.scale.low:g}")
        .replace("{high}", f"{criterion.scale.high:g}")
        .replace("{anchors}", _anchors(criterion))
        .replace("{score_format}", score_format(len(samples)))
        .replace("{integer_score_format}", integer_score_format(len(samples)))
        .replace("{sample_format}", sample_format(len(samples)))
        .replace("{samples}", blocks)
    )
