# tablekit: build, lint and test entry points. CI runs `make test` (.ci/run).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test
.DELETE_ON_ERROR:

# Pinned tools.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/staticcheck-$(STATICCHECK_VERSION)/staticcheck
AZURITE := integration/node_modules/.bin/azurite
# Test commands: sharedrun starts the Azurites that test binaries share;
# testrun summarises go test -json.
SHAREDRUN := bin/sharedrun
TESTRUN := bin/testrun
SHARED_AZURITES := 3

# Tests and the demo run the Azurite pinned in integration/package-lock.json.
export TABLEKIT_AZURITE ?= $(CURDIR)/$(AZURITE)

.PHONY: azurite demo lint fmt-check vet staticcheck check test test-cosmos bench fuzz print-staticcheck

## azurite: install the pinned Azurite into integration/node_modules.
azurite: $(AZURITE)

# npm gives unpacked files old modification times, hence the touch.
$(AZURITE): integration/package-lock.json integration/package.json
	cd integration && npm ci --no-audit --no-fund
	touch $@

## demo: run the tour of tablekit against Azurite.
demo: azurite
	go run ./examples/tour

# Modules of their own (examples with dependencies tablekit does not take).
SUBMODULES := examples/observability

## lint: gofmt check, go vet, staticcheck.
lint: fmt-check vet staticcheck
	$(STATICCHECK) ./...
	for m in $(SUBMODULES); do (cd $$m && go vet ./... && $(CURDIR)/$(STATICCHECK) ./...); done

# Every .go file that git tracks or would track (untracked, not ignored).
GO_FILES_CMD := { git ls-files -co --exclude-standard -- '*.go' 2>/dev/null \
	|| find . -name '*.go' -not -path '*/node_modules/*' -not -path './.git/*'; } \
	| grep -v '/node_modules/' | while read -r f; do if [ -f "$$f" ]; then echo "$$f"; fi; done

fmt-check:
	@files=$$($(GO_FILES_CMD)); \
	if [ -z "$$files" ]; then echo "fmt-check: no Go files found"; exit 1; fi; \
	bad=$$(gofmt -l $$files); \
	if [ -n "$$bad" ]; then echo "gofmt -l lists files that need gofmt -w:"; echo "$$bad"; exit 1; fi

vet:
	go vet ./...

## staticcheck: install the pinned staticcheck into bin/.
staticcheck: $(STATICCHECK)

$(STATICCHECK):
	GOBIN=$(CURDIR)/$(dir $(STATICCHECK)) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## test: lint, then every test with the race detector, summarised by internal/testrun.
# -p 4: the suites wait on Azurite more than they compute (1.3 of 2 cores
# busy with -p 2), so four packages at once finish sooner.
# In CI (CI=true) or with TABLEKIT_NO_SKIP=1 a skipped test fails the run.
# The test binaries share SHARED_AZURITES emulators started by sharedrun
# (integration/azurite/sharedrun) instead of starting one each.
# go test starts the packages' test binaries in the order given: the
# longest (SLOW_FIRST) first, so that none of them starts last and runs
# alone at the end; ./... then adds the others once each.
test: azurite lint $(SHAREDRUN) $(TESTRUN)
	{ $(SHAREDRUN) -n $(SHARED_AZURITES) -- go test -race -count=1 -p 4 -timeout 20m -json $(SLOW_FIRST) ./... 2>&1; \
	  for m in $(SUBMODULES); do (cd $$m && go test -race -count=1 -timeout 5m -json ./... 2>&1); done; } \
	| $(TESTRUN)
	@# Allocation counts differ under the race detector: checked once without it.
	go test -count=1 -run '^TestAllocations$$' ./keys/
	@# The Cosmos DB profile on the cheap suites.
	TABLEKIT_PROFILE=cosmos $(SHAREDRUN) -n 2 -- go test -p 2 -count=1 -run '^Test' -skip '$(COSMOS_SKIP)' $(COSMOS_TEST)

