"""Reading BatchEval scores back from real model output.

Two layouts: two-stage (and three-stage) output ends with a score block
(`Float Scores: [Sample1: 2.4, ...]`, `Integer Scores: [...]`, or a list or
table of them; a three-stage `Ranking: Sample2 > Sample1` line holds no
score); one-stage output scores each sample after its analysis (`Score of
Sample1: 2.4`). One-stage lines are read when the output has them and no
score block after the last of them.

The contract is conservative: a sample gets a score only when the output states
exactly one in-range number for it. Anything missing, duplicated, out of range
or ambiguous becomes None (the caller re-asks or leaves it unscored); the parser
never guesses.
"""

from __future__ import annotations

import math
import re

__all__ = ["one_generation", "parse_scores"]

_NUMBER = r"[-+]?\d+(?:\.\d+)?|[-+]?\.\d+"

# A label that introduces the score block: "Float Scores:", "**Final scores**",
# "## Scores", "Scores =" ... The last one that is followed by scores wins.
# "Score of Sample3" is a one-stage line, not a label.
_LABEL_RE = re.compile(
    r"(?i)\b(?:float\s+|final\s+|decimal\s+|integer\s+)?scores?\b(?!\s+(?:of|for)\s+sample)"
)

# One-stage: "Score of Sample3: 2.4", "Score for Sample 3 = 2.4", "Score of Sample3 - 2.4/3".
_ONE_STAGE_RE = re.compile(
    r"(?i)\bscore\s+(?:of|for)\s+sample\s*#?\s*(\d+)(?![\d.])\W*?"
    rf"({_NUMBER})(?![\d.]*\s*%)(?![\d.]*\s*(?:-|–|to)\s*\d)"
)

# "Sample3: 2.4", "Sample 3 = 2.4", "Sample #3 -> 2.4", '"Sample3": 2.4',
# "Sample3 (score: 2.4)", "Sample3 | 2.4", "Sample 3 – 2.4/3". The index may not
# run into more digits or a decimal point ("Sample12.5" is not Sample1).
_PAIR_RE = re.compile(
    r"(?i)\bsample\s*#?\s*(\d+)(?![\d.])"
    r"[\"'\])]*\s*"
    r"(?:(?:[:=|]|->|=>|→|–|—|-(?=\s))\s*)*"
    r"[\"'(\[]*\s*"
    r"(?:(?:score|rating|gets|receives|is|of)\s*[:=]?\s*)*"
    # Not a percentage, not a range ("2-3"): those are no score.
    rf"({_NUMBER})(?![\d.]*\s*%)(?![\d.]*\s*(?:-|–|to)\s*\d)"
)
# A label right after "SampleK" is part of a pair ("Sample1 score: 2"), not a block.
_PAIR_PREFIX_RE = re.compile(r"(?i)sample\s*#?\s*\d+\W*$")

# A bare list right after the label: "Float Scores: [2.4, 1.7, 3]".
_BARE_LIST_RE = re.compile(rf"^\W*?\[\s*((?:{_NUMBER})(?:\s*[,;]\s*(?:{_NUMBER}))*)\s*\]")

_TABLE_ROW_RE = re.compile(r"^\s*\|(.*)\|\s*$")
_TABLE_RULE_RE = re.compile(r"^[\s|:\-]+$")
_FULL_NUMBER_RE = re.compile(rf"^\s*({_NUMBER})\s*(?:/\s*\d+(?:\.\d+)?)?\s*$")
_SAMPLE_CELL_RE = re.compile(r"(?i)^\s*(?:sample\s*#?\s*)?(\d+)\s*$")


def parse_scores(text: str, n: int, low: float, high: float) -> list[float | None]:
    """Scores for Sample1..Samplen read from model output; None where missing or invalid."""
    if n < 1:
        raise ValueError(f"n must be at least 1 (got {n})")
    if not low < high:
        raise ValueError(f"low must be below high (got {low}, {high})")
    clean = text.replace("**", "").replace("__", "").replace("`", "").replace("*", "")
    one_stage = list(_ONE_STAGE_RE.finditer(clean))
    if one_stage:
        after = clean[one_stage[-1].end() :]
        block = _from_labelled_region(after, n)
        if block is None:
            lines = [(int(m.group(1)), float(m.group(2))) for m in one_stage]
            return _validate(lines, n, low, high)
    found = _from_labelled_region(clean, n)
    if found is None:
        found = _from_table(clean) or _pairs(clean) or None
    if found is None:
        return [None] * n
    return _validate(found, n, low, high)


