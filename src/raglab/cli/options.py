"""Command-line options derived from :data:`raglab.settings.SETTINGS`.

Every pipeline setting becomes one option named after it (``mmr_lambda`` is ``--mmr-lambda``), its
help the table's help with the default in words; a yes/no setting becomes a pair (``--rerank`` /
``--no-rerank``). An option the user leaves out holds :data:`~raglab.settings.NOT_GIVEN`, so a
command can tell "not given" from every real value (``raglab check`` keeps the baseline's value
then; ``trec export`` lets ``--depth`` set the fusion depth too). Values are checked against the
table's range and choices while the line is parsed, so a bad one is a usage error naming the
option.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from raglab.base.sentinels import NOT_GIVEN
from raglab.settings import Setting, setting

__all__ = ["add_setting_options", "given_settings"]


class _Toggle(argparse.Action):
    """``--name`` sets True, ``--no-name`` sets False."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, not (option_string or "").startswith("--no-"))


def setting_parser(s: Setting) -> Any:
    """The argparse ``type`` of a setting: parses and checks a value as the table says."""

    def parse(text: str) -> Any:
        if s.name == "depth" and text.strip().lower() == "all":
            return 0
        try:
            value = s.kind(text)
        except ValueError:
            kind = "a number" if s.kind is float else "an integer"
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        try:
            return s.check(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = s.kind.__name__  # argparse names the type in its messages
    return parse


def _help(s: Setting, default_text: str | None) -> str:
    text = default_text if default_text is not None else s.describe_default()
    return f"{s.help} (default: {text})".replace("%", "%%")


def add_setting_options(
    parser: argparse.ArgumentParser | Any,
    names: Iterable[str],
    *,
    default_texts: Mapping[str, str] | None = None,
) -> None:
    """One option per setting in ``names`` on ``parser`` (a parser or an argument group).

    ``default_texts`` replaces the default's wording for a command whose default differs from
    the table's (``trec export --depth``); the value left out is NOT_GIVEN all the same.
    """
    texts = dict(default_texts or {})
    for name in names:
        s = setting(name)
        help_text = _help(s, texts.get(name))
        if s.kind is bool:
            parser.add_argument(
                s.flag,
                "--no-" + s.flag[2:],
                dest=s.name,
                action=_Toggle,
                default=NOT_GIVEN,
                help=help_text,
            )
        elif s.choices is not None:
            parser.add_argument(
                s.flag, dest=s.name, choices=s.choices, default=NOT_GIVEN, help=help_text
            )
        else:
            metavar = "N" if s.kind is int else "X"
            parser.add_argument(
                s.flag,
                dest=s.name,
                type=setting_parser(s),
                default=NOT_GIVEN,
                metavar=metavar,
                help=help_text,
            )


def given_settings(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The settings of ``names`` the user gave on the command line, by name."""
    out = {}
    for name in names:
        value = getattr(args, name, NOT_GIVEN)
        if value is not NOT_GIVEN:
            out[name] = value
    return out
