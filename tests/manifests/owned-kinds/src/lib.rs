//! Two kinds of the project's own, which its crdgen prints, next to
//! hand-written client types of other projects' kinds: a partial Gateway
//! API route (a protected group, with no approval annotation) and an agent
//! sandbox that no `crd()` call names. Only the first two get CRDs.

pub mod api;
pub mod clients;
