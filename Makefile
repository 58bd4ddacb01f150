# mcphost — see README.md. `make run` serves the example config; `make test` runs every test.
GO      ?= go
BIN     := bin
ADDR    ?= 127.0.0.1:8931
DEMO_HTTP_PORT ?= 18931
export DEMO_HTTP_PORT
DEMO_WS_PORT ?= 18932
export DEMO_WS_PORT

.PHONY: all build install run test test-deps unit fuzz bench vet fmt clean proto conformance deploy-test example-test docs

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...
	$(GO) build -trimpath -ldflags="-s -w" -o $(BIN)/plugins/ ./plugins/...
	@# The host refuses plugins in a directory writable by group or others.
	chmod 0755 $(BIN)/plugins

# Puts mcphost (and mcphost-demo) on the PATH: `go install ./cmd/...` into
# $(go env GOBIN), else the first entry of $(go env GOPATH) plus /bin (where go
# install puts them when GOPATH is a list); builds the shipped plugins into
# the directory the host looks in by default (MCPHOST_PLUGIN_DIR, else the
# config directory's plugins/: $MCPHOST_CONFIG_DIR, else
# $XDG_CONFIG_HOME/mcphost, else ~/.config/mcphost).
#
# It does NOT lock them: `mcphost plugins lock` records (and so trusts) the
# checksum of every plugin binary in that directory, including any that was
# there before and that nobody reviewed, and it loads the configuration of
# the current directory. So install prints the command instead: review
# `mcphost plugins list`, then run it yourself. (An unlocked plugin is only
# refused when it is used, naming the command.)
GOPATH_SEP = $(if $(filter Windows_NT,$(OS)),;,:)
GOBIN_DIR  = $(or $(shell $(GO) env GOBIN),$(firstword $(subst $(GOPATH_SEP), ,$(shell $(GO) env GOPATH)))/bin)
CONFIG_DIR = $(or $(MCPHOST_CONFIG_DIR),$(or $(XDG_CONFIG_HOME),$(HOME)/.config)/mcphost)
PLUGIN_DIR = $(or $(MCPHOST_PLUGIN_DIR),$(CONFIG_DIR)/plugins)
install:
	$(GO) install ./cmd/...
	mkdir -p "$(PLUGIN_DIR)"
	@# The host refuses plugins in a directory writable by group or others.
	chmod 0755 "$(PLUGIN_DIR)"
	$(GO) build -trimpath -ldflags="-s -w" -o "$(PLUGIN_DIR)/" ./plugins/...
	@echo "installed $(GOBIN_DIR)/mcphost; plugins in $(PLUGIN_DIR) (not locked)"
	@echo "to use the plugins, review what is in that directory, then lock (trust) every binary there:"
	@echo "  MCPHOST_PLUGIN_DIR=\"$(PLUGIN_DIR)\" \"$(GOBIN_DIR)/mcphost\" plugins list"
	@echo "  MCPHOST_PLUGIN_DIR=\"$(PLUGIN_DIR)\" \"$(GOBIN_DIR)/mcphost\" plugins lock"
	@case ":$$PATH:" in *":$(GOBIN_DIR):"*) ;; *) echo "$(GOBIN_DIR) is not on your PATH: add it, e.g. export PATH=\"$(GOBIN_DIR):\$$PATH\"";; esac

# The main job: build, start the demo HTTP server for the example's remote
# server, then serve the unified registry of config.hcl.example on $(ADDR).
run: build
	./scripts/run-example.sh $(ADDR)

# Independent MCP peers (server-everything, inspector CLI, the Claude Code and
# Gemini CLIs of test/clients) for interop tests,
# a real Prometheus (Debian's) that the telemetry tests scrape /metrics
# with, and the Redis server and HAProxy of the scale-out tests (installed
# if missing; never started as services: the tests start their own).
test-deps:
	@command -v python3 >/dev/null || { echo 'python3 is required: the hook tests run python3 hook scripts' >&2; exit 1; }
	cd test/interop && npm ci --no-audit --no-fund --loglevel=error
	command -v prometheus >/dev/null && command -v redis-server >/dev/null && command -v haproxy >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus redis-server haproxy; }

# Every test, including interop with servers and clients nobody here wrote,
# and the official conformance suite's client and server scenarios.
test: build test-deps vet deploy-test example-test
	$(GO) test -count=1 -race -timeout 20m ./...
	CONFORMANCE_PARTS="client server server-http tasks skills apps" ./scripts/conformance.sh

# deploy/ (its own module, so that Helm and client-go stay out of the
# host's): renders the Helm chart and decodes every manifest strictly into
# the Kubernetes API types, lints the Dockerfile, builds the image's static
# binaries as its build stage does. No cluster, no Docker, no network.
deploy-test:
	cd deploy && $(GO) mod tidy -diff && $(GO) vet ./... && $(GO) test -count=1 ./...

