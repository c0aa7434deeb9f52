//! The types of kinds other projects define, generated from their CRDs by
//! `rsop create api --external-api-crd`: one module per API group and version.
//!
//! Those projects install their CRDs: `rsop manifests` writes none for the types here, and
//! `make install` installs only the operator's own. To follow a new release of a CRD, generate
//! its types again rather than edit them: `rsop create api --external-api-crd <crd>
//! --resource=false --controller=false --force` rewrites them and leaves the controllers alone.

pub mod cert_manager_io;
// +rsop:scaffold:api-modules
