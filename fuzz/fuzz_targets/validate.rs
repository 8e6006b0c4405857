//! Fuzz target: parsing, validating and editing arbitrary text never panics, and an edit of a
//! valid devfile keeps it valid.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let report = slipway_devfile::validate(text, None);
    let _ = report.to_json();
    if report.valid() {
        if let Ok(model) = slipway_devfile::Devfile::parse(text) {
            let _ = model.deploy_order();
            for service in model.services() {
                if let Ok(edited) = slipway_devfile::set_image_uri(text, &service.name, "registry.local/x@sha256:00") {
                    assert!(slipway_devfile::validate(&edited, None).valid(), "an imageUri edit broke a valid devfile");
                }
            }
        }
    }
});