# The example plugin (examples/transport-tcp, its own module, as a plugin
# outside the repository is): tidy and vet, then its test from a copy outside
# the repository, which follows docs/writing-a-plugin.md to a call through
# the host (see scripts/plugin-example-test.sh).
example-test:
	GO=$(GO) ./scripts/plugin-example-test.sh

# The official MCP conformance suite: client scenarios against mcphost, server
# scenarios through `mcphost serve --http` (see scripts/conformance.sh).
conformance:
	./scripts/conformance.sh

# Regenerates the CLI reference (docs/cli) from the cobra commands; a test in
# make test (internal/testing/clidocs) fails when it is not current.
docs:
	$(GO) run ./internal/testing/clidocs docs/cli

unit:
	$(GO) test -count=1 ./host/... ./sdk/... ./internal/...

# vet also builds and vets for macOS and Windows (platform code sits behind
# build tags), and fails when go.mod or go.sum is not tidy.
vet:
	$(GO) vet ./...
	GOOS=darwin $(GO) build ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) build ./...
	GOOS=windows $(GO) vet ./...
	$(GO) mod tidy -diff
	@test -z "$$(gofmt -l .)" || (echo "gofmt needed:"; gofmt -l .; exit 1)

# Short runs of every fuzz target (FUZZTIME each).
FUZZTIME ?= 20s
fuzz:
	$(GO) test ./host/registry -run=^$$ -fuzz=FuzzToolName -fuzztime=$(FUZZTIME)
	$(GO) test ./host/registry -run=^$$ -fuzz=FuzzSanitize -fuzztime=$(FUZZTIME)
	$(GO) test ./host/config -run=^$$ -fuzz=FuzzLoad -fuzztime=$(FUZZTIME)
	$(GO) test ./host/config -run=^$$ -fuzz=FuzzDecodeHooks -fuzztime=$(FUZZTIME)
	$(GO) test ./host/clientconf -run=^$$ -fuzz=FuzzServersOfFile -fuzztime=$(FUZZTIME)
	$(GO) test ./host/config -run=^$$ -fuzz=FuzzServerEntryFromFields -fuzztime=$(FUZZTIME)
	$(GO) test ./host/config -run=^$$ -fuzz=^FuzzEdit$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./internal/rawjson -run=^$$ -fuzz=FuzzMembers -fuzztime=$(FUZZTIME)
	$(GO) test ./host/gateway/stdio -run=^$$ -fuzz=FuzzReadClient -fuzztime=$(FUZZTIME)
	$(GO) test ./host/mcpregistry -run=^$$ -fuzz=FuzzDecode -fuzztime=$(FUZZTIME)
	$(GO) test ./host/permissions -run=^$$ -fuzz=FuzzMatch -fuzztime=$(FUZZTIME)
	$(GO) test ./host/clientconf -run=^$$ -fuzz=FuzzJSONEdit -fuzztime=$(FUZZTIME)
	$(GO) test ./host/clientconf -run=^$$ -fuzz=FuzzTOMLEdit -fuzztime=$(FUZZTIME)
	$(GO) test ./host/permissions -run=^$$ -fuzz=FuzzCompileDecide -fuzztime=$(FUZZTIME)
	$(GO) test ./host/auth -run=^$$ -fuzz=FuzzCheckAuthorizationURL -fuzztime=$(FUZZTIME)
	$(GO) test ./sdk/oauthkit -run=^$$ -fuzz=FuzzCheckOAuthURL -fuzztime=$(FUZZTIME)
	$(GO) test ./sdk/oauthkit -run=^$$ -fuzz=FuzzParseTokenResponse -fuzztime=$(FUZZTIME)
	$(GO) test ./sdk/oauthkit -run=^$$ -fuzz=FuzzParseAuthServerMeta -fuzztime=$(FUZZTIME)
	$(GO) test ./sdk/oauthkit -run=^$$ -fuzz=FuzzParseProtectedResourceMetadata -fuzztime=$(FUZZTIME)
	$(GO) test ./host/auth -run=^$$ -fuzz=FuzzWWWAuthenticate -fuzztime=$(FUZZTIME)
	$(GO) test ./host/conn -run=^$$ -fuzz=FuzzSSEEvents -fuzztime=$(FUZZTIME)
	$(GO) test ./host/conn -run=^$$ -fuzz=FuzzReusedSSERouter -fuzztime=$(FUZZTIME)
	$(GO) test ./host/conn -run=^$$ -fuzz=FuzzHideSchema -fuzztime=$(FUZZTIME)
	$(GO) test ./host/conn -run=^$$ -fuzz=FuzzCompleteResult -fuzztime=$(FUZZTIME)
	$(GO) test ./host/intercept/sep -run=^$$ -fuzz=^FuzzDecode$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./host/conn -run=^$$ -fuzz=FuzzMediaType -fuzztime=$(FUZZTIME)
	$(GO) test ./internal/jsonrpcmsg -run=^$$ -fuzz=FuzzDecode -fuzztime=$(FUZZTIME)
	$(GO) test ./host/conn -run=^$$ -fuzz=FuzzSSERouter -fuzztime=$(FUZZTIME)
	$(GO) test ./internal/rawjson -run=^$$ -fuzz=FuzzMessage -fuzztime=$(FUZZTIME)
	$(GO) test ./host/gateway/wire -run=^$$ -fuzz=FuzzParse -fuzztime=$(FUZZTIME)
	$(GO) test ./host/gateway/wire -run=^$$ -fuzz=^FuzzClientInfo$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./host/plugins -run=^$$ -fuzz=FuzzHandshakeLine -fuzztime=$(FUZZTIME)
	$(GO) test ./host/plugins -run=^$$ -fuzz=FuzzCheckAddr -fuzztime=$(FUZZTIME)
	$(GO) test ./sdk -run=^$$ -fuzz=FuzzFrameReader -fuzztime=$(FUZZTIME)
	$(GO) test ./host/intercept -run=^$$ -fuzz=FuzzResultRewrite -fuzztime=$(FUZZTIME)
	$(GO) test ./host/intercept/builtin -run=^$$ -fuzz=FuzzValidateInput -fuzztime=$(FUZZTIME)
	$(GO) test ./host/intercept/hook -run=^$$ -fuzz=FuzzDecodeOutput -fuzztime=$(FUZZTIME)
	$(GO) test ./host/toolsearch -run=^$$ -fuzz=FuzzQuery -fuzztime=$(FUZZTIME)
	$(GO) test ./host/llmtools -run=^$$ -fuzz=FuzzConvert -fuzztime=$(FUZZTIME)
	$(GO) test ./host/inbound -run=^$$ -fuzz=FuzzVerify -fuzztime=$(FUZZTIME)
	$(GO) test ./host/inbound -run=^$$ -fuzz=FuzzIntrospectionResponse -fuzztime=$(FUZZTIME)
	$(GO) test ./host/ratelimit -run=^$$ -fuzz=FuzzParseRate -fuzztime=$(FUZZTIME)
	$(GO) test ./host/audit -run=^$$ -fuzz=FuzzAppendString -fuzztime=$(FUZZTIME)
	$(GO) test ./host/registry -run=^$$ -fuzz=^FuzzCleanSchema$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./host/gateway/streamable -run=^$$ -fuzz=^FuzzForwardParsers$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./host/gateway -run=^$$ -fuzz=^FuzzHeldForwarded$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./host/gateway/streamable -run=^$$ -fuzz=^FuzzListenRequests$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./host/conn -run=^$$ -fuzz=^FuzzMayRoute$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./host/conn -run=^$$ -fuzz=^FuzzRejection$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./host/conn -run=^$$ -fuzz=^FuzzStdioServerLines$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./host/conn -run=^$$ -fuzz=^FuzzEnvFile$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./host/state/redisstate -run=^$$ -fuzz=^FuzzReplyScanner$$ -fuzztime=$(FUZZTIME)
	$(GO) test ./sdk/jsonredact -run=^$$ -fuzz=^FuzzRedact$$ -fuzztime=$(FUZZTIME)
	cd examples/transport-tcp && $(GO) test . -run=^$$ -fuzz=^FuzzRecv$$ -fuzztime=$(FUZZTIME)
	cd examples/transport-tcp && $(GO) test . -run=^$$ -fuzz=^FuzzTCPAddr$$ -fuzztime=$(FUZZTIME)

# Benchmarks; writes BENCHMARKS.md.
bench: build test-deps
	./scripts/bench.sh

clean:
	rm -rf $(BIN)

# Regenerates the plugin protocol's Go code (committed) from sdk/proto.
PROTOC_GEN_GO_VERSION      := v1.36.6
PROTOC_GEN_GO_GRPC_VERSION := v1.3.0
proto:
	@command -v protoc >/dev/null || (apt-get update -qq && apt-get install -y -qq protobuf-compiler)
	GOBIN=$(CURDIR)/bin/tools $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(CURDIR)/bin/tools $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	PATH="$(CURDIR)/bin/tools:$$PATH" protoc -I sdk/proto \
		--go_out=sdk/internal/pluginpb/v1 --go_opt=paths=source_relative \
		--go-grpc_out=sdk/internal/pluginpb/v1 --go-grpc_opt=paths=source_relative \
		sdk/proto/mcphost/plugin/v1/plugin.proto
	mv sdk/internal/pluginpb/v1/mcphost/plugin/v1/*.go sdk/internal/pluginpb/v1/
	rm -rf sdk/internal/pluginpb/v1/mcphost
