"""The data: pages read from a folder, labelled questions, and where each answer lies."""
