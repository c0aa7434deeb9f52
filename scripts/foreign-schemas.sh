#!/usr/bin/env bash
# Regenerates data/foreign/schemas.json, the schemas of the foreign types
# schemars implements `JsonSchema` for behind its optional features
# (chrono04, jiff02, uuid1, url2, ...), from the real crates: a throwaway
# crate on rsop's schemars with every such feature prints them (dump.rs)
# under kube-derive's settings. The file also records, for the test in
# src/manifests/derive/schema/foreign.rs, what schemars gives the generic
# containers (IndexMap, SmallVec, ArrayVec, Either) at a few arguments.
#
# Run it after moving rsop's schemars:
#   scripts/foreign-schemas.sh
# CARGO may wrap cargo (e.g. CARGO="flock /tmp/cargo.lock cargo").
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${FOREIGN_GEN_DIR:-${TMPDIR:-/tmp}/foreign-gen}
cargo=${CARGO:-cargo}
export CARGO_TARGET_DIR=${FOREIGN_GEN_TARGET_DIR:-$work/target}
export CARGO_PROFILE_DEV_DEBUG=0

# The schemars rsop itself is locked to.
schemars=$(awk '/^name = "schemars"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' "$root/Cargo.lock")

dir="$work/dump"
mkdir -p "$dir/src"
# The foreign crates at the major versions schemars' features name, each
# with the fewest features that give the types.
cat >"$dir/Cargo.toml" <<TOML
[package]
name = "foreign-schema-dump"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
schemars = { version = "=$schemars", default-features = false, features = [
  "std", "chrono04", "jiff02", "uuid1", "url2", "semver1", "bytes1",
  "rust_decimal1", "bigdecimal04", "smol_str02", "smol_str03", "arrayvec07",
  "indexmap2", "smallvec1", "either1",
] }
serde_json = "1.0"
chrono = { version = "0.4", default-features = false }
jiff = { version = "0.2", default-features = false, features = ["std"] }
uuid = { version = "1", default-features = false }
url = { version = "2", default-features = false, features = ["std"] }
semver = { version = "1", default-features = false }
bytes = { version = "1", default-features = false }
rust_decimal = { version = "1", default-features = false }
bigdecimal = { version = "0.4", default-features = false }
smol_str02 = { package = "smol_str", version = "0.2", default-features = false }
smol_str03 = { package = "smol_str", version = "0.3", default-features = false }
arrayvec = { version = "0.7", default-features = false }
indexmap = { version = "2", default-features = false, features = ["std"] }
smallvec = { version = "1", default-features = false }
either = { version = "1", default-features = false }

[workspace]
TOML
cp "$root/scripts/foreign-schemas/dump.rs" "$dir/src/main.rs"
(cd "$dir" && $cargo generate-lockfile --quiet)

# The versions the schemas were taken from, for the record.
crates=$(awk '
  /^name = / { gsub(/"/, "", $3); name = $3 }
  /^version = / { gsub(/"/, "", $3); versions[name] = versions[name] (versions[name] ? " " : "") $3 }
  END {
    n = split("chrono jiff uuid url semver bytes rust_decimal bigdecimal smol_str arrayvec indexmap smallvec either", want, " ")
    out = "{"
    for (i = 1; i <= n; i++) out = out (i > 1 ? ", " : "") "\"" want[i] "\": \"" versions[want[i]] "\""
    print out "}"
  }' "$dir/Cargo.lock")

mkdir -p "$root/data/foreign"
(cd "$dir" && SCHEMARS_VERSION=$schemars FOREIGN_CRATES=$crates $cargo run --quiet) \
  >"$root/data/foreign/schemas.json.tmp"
mv "$root/data/foreign/schemas.json.tmp" "$root/data/foreign/schemas.json"
ls -l "$root/data/foreign"
