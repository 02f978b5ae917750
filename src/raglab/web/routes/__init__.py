"""One router per exhibit (plus ``meta`` for the data summary and the questions)."""
