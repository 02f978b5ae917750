"""The one table of settings (raglab.settings) and everything derived from it.

Oracle: the table itself. Each face's fields, defaults, bounds and help are read back from what
it builds (the value objects' dataclass fields, argparse's parser, the API's JSON schema) and
compared with the table's rows, so a setting declared twice would show up as a difference here.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from typing import Any

import pytest

from raglab import settings as S
from raglab.base.sentinels import NOT_GIVEN, TUNED
from raglab.cli.main import build_parser
from raglab.cli.options import add_setting_options, given_settings
from raglab.labels import FEATURE_LABELS, RETRIEVER_LABELS
from raglab.pipeline.lab import Lab
from raglab.rerank.features import FEATURES
from raglab.run_settings import (
    RUN_SETTING_NAMES,
    TUNED_NAMES,
    ChunkingKey,
    RetrievalSettings,
    RunSettings,
)
from raglab.settings import (
    FIXED,
    RETRIEVERS,
    SETTINGS,
    chunk_overlap,
    chunk_size,
    default,
    fixed,
    or_default,
    setting,
    settings_in,
)
from raglab.web.routes.end_to_end import RunRequest


def test_names_are_unique_and_groups_known() -> None:
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    assert {s.group for s in SETTINGS} == {"data", "retrieval", "run"}
    assert [s.name for s in settings_in("data")] == ["analyzer", "stem", "windows", "model"]


def test_every_default_passes_its_own_check() -> None:
    for s in SETTINGS:
        assert s.check(s.default) is s.default or s.check(s.default) == s.default, s.name


def test_sentinels_are_not_none_and_survive_copying() -> None:
    import copy
    import pickle

    assert TUNED is not None and NOT_GIVEN is not None and TUNED is not NOT_GIVEN
    assert copy.deepcopy(TUNED) is TUNED and pickle.loads(pickle.dumps(NOT_GIVEN)) is NOT_GIVEN
    assert repr(TUNED) == "TUNED" and repr(NOT_GIVEN) == "NOT_GIVEN"


def test_the_run_settings_are_the_tables_retrieval_and_run_rows() -> None:
    fields = {f.name: f.default for f in dataclasses.fields(RunSettings)}
    assert tuple(fields) == RUN_SETTING_NAMES
    assert fields == {name: default(name) for name in RUN_SETTING_NAMES}
    assert TUNED_NAMES == ("weight", "mmr_lambda", "threshold")
    assert all(setting(n).tuned for n in TUNED_NAMES)


def test_the_retrieval_settings_take_the_tables_defaults() -> None:
    s = RetrievalSettings()
    assert (s.retriever, s.k1, s.b, s.depth, s.fusion_depth) == tuple(
        default(n) for n in ("retriever", "k1", "b", "depth", "fusion_depth")
    )
    assert s.weight is TUNED and s.chunking == ChunkingKey().resolved()
    assert RunSettings().retrieval == s


def test_a_lab_takes_the_data_rows_defaults() -> None:
    lab = Lab.load()
    assert (lab.analyzer, lab.stem, lab.windows, lab.model) == tuple(
        default(s.name) for s in settings_in("data")
    )


@pytest.mark.parametrize(
    ("name", "value", "needle"),
    [
        ("k1", -0.1, "k1 must be at least 0"),
        ("b", 1.5, "b must be at most 1"),
        ("budget", 0, "budget must be at least 1"),
        ("budget", 2.5, "budget must be a int"),
        ("threshold", math.nan, "threshold must be a number"),
        ("retriever", "grep", "retriever must be one of bm25, lsa, rrf, score"),
        ("rerank", 1, "rerank must be a bool"),
        ("weight", True, "weight must be a number"),
    ],
)
def test_bad_values_name_the_setting(name: str, value: Any, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        setting(name).check(value)
    if name in RUN_SETTING_NAMES:
        with pytest.raises(ValueError, match=needle):
            RunSettings(**{name: value})


def test_labels_cover_every_choice_and_feature() -> None:
    assert tuple(FEATURE_LABELS) == FEATURES
    assert tuple(RETRIEVER_LABELS) == RETRIEVERS == setting("retriever").choices
    for s in SETTINGS:
        if s.choices is not None:
            assert s.choice_labels is not None and tuple(s.choice_labels) == s.choices, s.name


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.dest: a for a in parser._actions if a.option_strings}


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser(name)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    chosen = sub.choices[name]
    assert isinstance(chosen, argparse.ArgumentParser)
    return chosen


def test_run_offers_every_run_and_data_setting_with_its_default_in_the_help() -> None:
    parser = _subparser("run")
    options = _options(parser)
    for s in (*settings_in("retrieval", "run"), *settings_in("data")):
        action = options[s.name]
        assert s.flag in action.option_strings
        assert action.default is NOT_GIVEN
        assert action.help is not None and s.help in action.help
        assert f"(default: {s.describe_default()})".replace("%", "%%") in action.help
    text = " ".join(parser.format_help().split())
    assert "--weight X score fusion's weight of BM25" in text
    assert "(default: chosen on the training split)" in text


def test_options_parse_what_the_table_allows_and_nothing_else(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = argparse.ArgumentParser(prog="t", exit_on_error=False)
    add_setting_options(parser, ["budget", "rerank", "retriever", "depth"])
    args = parser.parse_args(["--budget", "250", "--no-rerank", "--depth", "all"])
    assert given_settings(args, ["budget", "rerank", "retriever", "depth"]) == {
        "budget": 250,
        "rerank": False,
        "depth": 0,
    }
    with pytest.raises(argparse.ArgumentError, match="budget must be at least 1, not 0"):
        parser.parse_args(["--budget", "0"])
    with pytest.raises(argparse.ArgumentError, match="'many' is not an integer"):
        parser.parse_args(["--budget", "many"])


def test_the_api_request_is_the_table() -> None:
    schema = RunRequest.model_json_schema()
    props = schema["properties"]
    assert list(props) == [*RUN_SETTING_NAMES, "split"]
    for name in RUN_SETTING_NAMES:
        s = setting(name)
        prop = props[name]
        assert prop["title"] == s.label and s.help in prop["description"]
        assert prop.get("default") == (None if s.tuned else s.default), name
        numbers = [x for x in prop.get("anyOf", [prop]) if x.get("type") in ("integer", "number")]
        if s.minimum is not None:
            assert numbers and numbers[0]["minimum"] == s.minimum, name
        if s.maximum is not None:
            assert numbers[0]["maximum"] == s.maximum, name
        if s.choices is not None:
            assert prop["enum"] == list(s.choices), name
    assert schema["additionalProperties"] is False


def _trec_export() -> argparse.ArgumentParser:
    trec = _subparser("trec")
    sub = next(a for a in trec._actions if isinstance(a, argparse._SubParsersAction))
    chosen = sub.choices["export"]
    assert isinstance(chosen, argparse.ArgumentParser)
    return chosen


@pytest.mark.parametrize(
    ("command", "groups", "left_out"),
    [
        ("run", ("data", "retrieval", "run"), ()),
        ("report", ("data", "retrieval", "run"), ()),
        ("check", ("data", "retrieval", "run"), ()),
        ("fuse", ("data", "retrieval"), ("retriever",)),
        ("trec export", ("data", "retrieval"), ()),
    ],
)
def test_each_command_offers_its_settings_from_the_table(
    command: str, groups: tuple[str, ...], left_out: tuple[str, ...]
) -> None:
    """The gate's overrides and the report's settings are the table's rows, not a list of
    their own; a command that leaves an option out holds NOT_GIVEN, not the default."""
    parser = _trec_export() if command == "trec export" else _subparser(command)
    options = _options(parser)
    for s in SETTINGS:
        if s.group in groups and s.name not in left_out:
            assert options[s.name].default is NOT_GIVEN, (command, s.name)
            assert s.flag in options[s.name].option_strings
        elif s.name in left_out:
            assert s.name not in options, (command, s.name)


def _action(command: str, action: str) -> argparse.ArgumentParser:
    parent = _subparser(command)
    sub = next(a for a in parent._actions if isinstance(a, argparse._SubParsersAction))
    chosen = sub.choices[action]
    assert isinstance(chosen, argparse.ArgumentParser)
    return chosen


@pytest.mark.parametrize(
    ("command", "names", "aliases"),
    [
        (("chunk", None), ("chunker", "size", "overlap"), {"--method": "chunker"}),
        (("bm25", "search"), ("k1", "b"), {}),
        (("rerank", None), ("mmr_lambda",), {"--lambda": "mmr_lambda"}),
        (("trec", "eval"), ("budget",), {}),
    ],
)
def test_the_stage_commands_take_their_settings_from_the_table(
    command: tuple[str, str | None], names: tuple[str, ...], aliases: dict[str, str]
) -> None:
    """The stage commands' settings are the table's options (flag, NOT_GIVEN default, the
    table's check), and their first names stay as aliases of the same setting."""
    name, action = command
    parser = _subparser(name) if action is None else _action(name, action)
    for n in names:
        s = setting(n)
        option = next(a for a in parser._actions if s.flag in a.option_strings)
        assert option.dest == n and option.default is NOT_GIVEN, n
    for flag, dest in aliases.items():
        alias = next(a for a in parser._actions if flag in a.option_strings)
        assert alias.dest == dest and alias.default is NOT_GIVEN
    if action == "search":
        with pytest.raises(SystemExit):
            parser.parse_args(["word", "--b", "1.5"])  # the table's range: b in [0, 1]


def test_the_fixed_rows_are_the_named_constants() -> None:
    """Each value /api/meta's ``fixed`` sends is one of raglab.settings' constants, written once
    there: the row holds the constant itself, not a copy of its literal."""
    rows = {row.name: row.value for row in FIXED}
    assert len(rows) == len(FIXED)
    constants = {name: getattr(S, name) for name in S.__all__ if name.isupper()}
    for name, value in rows.items():
        assert any(value is c for c in constants.values()), name
        assert fixed(name) is value
    assert rows["rrf_k"] is S.RRF_K and rows["chunk_sizes"] is S.CHUNK_SIZES
    assert FIXED[0].to_json() == {"name": "seed", "value": S.SEED, "help": FIXED[0].help}
    assert fixed_row_json("grid_k1")["value"] == list(S.GRID_K1)
    with pytest.raises(KeyError, match="no fixed value named 'k1'"):
        fixed("k1")


def fixed_row_json(name: str) -> dict[str, Any]:
    return next(row.to_json() for row in FIXED if row.name == name)


def test_a_face_resolves_what_was_not_given_to_the_tables_default() -> None:
    assert or_default("k1", None) == or_default("k1", NOT_GIVEN) == default("k1")
    assert or_default("k1", 0.9) == 0.9 and or_default("rerank", False) is False
    # A setting whose default is None keeps None: the chunker's own size, resolved next.
    assert or_default("size", None) is None
    assert [chunk_size(m, None) for m in ("fixed", "sentence", "heading")] == [
        S.CHUNK_SIZES[m] for m in ("fixed", "sentence", "heading")
    ]
    assert chunk_size("sentence", 80) == 80
    assert chunk_overlap("fixed", None) == S.FIXED_OVERLAP and chunk_overlap("fixed", 7) == 7
    assert chunk_overlap("heading", None) is None


def test_the_size_rows_words_name_the_chunkers_own_sizes() -> None:
    text = setting("size").describe_default()
    assert all(f"{S.CHUNK_SIZES[m]} {m}" in text for m in ("fixed", "sentence", "heading"))
    assert str(S.FIXED_OVERLAP) in setting("overlap").describe_default()
