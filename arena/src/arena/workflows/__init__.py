"""The long commands' stories, each combining the measuring packages: bench run, gate, check, compare."""
