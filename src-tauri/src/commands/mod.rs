//! Tauri commands, one module per domain.

pub mod browser;
pub mod build;
pub mod care;
pub mod dev;
pub mod env;
pub mod history;
pub mod people;
pub mod startup;
pub mod tools;
