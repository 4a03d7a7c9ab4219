# ycsb-rs in a container: two images from one file (docs/multi-client.md).
#
#   docker build --target client -t ycsb-rs:client .   # redis + http clients only
#   docker build --target full   -t ycsb-rs:full   .   # every store (the engines' libraries linked)
#
# Both are Debian bookworm, as the build machine: the full image links
# Debian's librocksdb 7.8, libleveldb, libwiredtiger, liblmdb, libsqlite3
# and (for the etcd store's TLS) libssl (see .cargo/config.toml). The
# client image links no engine library at all, so it is small and is what
# the Kubernetes Jobs in deploy/kubernetes run. Workload files are in
# /usr/share/ycsb/workloads. xtask/tests/deploy.rs checks that the stages,
# packages and features named here exist in the workspace.

ARG RUST_VERSION=1.95
ARG DEBIAN_RELEASE=bookworm

# The client-only binary: pure Rust, no engine headers needed; no engine
# and no `ycsb serve` (a feature of its own) compiled in.
FROM rust:${RUST_VERSION}-${DEBIAN_RELEASE} AS build-client
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p ycsb-cli --no-default-features --features redis,http \
 && cp target/release/ycsb /usr/local/bin/ycsb

# The full binary: Debian's engine libraries and clang for bindgen.
FROM rust:${RUST_VERSION}-${DEBIAN_RELEASE} AS build-full
RUN apt-get update \
 && apt-get install -y --no-install-recommends librocksdb-dev libleveldb-dev libsnappy-dev \
    libwiredtiger-dev liblmdb-dev libsqlite3-dev libssl-dev pkg-config clang libclang-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p ycsb-cli \
 && cp target/release/ycsb /usr/local/bin/ycsb

FROM debian:${DEBIAN_RELEASE}-slim AS client
COPY --from=build-client /usr/local/bin/ycsb /usr/local/bin/ycsb
COPY workloads /usr/share/ycsb/workloads
USER 65534:65534
CMD ["ycsb", "stores"]

FROM debian:${DEBIAN_RELEASE}-slim AS full
RUN apt-get update \
 && apt-get install -y --no-install-recommends librocksdb7.8 libleveldb1d libsnappy1v5 \
    libwiredtiger0 liblmdb0 libsqlite3-0 libssl3 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build-full /usr/local/bin/ycsb /usr/local/bin/ycsb
COPY workloads /usr/share/ycsb/workloads
USER 65534:65534
CMD ["ycsb", "stores"]
