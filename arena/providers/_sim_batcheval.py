"""The simulator as a BatchEval scorer (see docs/batcheval.md).

A sim scorer reads each sample's latent quality `q` from its sim signature (a
sample without one gets a pseudo-quality derived from a hash of its text) and
sees it with noise, `x = q + score_noise * e`. Its score is then pulled by the
batch context and shifted by the call's sense of where the scale lies:

    perceived = x - batch_context * (batch mean of x) + drift

so a batch of weak samples inflates scores and a batch of strong ones deflates
them. `drift` (one per call, sd up to `score_drift`) shrinks as the batch spans
more of the quality range (sd of x up to 1, the sim population's): samples of
very different quality anchor the ends of the scale. Hence heterogeneous
batches (every one spans the range, about the same mean) are judged best,
random ones add some noise, homogeneous ones have no anchors, and a sample
scored alone is both compressed (it is its own context) and fully adrift.
That anchoring is a gain the simulator builds in, not evidence about real
models; `batch_anchoring: false` turns it off (every call drifts with sd
`score_drift`, whatever its batch).

The prompt format is the interface, as it is for a real model: samples come in
`[The start of SampleK]` ... `[The end of SampleK]` blocks and the scores are
asked for in the `Float Scores: [Sample1: ...]` template (two-stage) or as
`Score of SampleK: ...` after each sample's analysis (one-stage, which the sim
scores with 1.25 times the noise). A three-stage prompt (it asks for a
`Ranking:` line) gets the analyses, a ranking by the scores, then the scores:
the sim models no gain or loss of the comparison stage. A prompt that asks
for whole numbers (`Integer Scores: [...]`, "a whole number") gets integer
scores: the same perceived quality rounded to the nearest point of the scale,
which loses the finer steps a decimal score keeps. A prompt that shows
`examples:` items (`[The start of Example A]` blocks) is scored with its noise
and drift divided by `1 + example_gain`; the gain is 0 unless a `sim:` block
sets it, so by default examples change the prompt and nothing of the scores'
quality (the sim models no gain from them). This module must not
import `arena.providers.sim` (which imports it), so it keeps its own copy of
the signature pattern; tests check that the two agree.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Callable

from arena.config import SimParams

__all__ = ["is_batcheval_prompt", "score_batch", "text_quality"]

MARKER = "Float Scores: [Sample1:"
INTEGER_MARKER = "Integer Scores: [Sample1:"
ONE_STAGE_MARKER = "Score of Sample1: <score>"
_RANKING_ASKED_RE = re.compile(r'"Ranking:')
_WHOLE_RE = re.compile(r"\bwhole numbers?\b")
_EXAMPLE_RE = re.compile(r"\[The start of Example [A-Z]+\]")
_SAMPLE_RE = re.compile(r"\[The start of Sample(\d+)\]\n(.*?)\n\[The end of Sample\1\]", re.S)
_SIGNATURE_RE = re.compile(r"⟦sim author=(?P<author>[^ ⟧]+) q=(?P<q>-?[0-9.]+)⟧")
_NUM = r"[-+]?\d+(?:\.\d+)?"
_SCALE_RES = (
    re.compile(rf"from ({_NUM}) \(worst\) to ({_NUM}) \(best\)"),
    re.compile(rf"between ({_NUM}) and ({_NUM})"),
)
# Noise of one-stage scoring relative to two-stage (analysing first helps).
_ONE_STAGE_NOISE = 1.25
# The sd of quality in the sim population: a batch this diverse anchors the scale.
_POPULATION_SD = 1.0
# Perceived quality is mapped onto the scale by a logistic curve of this width.
_WIDTH = 1.5

_HIGH = (
    "meets the criterion fully and is the strongest of the batch in this respect",
    "is clear, well supported and complete; few samples here do better",
    "handles the criterion very well, with only minor issues",
)
_MID = (
    "meets the criterion in part; some points are thin or loosely supported",
    "is adequate but uneven: the core is there, the details are not",
    "is middling compared with the rest of the batch",
)
_LOW = (
    "falls short of the criterion: key information is missing or unsupported",
    "is weak compared with the other samples and hard to rely on",
    "barely addresses the criterion and contains doubtful claims",
)


def _rng(*parts: object) -> random.Random:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def is_batcheval_prompt(prompt: str) -> bool:
    """Whether a prompt asks for BatchEval scores (the fixed template and sample blocks)."""
    markers = (MARKER, INTEGER_MARKER, ONE_STAGE_MARKER)
    return any(m in prompt for m in markers) and "[The start of Sample1]" in prompt


def text_quality(text: str) -> float:
    """Latent quality of a sample: mean of its sim signatures, else a hash of its text."""
    found = [float(m.group("q")) for m in _SIGNATURE_RE.finditer(text)]
    if found:
        return sum(found) / len(found)
    return _rng("text-quality", text.strip()).gauss(0.0, 1.0)


def _scale(prompt: str) -> tuple[float, float]:
    for pattern in _SCALE_RES:
        m = pattern.search(prompt)
        if m is not None and float(m.group(1)) < float(m.group(2)):
            return float(m.group(1)), float(m.group(2))
    return 1.0, 5.0


def _fmt(value: float) -> str:
    return f"{value:.1f}"


def _fmt_int(value: float) -> str:
    return f"{round(value):d}"


def score_batch(
    seed: int, model: str, params: SimParams, prompt: str, key: str, attempt: int
) -> str:
    """A sim scorer's reply to a BatchEval prompt: analysis (two-stage) then the scores."""
    blocks = {int(k): body for k, body in _SAMPLE_RE.findall(prompt)}
    n = max(blocks) if blocks else 1
    qualities = [text_quality(blocks.get(k, "")) for k in range(1, n + 1)]
    low, high = _scale(prompt)
    two_stage = ONE_STAGE_MARKER not in prompt
    integer = INTEGER_MARKER in prompt or _WHOLE_RE.search(prompt) is not None
    label = "Integer Scores" if INTEGER_MARKER in prompt else "Float Scores"
    fmt = _fmt_int if integer else _fmt
    noise = params.score_noise * (1.0 if two_stage else _ONE_STAGE_NOISE)
    gain = 1.0
    if params.example_gain > 0 and _EXAMPLE_RE.search(prompt) is not None:
        gain = 1.0 + params.example_gain  # the knob: examples sharpen the scorer
    noise /= gain
    rng = _rng(seed, "batcheval", model, key, attempt)
    scores: list[float] = []
    seen = [q + noise * rng.gauss(0.0, 1.0) for q in qualities]
    mean = sum(seen) / n
    spread = math.sqrt(sum((x - mean) ** 2 for x in seen) / n)
    anchored = min(1.0, spread / _POPULATION_SD) if params.batch_anchoring else 0.0
    drift = params.score_drift * (1.0 - anchored) * rng.gauss(0.0, 1.0) / gain
    for x in seen:
        perceived = x - params.batch_context * mean + drift
        value = low + (high - low) / (1.0 + math.exp(-perceived / _WIDTH))
        scores.append(min(high, max(low, round(value) if integer else round(value, 1))))
    lines: list[str] = []
    if two_stage:
        for k, score in enumerate(scores, 1):
            rel = (score - low) / (high - low)
            phrases = _HIGH if rel > 2 / 3 else _MID if rel > 1 / 3 else _LOW
            lines.append(f"Sample{k}: This response {rng.choice(phrases)}.")
        lines.append("")
        if _RANKING_ASKED_RE.search(prompt):
            lines.extend([_ranking(scores), ""])
    entries = [[f"Sample{k}", fmt(s)] for k, s in enumerate(scores, 1)]
    if not two_stage:
        return _one_stage(entries, low, high, params.malformed_rate, rng, fmt)
    if rng.random() < params.malformed_rate:
        return "\n".join(lines + _malformed(entries, high, rng, label, fmt))
    style = rng.random()
    if style < 0.7:
        lines.append(f"{label}: [" + ", ".join(f"{a}: {b}" for a, b in entries) + "]")
    elif style < 0.85:
        lines.append(f"**{label}:** [" + ", ".join(f"{a}: {b}" for a, b in entries) + "]")
    else:
        lines.append(f"{label}:")
        lines.extend(f"- {a}: {b}" for a, b in entries)
    return "\n".join(lines)


