"""The pipeline: the only place where stages are composed into exhibits and runs."""
