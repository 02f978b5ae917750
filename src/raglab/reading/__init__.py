"""Stage VI, reading: packing the context, the extractive reader, the diagnosis of a miss."""
