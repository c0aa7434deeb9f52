//! Stage 2: deriving what kube-derive would. The releases the project
//! locks pick the models ([`releases`]); [`attrs`] reads `#[kube]`,
//! `#[serde]`, `#[schemars]`, `#[x_kube]` and doc comments; [`schema`]
//! builds each type's raw schema as that schemars release writes it and
//! applies that kube-core release's transforms. It reads the crate of
//! stage 1 and writes nothing.

pub mod attrs;
pub mod releases;
pub mod schema;
