"""The Arena's chooser of recorded runs: model and task, then setting, then question.

Everything it lists comes from the gallery (rrdemo.gallery): a new run's settings join it by an
entry in the manifest, not by code. A setting is named by its condition ("moderate 3c2t") with
what its whole run measured beside it ("no rescue, +6.2 [+0.0, +13.8]"); recordings the manifest
keeps aside (an old prompt, a model too small to reason) are listed behind a disclosure, labelled.
The question dropdown's value ("<setting>/<question>") is what plays (ui.replay).
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from rrdemo.gallery import Gallery, question_cell
from rrdemo.replay import RecordedUnit
from rrdemo.runs.log import RunLog
from ui import render


def group_choices(gallery: Gallery) -> list[str]:
    """The current runs' model · task groups, in the manifest's order."""
    return list(gallery.groups())


def setting_choices(gallery: Gallery, indices: list[int]) -> list[tuple[str, str]]:
    """Settings of one group, each with its run's outcome: ("moderate 3c2t: no rescue, ...", "0")."""
    return [(gallery.settings[i].label(grouped=True), str(i)) for i in indices]


def shelf_choices(gallery: Gallery) -> list[tuple[str, str]]:
    """The recordings kept aside, each named in full with why it is kept aside."""
    return [
        (gallery.settings[i].label(), str(i))
        for indices in gallery.groups(shelved=True).values()
        for i in indices
    ]


def question_choices(gallery: Gallery, index: int) -> list[tuple[str, str]]:
    """One setting's recorded questions: ("aqua-0002: MAJ fooled C · RRMaj correct A", "0/aqua-0002")."""
    setting = gallery.settings[index]
    return [(f"{q}: {setting.unit(q).verdict()}", f"{index}/{q}") for q in setting.questions]


def result_for(gallery: Gallery, unit: RecordedUnit, index: int) -> str:
    """The result line of a gallery recording: its setting's whole run, and where it falls."""
    return render.result_line(gallery.settings[index].outcome(), question_cell(unit), unit)


def result_for_log(log: RunLog, unit: RecordedUnit, outcomes: dict | None = None) -> str:
    """The same for a question of an uploaded log, from that log's own run (`outcomes`: its
    `cell_outcomes`, when computed already)."""
    from rrdemo.gallery import cell_outcomes

    key = unit.done.get("condition", "")
    outcomes = outcomes if outcomes is not None else cell_outcomes(log)
    return render.result_line(outcomes.get(key), question_cell(unit), unit)


@dataclass(frozen=True)
class Chooser:
    """Model · task, setting and question dropdowns, and the kept-aside recordings."""

    group: gr.Dropdown
    setting: gr.Dropdown
    question: gr.Dropdown  # its value plays: "<setting index>/<question id>"
    shelf: gr.Dropdown


def build_chooser(gallery: Gallery) -> Chooser:
    """The three dropdowns in the current row, set to the gallery's first setting."""
    groups = gallery.groups()
    first_group = next(iter(groups), None)
    indices = groups.get(first_group, []) if first_group else []
    first = indices[0] if indices else 0
    group = gr.Dropdown(
        group_choices(gallery),
        value=first_group,
        label="Model · task",
        elem_id="rr-group",
        min_width=180,
    )
    setting = gr.Dropdown(
        setting_choices(gallery, indices),
        value=str(first) if indices else None,
        label="Setting: what its whole run found (RRMaj - MAJ, 95%)",
        elem_id="rr-setting",
        min_width=220,
    )
    questions = question_choices(gallery, first) if indices else []
    question = gr.Dropdown(
        questions,
        value=questions[0][1] if questions else None,
        label="Question: how each vote ended",
        info=f"Picked by a rule: {gallery.rule}.",
        elem_id="rr-gallery",
        min_width=220,
    )
    return Chooser(group, setting, question, _shelf(gallery))


def _shelf(gallery: Gallery) -> gr.Dropdown:
    """Placeholder made in the row; `build_shelf` renders it under its disclosure."""
    return gr.Dropdown(
        shelf_choices(gallery),
        value=None,
        label="Recordings kept aside (an old prompt, or a model too small to reason)",
        elem_id="rr-shelf",
        render=False,
    )


def build_shelf(chooser: Chooser) -> None:
    """The kept-aside recordings behind a closed disclosure."""
    with gr.Accordion("Older recordings: the old prompt and SmolLM2-135M", open=False):
        gr.Markdown(
            "Kept for the mechanics, not as evidence: the old-prompt sweep showed agents the "
            'phrase "The answer is N." (docs/evidence.md), and SmolLM2-135M cannot reason.'
        )
        chooser.shelf.render()


def wire_chooser(gallery: Gallery, chooser: Chooser) -> list[tuple]:
    """The picks that change the question dropdown, each as (event, the dropdown it read, its
    value -> the recording to play); the caller chains fill and play on each."""
    quick = {"queue": False, "api_visibility": "private"}
    groups = gallery.groups()

    def first_of_group(group: str) -> str:
        return first_question(gallery, (groups.get(group) or [0])[0])

    def first_of_setting(index: str | None) -> str:
        return first_question(gallery, int(index) if (index or "").isdigit() else -1)

    def questions_of(index: int) -> dict:
        choices = question_choices(gallery, index)
        return gr.update(choices=choices, value=choices[0][1] if choices else None)

    def pick_group(group: str):
        indices = groups.get(group) or []
        if not indices:
            return gr.update(), gr.update()
        settings = setting_choices(gallery, indices)
        return gr.update(choices=settings, value=settings[0][1]), questions_of(indices[0])

    def pick_setting(index: str | None):
        return questions_of(int(index)) if (index or "").isdigit() else gr.update()

    group, setting, shelf, question = (
        chooser.group,
        chooser.setting,
        chooser.shelf,
        chooser.question,
    )
    return [
        (group.input(pick_group, group, [setting, question], **quick), group, first_of_group),
        (setting.input(pick_setting, setting, question, **quick), setting, first_of_setting),
        (shelf.input(pick_setting, shelf, question, **quick), shelf, first_of_setting),
    ]


def first_question(gallery: Gallery, index: int) -> str:
    """The recording a setting plays when picked: its first question ("" for no setting)."""
    if not 0 <= index < len(gallery.settings):
        return ""
    return f"{index}/{gallery.settings[index].questions[0]}"
