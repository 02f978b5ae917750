"""No test writes outside its temporary folders: the neural cache of every in-process command,
server and worker lives under pytest's temporary folder, never in the user's ``~/.cache``.

Oracle: the paths themselves (the session's ``RAGLAB_CACHE_DIR`` lies under pytest's base
temporary folder, and the cache folder the encoder resolves lies under it), and the number of
files in ``~/.cache/raglab``, counted when the session started and again after a command that
encodes the handbook's chunks.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest

from raglab.cli.main import main
from raglab.embedding.neural.cache import cache_folder
from raglab.embedding.neural.model import load_model
from tests.conftest import USER_CACHE, USER_CACHE_FILES, count_files


def test_the_session_cache_is_under_pytests_temporary_folder(
    tmp_path_factory: pytest.TempPathFactory, session_cache: Path
) -> None:
    base = tmp_path_factory.getbasetemp().resolve()
    assert os.environ["RAGLAB_CACHE_DIR"] == str(session_cache)
    assert session_cache.resolve().is_relative_to(base)
    assert not session_cache.resolve().is_relative_to(USER_CACHE.resolve())
    assert cache_folder(load_model()).resolve().is_relative_to(session_cache.resolve())


def test_an_encoding_command_leaves_the_users_cache_as_it_was(session_cache: Path) -> None:
    """``raglab fuse --json`` ranks with the neural retrievers (every chunk encoded or read
    back): its vectors are in the session's cache, and ``~/.cache/raglab`` holds as many files as
    when the session began."""
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        assert main(["fuse", "--json"]) == 0
    assert '"neural-rrf"' in sink.getvalue()
    assert any(session_cache.rglob("*.npy"))
    assert count_files(USER_CACHE) == USER_CACHE_FILES[0]
