"""The run's model and its files: run.json's types and schema, the atomic writes, the latency distributions."""
