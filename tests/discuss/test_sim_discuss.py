"""The simulator as a discussant: it reads arena.discuss's prompts and is persuaded sensibly."""

from __future__ import annotations

import asyncio

from arena.config import ModelConfig, ProviderConfig, Question, SimParams
from arena.discuss import render_turn
from arena.discuss._prompt import Spoken
from arena.providers._sim_batcheval import is_batcheval_prompt
from arena.providers._sim_discuss import discussion_turn, is_discussion_prompt
from arena.providers.sim import SimProvider, signature
from arena.review import render_review_prompt
from arena.types import GenerateRequest, Message
from tests.discuss._support import REVIEW_TEMPLATE, settings

QUESTION = Question("q", ("Which is better?",))
# Answer A is truly better by one quality unit.
ANSWER_A = (f"First answer.\n{signature('alpha', 1.0)}",)
ANSWER_B = (f"Second answer.\n{signature('beta', 0.0)}",)


def _prompt(
    lead: str, follow: str, lead_turn: str | None, lead_skill: float, gap: float = 1.0
) -> str:
    """The follower's turn 2 prompt (or the leader's turn 1 prompt without `lead_turn`).

    Answer A is better than answer B by `gap` quality units.
    """
    history = []
    if lead_turn is not None:
        text = f"My case.\n⟦sim reviewer=lead skill={lead_skill:.4f}⟧\nPreference: [[{lead_turn}]]"
        history.append(Spoken(1, text))
    answer_b = (f"Second answer.\n{signature('beta', 1.0 - gap)}",)
    return render_turn(
        settings().templates,
        QUESTION,
        ANSWER_A,
        answer_b,
        (f"Review.\nVerdict: [[{lead}]]", f"Review.\nVerdict: [[{follow}]]"),
        history,
        2 if history else 1,
    )


def _choices(prompt: str, params: SimParams, n: int = 400) -> list[str]:
    out = []
    for i in range(n):
        reply = discussion_turn(7, "follow", params, prompt, f"key{i}", 1)
        out.append(reply.rsplit("[[", 1)[1].split("]]")[0])
    return out


def _switch_rate(prompt: str, params: SimParams, to: str) -> float:
    choices = _choices(prompt, params)
    return choices.count(to) / len(choices)


def test_prompts_are_recognised_by_the_right_mode() -> None:
    turn_prompt = _prompt("A", "B", "A", 0.0)
    review = render_review_prompt(REVIEW_TEMPLATE, QUESTION, ANSWER_A, ANSWER_B)
    assert is_discussion_prompt(turn_prompt) and not is_batcheval_prompt(turn_prompt)
    assert is_discussion_prompt(_prompt("A", "B", None, 0.0))
    assert not is_discussion_prompt(review)


def test_persuaded_toward_the_truly_better_answer() -> None:
    params = SimParams(skill=0.0, judge_noise=0.3)
    toward_truth = _switch_rate(_prompt("A", "B", "A", 0.0), params, "A")
    away = _switch_rate(_prompt("B", "A", "B", 0.0), params, "B")
    assert toward_truth > 0.3 and away < 0.1 and toward_truth > away + 0.25


def test_persuaded_more_by_a_stronger_reviewer() -> None:
    params = SimParams(skill=0.0, judge_noise=0.3)
    strong = _switch_rate(_prompt("B", "A", "B", 2.0, gap=0.0), params, "B")
    weak = _switch_rate(_prompt("B", "A", "B", -2.0, gap=0.0), params, "B")
    assert strong > weak + 0.2


def test_insight_makes_the_fresh_look_clearer() -> None:
    # A is better by a small margin: a clearer look follows the truth more often.
    murky = SimParams(judge_noise=1.5, insight=0.0, stubbornness=0.0)
    clear = SimParams(judge_noise=1.5, insight=5.0, stubbornness=0.0)
    prompt = _prompt("A", "B", "A", 0.0, gap=0.3)
    assert _switch_rate(prompt, clear, "A") > _switch_rate(prompt, murky, "A") + 0.1


def test_stubbornness_holds_and_the_leader_opens_with_its_review() -> None:
    stubborn = SimParams(stubbornness=1.0)
    assert set(_choices(_prompt("A", "B", "A", 5.0), stubborn)) == {"B"}
    assert set(_choices(_prompt("B", "A", None, 5.0), SimParams(), n=50)) == {"B"}
    pliable = SimParams(stubbornness=0.0, judge_noise=0.1)
    assert _switch_rate(_prompt("A", "B", "A", 0.0), pliable, "A") > 0.95


def test_malformed_turns_have_no_preference_line() -> None:
    params = SimParams(malformed_rate=1.0)
    reply = discussion_turn(1, "follow", params, _prompt("A", "B", "A", 0.0), "k", 1)
    assert "Preference:" not in reply and "⟦sim reviewer=follow" in reply


def test_the_sim_provider_answers_discussion_prompts_as_a_discussant() -> None:
    models = {"follow": ModelConfig(provider="sim", sim=SimParams(skill=1.0))}
    provider = SimProvider("sim", ProviderConfig(type="sim"), models, seed=3)
    request = GenerateRequest(
        model="follow",
        messages=(Message("user", _prompt("A", "B", "A", 0.0)),),
        system="You are Reviewer 2",
    )
    result = asyncio.run(provider.generate(request))
    assert "⟦sim reviewer=follow skill=1.0000⟧" in result.text
    assert "Preference: [[" in result.text and "Verdict:" not in result.text
