"""An answer that names an option by its content (rrdemo.tasks.options): read through the task
that reads one question (`LetterTask.for_question`), only when no letter is stated."""

from __future__ import annotations

import pytest

from rrdemo.cli import main
from rrdemo.tasks import CustomTask, get_task, load_questions
from rrdemo.tasks.base import Question
from rrdemo.tasks.options import concluded_option, final_sentence, option_contents, stated_option

AQUA = "How many marbles does the bag hold?\nOptions:\n(A) 40\n(B) 200\n(C) 380\n(D) 400\n(E) 3200"
LOGIC = (
    "Three vehicles... The bus is newer than the truck.\nOptions:\n(A) The truck is the oldest\n"
    "(B) The bus is the oldest\n(C) The car is the oldest"
)


def _reader(text: str, task: str = "aqua"):
    return get_task(task).for_question(Question(task, f"{task}-0001", text))


def test_option_contents_reads_the_listed_options() -> None:
    assert option_contents(AQUA) == (
        ("A", "40"), ("B", "200"), ("C", "380"), ("D", "400"), ("E", "3200"),
    )  # fmt: skip
    assert option_contents(LOGIC)[1] == ("B", "The bus is the oldest")
    assert option_contents("What is 2 + 2?") == ()


def test_every_shipped_letter_question_lists_its_options() -> None:
    for name in ("aqua", "logic3", "track7"):
        for question in load_questions(name, source="offline")[:50]:
            letters = tuple(f"({letter})" for letter, _ in option_contents(question.text))
            assert letters == question.options, question.qid


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("Therefore, the total number of marbles in the bag is \\boxed{40}.", "(A)"),
        ("So the bag holds \\(\\boxed{400}\\) marbles.", "(D)"),
        ("Adding 160 gives 200 marbles in all.", "(B)"),
        ("In all, 3,200 marbles.", "(E)"),
        ("The answer is \\(\\boxed{18}\\).", None),  # no option holds 18
        ("The bag holds 40 or 200 marbles.", None),  # two options named
        ("The bag does not hold 40 marbles.", None),  # negated
        ("C) 380", None),  # an option-list line, not a statement
        ("Let me know if you need more help", None),
    ],
)
def test_a_final_sentence_names_one_option_by_its_value(text: str, answer: str | None) -> None:
    assert _reader(AQUA).extract(text, finish_reason="eos") == answer


def test_a_stated_letter_wins_over_later_work_and_a_cut_text_names_nothing() -> None:
    reader = _reader(AQUA)
    assert reader.extract("The answer is (C). It holds 40 if we count one side.", "eos") == "(C)"
    assert reader.extract("Working: the bag holds \\boxed{40}.", "length") is None
    # without the question, the task cannot know what 40 names
    assert get_task("aqua").extract("The bag holds \\boxed{40}.", "eos") is None


def test_text_options_are_named_by_their_words() -> None:
    reader = _reader(LOGIC, "logic3")
    assert reader.extract("Reading the clues in order.\nThe bus is the oldest.", "eos") == "(B)"
    assert reader.extract("The bus is the oldest, the truck is the oldest", "eos") is None
    assert reader.extract("Options:\nB) The bus is the oldest", "eos") is None


def test_final_sentence_ignores_display_math_and_closing_marks() -> None:
    text = "x = 120\n\\]\nTherefore, the grocer sold \\(\\boxed{12}\\) bags."
    assert final_sentence(text) == "Therefore, the grocer sold \\(\\boxed{12}\\) bags"
    assert stated_option(text, (("A", "12"), ("B", "120")), "AB") == "(A)"


def test_a_custom_multiple_choice_question_reads_its_options() -> None:
    task = CustomTask(kind="letter")
    question = task.question("Which is larger?\n(A) 12\n(B) 16")
    assert task.for_question(question).extract("The larger one is 16.", "eos") == "(B)"


