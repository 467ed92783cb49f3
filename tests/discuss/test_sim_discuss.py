"""The simulator as a discussant: it reads arena.discuss's chat turns and is persuaded sensibly."""

from __future__ import annotations

import asyncio

from arena.config import ModelConfig, ProviderConfig, Question, SimParams
from arena.discuss import render_messages
from arena.discuss._prompt import Spoken
from arena.providers._sim_batcheval import is_batcheval_prompt
from arena.providers._sim_discuss import discussion_turn, is_discussion_request
from arena.providers.sim import SimProvider, signature
from arena.review import render_review_prompt
from arena.types import GenerateRequest, Message
from tests.discuss._support import REVIEW_TEMPLATE, settings

QUESTION = Question("q", ("Which is better?",))
# Answer A is truly better by one quality unit.
ANSWER_A = (f"First answer.\n{signature('alpha', 1.0)}",)
ANSWER_B = (f"Second answer.\n{signature('beta', 0.0)}",)


Chat = tuple[str, tuple[Message, ...]]


def _prompt(
    lead: str,
    follow: str,
    lead_turn: str | None,
    lead_skill: float,
    gap: float = 1.0,
    author_b: str = "beta",
) -> Chat:
    """The follower's turn 2 chat (or the leader's turn 1 chat without `lead_turn`).

    Answer A is better than answer B by `gap` quality units.
    """
    history = []
    if lead_turn is not None:
        text = f"My case.\n⟦sim reviewer=lead skill={lead_skill:.4f}⟧\nPreference: [[{lead_turn}]]"
        history.append(Spoken(1, text))
    answer_b = (f"Second answer.\n{signature(author_b, 1.0 - gap)}",)
    return render_messages(
        settings().templates,
        QUESTION,
        ANSWER_A,
        answer_b,
        (f"Review.\nVerdict: [[{lead}]]", f"Review.\nVerdict: [[{follow}]]"),
        history,
        2 if history else 1,
    )


def _choices(chat: Chat, params: SimParams, n: int = 400, model: str = "follow") -> list[str]:
    out = []
    for i in range(n):
        reply = discussion_turn(7, model, params, chat[0], chat[1], f"key{i}", 1)
        out.append(reply.rsplit("[[", 1)[1].split("]]")[0])
    return out


def _switch_rate(chat: Chat, params: SimParams, to: str, model: str = "follow") -> float:
    choices = _choices(chat, params, model=model)
    return choices.count(to) / len(choices)


def test_prompts_are_recognised_by_the_right_mode() -> None:
    _system, turn_chat = _prompt("A", "B", "A", 0.0)
    review = render_review_prompt(REVIEW_TEMPLATE, QUESTION, ANSWER_A, ANSWER_B)
    assert is_discussion_request(turn_chat)
    assert not any(is_batcheval_prompt(m.content) for m in turn_chat)
    assert is_discussion_request(_prompt("A", "B", None, 0.0)[1])
    assert not is_discussion_request((Message("user", review),))


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
    system, chat = _prompt("A", "B", "A", 0.0)
    reply = discussion_turn(1, "follow", params, system, chat, "k", 1)
    assert "Preference:" not in reply and "⟦sim reviewer=follow" in reply


def test_the_sim_provider_answers_discussion_prompts_as_a_discussant() -> None:
    models = {"follow": ModelConfig(provider="sim", sim=SimParams(skill=1.0))}
    provider = SimProvider("sim", ProviderConfig(type="sim"), models, seed=3)
    system, chat = _prompt("A", "B", "A", 0.0)
    request = GenerateRequest(model="follow", messages=chat, system=system)
    result = asyncio.run(provider.generate(request))
    assert "⟦sim reviewer=follow skill=1.0000⟧" in result.text
    assert "Preference: [[" in result.text and "Verdict:" not in result.text


def test_a_discussant_prefers_its_own_answer() -> None:
    # The follower "beta" wrote answer B, equal in quality to A: it holds B
    # (its own) more often than a discussant with no stake in the battle.
    params = SimParams(self_preference=1.0, judge_noise=0.3, stubbornness=0.0)
    own = _prompt("B", "B", "A", 0.0, gap=0.0, author_b="beta")
    assert _switch_rate(own, params, "A", model="beta") < _switch_rate(own, params, "A") - 0.3


def test_without_the_fresh_look_position_bias_and_noise_come_back() -> None:
    # Equal answers: a biased look toward A is persuaded to A more often.
    fresh = SimParams(position_bias=1.0, judge_noise=0.3, stubbornness=0.0)
    plain = SimParams(position_bias=1.0, judge_noise=0.3, stubbornness=0.0, fresh_look=False)
    chat = _prompt("A", "B", "A", 0.0, gap=0.0)
    assert _switch_rate(chat, plain, "A") > _switch_rate(chat, fresh, "A") + 0.3


def test_a_later_turn_reads_its_own_earlier_turn_from_the_assistant_message() -> None:
    # Leader's turn 3: it said A at turn 1 (assistant), the follower said B at turn 2.
    history = [
        Spoken(1, "Mine.\nPreference: [[A]]"),
        Spoken(2, "Theirs.\n⟦sim reviewer=f skill=0.0000⟧\nPreference: [[B]]"),
    ]
    system, chat = render_messages(
        settings().templates,
        QUESTION,
        ANSWER_A,
        ANSWER_B,
        ("Review.\nVerdict: [[B]]", "Review.\nVerdict: [[B]]"),
        history,
        1,
    )
    assert [m.role for m in chat] == ["user", "assistant", "user"]
    # Stubborn: it keeps what it said last (A, from its own turn), not its initial B.
    assert set(_choices((system, chat), SimParams(stubbornness=1.0), n=30)) == {"A"}
