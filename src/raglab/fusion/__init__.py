"""Stage IV, rank fusion: reciprocal rank fusion and min-max score fusion."""
