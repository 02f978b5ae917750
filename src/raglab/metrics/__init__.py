"""Measuring rankings against labels: the metrics, their judging kernel, intervals and paired tests."""
