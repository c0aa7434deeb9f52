#!/usr/bin/env bash
# Installs what `make test-e2e` needs beyond the image and its features:
# Kind, kustomize and rsop. Runs once, when the container is created.
set -euo pipefail

KIND_VERSION=v0.30.0
KUSTOMIZE_VERSION=v5.7.1
# The rsop release PROJECT records (cliVersion); `rsop update` moves it.
RSOP_VERSION=0.1.0

arch=$(dpkg --print-architecture)

curl --fail --silent --show-error --location --output /tmp/kind \
  "https://kind.sigs.k8s.io/dl/${KIND_VERSION}/kind-linux-${arch}"
sudo install /tmp/kind /usr/local/bin/kind

curl --fail --silent --show-error --location \
  "https://github.com/kubernetes-sigs/kustomize/releases/download/kustomize%2F${KUSTOMIZE_VERSION}/kustomize_${KUSTOMIZE_VERSION}_linux_${arch}.tar.gz" \
  | sudo tar --extract --gzip --directory /usr/local/bin kustomize

cargo install rsop-cli --locked --version "${RSOP_VERSION}"

# Kind's nodes are containers of the Docker-in-Docker daemon: its network must
# exist before the first `kind create cluster`.
docker network create -d=bridge --subnet=172.19.0.0/24 kind 2>/dev/null || true

kind version
kubectl version --client
kustomize version
rsop version
