"""The spec's conformance runner run against an entry (verify), and its cases grouped by SPEC section."""
