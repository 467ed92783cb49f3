"""Question and answer files in the shapes other benchmark tools write.

Questions: arena's own JSONL, FastChat/MT-bench `question.jsonl` (with
`category` and `reference`), arena-hard-auto `question.jsonl` (v0.1
`question_id` + `turns: [{content}]`, v2 `uid` + `prompt`) and AlpacaEval
instruction sets (a JSON list of `{instruction, ...}`).

Answers (contestants whose answers already exist, and reference answers):
FastChat `model_answer/*.jsonl` (`choices[0].turns`), arena-hard-auto answer
files (v0.1 `choices[0].turns[].content`, v2 `messages`) and AlpacaEval
outputs (`instruction`, `output`, `generator`).

Judgments (pairwise verdicts made elsewhere, `read_judgments`): AlpacaEval
`annotations.json`, arena-hard-auto `model_judgment` files, MT-bench
pairwise judgments, Chatbot Arena battles and PRD review files. MT-bench
single-answer grades (`read_single_grades`) are per-answer scores, summed up
as FastChat's single-mode table (`single_grade_table`).

This package sits just above `arena.types`: it knows nothing of tournaments.
Problems raise `FormatError` (file, where, problem); `arena.config` turns them
into `ConfigError`s.
"""

from arena.formats._answers import ANSWER_FORMATS, AnswerFile, read_answer_file
from arena.formats._checks import SCALAR_FIELDS, check_judgment_record, check_turn
from arena.formats._errors import FormatError
from arena.formats._judgments import (
    CROWD,
    JUDGMENT_COLUMNS,
    JUDGMENT_FORMATS,
    Judgments,
    detect_format,
    read_judgments,
)
from arena.formats._questions import QUESTION_FORMATS, Question, read_questions
from arena.formats._records import load_json, read_records
from arena.formats._single_grades import (
    SingleGrades,
    is_single_grades,
    read_single_grades,
    single_grade_table,
)

__all__ = [
    "ANSWER_FORMATS",
    "AnswerFile",
    "CROWD",
    "FormatError",
    "JUDGMENT_COLUMNS",
    "JUDGMENT_FORMATS",
    "Judgments",
    "check_judgment_record",
    "check_turn",
    "detect_format",
    "load_json",
    "read_judgments",
    "QUESTION_FORMATS",
    "SCALAR_FIELDS",
    "Question",
    "read_answer_file",
    "read_questions",
    "read_records",
    "SingleGrades",
    "is_single_grades",
    "read_single_grades",
    "single_grade_table",
]
