"""The saved settings record of a report: every setting resolved, and back to run settings.

One job: turn a run's :class:`~raglab.pipeline.end_to_end.RunSettings` (and the lab's data
settings) into the plain ``settings`` record a report saves (:func:`settings_record`), and read
such a record back (:func:`run_settings_from`, :func:`data_settings_from`) so that ``raglab
check`` can rebuild the run a baseline was made with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raglab.base.sentinels import TUNED
from raglab.pipeline.end_to_end import plain_settings
from raglab.pipeline.lab import Lab
from raglab.run_settings import RUN_SETTING_NAMES, TUNED_NAMES, RunSettings
from raglab.settings import setting, settings_in

#: Settings the pipeline chooses on the training split when they are not given.
CHOSEN_SETTINGS = TUNED_NAMES
# Settings a report of an earlier version may lack: they take their defaults.
_ADDED_LATER = frozenset({"depth", "fusion_depth", "reader_scoring"})


def settings_record(
    settings: RunSettings,
    *,
    split: str,
    resolved: RunSettings | None = None,
    data: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every setting of a report as plain values, resolved (:data:`raglab.settings.SETTINGS`).

    ``size`` and ``overlap`` are the chunker's resolved values. A setting whose default is
    "chosen on the training split" holds the value the run used (``resolved``; None when the run
    did not use it or the labels do not support a run), and ``chosen_on_train`` lists those the
    given ``settings`` left TUNED and the run chose, so a rerun chooses them again. ``data`` gives the settings
    fixed when the lab was built (analyzer, stem, windows; their defaults when absent).
    """
    values = plain_settings((resolved or settings).values())
    # Left TUNED and used by the run (a weight is chosen only for score fusion).
    chosen = [
        name
        for name in TUNED_NAMES
        if getattr(settings, name) is TUNED
        and (resolved is None or getattr(resolved, name) is not TUNED)
    ]
    fixed = {s.name: s.default for s in settings_in("data")}
    fixed.update(data or {})
    return {
        **values,
        **fixed,
        "split": split,
        "chosen_on_train": chosen,
    }


def lab_settings(lab: Lab) -> dict[str, Any]:
    """The data settings a lab was built with, by name."""
    return {"analyzer": lab.analyzer, "stem": lab.stem, "windows": lab.windows, "model": lab.model}


def run_settings_from(record: Mapping[str, Any]) -> RunSettings:
    """The :class:`RunSettings` a settings record (:func:`settings_record`) was made from.

    Settings listed in ``chosen_on_train`` are TUNED again, so the pipeline chooses them anew on
    the training split. A setting newer than the record (the depths) takes its default. Raises
    ValueError naming the first setting that is missing or not allowed.
    """
    chosen = record.get("chosen_on_train", [])
    if not isinstance(chosen, list):
        raise ValueError("setting 'chosen_on_train' must be a list of setting names")
    values: dict[str, Any] = {}
    for name in RUN_SETTING_NAMES:
        s = setting(name)
        if name in chosen or (s.tuned and record.get(name, 0) is None):
            values[name] = TUNED
        elif name in record:
            try:
                values[name] = s.check(record[name])
            except ValueError as exc:
                raise ValueError(f"setting {name!r}: {exc}") from None
        elif name not in _ADDED_LATER:
            raise ValueError(f"setting {name!r} is missing")
    return RunSettings(**values)


def data_settings_from(record: Mapping[str, Any]) -> dict[str, Any]:
    """The data settings (analyzer, stem, windows, model) of a settings record, checked; one a
    record predates takes its default."""
    out = {}
    for s in settings_in("data"):
        value = record.get(s.name, s.default)
        try:
            out[s.name] = s.check(value)
        except ValueError as exc:
            raise ValueError(f"setting {s.name!r}: {exc}") from None
    return out


__all__ = [
    "CHOSEN_SETTINGS",
    "data_settings_from",
    "lab_settings",
    "run_settings_from",
    "settings_record",
]
