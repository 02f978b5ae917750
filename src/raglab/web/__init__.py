"""The web lab: a JSON API with one router per exhibit, and the page that drives it."""
