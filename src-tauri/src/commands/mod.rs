//! Tauri commands, one module per domain.

pub mod care;
pub mod env;
pub mod history;
pub mod tools;
