//! What each scaffolding command plans: validated options in, a [`Plan`] out.
//! Nothing here knows the command line (`commands/` makes the options), and
//! nothing touches the disk except through the writer's read-only [`Disk`]
//! view.
//!
//! [`Plan`]: super::Plan
//! [`Disk`]: crate::output::Disk

pub mod create_api;
pub mod create_webhook;
pub mod init;