def test_extract_cli_reads_a_question_of_the_data(capsys) -> None:
    question = next(
        q for q in load_questions("aqua", source="offline")
        if dict(option_contents(q.text))["A"].isdigit()
    )  # fmt: skip
    value = dict(option_contents(question.text))["A"]
    text = f"So it is \\boxed{{{value}}}."
    assert main(["extract", "--task", "aqua", "--question", question.qid, "--text", text]) == 0
    assert capsys.readouterr().out.strip() == "(A)"
    assert main(["extract", "--task", "aqua", "--text", text]) == 1
    assert main(["extract", "--task", "aqua", "--question", "aqua-99999", "--text", text]) == 2
    assert "has no question 'aqua-99999'" in capsys.readouterr().err


# arith2-0006: Start with 6, add 2, add 16; options (A) 24 (B) 8 (C) 25 (D) 23 (E) 22, gold (A).
HIJACKED = (
    "The answer is (D). Let's compute each step: 1. Start with 6. 2. Add 2: 6 + 2 = 8 3. Add 16: "
    "8 + 16 = 24 Therefore, the number you end with is 24."
)
CHECKED = "The answer is (A) 24. Check: 8 + 16 = 24."
RESTATED = "Add 16: 8 + 16 = 24. The answer is (D)."


@pytest.mark.parametrize(
    ("text", "finish", "answer"),
    [
        (HIJACKED, "eos", "(A)"),  # the later conclusion names (A) 24 by its value
        (HIJACKED, "length", "(A)"),  # closed before the cut: it still concludes
        (CHECKED, "eos", "(A)"),  # a check of the stated option concludes nothing new
        (RESTATED, "eos", "(D)"),  # the letter is the last statement
        (RESTATED, "length", "(D)"),
        (
            "The answer is (D). So 6 + 2 = 8. Then 8 + 16 = 24.",
            "eos",
            "(D)",
        ),  # working, no conclusion
        ("The answer is (D). Therefore 6 + 2 + 16 = 24.", "eos", "(A)"),  # the value after "="
        ("The answer is (D). Thus the result is \\boxed{24}.", "eos", "(A)"),
        ("The answer is (D). So we get \\boxed{24}.", "eos", "(A)"),  # boxed is a final format
        ("The answer is (D). Therefore, the result is not 24.", "eos", "(D)"),  # negated
        ("The answer is (D). Therefore it is 8 or 24.", "eos", "(D)"),  # two options named
        ("The answer is (D). Therefore, the result is 23.", "eos", "(D)"),  # the same option
        ("The answer is (D). Therefore, the number you end with is 24", "length", "(D)"),  # cut
        ("Therefore the result is 24. The answer is (D).", "eos", "(D)"),
        # a concluding sentence that writes a letter is read by its letter, whatever value follows
        ("The answer is (D). So: 8 + 16 = 24. The correct answer is indeed (D) 24.", "eos", "(D)"),
    ],
)
def test_the_last_conclusion_is_the_answer(text: str, finish: str, answer: str) -> None:
    question = next(q for q in load_questions("arith2") if q.qid == "arith2-0006")
    assert get_task("arith2").for_question(question).extract(text, finish) == answer


def test_concluded_option_reads_only_concluding_sentences() -> None:
    contents = option_contents(AQUA)
    assert concluded_option(" Then 40 more.", contents, "ABCDE") is None
    assert concluded_option(" Hence 200.\nThen 40 more.", contents, "ABCDE") == "(B)"
    assert concluded_option(" Hence 200. In conclusion, 400.", contents, "ABCDE") == "(D)"


def test_extract_cli_reads_the_last_conclusion(capsys) -> None:
    for text, answer in ((HIJACKED, "(A)"), (CHECKED, "(A)"), (RESTATED, "(D)")):
        args = ["extract", "--task", "arith2", "--question", "arith2-0006", "--text", text]
        assert main(args) == 0
        assert capsys.readouterr().out.strip() == answer
