"""The turn protocol of one discussion, with a scripted model."""

from __future__ import annotations

import pytest

from arena.discuss import logged_calls, render_role, row_id
from arena.discuss._prompt import REASK_NOTE
from arena.scheduler import OutcomeStatus
from tests.discuss._support import (
    FOLLOWER,
    LEADER,
    Script,
    outcome,
    run_discussion,
    settings,
    spec,
    turn,
)


def _run(  # type: ignore[no-untyped-def]
    script: Script, max_turns: int = 4, stop: bool = False, **kw: str | None
):
    st = settings(max_turns, stop_on_agreement=stop)
    return run_discussion(spec(**kw), st, {}, script)


UNRESOLVED_4 = "no agreement after 4 turns (last preferences: lead A, follow B)"


def test_turns_are_a_chat_leader_first_with_the_role_reminder_after_each_turn() -> None:
    script = Script(turn(1, "A"), turn(2, "B"), turn(3, "A"), turn(4, "B"))
    result = _run(script)
    assert result.status == "unresolved" and result.verdict is None
    assert result.reason == UNRESOLVED_4 and result.turns == 4
    assert script.models == ["lead-id", "follow-id", "lead-id", "follow-id"]
    st = settings()
    # who speaks the messages of each turn's chat, from the speaker's side
    shapes = [
        ["user"],  # leader, turn 1: the opening
        ["user"],  # follower, turn 2: the opening and the leader's turn 1
        ["user", "assistant", "user"],  # leader, turn 3
        ["user", "assistant", "user"],  # follower, turn 4
    ]
    for k, request in enumerate(script.requests, 1):
        position = 1 if k % 2 else 2
        role = render_role(st.templates, position)
        assert [m.role for m in request.messages] == shapes[k - 1]
        assert request.system == role  # the role prompt on every turn ...
        assert f"You are Reviewer {position}" in role
        for m in request.messages:  # ... and as the last lines of every user message
            assert m.content.endswith(role) == (m.role == "user")
        assert request.temperature == 0.2 and request.max_tokens == 256
        opening = request.messages[0].content
        # both initial reviews, the leader's first
        assert opening.index("Lead's review.") < opening.index("Follow's review.")
        assert opening.index("[The start of Reviewer 1's initial review]") < opening.index(
            "[The start of Reviewer 2's initial review]"
        )
        # the aspects, most important first; neutral wording, no goal of agreeing
        assert (
            opening.index("Unsupported information")
            < opening.index("Core information")
            < opening.index("Coherence")
        )
        assert "agree" not in opening.lower() and "agree" not in role.lower()
        # the full history: every earlier turn once, in order, and nothing later
        chat = "\n".join(m.content for m in request.messages)
        seen = [chat.find(f"Argument of turn {n}.") for n in range(1, 5)]
        assert all(s >= 0 for s in seen[: k - 1]) and seen[: k - 1] == sorted(seen[: k - 1])
        assert all(s == -1 for s in seen[k - 1 :])
        for n in range(1, k):
            who = 1 if n % 2 else 2
            block = f"[The start of Reviewer {who}'s turn {n}]" in chat
            # the other's turns are quoted blocks; one's own turns are assistant messages
            assert block == (who != position)
            if who == position:
                own = [m for m in request.messages if m.role == "assistant"]
                assert any(m.content == turn(n, "AB"[n % 2 == 0]) for m in own)


def test_a_temperature_per_discussant() -> None:
    script = Script(turn(1, "A"), turn(2, "B"), turn(3, "A"), turn(4, "B"))
    st = settings(temperatures={"follow": 0.8})
    run_discussion(spec(), st, {}, script)
    assert [r.temperature for r in script.requests] == [0.2, 0.8, 0.2, 0.8]


