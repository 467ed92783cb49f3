"""`parse_scores` on a corpus of realistic model outputs."""

from __future__ import annotations

import pytest

from arena.batcheval import one_generation, parse_scores

TWO_STAGE = """\
Sample1: The response answers the question directly and cites the relevant rule.
It could be more concise, but it is accurate.

Sample2: This one is vague. It restates the question and offers no concrete steps.

Sample3: Thorough and well organised; the strongest of the three.

Float Scores: [Sample1: 2.4, Sample2: 1.3, Sample3: 2.9]"""

CORPUS: list[tuple[str, str, int, tuple[float, float], list[float | None]]] = [
    ("two-stage, as asked", TWO_STAGE, 3, (1, 3), [2.4, 1.3, 2.9]),
    (
        "reordered",
        "Float Scores: [Sample3: 2.9, Sample1: 2.4, Sample2: 1.3]",
        3,
        (1, 3),
        [2.4, 1.3, 2.9],
    ),
    (
        "prose before and after",
        "Sure! Having compared all of them carefully, here is my assessment.\n\n"
        "Float Scores: [Sample1: 4.5, Sample2: 3.0]\n\n"
        "Let me know if you would like a more detailed breakdown of these scores.",
        2,
        (1, 5),
        [4.5, 3.0],
    ),
    (
        "spacing and no brackets",
        "Float Scores:Sample1 :2.5 ,  Sample 2=1.75,Sample3 :   3",
        3,
        (1, 3),
        [2.5, 1.75, 3.0],
    ),
    (
        "bold markdown",
        "**Analysis**\n- **Sample1**: solid.\n- **Sample2**: weak.\n\n"
        "**Float Scores:** [**Sample1**: 2.2, **Sample2**: 1.1]",
        2,
        (1, 3),
        [2.2, 1.1],
    ),
    (
        "one per line as a list",
        "Float Scores:\n- Sample1: 2.0\n- Sample2: 2.5\n- Sample3: 1.5",
        3,
        (1, 3),
        [2.0, 2.5, 1.5],
    ),
    (
        "markdown table with sample names",
        "Here are my scores.\n\n| Sample | Score |\n|---|---|\n| Sample1 | 2.8 |\n"
        "| Sample2 | 1.9 |\n| Sample3 | 2.2 |\n",
        3,
        (1, 3),
        [2.8, 1.9, 2.2],
    ),
    (
        "markdown table with numbers and a justification column",
        "| # | Justification | Score |\n|:-:|---|--:|\n| 1 | Accurate and complete | 4.5 |\n"
        "| 2 | Misses the second part | 2.5 |\n",
        2,
        (1, 5),
        [4.5, 2.5],
    ),
    (
        "markdown table without a score header",
        "| Sample1 | clear, correct | 2.7 |\n| Sample2 | off-topic | 1.2 |",
        2,
        (1, 3),
        [2.7, 1.2],
    ),
    ("missing sample", "Float Scores: [Sample1: 2.4, Sample3: 2.9]", 3, (1, 3), [2.4, None, 2.9]),
    (
        "duplicate sample",
        "Float Scores: [Sample1: 2.4, Sample2: 1.3, Sample2: 1.8]",
        2,
        (1, 3),
        [2.4, None],
    ),
    (
        "out of range",
        "Float Scores: [Sample1: 2.4, Sample2: 4.0, Sample3: 0.5]",
        3,
        (1, 3),
        [2.4, None, None],
    ),
    (
        "integers where decimals were asked",
        "Float Scores: [Sample1: 3, Sample2: 1, Sample3: 2]",
        3,
        (1, 3),
        [3.0, 1.0, 2.0],
    ),
    (
        "scale bounds are inclusive",
        "Float Scores: [Sample1: 1.0, Sample2: 3.0]",
        2,
        (1, 3),
        [1.0, 3.0],
    ),
    (
        "score out of the scale written as a fraction",
        "Float Scores: [Sample1: 2.5/3, Sample2: 1/3]",
        2,
        (1, 3),
        [2.5, 1.0],
    ),
    (
        "a corrected block: the last one counts",
        "Float Scores: [Sample1: 2.0, Sample2: 2.0]\nOn reflection Sample2 is weaker.\n"
        "Float Scores: [Sample1: 2.0, Sample2: 1.4]",
        2,
        (1, 3),
        [2.0, 1.4],
    ),
    ("JSON object", '```json\n{"Sample1": 2.1, "Sample2": 2.6}\n```', 2, (1, 3), [2.1, 2.6]),
    (
        "a label sentence after the block",
        "Float Scores: [Sample1: 1.5, Sample2: 2.5]\nThese scores reflect relative quality.",
        2,
        (1, 3),
        [1.5, 2.5],
    ),
    (
        "scores named inline with 'score'",
        "Sample1 score: 2.3\nSample2 score: 1.7",
        2,
        (1, 3),
        [2.3, 1.7],
    ),
    ("bare list of the right length", "Float Scores: [2.4, 1.3, 2.9]", 3, (1, 3), [2.4, 1.3, 2.9]),
    ("bare list of the wrong length", "Float Scores: [2.4, 1.3]", 3, (1, 3), [None, None, None]),
    ("negative scale", "Float Scores: [Sample1: -0.5, Sample2: 0.75]", 2, (-1, 1), [-0.5, 0.75]),
    (
        "numbered from zero: nothing can be trusted",
        "Float Scores: [Sample0: 2.0, Sample1: 2.5, Sample2: 1.0]",
        3,
        (1, 3),
        [None, None, None],
    ),
    (
        "a sample the batch does not have",
        "Float Scores: [Sample1: 2.0, Sample2: 2.5, Sample3: 1.0]",
        2,
        (1, 3),
        [None, None],
    ),
    (
        "no scores at all",
        "I cannot score these samples without more context.",
        2,
        (1, 3),
        [None, None],
    ),
    ("empty", "", 1, (1, 3), [None]),
    (
        "the template echoed back unfilled",
        "Float Scores: [Sample1: <score>, Sample2: <score>]",
        2,
        (1, 3),
        [None, None],
    ),
    ("a range is no score", "Float Scores: [Sample1: 2-3, Sample2: 2.5]", 2, (1, 3), [None, 2.5]),
    (
        "a percentage is no score",
        "Float Scores: [Sample1: 80%, Sample2: 2.5]",
        2,
        (1, 5),
        [None, 2.5],
    ),
    ("Sample12.5 is not Sample1", "Float Scores: [Sample12.5]", 12, (1, 5), [None] * 12),
    (
        "analysis mentioning samples and scores, then the block",
        "Sample1: compared with Sample2 it deserves a higher score.\n"
        "Sample2: the weakest of the batch.\n\nFloat Scores: [Sample1: 2.6, Sample2: 1.2]",
        2,
        (1, 3),
        [2.6, 1.2],
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "n", "scale", "expected"), CORPUS, ids=[c[0] for c in CORPUS]
)
def test_corpus(
    name: str, text: str, n: int, scale: tuple[float, float], expected: list[float | None]
) -> None:
    assert parse_scores(text, n, scale[0], scale[1]) == expected


