"""What a history snapshot was computed from, and the words for what changed between two.

Each snapshot stores a context: a hash of the question set and of each
question, each used model's fingerprint, the review template's hash, the
contestants and reviewers, and the git commit of the tournament YAML when it
is in a repository. Comparing two contexts gives the change list shown by
`arena leaderboard --diff` and in the per-night report, e.g. "question q3
edited, questions q6 and q7 added; atlas: model id atlas-v1 -> atlas-v2; review template changed:
700 reviews re-run".
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.config import Question, Tournament

__all__ = ["describe_changes", "git_commit", "results_hash", "tournament_context"]

# Fingerprint fields named in words; others (sim parameters) keep their key.
_FIELD_WORDS = {
    "model": "model id",
    "provider_type": "provider type",
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "revision": "revision",
    "seed": "seed",
}


def _hash(value: Any) -> str:
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _question_hash(q: Question) -> str:
    return _hash({"turns": list(q.turns), "category": q.category})


def git_commit(path: Any) -> dict[str, Any] | None:
    """HEAD of the git repository holding file `path` and whether the file differs from it.

    None when the file is not in a git work tree (or git is not installed).
    """
    from pathlib import Path

    file = Path(path).resolve()
    try:
        head = subprocess.run(
            ["git", "-C", str(file.parent), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if head.returncode != 0:
            return None
        status = subprocess.run(
            ["git", "-C", str(file.parent), "status", "--porcelain", "--", file.name],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}


def tournament_context(t: Tournament) -> dict[str, Any]:
    """What a snapshot of `t` depends on (plain JSON data, stored with the snapshot)."""
    questions = {q.id: _question_hash(q) for q in t.questions}
    models: dict[str, Any] = {}
    for name in t.used_models():
        fp = {k: v for k, v in t.model_fingerprint(name).items() if k != "name"}
        models[name] = {"hash": _hash(fp), "fingerprint": fp}
    review = {
        "temperature": t.config.review.temperature,
        "max_tokens": t.config.review.max_tokens,
    }
    extras = {
        "batcheval": None
        if t.config.batcheval is None
        else t.config.batcheval.model_dump(mode="json"),
        "discussion": None
        if t.config.discussion is None
        else t.config.discussion.model_dump(mode="json"),
    }
    return {
        "questions_hash": _hash(sorted(questions.items())),
        "questions": questions,
        "models": models,
        "contestants": t.contestants,
        "reviewers": t.reviewers,
        "template_hash": _hash(t.review_template),
        "review": review,
        "extras_hash": _hash(extras),
        "git": git_commit(t.path),
    }


def results_hash(context: Mapping[str, Any]) -> str:
    """Hash of everything the results depend on (not retry, limits, prices, base_url, output)."""
    keep = ("questions_hash", "contestants", "reviewers", "template_hash", "review", "extras_hash")
    models = {name: m["hash"] for name, m in context["models"].items()}
    return _hash({"models": models, **{k: context[k] for k in keep}})


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders the numbers inside ids by value: q2 before q10, 8 before 10."""
    parts = re.split(r"(\d+)", text)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p)


def _questions(ids: Sequence[str], what: str) -> str:
    """'question 8 added', 'questions 8, 9 and 10 added' (ids in natural order)."""
    ordered = sorted(ids, key=_natural)
    return f"{'question' if len(ordered) == 1 else 'questions'} {_join(ordered)} {what}"


def _show(value: Any) -> str:
    return "unset" if value is None else str(value)


def _fingerprint_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for key in dict.fromkeys([*before, *after]):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, dict) or isinstance(new, dict):
            old_d = old if isinstance(old, dict) else {}
            new_d = new if isinstance(new, dict) else {}
            for sub in dict.fromkeys([*old_d, *new_d]):
                if old_d.get(sub) != new_d.get(sub):
                    out.append(f"{key}.{sub} {_show(old_d.get(sub))} -> {_show(new_d.get(sub))}")
            continue
        out.append(f"{_FIELD_WORDS.get(key, key)} {_show(old)} -> {_show(new)}")
    return out


def _count(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else word + 's'}"


def describe_changes(
    before: Mapping[str, Any] | None,
    after: Mapping[str, Any] | None,
    rerun: Mapping[str, int] | None = None,
) -> list[str]:
    """The changes from context `before` to `after`, one phrase per kind of change.

    `rerun` counts the calls made again because they were stale (`answers`,
    `reviews`), summed over the runs between the two snapshots. Contexts
    missing (snapshots written by an older arena) give no phrases.
    """
    if not before or not after:
        return []
    rerun = rerun or {}
    out: list[str] = []
    qb, qa = before.get("questions", {}), after.get("questions", {})
    edited = [q for q in qa if q in qb and qa[q] != qb[q]]
    added = [q for q in qa if q not in qb]
    removed = [q for q in qb if q not in qa]
    parts = []
    if edited:
        parts.append(_questions(edited, "edited"))
    if added:
        parts.append(_questions(added, "added"))
    if removed:
        parts.append(_questions(removed, "removed"))
    if parts:
        out.append(", ".join(parts))
    for role in ("contestants", "reviewers"):
        old, new = list(before.get(role, [])), list(after.get(role, []))
        plus = [m for m in new if m not in old]
        minus = [m for m in old if m not in new]
        if plus:
            out.append(f"{role} added: {_join(plus)}")
        if minus:
            out.append(f"{role} removed: {_join(minus)}")
    mb, ma = before.get("models", {}), after.get("models", {})
    models_changed = False
    for name, entry in ma.items():
        prev = mb.get(name)
        if prev is not None and prev.get("hash") != entry.get("hash"):
            models_changed = True
            fields = _fingerprint_changes(prev.get("fingerprint", {}), entry.get("fingerprint", {}))
            out.append(f"{name}: " + ("; ".join(fields) if fields else "settings changed"))
    reviews = int(rerun.get("reviews", 0))
    answers = int(rerun.get("answers", 0))
    template = before.get("template_hash") != after.get("template_hash")
    settings = before.get("review") != after.get("review")
    if template or settings:
        what = "review template" if template else "review settings"
        if settings and template:
            what = "review template and settings"
        if models_changed or edited:  # other causes of re-runs: counted apart below
            out.append(f"{what} changed")
        else:
            out.append(f"{what} changed: {_count(reviews, 'review')} re-run")
            reviews = 0
    if reviews or answers:
        out.append(f"re-run as stale: {_count(answers, 'answer')}, {_count(reviews, 'review')}")
    if before.get("extras_hash") != after.get("extras_hash"):
        out.append("discussion or BatchEval settings changed")
    gb, ga = before.get("git"), after.get("git")
    if gb and ga and gb.get("commit") != ga.get("commit"):
        out.append(f"YAML commit {str(gb['commit'])[:10]} -> {str(ga['commit'])[:10]}")
    return out
