"""What every stage shares: rankings and top-k selection, validators, exact sums, safe file writes, sentinels."""
