//! Only the modules declared here, under the cfg of a normal build, are
//! compiled: the stale and test-only files beside them must not be read.

pub mod api;
#[cfg(feature = "extra")]
pub mod extra;
#[cfg(feature = "off")]
mod off;
#[cfg(test)]
mod tests;
#[path = "generated/widgets.rs"]
pub mod widgets;
