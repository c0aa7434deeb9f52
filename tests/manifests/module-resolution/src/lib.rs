pub mod api;
pub mod common;
