"""The suite against a server: conformance (vectors, statistics, SPEC §1, restart), limits
(§7.5, §7.6) and robustness (floods, slow clients, hostile bytes, shutdown, soak)."""
