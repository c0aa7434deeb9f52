//! Webhook markers in both spellings, spread over files and out of name
//! order, next to a kind: one manifests.yaml, webhooks sorted by name.

pub mod api;
pub mod webhooks;
