# FieldSheet — set-up, demo and tests. `make demo` and `make test` work on a fresh Debian machine with Swift.
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
BIN = .build/debug
# What building FieldSheet needs (`make demo`): the C libraries SwiftPM links and pkg-config to find them.
BUILD_APT_PACKAGES = libsqlite3-dev libcurl4-openssl-dev pkg-config
# What only the tests need: tmux (the full-screen app at a size), Debian's Chromium and its WebDriver (the
# web console's browser tests, Tests/console), and zbar's decoder (reads back the console's QR codes).
TEST_APT_PACKAGES = tmux chromium chromium-driver zbar-tools
# The executables the demo runs (Client/demo.sh): built alone, without the load generator, the benchmarks,
# the test drivers and their packages.
DEMO_PRODUCTS = fieldsheet fieldsheet-server
# The demo's server keeps its data in SQLite: built without the PostgreSQL trait (the default traits have it),
# so neither postgres-nio nor swift-nio-ssl's BoringSSL and the certificate packages are built.
DEMO_TRAITS = Server,Tools

.PHONY: deps build-deps build demo test bench fuzz docs clean

# Installs the Debian packages in $(1) that are missing (root or sudo).
define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

# What `make demo` needs: the build's Debian packages, and openpyxl (the demo writes XLSForm workbooks).
build-deps:
	$(call apt_install,$(BUILD_APT_PACKAGES))
	@python3 -c "import openpyxl" 2>/dev/null || python3 -m pip install -q openpyxl

# What the tests, benchmarks and docs need besides: tmux, Chromium, and the Python checks' packages.
deps: build-deps
	$(call apt_install,$(TEST_APT_PACKAGES))
	@python3 -c "import jsonschema" 2>/dev/null || python3 -m pip install -q jsonschema
	@python3 -c "import pyxform" 2>/dev/null || python3 -m pip install -q pyxform
	@python3 -c "import selenium" 2>/dev/null || python3 -m pip install -q selenium
	@# axe-core 4.9 for the console's accessibility checks (Tests/console: browser_test.py's Browser.accessible).
	@python3 -c "import selenium_axe_python" 2>/dev/null || python3 -m pip install -q selenium-axe-python==2.2.0
	@# The OData feed's independent v4 client (pyodata reads OData v2 only) and the GeoJSON validity check.
	@python3 -c "import odata, requests" 2>/dev/null || python3 -m pip install -q python-odata requests
	@python3 -c "import geojson" 2>/dev/null || python3 -m pip install -q geojson

# The two executables, one product at a time (SwiftPM builds one product or everything; the second reuses
# every module the first built). `make test` and `make bench` build with the default traits, PostgreSQL
# included, so after `make demo` they compile FieldSheet's own modules again (not its dependencies).
build: build-deps
	@for product in $(DEMO_PRODUCTS); do $(SWIFT) build --product $$product --traits $(DEMO_TRAITS) $(SWIFT_BUILD_FLAGS) || exit 1; done

demo: build
	@Client/demo.sh $(BIN)

# How many tests run at once (see the test target).
TEST_WIDTH ?= $(shell echo $$(( $$(nproc) * 2 )))

test: deps
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	python3 Tests/schema/check_forms.py
	@# XLSForm import against pyxform, the reference converter, over a generated corpus of workbooks.
	python3 Tests/xlsform/compare.py $(BIN)/fieldsheet
	Tests/schemathesis/run.sh $(BIN)/fieldsheet-server
	@# The OData feed read by python-odata over HTTP Basic, and the GeoJSON export checked by the geojson package,
	@# against the real server (SQLite; PostgreSQL too when FIELDSHEET_TEST_POSTGRES_URL is set).
	timeout --signal=INT --kill-after=30 300 python3 Tests/odata/check_feed.py $(BIN)
	@# The web console in headless Chromium against the real server, the fieldsheet CLI as the collector's
	@# device; screenshots (desk and phone width) are kept in .build/console-screenshots.
	timeout --signal=INT --kill-after=30 300 python3 Tests/console/browser_test.py $(BIN) .build/console-screenshots
	@# The webhooks page with a receiver on loopback: add, a delivery retried and verified, redeliver, remove.
	timeout --signal=INT --kill-after=30 180 python3 Tests/console/webhooks_test.py $(BIN) .build/console-screenshots
	@# Sensitive answers: the console shows them as encrypted, the author's device and the keyed export in clear.
	timeout --signal=INT --kill-after=30 180 python3 Tests/console/sensitive_test.py $(BIN) .build/console-screenshots
	@# People and devices: a project made and run from the browser, a device enrolled by code and signed out.
	timeout --signal=INT --kill-after=30 300 python3 Tests/console/people_test.py $(BIN) .build/console-screenshots
	@# Forms run from the console (upload with findings, preview, publish, bulk review, close, the map), with the CLI
	@# as the device; axe-core checks its pages.
	timeout --signal=INT --kill-after=30 300 python3 Tests/console/forms_test.py $(BIN) .build/console-screenshots
	@# The office team's whole session (issue 27's "Done when"): project, people, device by code, XLSForm fixed and
	@# published, collection, bulk review, version 2 while the device holds a draft of version 1, the draft moved over.
	timeout --signal=INT --kill-after=30 400 python3 Tests/console/office_test.py $(BIN) .build/console-screenshots
	@# An entity edited from its console page while devices edit it offline: merged per property, the loser logged.
	timeout --signal=INT --kill-after=30 300 python3 Tests/console/entity_edit_test.py $(BIN) .build/console-screenshots
	@if [ -z "$$FIELDSHEET_TEST_POSTGRES_URL" ]; then \
		echo "NOTE: FIELDSHEET_TEST_POSTGRES_URL is not set: the PostgreSQL backend tests will be SKIPPED (SQLite only)."; \
		echo "      Run them with: Tests/postgres/cluster.sh start && export FIELDSHEET_TEST_POSTGRES_URL=\$$(Tests/postgres/cluster.sh url)"; \
	else echo "PostgreSQL backend tests against $$FIELDSHEET_TEST_POSTGRES_URL"; fi
	@# One swift test run. A hung test fails it after 30 minutes instead of holding CI for its whole budget. No test
	@# holds a thread while it waits (fixtures sleep the task, and await child processes), so the servers and
	@# services that run in the test process itself are never starved of Swift's few concurrency threads. As
	@# nothing blocks, nothing limits how many tests run at once either: TEST_WIDTH (2 per core) keeps hundreds of
	@# servers and CLIs from starting together and missing their deadlines. The suites whose outcome depends on
	@# timing (those that time another member's requests while one member does something hostile, the device killed
	@# after its Nth pull page) carry the .measuresTiming trait: each of their tests waits until no other test's
	@# server or child process runs and holds new ones off while it measures (Tests/FieldSheetTesting/MachineGate.swift).
	@# Its whole output is kept in .build/swift-test.log; a failed run ends with the lines that name what failed.
	SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(TEST_WIDTH) Tests/swift-test.sh .build/swift-test.log \
		timeout --signal=INT --kill-after=30 1800 $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS)
	@# A client generated from Schema/openapi.yaml (swift-openapi-generator) pushes, pulls and reads records
	@# against the fieldsheet-server built above; its own package and build folder.
	$(SWIFT) build --build-tests --package-path Tests/GeneratedClient --scratch-path .build-generated-client
	FIELDSHEET_SERVER=$(CURDIR)/$(BIN)/fieldsheet-server timeout --signal=INT --kill-after=30 600 \
		$(SWIFT) test --skip-build --package-path Tests/GeneratedClient --scratch-path .build-generated-client
	@# An app's integration (Examples/FieldNotes): depends on the client library by path, without the server's
	@# packages; stores, a form, observed lists, the sync service and a conflict against the real server.
	SWIFT=$(SWIFT) Examples/run.sh $(BIN)/fieldsheet-server