# The packages whose tests take longest under the race detector, longest
# first (a full run's go test -json, as bin/testrun's slowest tests show).
SLOW_FIRST := ./patterns/secondaryindex/ ./patterns/indexentity/ ./patterns/denormalize/ \
	./patterns/eventual/ ./patterns/rotation/ ./patterns/bloblog/ ./entity/ ./patterns/large/ \
	./patterns/wide/ ./cmd/tablekit/ ./backup/ ./patterns/logtail/ ./entity/crypt/ \
	./patterns/dataseries/ ./patterns/bucket/ ./resolver/ ./keys/ ./examples/tour/

## check: the edit-test loop: lint, build, the unit tests (every package
# whose tests need no service) and a fast Azurite subset, without the race
# detector. make test runs everything.
check: azurite lint $(SHAREDRUN) $(TESTRUN)
	go build ./...
	pure=$$(go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... \
		| awk 'NF > 1 && !/tablekit\/integration( |$$)/ {print $$1}'); \
	$(SHAREDRUN) -n 2 -- go test -count=1 -short -p 4 -json $$pure $(CHECK_AZURITE) 2>&1 | $(TESTRUN)

# The Azurite suites make check runs: the floor every pattern stands on.
CHECK_AZURITE := ./integration/ ./keys/ ./entity/filter/ ./cost/ ./patterns/logtail/


# Built every time (go's cache makes that cheap), so never stale.
.PHONY: $(SHAREDRUN) $(TESTRUN)
$(SHAREDRUN):
	go build -o $@ ./integration/azurite/sharedrun
$(TESTRUN):
	go build -o $@ ./internal/testrun

# The Cosmos DB for Table profile (integration/cosmos): TABLEKIT_PROFILE=cosmos
# puts it in every table client of the tests' Env. `make test` runs
# COSMOS_TEST under it; `make test-cosmos` runs every suite that passes under
# it (about 7 minutes on 2 cores). TestProfileOfThisRun fails a run whose clients do not
# apply the profile. Examples print Table storage's order and are left out;
# COSMOS_SKIP names the tests whose claims do not hold on Cosmos DB (they
# skip themselves there; Cosmos tests of their own check what does).
COSMOS_TEST := ./integration/ ./entity/ ./patterns/drift/
COSMOS_MORE := ./integration/cosmos/ ./patterns/lookup/ ./patterns/bloblog/ ./patterns/wide/ \
	./patterns/dataseries/ ./patterns/eventual/ ./patterns/denormalize/ ./patterns/large/ ./patterns/secondaryindex/
COSMOS_SKIP := ^(TestQueryPartitionsByRowKey|TestQueryContinuesPastBadRows)$$

## test-cosmos: every suite that holds under the Cosmos DB profile, one package at a time.
test-cosmos: azurite
	TABLEKIT_PROFILE=cosmos go test -p 1 -count=1 -run '^Test' -skip '$(COSMOS_SKIP)' $(COSMOS_TEST) $(COSMOS_MORE)

print-staticcheck:
	@echo $(STATICCHECK)

## bench: every benchmark, with allocations.
bench: azurite
	go test -run '^$$' -bench . -benchmem ./...

## fuzz: run every fuzz target for FUZZTIME each (default 15s; make fuzz FUZZTIME=2m).
# A failing input is written to the package's testdata/fuzz: fix the bug and
# commit the input, so `go test` runs it from then on as a seed.
FUZZTIME ?= 15s
fuzz:
	@pkgs=$$(grep -rl --include='*_test.go' '^func Fuzz' . | grep -v node_modules | xargs -n1 dirname | sort -u); \
	n=0; for pkg in $$pkgs; do \
	  for t in $$(grep -h '^func Fuzz' $$pkg/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    n=$$((n+1)); echo "== fuzz $$pkg $$t ($(FUZZTIME))"; \
	    go test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done; echo "fuzz: $$n targets ran $(FUZZTIME) each without a failure"
