# Corral — build, run and test. `make run` and `make test` install the
# system packages they need first (packaging/deps.sh, idempotent).

GO        ?= go
BIN       := bin/corral
# One version for the binary, the dashboard and the package: VERSION, with
# +git<commit time>.<hash> for a build of anything but its tag
# (packaging/version.sh says how it sorts).
VERSION   ?= $(shell packaging/version.sh 2>/dev/null || cat VERSION)
LDFLAGS   := -X main.version=$(VERSION)
# Most of a first build is cgo (go-sqlite3); keep it in one cache.
export CGO_ENABLED := 1

.PHONY: all deps build run test test-short vet fmt-check bench fuzz clean package package-build package-test

all: build

deps:
	@echo "deps: checking the system packages Corral needs (packaging/deps.sh)…"
	@bash packaging/deps.sh

build: deps
	@GO=$(GO) bash packaging/build.sh -ldflags "$(LDFLAGS)" -o $(BIN) ./app
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/corral-netinit ./app/netinit

# Starts Corral on the embedded default config (created on first start under
# $CORRAL_HOME, else the XDG folders), headless when there is no display.
# First it links ~/.local/bin/corral to the binary (never over a file that is
# not such a link): that is the stable path the Agents page writes into an
# app's MCP config, so `corral` and `corral open` work from any shell.
run: build
	@packaging/link-bin.sh $(CURDIR)/$(BIN)
	@echo "run: starting Corral…"
	./$(BIN)

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# core and store also build elsewhere (a stub refuses commands without
# Linux, and the audit log without cgo): vetted for Windows and macOS.
test: deps fmt-check vet
	CGO_ENABLED=0 GOOS=windows $(GO) vet ./core/... ./store/...
	CGO_ENABLED=0 GOOS=darwin $(GO) vet ./core/... ./store/...
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
# packaging/nfpm.yaml (docs/install.md says why nfpm). nfpm comes
# through the Go module proxy the first time; NFPM=nfpm uses an installed one.
# Its binaries are built apart from `make build`'s, in bin/pkg: -trimpath,
# stripped, corral as PIE bound now (corral-netinit stays static, as `make
# build` makes it: packaging/lintian-overrides says why); Depends comes from them (dpkg-shlibdeps), the man
# page from `corral help`, the changelog from packaging/changelog.
NFPM        ?= $(GO) run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
DEB_VERSION ?= $(VERSION)
PKG         := bin/pkg
PKG_FLAGS   := -buildmode=pie -trimpath
package-build: deps
	@mkdir -p $(PKG)
	$(GO) build $(PKG_FLAGS) -ldflags "-s -w -X main.version=$(DEB_VERSION) -extldflags '-Wl,-z,relro,-z,now'" -o $(PKG)/corral ./app
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $(PKG)/corral-netinit ./app/netinit
	./$(PKG)/corral help | $(GO) run ./packaging/manpage -version '$(DEB_VERSION)' \
	  -date "$$(git show -s --format=%cs HEAD 2>/dev/null || date +%F)" | gzip -9n > $(PKG)/corral.1.gz
	packaging/changelog.sh '$(DEB_VERSION)' | gzip -9n > $(PKG)/changelog.gz

package: package-build
	CORRAL_VERSION='$(DEB_VERSION)' CORRAL_ARCH=$$($(GO) env GOARCH) \
	CORRAL_SHLIBS="$$(packaging/shlibdeps.sh $(PKG)/corral)" \
	  $(NFPM) package --config packaging/nfpm.yaml --packager deb --target bin/

# Checks the package with lintian (no errors, no warnings), installs it on
# this machine as root, runs Corral as an ordinary user, upgrades to a next
# build ($(DEB_VERSION).1) under it, removes it while it runs and purges it
# (packaging/package-test.sh). About 2 minutes with a warm build cache.
package-test:
	$(MAKE) package DEB_VERSION='$(DEB_VERSION)'
	$(MAKE) package DEB_VERSION='$(DEB_VERSION).1'
	lintian --fail-on error,warning bin/corral_$(DEB_VERSION)_*.deb
	bash packaging/package-test.sh bin/corral_$(DEB_VERSION)_*.deb bin/corral_$(DEB_VERSION).1_*.deb

clean:
	rm -rf bin
