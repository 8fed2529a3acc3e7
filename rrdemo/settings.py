"""Each run setting declared once, and what every front end reads from that declaration.

A setting is a field of `RunConfig` (or `Sampling`) made with `setting(...)`: the field gives its
name, type and default, a Literal type its allowed words, and the `Setting` in its metadata the
rest (what messages call it, its help, the paper's value, whether a sweep may vary it, whether the
Arena shows it, whether it enters the config hash). From those declarations come the command
lines' flags (`add_flags`), the one validator of a given value (`Setting.parse`), a sweep's keys,
defaults and checks (`sweep_defaults`, `parse_sweep`), the Arena's controls and the docs' table of
settings (`markdown_table`). The settings the paper has (strength, K, M, L, order, sampling) keep
the hand-laid forms their front ends give them (sliders, `-L`, M* of a sweep); every setting
beyond the paper is derived, so adding one is its field and the code that acts on it.

The checks every front end shares live here too: `check_choice`, `whole_number`,
`true_or_false`, `known_keys`.
"""

from __future__ import annotations

import argparse
import math
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from rrdemo.errors import RRError

OURS = "ours"  # the paper value of a setting the paper does not have, or does not state


# -- the checks every front end shares -------------------------------------------------------------
def check_choice(value: Any, what: str, allowed: Iterable[str]) -> None:
    """RRError naming the allowed words unless `value` is one of them."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise RRError(f"unknown {what} {value!r}; allowed: {', '.join(allowed)}")


def whole_number(value: Any, what: str, minimum: int | None = None) -> int:
    """`value` as an int: a whole number given as an int, a float (a UI number field) or text (a
    comma list, a YAML string); RRError for anything else, or for a number below `minimum`."""
    try:
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            number = int(value)  # exact: a float would round past 2**53
        else:
            number = float(value) if not isinstance(value, bool | int) else value
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(number, bool) or not math.isfinite(number) or number != int(number):
        raise RRError(f"{what} must be a whole number, got {value!r}")
    if minimum is not None and number < minimum:
        raise RRError(f"{what} must be at least {minimum}, got {int(number)}")
    return int(number)


def true_or_false(value: Any, what: str) -> bool:
    """`value` when it is a boolean; RRError otherwise (a file's `"false"` is text, not false)."""
    if not isinstance(value, bool):
        raise RRError(f"{what} must be true or false, got {value!r}")
    return value


def known_keys(mapping: Mapping, allowed: Iterable[str], label: str) -> None:
    """RRError naming the unknown keys of a file's mapping and the allowed ones."""
    allowed = tuple(allowed)
    unknown = [str(k) for k in mapping if k not in allowed]
    if unknown:
        raise RRError(
            f"{label}: unknown setting(s) {', '.join(sorted(unknown))}; allowed: {', '.join(allowed)}"
        )


# -- the declaration -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    """One run setting. `name`, `type`, `default`, `choices` and `optional` are read off its
    dataclass field (`declared`); the rest is written in its `setting(...)`."""

    what: str  # what messages and tables call it: "turn policy"
    help: str  # what it does: the CLI help, the Arena's info line, the docs
    paper: Any = OURS  # the paper's value; OURS when the paper has no such setting or states none
    beyond: bool = True  # beyond the paper: every front end derives its control from this
    hashed: bool = True  # part of `RunConfig.config_hash()`
    sweep: Literal["one", "many", "none"] = "one"  # a sweep sets one value, lists several, or none
    many: str = ""  # a "many" setting's sweep key and `rrdemo experiment` flag: "turn_policies"
    calibrate: str = ""  # the key under which `rrdemo calibrate` lists several values: "styles"
    arena: bool = True  # the Arena shows a control for it
    label: str = ""  # the Arena's label ("" = `what`, capitalised)
    minimum: int | None = None  # the smallest whole number allowed
    check: Callable[[Any], None] | None = None  # a further check of one value (RRError)
    only_with: tuple[str, tuple[str, ...]] = ()  # (setting, its values): read only under those
    name: str = ""
    type: Any = str  # str, int, float or bool
    default: Any = None
    choices: tuple[str, ...] = ()
    optional: bool = False  # None is allowed (a default worked out from other settings)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def sweep_key(self) -> str:
        return self.many if self.sweep == "many" else self.name

    @property
    def paper_text(self) -> str:
        return self.paper if self.paper == OURS else _text(self.paper)

    def parse(self, value: Any, where: str = "") -> Any:
        """`value` as this setting's type, checked: the one validator of a setting a command
        line, a sweep, an ensemble file or the Arena gives. RRError says what is allowed, after
        `where` the value came from."""
        try:
            return self._parse(value)
        except RRError as exc:
            if where:
                raise RRError(f"{where}: {exc}") from None
            raise

    def _parse(self, value: Any) -> Any:
        if value is None and self.optional:
            return None
        if self.choices:
            check_choice(value, self.what, self.choices)
        elif self.type is bool:
            value = true_or_false(value, self.what)
        elif self.type is int:
            value = whole_number(value, self.what, self.minimum)
        elif self.type is float:
            try:
                if isinstance(value, bool) or not isinstance(value, int | float | str):
                    raise ValueError(value)
                value = float(value)
            except ValueError:
                raise RRError(f"{self.what} must be a number, got {value!r}") from None
        elif not isinstance(value, str):
            raise RRError(f"{self.what} must be text, got {value!r}")
        if self.check is not None:
            self.check(value)
        return value

    def applies(self, values: Mapping[str, Any]) -> bool:
        """Whether this setting is read under `values` (other settings by name)."""
        if not self.only_with:
            return True
        other, allowed = self.only_with
        return values.get(other) in allowed


def setting(default: Any, what: str, help: str, **declared: Any) -> Any:
    """A dataclass field with this default, declaring a run setting (`Setting` has the options)."""
    return field(default=default, metadata={"setting": Setting(what, help, **declared)})


def declared(cls: type) -> tuple[Setting, ...]:
    """The settings declared among `cls`'s fields, in field order, completed from each field."""
    hints = get_type_hints(cls)
    found = []
    for f in fields(cls):
        decl = f.metadata.get("setting")
        if decl is None:
            continue
        kind, choices, optional = _kind(hints[f.name])
        default = f.default if f.default is not MISSING else None
        found.append(
            replace(
                decl, name=f.name, type=kind, default=default, choices=choices, optional=optional
            )
        )
    return tuple(found)


def _kind(hint: Any) -> tuple[Any, tuple[str, ...], bool]:
    """(type, allowed words, None allowed) of a field's type hint."""
    args = get_args(hint)
    if get_origin(hint) in (Union, types.UnionType):
        optional = type(None) in args
        kind, choices, _ = _kind(next(a for a in args if a is not type(None)))
        return kind, choices, optional
    if get_origin(hint) is Literal:
        return str, tuple(args), False
    return hint, (), False


def _text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


# -- what the front ends derive ----------------------------------------------------------------------
def add_flags(parser: Any, settings: Sequence[Setting], many: bool = False) -> None:
    """One flag per setting, left out = None (the caller's default applies). `many`: a sweep's
    flags, where a "many" setting takes a comma list under its plural name (and its own name)."""
    for s in settings:
        default = "" if s.default is None else f" (default {_text(s.default)})"
        if many and s.sweep == "none":
            continue
        if many and s.sweep == "many":
            names = ["--" + s.many.replace("_", "-"), s.flag]
            parser.add_argument(
                *names, dest=s.many, help=f"{s.help}; a comma list to sweep several{default}"
            )
        elif s.type is bool:
            parser.add_argument(s.flag, action="store_true", default=None, help=s.help)
        elif s.choices:
            parser.add_argument(s.flag, choices=s.choices, help=f"{s.help}{default}")
        else:
            parser.add_argument(s.flag, type=s.type, help=f"{s.help}{default}")


def given(args: argparse.Namespace, settings: Sequence[Setting]) -> dict[str, Any]:
    """The settings a command line gave (those left out are None and are left out)."""
    return {s.name: getattr(args, s.name) for s in settings if getattr(args, s.name) is not None}


def sweep_defaults(settings: Sequence[Setting]) -> dict[str, Any]:
    """A sweep's keys of these settings with their defaults ("many" settings as a list)."""
    return {
        s.sweep_key: [s.default] if s.sweep == "many" else s.default
        for s in settings
        if s.sweep != "none"
    }


def parse_sweep(
    settings: Sequence[Setting], values: Mapping[str, Any], as_list: Callable[[Any, str], list]
) -> dict[str, Any]:
    """The sweep's values of these settings, each checked; a "many" setting's list (split by
    `as_list`, repeats dropped) must name at least one value."""
    out: dict[str, Any] = {}
    for s in settings:
        if s.sweep == "many":
            listed = [s.parse(v) for v in as_list(values[s.many], s.many)]
            if not listed:
                raise RRError(f"give at least one {s.what} ({', '.join(s.choices)})")
            out[s.many] = list(dict.fromkeys(listed))
        elif s.sweep == "one":
            out[s.name] = s.parse(values[s.name])
    return out


def markdown_table(settings: Sequence[Setting]) -> str:
    """The docs' table of settings: each with its default, the paper's value and what it does."""
    rows = [
        "| setting | default | paper | sweep | what it does |",
        "|---|---|---|---|---|",
    ]
    for s in settings:
        sweep = {"one": "one value", "many": f"a list (`{s.many}`)", "none": "-"}[s.sweep]
        words = f" ({' / '.join(s.choices)})" if s.choices else ""
        rows.append(
            f"| `{s.name}` | {_text(s.default)} | {s.paper_text} | {sweep} | {s.help}{words} |"
        )
    return "\n".join(rows)
