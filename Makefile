# Corral — build, run and test. `make run` and `make test` install the
# system packages they need first (packaging/deps.sh, idempotent).

GO        ?= go
BIN       := bin/corral
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
# Most of a first build is cgo (go-sqlite3); keep it in one cache.
export CGO_ENABLED := 1

.PHONY: all deps build run test test-short vet fmt-check bench fuzz clean package

all: build

deps:
	@bash packaging/deps.sh

build: deps
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./app
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/corral-netinit ./app/netinit

# Starts Corral on the embedded default config (created on first start under
# $CORRAL_HOME, else the XDG folders), headless when there is no display.
run: build
	./$(BIN)

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

test: deps fmt-check vet
	$(GO) test -race -timeout 20m ./...

test-short:
	$(GO) test -short ./...

bench: deps
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./...

# A short coverage-guided run of every fuzz target (FUZZTIME each).
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# The Debian package, bin/corral_<version>_<arch>.deb, made by nfpm from
# packaging/nfpm.yaml (README, "Desktop app", says why nfpm). nfpm comes
# through the Go module proxy the first time; NFPM=nfpm uses an installed one.
NFPM        ?= $(GO) run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
DEB_VERSION ?= $(shell v=$$(echo '$(VERSION)' | sed 's/^v//'); echo "$$v" | grep -q '^[0-9]' || v="0.0.0~git$$v"; echo "$$v" | tr -- '-' '.')
package: build
	CORRAL_VERSION='$(DEB_VERSION)' CORRAL_ARCH=$$($(GO) env GOARCH) $(NFPM) package --config packaging/nfpm.yaml --packager deb --target bin/

clean:
	rm -rf bin
