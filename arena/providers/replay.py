"""`type: replay`: a reviewer that answers with judgments recorded elsewhere.

A model on a replay provider answers a review request with the recorded
judgment of the reviewer of its name (or its `replay_as`) in `judgments:` (a
file in any format `arena leaderboard --reviews` reads, a folder of them, or
a list of files and folders)
for the question,
answer pair and order the request shows; a judgment recorded only in the
other order is mirrored (A and B swapped). It tells the battle from the
request's text: the question's text and the two answers' texts, which must
be answers the tournament knows from its contestants' `answers:` files. A
request it cannot place, or with no recorded judgment, fails (permanent
error, "no recorded judgment ..."): it is logged as a failed review, never
as a verdict. The reply is the verdict marker the review parser reads: the
template's declared token (`review.verdicts`) for the plain verdict, the
heaviest one of that side for a judgment recorded with a weight above 1
(arena-hard's strong verdicts), else `[[A]]`, `[[B]]`, `[[tie]]`; a graded
share replays as its plain verdict. A verdict the declared tokens cannot
say (a tie, with no tie token) fails as unrecorded would. Nothing leaves the
machine and nothing is billed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from arena.config import ModelConfig, ProviderConfig, Tournament
from arena.formats import FormatError, Judgments, read_judgments
from arena.providers._base import Provider
from arena.review import VerdictScheme, render_answer, render_question, verdict_scheme
from arena.types import ErrorKind, GenerateRequest, GenerateResult, ProviderError, Usage

__all__ = ["ReplayProvider"]

_MARKERS = {"A": "[[A]]", "B": "[[B]]", "tie": "[[tie]]"}
_MIRROR = {"A": "B", "B": "A", "tie": "tie"}
# The files a `judgments:` folder stands for.
_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv", ".parquet")

_Key = tuple[str, str, str, str]  # (reviewer, question, model A, model B)
_Recorded = tuple[str, bool]  # (plain verdict, strong: recorded with a weight above 1)


def _recorded(judgments: Judgments) -> dict[_Key, _Recorded]:
    """The first readable verdict of each (reviewer, question, A, B) in the file."""
    c = judgments.columns
    out: dict[_Key, _Recorded] = {}
    rows = zip(
        c["reviewer"],
        c["question_id"],
        c["model_a"],
        c["model_b"],
        c["verdict"],
        c["weight"],
        strict=True,
    )
    for reviewer, question, a, b, verdict, weight in rows:
        if verdict in _MARKERS:
            strong = weight is not None and weight > 1.0
            out.setdefault((reviewer, question, a, b), (verdict, strong))
    return out


class ReplayProvider(Provider):
    """Review requests answered from a judgments file (see the module docstring)."""

    def __init__(
        self, name: str, config: ProviderConfig, models: Mapping[str, ModelConfig], seed: int
    ) -> None:
        super().__init__(name, config, models, seed)
        self._recorded: dict[_Key, _Recorded] | None = None
        self._scheme: VerdictScheme | None = None  # the template's declared tokens
        self._reviewers: dict[str, str] = {}  # provider-side model id -> recorded reviewer
        # Per question: its keys (id and text), its text as shown, the known answers.
        self._questions: list[tuple[tuple[str, ...], str, dict[str, str]]] = []

    def _load(self) -> dict[_Key, _Recorded]:
        if self._recorded is None:
            if self.config.judgments is None:
                raise FormatError(self.name, "judgments", "missing")
            given = self.config.judgments
            files: list[Path] = []
            for path in map(Path, [given] if isinstance(given, str) else given):
                if not path.exists():
                    raise FormatError(path, "", "judgments file not found")
                inside = (
                    [f for f in path.iterdir() if f.suffix.lower() in _SUFFIXES]
                    if path.is_dir()
                    else [path]
                )
                if not inside:
                    raise FormatError(path, "", "a folder with no judgments files")
                files += sorted(inside)
            recorded: dict[_Key, _Recorded] = {}
            for file in files:
                for key, verdict in _recorded(read_judgments(file)).items():
                    recorded.setdefault(key, verdict)
            self._recorded = recorded
        return self._recorded

    def check_ready(self) -> list[str]:
        """The judgments file must read (any format `arena leaderboard --reviews` reads)."""
        try:
            self._load()
        except FormatError as exc:
            return [f"providers.{self.name}.judgments: {exc}"]
        return []

    def bind(self, tournament: Tournament) -> None:
        """Index the questions' texts and the file answers, who replays whom, and the tokens."""
        self._scheme = verdict_scheme(tournament.config.review)
        for name, model in tournament.config.models.items():
            if model.provider == self.name:
                self._reviewers[tournament.provider_model_id(name)] = model.replay_as or name
        for q in tournament.questions:
            text = render_question(q)
            shown = {
                model: render_answer(q, file.answers[q.id])
                for model, file in tournament.answer_files.items()
                if q.id in file.answers
            }
            self._questions.append(((q.id, text.strip()), text, shown))

    def _battle(self, prompt: str) -> tuple[tuple[str, ...], str, str]:
        """(question keys, model A, model B) of the battle a prompt shows."""
        found: list[tuple[tuple[str, ...], str, str]] = []
        for keys, text, shown in self._questions:
            if text not in prompt:
                continue
            at = sorted(
                (prompt.find(answer), model, answer)
                for model, answer in shown.items()
                if answer in prompt
            )
            if len(at) < 2:
                continue
            first_at, model_a, answer_a = at[0]
            after = [(pos, m) for pos, m, _ in at[1:] if pos >= first_at + len(answer_a)]
            later = [m for pos, m in after if pos == after[0][0]] if after else []
            if len(later) == 1 and sum(1 for pos, _, _ in at if pos == first_at) == 1:
                found.append((keys, model_a, later[0]))
        if len(found) != 1:
            problem = "no known question and answer pair" if not found else "several battles"
            raise ProviderError(
                ErrorKind.PERMANENT,
                f"no recorded judgment: the request shows {problem} (replay needs the "
                "contestants' answers from `answers:` files)",
            )
        return found[0]

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        """The recorded verdict of the request's battle, or a permanent failure."""
        try:
            recorded = self._load()
        except FormatError as exc:
            raise ProviderError(ErrorKind.PERMANENT, f"judgments: {exc}") from None
        prompt = "\n".join(m.content for m in request.messages)
        reviewer = self._reviewers.get(request.model, request.model)
        keys, model_a, model_b = self._battle(prompt)
        for question in keys:
            found = recorded.get((reviewer, question, model_a, model_b))
            if found is not None:
                verdict, strong = found
                break
            mirrored = recorded.get((reviewer, question, model_b, model_a))
            if mirrored is not None:
                verdict, strong = _MIRROR[mirrored[0]], mirrored[1]
                break
        else:
            raise ProviderError(
                ErrorKind.PERMANENT,
                f"no recorded judgment of {reviewer!r} for question {keys[0]!r}: "
                f"{model_a} vs {model_b}",
            )
        if self._scheme is None:
            text = _MARKERS[verdict]
        else:
            token = self._scheme.token_for(verdict, strong=strong)
            if token is None:
                raise ProviderError(
                    ErrorKind.PERMANENT,
                    f"no recorded judgment that the template's tokens can say: {reviewer!r} "
                    f"judged {model_a} vs {model_b} on {keys[0]!r} {verdict!r}",
                )
            text = token
        return GenerateResult(text=text, usage=Usage(len(prompt) // 4 + 1, 1))
