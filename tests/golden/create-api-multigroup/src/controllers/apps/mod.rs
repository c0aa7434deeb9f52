//! The controllers of the `apps.example.com` API group.

pub mod guest_book;
// +rsop:scaffold:controller-modules
