//! The care enrollment validator on arbitrary bytes: it must refuse or accept, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = slipway_care::fuzzing::check_enrollment(data);
});
