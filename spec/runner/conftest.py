"""`pytest spec/runner`: the runner's own tests (tests/) and the suite against a server
(renard_conformance/suite/, with --renard-cmd or --renard-addr)."""

pytest_plugins = ["renard_conformance.pytest_plugin"]
