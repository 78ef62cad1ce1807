# syntax=docker/dockerfile:1
# patchgate: a locked release build, then a distroless runtime running as non-root.
# Build: docker build -t patchgate .   Run: docker run -p 8080:8080 -e PATCHGATE_TOKEN=... patchgate

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# The manifest and lockfile first, so the dependency layer is cached across source changes.
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY benches ./benches
COPY examples ./examples
RUN cargo build --release --locked --bin patchgate \
    && strip target/release/patchgate

# distroless/cc: glibc and CA certificates, no shell, no package manager.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/patchgate /usr/local/bin/patchgate
# PORT is honoured: serve listens on 0.0.0.0:$PORT. The root filesystem can be read-only:
# patchgate writes nothing to disk (logs go to stdout).
ENV PORT=8080
EXPOSE 8080
USER 65532:65532
# No shell tools in the image: the binary checks its own /healthz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["/usr/local/bin/patchgate", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/patchgate"]
CMD ["serve"]
