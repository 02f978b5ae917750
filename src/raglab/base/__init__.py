"""What every stage shares: rankings, top-k, validators, exact sums, safe writes."""
