# mcphost as a container image: static binaries, run as a non-root user, with
# the bundled plugins in a root-owned read-only directory and pinned in a lock
# file written at build time. See deploy/ for Kubernetes manifests and a Helm
# chart; deploy/dockerfile_test.go checks this file (`make test`).
#
#   docker build -t mcphost:dev .
#   docker run --rm -p 8080:8080 -e MCPHOST_SERVE_TOKEN=... \
#     -v "$PWD/config.hcl:/etc/mcphost/config.hcl:ro" mcphost:dev

# GO_VERSION is go.mod's go line: the toolchain make build needs (no download).
ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
# Static binaries: no libc, so they run on distroless/static.
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The same build as `make build`: bin/mcphost, bin/mcphost-demo, bin/plugins/*.
RUN make build
# Plugins go where the final image keeps them (the lock file records each
# binary's path), owned by root and read-only to everyone else; then they are
# locked: each binary's sha256 and what it provides, written to the lock file
# the host reads (MCPHOST_PLUGIN_LOCK). A binary that differs is refused.
ENV MCPHOST_PLUGIN_DIR=/usr/lib/mcphost/plugins \
    MCPHOST_PLUGIN_LOCK=/usr/lib/mcphost/plugins.lock.hcl
RUN install -d -o root -g root -m 0755 /usr/lib/mcphost "$MCPHOST_PLUGIN_DIR" \
 && install -o root -g root -m 0755 bin/plugins/* "$MCPHOST_PLUGIN_DIR"/ \
 && HOME=/tmp/lock-home bin/mcphost plugins lock \
 && chmod 0644 "$MCPHOST_PLUGIN_LOCK" \
 && HOME=/tmp/lock-home bin/mcphost plugins verify \
 && rm -rf /tmp/lock-home \
 && install -d -o 65532 -g 65532 -m 0700 /out/var/lib/mcphost

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/bin/mcphost /usr/local/bin/mcphost
# The demo MCP server, for the example configuration (a stdio server needs
# its program in the image).
COPY --from=build /src/bin/mcphost-demo /usr/local/bin/mcphost-demo
COPY --from=build /usr/lib/mcphost/ /usr/lib/mcphost/
# What mcphost writes: tool pins and OAuth tokens (the config directory),
# plugin copies (the cache) and the plugin run directory (TMPDIR). Kubernetes
# mounts emptyDirs on /var/lib/mcphost and /tmp (the root filesystem is
# read-only there).
COPY --from=build --chown=65532:65532 /out/var/lib/ /var/lib/
ENV MCPHOST_PLUGIN_DIR=/usr/lib/mcphost/plugins \
    MCPHOST_PLUGIN_LOCK=/usr/lib/mcphost/plugins.lock.hcl \
    MCPHOST_CONFIG_DIR=/var/lib/mcphost \
    HOME=/home/nonroot \
    TMPDIR=/tmp \
    XDG_CACHE_HOME=/tmp/cache
# distroless's nonroot user, by number so that runAsNonRoot can check it.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/mcphost"]
CMD ["serve", "--http", "0.0.0.0:8080", "--allow-non-loopback", "--config", "/etc/mcphost/config.hcl"]
