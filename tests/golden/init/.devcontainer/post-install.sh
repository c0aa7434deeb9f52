#!/usr/bin/env bash
# Installs what `make test-e2e` needs beyond the image and its features:
# Kind, kustomize and rsop. Runs once, when the container is created.
set -euo pipefail

KIND_VERSION=v0.30.0
KUSTOMIZE_VERSION=v5.7.1
# The rsop release PROJECT records (cliVersion); `rsop update` moves it.
RSOP_VERSION=0.1.0
CARGO_BINSTALL_VERSION=v1.26.2

arch=$(dpkg --print-architecture)

curl --fail --silent --show-error --location --output /tmp/kind \
  "https://kind.sigs.k8s.io/dl/${KIND_VERSION}/kind-linux-${arch}"
sudo install /tmp/kind /usr/local/bin/kind

curl --fail --silent --show-error --location \
  "https://github.com/kubernetes-sigs/kustomize/releases/download/kustomize%2F${KUSTOMIZE_VERSION}/kustomize_${KUSTOMIZE_VERSION}_linux_${arch}.tar.gz" \
  | sudo tar --extract --gzip --directory /usr/local/bin kustomize

# rsop prebuilt where its release has binaries (cargo-binstall falls back to
# building it with `cargo install --locked`).
case "$(uname -m)" in
  aarch64 | arm64) triple=aarch64-unknown-linux-musl ;;
  *) triple=x86_64-unknown-linux-musl ;;
esac
curl --fail --silent --show-error --location \
  "https://github.com/cargo-bins/cargo-binstall/releases/download/${CARGO_BINSTALL_VERSION}/cargo-binstall-${triple}.tgz" \
  | tar --extract --gzip --directory "${CARGO_HOME:-$HOME/.cargo}/bin" cargo-binstall
cargo binstall --no-confirm --locked "rsop-cli@${RSOP_VERSION}"

# Kind's nodes are containers of the Docker-in-Docker daemon: its network must
# exist before the first `kind create cluster`.
docker network create -d=bridge --subnet=172.19.0.0/24 kind 2>/dev/null || true

kind version
kubectl version --client
kustomize version
rsop version
