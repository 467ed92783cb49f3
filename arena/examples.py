"""Few-shot scored examples in the review prompt (the `examples:` section).

The DSTC11 paper's best system put human-scored examples in the judge's
prompt: k of them (2 by default), either a fixed random set or the ones whose
context is most similar to the item judged. arena reads a pool of
human-judged review items (JSONL, one object a line: `id`, `question_id`,
`question`, `answer_a`, `answer_b`, `verdict` A/B/tie) and chooses, for each
question, k of them:

- `select: fixed`: the first k of one seeded random order of the pool;
- `select: retrieved`: the k nearest by cosine similarity of TF-IDF vectors
  (scikit-learn's TfidfVectorizer) of the question texts, ties by id;
- `exclude: same-question` never shows an item of the question judged;
  `exclude: fold` splits the question ids into `folds` folds (by hash) and
  shows only items of the other folds (k-fold cross-fitting).

The choice depends on the question only, so every review of a question shows
the same examples; their ids and the pool's hash enter the review's id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from arena.config import EXAMPLE_VERDICTS, Example, ExamplePool, Question
from arena.review import render_question

__all__ = ["choose_examples", "example_ids", "fold_of", "render_examples"]


def fold_of(question_id: str, folds: int) -> int:
    """The fold of a question id under `exclude: fold` (a hash, the same in every run)."""
    digest = hashlib.sha256(question_id.encode()).digest()
    return int.from_bytes(digest[:4], "big") % folds


def _eligible(pool: ExamplePool, question_id: str) -> list[int]:
    if pool.config.exclude == "fold":
        own = fold_of(question_id, pool.config.folds)
        return [
            i for i, e in enumerate(pool.items) if fold_of(e.question_id, pool.config.folds) != own
        ]
    return [i for i, e in enumerate(pool.items) if e.question_id != question_id]


def _nearest(pool: ExamplePool, text: str, eligible: Sequence[int], k: int) -> list[int]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    if "vectorizer" not in pool.index:
        vectorizer = TfidfVectorizer()
        pool.index["vectors"] = vectorizer.fit_transform([e.question for e in pool.items])
        pool.index["vectorizer"] = vectorizer
    vectorizer = pool.index["vectorizer"]
    assert isinstance(vectorizer, TfidfVectorizer)
    vectors = pool.index["vectors"]
    query = vectorizer.transform([text])
    sims = np.asarray((vectors @ query.T).todense()).ravel()
    return sorted(eligible, key=lambda i: (-round(float(sims[i]), 12), pool.items[i].id))[:k]


def choose_examples(pool: ExamplePool, question: Question) -> tuple[Example, ...]:
    """The k examples shown with reviews of `question` (fewer when the pool has fewer)."""
    cached = pool.chosen.get(question.id)
    if cached is not None:
        return cached
    eligible = _eligible(pool, question.id)
    k = pool.config.k
    if pool.config.select == "fixed":
        picked = sorted(
            eligible,
            key=lambda i: hashlib.sha256(f"{pool.seed}\x1f{pool.items[i].id}".encode()).hexdigest(),
        )[:k]
    else:
        picked = _nearest(pool, render_question(question), eligible, k)
    chosen = tuple(pool.items[i] for i in picked)
    pool.chosen[question.id] = chosen
    return chosen


def example_ids(pool: ExamplePool, question: Question) -> list[str]:
    """The ids of the examples chosen for `question`."""
    return [e.id for e in choose_examples(pool, question)]


def render_examples(pool: ExamplePool, question: Question) -> str:
    """The examples block of the prompt: each item with its human verdict in words."""
    chosen = choose_examples(pool, question)
    if not chosen:
        return ""
    parts = ["Examples judged by people (other questions, for calibration):"]
    for n, e in enumerate(chosen, 1):
        parts.append(
            f"Example {n}\nQuestion: {e.question}\nFirst answer (A): {e.answer_a}\n"
            f"Second answer (B): {e.answer_b}\nPeople's verdict: {EXAMPLE_VERDICTS[e.verdict]}"
        )
    return "\n\n".join(parts) + "\n\nEnd of examples."
