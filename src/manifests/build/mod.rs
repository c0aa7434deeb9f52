//! The hybrid build: the kinds whose schema only running code gives are
//! derived by a throwaway crdgen binary built against the project with its
//! own kube-derive ([`crdgen`]); every other kind stays static.

pub mod crdgen;
