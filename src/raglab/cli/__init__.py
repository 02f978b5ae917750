"""The command line: thin translators from arguments to library calls and back to tables."""
