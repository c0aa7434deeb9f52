//! rsop's integration tests, in one binary: the real `rsop` binary run on
//! real temporary directories, its output compared with golden trees, and
//! the generated projects put through real cargo, kustomize, schema
//! validation and hadolint.

mod conformance;
mod create_api;
mod create_webhook;
mod e2e;
mod envtest;
mod generate;
mod generated;
mod grafana;
mod helm;
mod hybrid;
mod init;
mod manifests;
mod names;
mod rbac;
mod release;
mod runtime;
mod support;
mod tutorial;
mod update;
mod yaml;
