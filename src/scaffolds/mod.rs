//! What each scaffolding command plans: validated options in, a [`Plan`] out.
//! Nothing here touches the disk except through the engine's read-only view.
//!
//! [`Plan`]: crate::scaffold::Plan

pub mod create_api;
pub mod init;