def test_never_invents_a_score_for_a_missing_sample() -> None:
    scores = parse_scores(TWO_STAGE.replace(", Sample2: 1.3", ""), 3, 1, 3)
    assert scores == [2.4, None, 2.9]


def test_ten_samples_in_the_fixed_template() -> None:
    values = [1.1, 2.9, 1.5, 2.0, 2.2, 1.0, 3.0, 2.75, 1.25, 2.5]
    text = "Float Scores: [" + ", ".join(f"Sample{k}: {v}" for k, v in enumerate(values, 1)) + "]"
    assert parse_scores(text, 10, 1, 3) == values


@pytest.mark.parametrize(("n", "low", "high"), [(0, 1, 3), (2, 3, 3), (2, 3, 1)])
def test_bad_arguments(n: int, low: float, high: float) -> None:
    with pytest.raises(ValueError):
        parse_scores("Float Scores: [Sample1: 2]", n, low, high)


# --- one-stage output: each sample analysed, then scored, in turn ---------------

ONE_STAGE = """\
Analysis of Sample1: Direct and accurate; it cites the rule the question is about.
Score of Sample1: 2.6
Analysis of Sample2: Restates the question. Compared with Sample1 it adds nothing;
a score of 1 would be harsh, since Sample 3 is worse.
Score of Sample2: 1.4
Analysis of Sample3: Off topic.
Score of Sample3: 1.0"""

ONE_STAGE_CORPUS: list[tuple[str, str, int, list[float | None]]] = [
    ("as asked, numbers in the analyses ignored", ONE_STAGE, 3, [2.6, 1.4, 1.0]),
    (
        "markdown, spacing, 'for' and '='",
        "**Analysis of Sample 1:** good.\n**Score of Sample 1:** 2.5\n\n"
        "Analysis of Sample 2: poor.\nScore for Sample #2 = 1.25",
        2,
        [2.5, 1.25],
    ),
    ("score out of the scale's top", "Score of Sample1: 2.5/3\nScore of Sample2: 3", 2, [2.5, 3.0]),
    (
        "a sample never scored",
        "Score of Sample1: 2\nAnalysis of Sample2: hard to say.",
        2,
        [2.0, None],
    ),
    (
        "a sample scored twice",
        "Score of Sample1: 2\nScore of Sample1: 3\nScore of Sample2: 1",
        2,
        [None, 1.0],
    ),
    ("out of range", "Score of Sample1: 4.5\nScore of Sample2: 2", 2, [None, 2.0]),
    ("a range is no score", "Score of Sample1: 2-3\nScore of Sample2: 2", 2, [None, 2.0]),
    (
        "a sample number past the batch: nothing trusted",
        "Score of Sample1: 2\nScore of Sample3: 2",
        2,
        [None, None],
    ),
    (
        "a score block after the lines wins",
        "Score of Sample1: 1\nScore of Sample2: 1\n\nOn reflection:\n"
        "Float Scores: [Sample1: 2.0, Sample2: 3.0]",
        2,
        [2.0, 3.0],
    ),
    (
        "closing prose that mentions scores",
        ONE_STAGE + "\n\nThese scores reflect the criterion only.",
        3,
        [2.6, 1.4, 1.0],
    ),
]


@pytest.mark.parametrize(
    ("text", "n", "expected"),
    [case[1:] for case in ONE_STAGE_CORPUS],
    ids=[case[0] for case in ONE_STAGE_CORPUS],
)
def test_one_stage_outputs(text: str, n: int, expected: list[float | None]) -> None:
    assert parse_scores(text, n, 1, 3) == expected


def test_a_reasked_batch_keeps_one_generation_of_scores() -> None:
    first: list[float | None] = [2.0, None, 1.0]
    assert one_generation(first, [2.5, 2.8, 1.2]) == [2.5, 2.8, 1.2]  # the re-ask, in full
    assert one_generation(first, [None, 3.0, None]) == first  # the first has more
    assert one_generation(first, [None, 3.0, 1.0]) == first  # a tie keeps the first
    assert one_generation(first, None) == first  # the re-ask failed
    # never a mix: no sample takes its score from the other reply
    assert one_generation([None, None, 1.0], [2.0, 2.0, None]) == [2.0, 2.0, None]
