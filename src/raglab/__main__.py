"""``python -m raglab``: the command line."""

from raglab.cli.main import main

raise SystemExit(main())
