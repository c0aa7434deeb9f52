//! The controllers of the `infra.example.com` API group.

pub mod cluster;
// +rsop:scaffold:controller-modules