def test_rows_one_per_initial_review_and_turn_plus_the_final_verdict() -> None:
    script = Script(turn(1, "A"), turn(2, "B"), turn(3, "A"), turn(4, "B"))
    _run(script)
    kinds = [(r["kind"], r["turn"], r["speaker"], r["preference"]) for r in script.rows]
    assert kinds == [
        ("initial", 0, "lead", "A"),
        ("initial", 0, "follow", "B"),
        ("turn", 1, "lead", "A"),
        ("turn", 2, "follow", "B"),
        ("turn", 3, "lead", "A"),
        ("turn", 4, "follow", "B"),
        ("final", 4, None, None),
    ]
    assert script.rows[0]["review_id"] == "rev-lead" and script.rows[0]["tokens_in"] == 0
    final = script.rows[-1]
    assert final["outcome"] == "unresolved" and final["verdict"] is None
    assert final["reason"] == UNRESOLVED_4
    assert all(r["leader"] == "lead" and r["follower"] == "follow" for r in script.rows)
    assert all(r["battle_id"] and r["discussion_id"] == "disc-1" for r in script.rows)
    calls = script.rows[2:6]
    assert all(r["tokens_in"] == 11 and r["tokens_out"] == 7 for r in calls)
    assert all(r["cost_usd"] == 0.002 and r["status"] == "ok" for r in calls)
    assert script.counts == {"planned": 4, "completed": 4}


def test_runs_every_turn_even_after_an_early_agreement() -> None:
    # They agree after turn 2, the follower changes its mind at turn 4: the
    # verdict is the last turn's, and here they no longer agree.
    script = Script(turn(1, "A"), turn(2, "A"), turn(3, "A"), turn(4, "tie"))
    result = _run(script)
    assert (result.status, result.verdict, result.turns) == ("unresolved", None, 4)
    assert len(script.requests) == 4


def test_the_verdict_is_what_both_hold_after_the_last_turn() -> None:
    script = Script(turn(1, "A"), turn(2, "tie"), turn(3, "B"), turn(4, "B"))
    result = _run(script)
    assert (result.status, result.verdict, result.turns) == ("agreed", "B", 4)
    final = script.rows[-1]
    assert (final["kind"], final["outcome"], final["verdict"], final["turn"]) == (
        "final",
        "agreed",
        "B",
        4,
    )


def test_with_one_turn_the_follower_keeps_its_initial_preference() -> None:
    agreed = Script(turn(1, "B"))  # the leader concedes to the follower's initial B
    assert _run(agreed, max_turns=1).verdict == "B"
    held = Script(turn(1, "A"))
    result = _run(held, max_turns=1)
    assert (result.status, result.turns) == ("unresolved", 1)


def test_stop_on_agreement_stops_as_soon_as_the_two_agree() -> None:
    script = Script(turn(1, "A"), turn(2, "A"))
    result = _run(script, stop=True)
    assert (result.status, result.verdict, result.turns) == ("agreed", "A", 2)
    assert len(script.requests) == 2
    final = script.rows[-1]
    assert (final["kind"], final["outcome"], final["verdict"], final["turn"]) == (
        "final",
        "agreed",
        "A",
        2,
    )


def test_stop_on_agreement_lets_the_leader_concede_on_the_first_turn() -> None:
    script = Script(turn(1, "B"))
    result = _run(script, stop=True)
    assert (result.status, result.verdict, result.turns) == ("agreed", "B", 1)


def test_stops_at_max_turns() -> None:
    script = Script(turn(1, "A"), turn(2, "tie"))
    result = _run(script, max_turns=2, stop=True)
    assert (result.status, result.turns) == ("unresolved", 2)
    assert len(script.requests) == 2


def test_an_unreadable_preference_is_asked_once_more() -> None:
    script = Script(turn(1, None), turn(1, "B"))
    result = _run(script, stop=True)
    assert (result.status, result.verdict) == ("agreed", "B")
    first, second = script.requests
    assert not first.messages[-1].content.endswith(REASK_NOTE)
    assert second.messages[-1].content == first.messages[-1].content + REASK_NOTE
    turns = [r for r in script.rows if r["kind"] == "turn"]
    assert [(r["attempt"], r["status"], r["preference"]) for r in turns] == [
        (1, "invalid", "invalid"),
        (2, "ok", "B"),
    ]
    # the unreadable reply is not part of the history shown later
    assert script.counts["invalid"] == 1


