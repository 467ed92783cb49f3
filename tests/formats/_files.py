"""Small files in each supported shape, written by the tests (not copied from those projects)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MT_QUESTIONS = [
    {"question_id": 81, "category": "writing", "turns": ["Write a haiku.", "Now make it rhyme."]},
    {
        "question_id": 111,
        "category": "math",
        "turns": ["What is 3*7?", "And 3*8?"],
        "reference": ["21", "24"],
    },
    {"question_id": 130, "category": "coding", "turns": ["Reverse a list.", "In place?"]},
]


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def fastchat_answers(model: str, questions: list[dict[str, Any]], tag: str) -> list[dict[str, Any]]:
    """FastChat model_answer rows: question_id, model_id, choices[0].turns."""
    return [
        {
            "question_id": q["question_id"],
            "answer_id": f"{tag}{q['question_id']}",
            "model_id": model,
            "choices": [{"index": 0, "turns": [f"{tag} answer to {t}" for t in q["turns"]]}],
            "tstamp": 1700000000.0,
        }
        for q in questions
    ]


ARENA_HARD_V01_QUESTIONS = [
    {
        "question_id": "a1b2",
        "category": "arena-hard-v0.1",
        "cluster": "Coding",
        "turns": [{"content": "Write a bash loop."}],
    },
    {
        "question_id": "c3d4",
        "category": "arena-hard-v0.1",
        "cluster": "Math",
        "turns": [{"content": "Prove sqrt(2) is irrational."}],
    },
]

ARENA_HARD_V2_QUESTIONS = [
    {"uid": "u1", "category": "hard_prompt", "subcategory": "coding", "prompt": "Sort a dict."},
    {"uid": "u2", "category": "creative_writing", "subcategory": "poem", "prompt": "A sonnet."},
]


def arena_hard_v01_answers(model: str, tag: str) -> list[dict[str, Any]]:
    return [
        {
            "question_id": q["question_id"],
            "answer_id": f"{tag}-{q['question_id']}",
            "model_id": model,
            "choices": [
                {
                    "index": 0,
                    "turns": [
                        {"content": f"{tag} says {q['turns'][0]['content']}", "token_len": 9}
                    ],
                }
            ],
            "tstamp": 1.0,
        }
        for q in ARENA_HARD_V01_QUESTIONS
    ]


def arena_hard_v2_answers(model: str, tag: str) -> list[dict[str, Any]]:
    return [
        {
            "uid": q["uid"],
            "ans_id": f"{tag}-{q['uid']}",
            "model": model,
            "messages": [
                {"role": "user", "content": q["prompt"]},
                {"role": "assistant", "content": {"answer": f"{tag} on {q['prompt']}"}},
            ],
            "tstamp": 1.0,
            "metadata": {"token_len": 5},
        }
        for q in ARENA_HARD_V2_QUESTIONS
    ]


ALPACA_INSTRUCTIONS = [
    {"instruction": "Name three colors.", "dataset": "helpful_base"},
    {"instruction": "What is a haiku?", "dataset": "koala"},
    {"instruction": "Give a synonym of quick.", "dataset": "selfinstruct"},
]


def alpaca_outputs(generator: str, tag: str) -> list[dict[str, Any]]:
    """AlpacaEval outputs: a JSON list of instruction, output, generator."""
    return [
        {**row, "output": f"{tag}: {row['instruction']}", "generator": generator}
        for row in ALPACA_INSTRUCTIONS
    ]


def json_list(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(rows, indent=2))
    return path
