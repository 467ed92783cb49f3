"""Few-shot scored examples in the review prompt (the `examples:` section).

The DSTC11 paper's best system put human-scored examples in the judge's
prompt: either a fixed, hand-picked set or the ones whose context is most
similar to the item judged. arena reads a pool of
human-judged review items (JSONL, one object a line: `id`, `question_id`,
`question`, `answer_a`, `answer_b`, `verdict` A/B/tie) and chooses, for each
question, k of them:

- `select: seeded` (default): the first k of one seeded random order of the pool;
- `select: fixed`: the items `ids` lists, in that order (hand-picked, the
  paper's fixed setting); one the exclusion rules out is left out for that
  question;
- `select: retrieved`: the k nearest by cosine similarity of TF-IDF vectors
  (scikit-learn's TfidfVectorizer) of the question texts, ties by id;
- `exclude: same-question` never shows an item of the question judged;
  `exclude: fold` splits the question ids into `folds` folds (by hash) and
  shows only items of the other folds (k-fold cross-fitting).

The choice depends on the question only, so every review of a question shows
the same examples; their ids and the pool's hash enter the review's id.

BatchEval prompts (`apply_to: [batcheval]`) show k scored items of the pool
(`id`, optional `question_id`, `context`, `text`, `criterion`, `score`) of the
batch's criterion, once per batch (`choose_batch_examples`):

- an item is of a sample's question when both have a `question_id` and they
  are equal, or its context equals the sample's (non-empty) context, or its
  text equals the sample's text; `same-question` leaves out the items of any
  sample of the batch, `fold` also the items whose fold (of the question id,
  else the context, else the text) is the fold of any sample of the batch;
- `seeded`: the first k of one seeded random order of the eligible items;
  `fixed`: the listed items of the batch's criterion that are eligible;
  `retrieved`: the k with the highest mean cosine similarity (TF-IDF of the
  contexts) to the batch's samples' contexts (a sample without one: its text).

`render_batch_examples` writes them as `Example A`, `Example B`, ... with
people's rating, in words no BatchEval parser reads as a sample's score
(never `SampleK`, never `score`). `label_copy` is the no-LLM baseline of
`arena batcheval --human`: a sample's score is the mean human score of its k
nearest eligible items.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from arena.config import EXAMPLE_VERDICTS, Example, ExamplePool, Question, ScoredExample
from arena.review import render_question

__all__ = [
    "SampleRef",
    "choose_batch_examples",
    "choose_examples",
    "example_ids",
    "fold_of",
    "label_copy",
    "render_batch_examples",
    "render_examples",
]

# A sample to score, as the examples see it: (question id or None, context or None, text).
SampleRef = tuple[str | None, str | None, str]


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


def _listed(ids: Sequence[str] | None, names: Sequence[str], eligible: Sequence[int]) -> list[int]:
    """`select: fixed`: the eligible items among those listed, in the listed order."""
    where = dict(zip(names, eligible, strict=True))
    return [where[i] for i in ids or () if i in where]


def choose_examples(pool: ExamplePool, question: Question) -> tuple[Example, ...]:
    """The k examples shown with reviews of `question` (fewer when the pool has fewer)."""
    cached = pool.chosen.get(question.id)
    if cached is not None:
        return cached
    eligible = _eligible(pool, question.id)
    k = pool.config.k
    if pool.config.select == "fixed":
        picked = _listed(pool.config.ids, [pool.items[i].id for i in eligible], eligible)
    elif pool.config.select == "seeded":
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


# --- BatchEval: scored items shown in batch prompts --------------------------------


def _key(question_id: str | None, context: str | None, text: str) -> str:
    """What a sample's or an item's question is known by: its id, else context, else text."""
    if question_id:
        return question_id
    if context and context.strip():
        return context.strip()
    return text.strip()


def _eligible_scored(pool: ExamplePool, criterion: str, refs: Sequence[SampleRef]) -> list[int]:
    qids = {q for q, _, _ in refs if q}
    contexts = {c.strip() for _, c, _ in refs if c and c.strip()}
    texts = {t.strip() for _, _, t in refs}
    folds = {fold_of(_key(*r), pool.config.folds) for r in refs}
    out: list[int] = []
    for i, e in enumerate(pool.scored):
        if e.criterion != criterion:
            continue
        if (e.question_id is not None and e.question_id in qids) or e.text.strip() in texts:
            continue
        if e.context.strip() and e.context.strip() in contexts:
            continue
        if pool.config.exclude == "fold" and (
            fold_of(_key(e.question_id, e.context, e.text), pool.config.folds) in folds
        ):
            continue
        out.append(i)
    return out


def _nearest_scored(
    pool: ExamplePool, refs: Sequence[SampleRef], eligible: Sequence[int], k: int
) -> list[int]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    if "scored_vectorizer" not in pool.index:
        vectorizer = TfidfVectorizer()
        # a pool whose contexts hold no word at all: the texts stand in
        docs = [e.context for e in pool.scored]
        if not any(d.strip() for d in docs):
            docs = [e.text for e in pool.scored]
        try:
            pool.index["scored_vectors"] = vectorizer.fit_transform(docs)
        except ValueError:  # no term in any document: every item is as near as any other
            pool.index["scored_vectors"] = None
        pool.index["scored_vectorizer"] = vectorizer
    vectorizer = pool.index["scored_vectorizer"]
    vectors = pool.index["scored_vectors"]
    if vectors is None:
        return sorted(eligible, key=lambda i: pool.scored[i].id)[:k]
    assert isinstance(vectorizer, TfidfVectorizer)
    query = vectorizer.transform([c if c and c.strip() else t for _, c, t in refs])
    sims = np.asarray((vectors @ query.T).todense()).mean(axis=1).ravel()
    return sorted(eligible, key=lambda i: (-round(float(sims[i]), 12), pool.scored[i].id))[:k]


def _pick_scored(
    pool: ExamplePool, criterion: str, refs: Sequence[SampleRef], select: str
) -> tuple[ScoredExample, ...]:
    eligible = _eligible_scored(pool, criterion, refs)
    k = pool.config.k
    if select == "fixed":
        picked = _listed(pool.config.ids, [pool.scored[i].id for i in eligible], eligible)
    elif select == "seeded":
        picked = sorted(
            eligible,
            key=lambda i: hashlib.sha256(
                f"{pool.seed}\x1f{pool.scored[i].id}".encode()
            ).hexdigest(),
        )[:k]
    else:
        picked = _nearest_scored(pool, refs, eligible, k)
    return tuple(pool.scored[i] for i in picked)


def choose_batch_examples(
    pool: ExamplePool, criterion: str, refs: Sequence[SampleRef]
) -> tuple[ScoredExample, ...]:
    """The k scored items shown in a batch prompt of `criterion` (fewer when fewer are eligible).

    `refs`: the batch's samples, each (question id or None, context or None, text).
    """
    key = (criterion, tuple(refs))
    cached = pool.scored_chosen.get(key)
    if cached is None:
        cached = _pick_scored(pool, criterion, refs, pool.config.select)
        pool.scored_chosen[key] = cached
    return cached


def label_copy(pool: ExamplePool, criterion: str, ref: SampleRef) -> float | None:
    """The label-copy baseline: the mean human score of the sample's k nearest eligible items
    (TF-IDF of the context, whatever `select` says); None when no item is eligible."""
    picked = _pick_scored(pool, criterion, [ref], "retrieved")
    if not picked:
        return None
    return sum(e.score for e in picked) / len(picked)


# "Sample3" in an item's text becomes "Sample no. 3": no parser reads it as a sample.
_SAMPLE_WORD_RE = re.compile(r"(?i)\b(sample)\s*#?\s*(?=\d)")


def _neutral(text: str) -> str:
    return _SAMPLE_WORD_RE.sub(r"\1 no. ", text.strip())


def _letters(n: int) -> str:
    """A, B, ..., Z, AA, AB, ...: example labels that carry no number."""
    out = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(ord("A") + r) + out
    return out


def render_batch_examples(examples: Sequence[ScoredExample], low: float, high: float) -> str:
    """The examples block of a BatchEval prompt (empty without examples)."""
    if not examples:
        return ""
    parts = [
        "[Examples]\nPeople rated the responses below on this criterion, from "
        f"{low:g} to {high:g}. They are shown for calibration only: they are not part "
        "of the batch, and you do not rate them."
    ]
    for n, e in enumerate(examples):
        label = _letters(n)
        body = _neutral(e.text)
        if e.context.strip():
            body = f"[Context]\n{_neutral(e.context)}\n[Response]\n{body}"
        parts.append(
            f"[The start of Example {label}]\n{body}\n[The end of Example {label}]\n"
            f"People's rating of Example {label}: {e.score:g}"
        )
    return "\n\n".join(parts) + "\n\n[End of examples]"
