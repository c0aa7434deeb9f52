pub mod v1;
pub use crate::common::Shared as Reexported;