def _validate(
    found: list[tuple[int, float]], n: int, low: float, high: float
) -> list[float | None]:
    if any(not 1 <= index <= n for index, _ in found):
        # Sample0 or Sample(n+1): the model numbered the batch its own way, so
        # no score can be trusted to belong to the sample it names.
        return [None] * n
    values: dict[int, list[float]] = {}
    for index, value in found:
        values.setdefault(index, []).append(value)
    scores: list[float | None] = []
    for index in range(1, n + 1):
        got = values.get(index, [])
        if len(got) != 1 or not math.isfinite(got[0]) or not low <= got[0] <= high:
            scores.append(None)
        else:
            scores.append(got[0])
    return scores


def _pairs(region: str) -> list[tuple[int, float]]:
    return [(int(m.group(1)), float(m.group(2))) for m in _PAIR_RE.finditer(region)]


def _from_labelled_region(text: str, n: int) -> list[tuple[int, float]] | None:
    """Pairs after the last score label that is followed by any; None without one."""
    for label in reversed(list(_LABEL_RE.finditer(text))):
        if _PAIR_PREFIX_RE.search(text[max(0, label.start() - 24) : label.start()]):
            continue
        region = text[label.end() :]
        pairs = _pairs(region)
        if pairs:
            return pairs
        bare = _BARE_LIST_RE.match(region.lstrip(" \t:=-"))
        if bare is not None:
            numbers = [float(x) for x in re.split(r"\s*[,;]\s*", bare.group(1))]
            if len(numbers) == n:
                return list(enumerate(numbers, 1))
            return []  # a bare list of the wrong length: nothing can be assigned
    return None


def _from_table(text: str) -> list[tuple[int, float]] | None:
    """Pairs from the last markdown table with a sample column and a score column."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in text.splitlines():
        row = _TABLE_ROW_RE.match(line)
        if row is None:
            if current:
                tables.append(current)
                current = []
            continue
        if _TABLE_RULE_RE.match(line):
            continue
        current.append([cell.strip() for cell in row.group(1).split("|")])
    if current:
        tables.append(current)
    for table in reversed(tables):
        pairs = _table_pairs(table)
        if pairs:
            return pairs
    return None


def _table_pairs(table: list[list[str]]) -> list[tuple[int, float]]:
    header = [cell.lower() for cell in table[0]]
    score_cols = [i for i, cell in enumerate(header) if "score" in cell and "sample" not in cell]
    sample_cols = [
        i for i, cell in enumerate(header) if "sample" in cell or cell in ("#", "id", "no.", "no")
    ]
    pairs: list[tuple[int, float]] = []
    if len(score_cols) == 1 and sample_cols:
        for row in table[1:]:
            if len(row) != len(header):
                continue
            sample = _SAMPLE_CELL_RE.match(row[sample_cols[0]])
            value = _FULL_NUMBER_RE.match(row[score_cols[0]])
            if sample is not None and value is not None:
                pairs.append((int(sample.group(1)), float(value.group(1))))
        return pairs
    # No usable header: rows that name "SampleK" in one cell and end in a number.
    for row in table:
        named = [re.fullmatch(r"(?i)sample\s*#?\s*(\d+)", cell) for cell in row]
        indices = [m for m in named if m is not None]
        value = _FULL_NUMBER_RE.match(row[-1]) if row else None
        if len(indices) == 1 and value is not None:
            pairs.append((int(indices[0].group(1)), float(value.group(1))))
    return pairs


def one_generation(
    first: list[float | None], again: list[float | None] | None
) -> list[float | None]:
    """The scores a re-asked batch keeps: all from one reply, never a mix of the two.

    Two replies may use the scale differently, so a batch keeps the scores of
    the reply with more readable ones (the first reply on a tie, or when the
    re-ask failed: `again` None); what that reply left unreadable stays None.
    """
    if again is None:
        return list(first)
    readable = sum(s is not None for s in first), sum(s is not None for s in again)
    return list(again) if readable[1] > readable[0] else list(first)
