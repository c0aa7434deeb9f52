pub mod api;
pub mod common;
pub mod globbed;
