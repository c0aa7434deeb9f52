//! The `apps.example.com/v1beta1` API, one module per kind.

pub mod guest_book;
// +rsop:scaffold:kinds

pub use guest_book::*;
// +rsop:scaffold:kind-exports
