"""Load curves: the concurrency sweep and the open-loop latency percentiles."""
