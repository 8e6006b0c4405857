//! The desktop entry point; all of it lives in the library so it can be tested.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    slipway_desktop::relaunch_lean();
    slipway_desktop::run();
}
