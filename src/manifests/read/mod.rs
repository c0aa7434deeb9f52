//! Stage 1 of `rsop manifests`: reading the crate. The files rustc
//! compiles ([`modules`], `macro_rules!` expansion in [`macros`]), parsed
//! and indexed for name lookups ([`source`]), and which of the kinds they
//! declare are the project's own ([`ownership`], from the user's lists and
//! the crate's own `K::crd()` calls, [`crd_calls`]; the emit stage applies
//! them to each kind it reads). Nothing here knows of schemas.

pub mod crd_calls;
pub mod macros;
pub mod modules;
pub mod ownership;
pub mod source;
