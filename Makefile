# renard: the quick start is `make bench`, `make test`, `make run` (see README.md).
# Every target installs what it needs first (scripts/deps: apt as root, else it names the packages).

VENV    := .venv
ARENA   := $(VENV)/bin/arena
PYTEST  := $(VENV)/bin/pytest
RENARD  := servers/rust/bin/renard

.PHONY: all deps setup venv build nightly test lint test-servers test-entries test-spec test-arena test-slow test-fresh test-deploy test-images release test-release release-early verify check soak bench profile bench-quick latency report run demo fuzz clean

all: build

deps:
	@scripts/deps test

## nightly: the nightly workflow's steps here, in order, each run after a failed one (scripts/nightly: the
## history from the history branch, bench, instructions, history --check, gate against the commit of 24
## hours before, the history pushed back); QUICK=1: --quick; NIGHTLY_ENTRIES="floor rust": those only
nightly: setup
	scripts/nightly $(if $(QUICK),--quick)

# setup: every entry's packages and the virtualenv; venv: the virtualenv with the harness's only.
setup: deps $(VENV)/.installed
venv: $(VENV)/.installed

# The conformance runner (spec/runner, package renard_conformance) with the arena: the arena imports it.
$(VENV)/.installed: arena/pyproject.toml spec/runner/pyproject.toml servers/python/pyproject.toml deploy/requirements.txt
	@scripts/deps harness
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e './spec/runner[test]' -e './arena[test]'
	$(VENV)/bin/pip install --quiet -e './servers/python[test]'
	$(VENV)/bin/pip install --quiet -r deploy/requirements.txt
	@touch $@

build: setup
	$(ARENA) build

