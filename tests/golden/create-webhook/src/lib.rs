//! The webhook-operator operator: its API types, its controllers and its webhooks, which the
//! `manager` binary (`src/main.rs`) registers with rsop-runtime's manager.

pub mod api;
pub mod controllers;
pub mod webhooks;
// +rsop:scaffold:modules