# Benchmarks (figures and targets in BENCHMARKS.md): the device database (edit durability, opening a
# large draft, listing drafts, memory, a keystroke in the app, a commit reaching a list observer), then server load (push, pull, 200 devices
# at once) against one and two release fieldsheet-server instances on SQLite and on PostgreSQL, then device
# sync (push 10,000 and pull 100,000 records device ↔ server on loopback, records/s and the device's peak RSS; a 20 MB
# and a 200 MB attachment up and down, to the server alone and through the fieldsheet CLI, the peak RSS of both),
# then the web console's submissions table paged through 100,000 records, then the OData feed's pages (records and a
# repeat table) at 100,000 records and $metadata of a 500-field form, then webhook latency (commit to a loopback
# receiver) while 200 devices push.
bench: deps
	$(SWIFT) build -c release --product fieldsheet-bench $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build -c release --product fieldsheet-server $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build -c release --product fieldsheet-loadgen $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build -c release --product fieldsheet-syncbench $(SWIFT_BUILD_FLAGS)
	$(SWIFT) build -c release --product fieldsheet $(SWIFT_BUILD_FLAGS)
	.build/release/fieldsheet-bench
	Tests/LoadGenerator/bench.sh .build/release
	.build/release/fieldsheet-syncbench .build/release
	python3 Tests/console/table_bench.py .build/release
	python3 Tests/console/entity_table_bench.py .build/release
	python3 Tests/odata/odata_bench.py .build/release
	python3 Tests/LoadGenerator/webhook_bench.py .build/release

# The client library's reference documentation (DocC): FormModel, DraftStore and SyncClient, each with its
# catalog of articles, into .build/docs/<Module>.doccarchive. Any DocC warning (a broken link, a symbol
# the catalog names that does not exist) fails it, and so does a public symbol of any of them without a
# summary line, and so does a documentation snippet that does not compile.
DOC_TARGETS = FormModel DraftStore SyncClient
docs: deps
	@mkdir -p .build/docs; rm -rf .build/docs/*.doccarchive; for target in $(DOC_TARGETS); do \
		echo "Documentation: $$target"; \
		$(SWIFT) package --disable-sandbox generate-documentation --target $$target \
			--output-path .build/docs/$$target.doccarchive --warnings-as-errors || exit 1; \
	done
	@# Every public symbol an app meets in FormModel, DraftStore and SyncClient has a summary.
	python3 Tests/docs/check_summaries.py $(DOC_TARGETS)
	@# Every Swift snippet of the README, docs/, the DocC articles and those modules' doc comments compiles, in a
	@# package generated in .build/doc-snippets that depends on this one by path without its traits, as an app does.
	python3 Tests/docs/check_snippets.py

# libFuzzer targets (Tests/Fuzz/): the relevance expression parser and evaluator, the JSON reader, the form
# loader and linter, pattern analysis and bounded matching, the terminal input decoder, the sync byte codec
# (push bodies, pull pages, record fields: read, written back, read again). Each runs
# FUZZ_SECONDS (default 60) from its seed corpus; a crash fails the run. Not part of `make test`. The sync target
# links swift-crypto from the debug build, hence the build first.
FUZZ_SECONDS ?= 60
fuzz: deps
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) Tests/Fuzz/run.sh

clean:
	rm -rf .build .build-generated-client .build-example