$(RENARD): $(wildcard servers/rust/src/*.rs) servers/rust/Cargo.toml servers/rust/Cargo.lock
	@scripts/deps run
	servers/rust/build

## test: lint, every entry's own tests, the whole conformance and robustness suite against every
## `ours` entry, the arena's, deploy's and the release's tests. (The peers are verified by `make verify` and
## `make bench`: a peer that differs from the spec never fails a command, so it is not a test.)
test: deps setup release-early lint test-servers test-arena test-deploy test-images test-release
	@scripts/no-leftovers $(RENARD_MAKE_RUN)

# Every process a recipe of these targets starts carries RENARD_MAKE_RUN (make's pid) in its
# environment; scripts/no-leftovers fails, naming them, if any still runs at the end.
test bench-quick: export RENARD_MAKE_RUN := $(shell echo $$PPID)

## lint: ruff (lint + format, configured in each pyproject.toml) for the Python wings; rustfmt and clippy for the
## flagship; actionlint for the CI workflows (.github/workflows); import-linter's contracts for the arena and the runner
lint: venv $(VENV)/bin/actionlint
	$(VENV)/bin/ruff check arena spec/runner deploy deploy/demo/run packaging
	$(VENV)/bin/ruff format --check arena spec/runner deploy deploy/demo/run packaging
	cd servers/rust && cargo fmt --check && cargo clippy --all-targets --locked -- -D warnings
	$(VENV)/bin/actionlint .github/workflows/*.yml
	scripts/lint-shell                                # shellcheck: every shell script and entry command
	cd arena && ../$(VENV)/bin/lint-imports          # contracts in arena/pyproject.toml: no import circles
	cd spec/runner && ../../$(VENV)/bin/lint-imports # and in spec/runner/pyproject.toml
	cd servers/python && ../../$(VENV)/bin/lint-imports  # and in servers/python/pyproject.toml

# actionlint from the Go module proxy (its PyPI wrapper downloads the binary from GitHub at install).
$(VENV)/bin/actionlint: | $(VENV)/.installed
	GOBIN=$(abspath $(VENV)/bin) go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

# Each entry's own tests, as its entry.toml `test` declares them (cargo test, go test, ...).
# The flagship is built first: the suite compares every renard with it, octet for octet.
# The entries' own tests and the runner's suite at once (make -j2, each line printed whole as
# it comes): both mostly wait on a server's deadlines, so together they take about the time of
# the longer one; the suites' bounds are set to hold under more load than the pair (the
# campaign of docs/reliability.md). make test-entries and make test-spec each run one alone.
test-servers: setup $(RENARD)
	@$(MAKE) --no-print-directory -j2 --output-sync=line test-entries test-spec

# Two folders' tests at once (about 12 min one by one here, 6 two at a time: ada's checked
# build and c's and cpp's sanitizer builds run the whole suite, which mostly waits on a
# deadline), each in its log, results/logs/ENTRY.test.log.
test-entries: setup $(RENARD)
	$(ARENA) test --jobs 2

# The runner's own tests (two at once: most wait on a server, the planted defects' six runs of
# a suite test among them), then its whole suite (vectors, SPEC §1, limits, robustness) against
# every `ours` entry, started from its entry.toml `command` (built first when needed), four
# suites at once: a suite mostly waits on its deadlines (four at once took 0.55 of a core on
# average), and its bounds hold under more load than that (the campaign of
# docs/reliability.md: two at a time with a busy loop on each core beside them).
test-spec: setup $(RENARD)
	$(PYTEST) -q -n 2 spec/runner/tests
	$(ARENA) verify --full --jobs 4

# Two processes (pytest-xdist): most of these tests wait on a server, a load or a subprocess,
# so two take about half the time of one; each test is independent (own ports, tmp_path, tags).
test-arena: setup
	$(PYTEST) -q -m "not slow" -n 2 arena/tests

## test-slow: the arena's minutes-long tests (arena check rust end to end; CONTRIBUTING's Nim example from
## arena new to arena check), left out of make test
test-slow: setup $(RENARD)
	$(PYTEST) -q -m slow arena/tests

## test-fresh: the quick start on a Debian 12 root file system that has nothing: a clean clone
## of HEAD in it, make run answers 302 (scripts/deps run installs only the flagship's packages), scripts/deps
## test, make build, make test; as root, in namespaces of their own whose root is the machine's (pivot_root:
## podman and a booted systemd-nspawn work inside; scripts/test-fresh); slow, not in make test.
## STEPS=run|deps|build stops after that step.
STEPS ?= test
test-fresh:
	scripts/test-fresh --upto $(STEPS)

# nginx and systemd accept deploy/; then the real path: nginx with TLS on IPv4 and IPv6 in front
# of renard's Unix socket, socket activation and a restart under load with no failure, install
# and reload, scale-out, podman (build, healthcheck, kube play), the Kubernetes manifests.
test-deploy: setup $(RENARD)
	deploy/check
	$(PYTEST) -q deploy/tests

## test-images: every renard's image (deploy/images/) built by podman from this host's builds, run read-only
## as nobody, asked the smoke cases and /healthz, stopped, and sized into results/images/ (arena footprint
## reads it); about two minutes on a busy machine; `arena build --stale` builds only what is missing or
## older than its sources (in make test, nothing); the images are COPY-only layers, and the one Debian
## base (python's) is unpacked from a tarball cached under results/rootfs/
IMAGES := rust c cpp go ada java js-node js-deno js-bun python
test-images: setup
	$(ARENA) build --stale $(IMAGES)
	$(PYTEST) -q deploy/images/test_images.py

## release: dist/: the flagship's static musl binaries (x86_64, aarch64) in a tarball each with
## its docs, units and completions, the .deb packages, SHA256SUMS; from HEAD, reproducible (packaging/README.md);
## signed, with the apt repository dist/apt, when RENARD_SIGNING_KEY names an OpenPGP key
release:
	@scripts/deps test
	packaging/install-cargo-tools
	packaging/release

# The release's tests on that dist/: checksums, static binaries answering 302 as nobody, man page
# and completions against --help, the .deb installed, upgraded, removed and purged on this
# machine's dpkg (as root), lintian, and a second build elsewhere with the same checksums.
# dist/ is built again signed by a throwaway key (packaging/test-key), as a real release is by the real one.
TEST_GNUPG := $(abspath dist/.build/test-gnupg)
test-release: setup
	@scripts/deps test
	@# make test started the tools' build and the release early (release-early): wait for it (at
	@# most an hour); when it built dist/ from HEAD, the tests run on that, else dist/ is built here.
	@if [ -f $(RELEASE_EARLY_PID) ]; then pid=$$(cat $(RELEASE_EARLY_PID)); rm -f $(RELEASE_EARLY_PID); \
	  echo "waiting for the early release (pid $$pid, log $(RELEASE_EARLY_LOG))"; \
	  for _ in $$(seq 1800); do grep -qs release-early /proc/$$pid/cmdline || break; sleep 2; done; \
	  if grep -qs release-early /proc/$$pid/cmdline; then echo "release-early: still running after an hour (pid $$pid)" >&2; exit 1; fi; fi
	@if [ "$$(cat $(RELEASE_EARLY_STATUS) 2>/dev/null)" = "0 $$(git rev-parse HEAD)" ]; then rm -f $(RELEASE_EARLY_STATUS); \
	  echo "release: built early, at make test's start; its output:"; cat $(RELEASE_EARLY_LOG); \
	else rm -f $(RELEASE_EARLY_STATUS); set -x; packaging/install-cargo-tools && \
	  GNUPGHOME=$(TEST_GNUPG) RENARD_SIGNING_KEY=$$(packaging/test-key $(TEST_GNUPG)) packaging/release; fi
	@# gpg starts an agent for the throwaway key's home: stopped after the tests, pass or fail,
	@# so that nothing outlives make test (scripts/no-leftovers).
	$(PYTEST) -q packaging/tests; status=$$?; gpgconf --homedir $(TEST_GNUPG) --kill gpg-agent; exit $$status

# make test compiles the release's cargo tools (about 9 minutes on a new 2-core machine; nothing to
# do when they are installed), then builds the signed release (about 2 minutes from a clean clone),
# in the background from its start, at the lowest CPU priority, while the suites run (they mostly
# wait on sockets and timers): scripts/release-early. test-release waits for it.
RELEASE_EARLY_PID := results/release-early.pid
RELEASE_EARLY_LOG := results/release-early.log
RELEASE_EARLY_STATUS := results/release-early.status
release-early: deps
	@mkdir -p results
	@rm -f $(RELEASE_EARLY_STATUS)
	@nice -n 19 scripts/release-early $(TEST_GNUPG) $(RELEASE_EARLY_STATUS) >$(RELEASE_EARLY_LOG) 2>&1 & echo $$! >$(RELEASE_EARLY_PID)

verify: build
	$(ARENA) verify

## flake: the flake campaign: what make test runs, RUNS times (one run after another), LOAD=1 with a busy
## loop on every core beside it; a table test -> failed in which runs, its rate and its message, in
## results/flake-*.md (scripts/flake). SCOPE=suites: every renard's whole suite RUNS times, two passes at a
## time (each the other's load), ENTRIES= limits it.
.PHONY: flake
RUNS ?= 5
LOAD ?= 0
SCOPE ?= test
ENTRIES ?=
flake: deps setup $(RENARD)
	scripts/flake --runs $(RUNS) --scope $(SCOPE) $(if $(filter 1 yes true,$(LOAD)),--load) $(ENTRIES)

## check: everything an entry must pass before it is ranked, as a checklist (make check NAME=c);
## installs only the harness's packages and the named entry's (scripts/deps entry NAME)
check: venv
	@[ -n "$(NAME)" ] || { echo "make check: NAME: give the entry, e.g. make check NAME=c" >&2; exit 2; }
	@scripts/deps entry $(NAME)
	$(ARENA) check $(NAME)

## soak: the long robustness runs on every `ours` entry (10 min of wrk, 20 s of slowloris at the cap)
soak: setup
	$(ARENA) verify --full --soak

## bench: the contest (build, verify, benchmark every available entry, write the reports); under
## an hour here. arena bench verifies each entry before measuring it and writes the reports.
bench: setup
	@scripts/deps bench
	$(ARENA) build
	$(ARENA) bench

## profile: where the time goes, added to the latest run (about 12 min here): system calls per
## request of every entry (arena syscalls, strace: the table's syscalls column), then the deployed
## path (arena stack): nginx with TLS in front of each of STACKS, beside nginx alone.
## `make bench profile` is the whole run the README's table comes from.
STACKS ?= rust rust+unix php-fpm $(notdir $(wildcard peers/nginx-split peers/nginx-lua-renard))
profile: setup
	@scripts/deps bench
	$(ARENA) syscalls --run results/latest
	$(ARENA) stack --run results/latest $(STACKS)

## latency: each entry at 25/50/75/90% of its capacity, with oha (built once from crates.io: long)
latency: setup
	@scripts/deps bench
	arena/tools/install-oha
	$(ARENA) latency

bench-quick: setup
	$(ARENA) bench --quick
	@scripts/no-leftovers $(RENARD_MAKE_RUN)

report: setup
	$(ARENA) report latest

## run: the flagship on its defaults (pass flags with ARGS="--count 5")
run: $(RENARD)
	$(RENARD) $(ARGS)

## demo: fox avatars, nginx and the flagship on loopback, and a page of foxes (Ctrl-C stops)
demo: $(RENARD)
	@scripts/deps test
	deploy/demo/run $(ARGS)

## fuzz: every entry's fuzz targets (servers/*/fuzz/run, peers/*/fuzz/run), FUZZ_SECONDS each
FUZZ_SECONDS ?= 60
fuzz:
	@scripts/deps test
	@for run in servers/*/fuzz/run peers/*/fuzz/run; do \
	  [ -x "$$run" ] || continue; \
	  echo "== $$run $(FUZZ_SECONDS)"; "$$run" $(FUZZ_SECONDS) || exit 1; \
	done

clean:
	rm -rf $(VENV) servers/rust/target peers/java-seed/build dist
