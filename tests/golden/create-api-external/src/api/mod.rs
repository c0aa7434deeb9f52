//! The operator's API types: one module per version, one module per kind within it.
//!
//! `rsop manifests` reads these sources to write the CRDs under `config/crd/bases/`: doc comments
//! become the descriptions that `kubectl explain` shows, and serde and schemars attributes become
//! the schema the API server validates against. Run it after every change here.

pub mod v1alpha1;
// +rsop:scaffold:api-modules