def _ranking(scores: list[float]) -> str:
    """The three-stage comparison line: samples best first, `=` between equal scores."""
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    text = f"Sample{order[0] + 1}"
    for prev, i in zip(order, order[1:], strict=False):
        text += (" = " if scores[i] == scores[prev] else " > ") + f"Sample{i + 1}"
    return "Ranking: " + text


def _malformed(
    entries: list[list[str]],
    high: float,
    rng: random.Random,
    label: str = "Float Scores",
    fmt: Callable[[float], str] = _fmt,
) -> list[str]:
    """A scores line a parser must not trust in full (or none at all)."""
    kind = rng.choice(("drop", "duplicate", "out_of_range", "none"))
    k = rng.randrange(len(entries))
    if kind == "none":
        return ["I find it hard to assign precise scores to these samples."]
    if kind == "drop":
        entries = entries[:k] + entries[k + 1 :]
    elif kind == "duplicate":
        entries = entries + [[entries[k][0], fmt(float(entries[k][1]) + 0.5)]]
    else:
        entries[k] = [entries[k][0], fmt(high + 1.5)]
    if not entries:
        return [f"{label}: []"]
    return [f"{label}: [" + ", ".join(f"{a}: {b}" for a, b in entries) + "]"]


def _one_stage(
    entries: list[list[str]],
    low: float,
    high: float,
    malformed_rate: float,
    rng: random.Random,
    fmt: Callable[[float], str] = _fmt,
) -> str:
    """Each sample's analysis then its score line; a malformed reply loses or spoils one."""
    bad = rng.randrange(len(entries)) if rng.random() < malformed_rate else -1
    drop = rng.random() < 0.5
    lines: list[str] = []
    for k, (name, value) in enumerate(entries):
        rel = (float(value) - low) / (high - low)
        phrases = _HIGH if rel > 2 / 3 else _MID if rel > 1 / 3 else _LOW
        lines.append(f"Analysis of {name}: This response {rng.choice(phrases)}.")
        if k == bad:
            if drop:
                continue
            value = fmt(high + 1.5)
        lines.append(f"Score of {name}: {value}")
    return "\n".join(lines)
