"""``raglab serve``'s command line: a port outside 0..65535 is a usage error (exit status 2).

The server itself is tested through the web app (tests/web), with a real server where it matters.
"""

from __future__ import annotations

import pytest

from raglab.cli._common import EXIT_USAGE
from raglab.cli.main import main


@pytest.mark.parametrize("port", ["99999", "-1", "65536", "eighty"])
def test_a_port_outside_the_range_is_a_usage_error(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The exit-status table says 2 for "an option is not allowed": argparse's exit, before
    anything is loaded or bound."""
    with pytest.raises(SystemExit) as exit_:
        main(["serve", "--port", port])
    assert exit_.value.code == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--port" in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("raglab serve: error: argument --port")