def test_twice_unreadable_ends_unresolved_with_the_reason() -> None:
    script = Script(turn(1, "A"), turn(2, None), turn(2, None))
    result = _run(script)
    assert result.status == "unresolved"
    assert result.reason == "unreadable preference from follow at turn 2 (asked twice)"
    final = script.rows[-1]
    assert final["outcome"] == "unresolved" and final["reason"] == result.reason
    assert final["turn"] == 1


def test_initial_reviews_are_asked_with_the_review_template_when_not_logged() -> None:
    script = Script("Mine.\nVerdict: [[B]]", "Theirs.\nVerdict: [[A]]", turn(1, "A"))
    result = _run(script, stop=True, lead=None, follow=None)
    assert (result.status, result.verdict) == ("agreed", "A")
    review, other, first_turn = script.requests
    assert review.system is None and review.messages[0].content.startswith("Review.")
    assert "Answer one." in review.messages[0].content
    assert review.temperature == 0.0 and review.max_tokens == 512
    assert script.models == ["lead-id", "follow-id", "lead-id"]
    assert "Mine." in first_turn.messages[0].content
    initial = [r for r in script.rows if r["kind"] == "initial"]
    assert [(r["speaker"], r["review_id"], r["preference"]) for r in initial] == [
        ("lead", None, "B"),
        ("follow", None, "A"),
    ]


def test_an_unreadable_logged_review_is_asked_again() -> None:
    script = Script("Fine.\nVerdict: [[A]]", turn(1, "B"))
    result = _run(script, stop=True, lead="invalid")
    assert (result.status, result.verdict) == ("agreed", "B")
    initial = [r for r in script.rows if r["kind"] == "initial"]
    assert [(r["speaker"], r["attempt"], r["status"], r["review_id"]) for r in initial] == [
        ("lead", 1, "invalid", "rev-lead"),
        ("lead", 2, "ok", None),
        ("follow", 1, "ok", "rev-follow"),
    ]
    assert "[Note] Your previous reply did not end with a readable verdict" in (
        script.requests[0].messages[0].content
    )


def test_a_failed_call_is_logged_and_leaves_no_final_row() -> None:
    script = Script(turn(1, "A"), outcome(None, "failed"))
    result = _run(script)
    assert result.status == "failed"
    assert [r["status"] for r in script.rows[2:]] == ["ok", "failed"]
    assert script.rows[-1]["error"] == "failed call" and script.rows[-1]["text"] is None
    assert script.counts["failed"] == 1


@pytest.mark.parametrize("status", ["stopped", "deferred", "budget"])
def test_resume_reuses_logged_turns_and_asks_only_the_rest(status: OutcomeStatus) -> None:
    first = Script(turn(1, "A"), outcome(None, status))
    assert _run(first).status == "pending"
    assert [r["kind"] for r in first.rows] == ["initial", "initial", "turn"]
    logged = {r["id"]: r for r in first.rows}

    second = Script(turn(2, "B"), turn(3, "B"), turn(4, "B"))
    result = run_discussion(spec(), settings(), logged, second)
    assert (result.status, result.verdict, result.turns) == ("agreed", "B", 4)
    assert second.models == ["follow-id", "lead-id", "follow-id"]  # turn 1 not asked again
    assert "Argument of turn 1." in second.requests[0].messages[0].content
    # the logged turn is counted skipped (its caller plans it ahead), the rest as new calls
    assert logged_calls(logged) == 1  # the initial reviews are copies, not calls
    assert second.counts == {"skipped": 1, "planned": 3, "completed": 3}
    assert [r["kind"] for r in second.rows] == ["turn", "turn", "turn", "final"]
    assert row_id("disc-1", "turn", 1, "lead", 1) in logged

    # a finished discussion asks nothing and writes nothing
    done = {**logged, **{r["id"]: r for r in second.rows}}
    third = Script()
    again = run_discussion(spec(), settings(), done, third)
    assert (again.status, again.verdict) == ("agreed", "B")
    assert third.rows == [] and third.requests == []


def test_discussants_are_recorded_with_their_roles() -> None:
    assert LEADER.name == "lead" and FOLLOWER.name == "follow"
