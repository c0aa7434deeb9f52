//! One kind of the project's own, and client types of other projects'
//! kinds: none of those gets a CRD, and the protected group of one of them
//! is not this project's to approve.

pub mod api;
pub mod clients;
pub mod external;
