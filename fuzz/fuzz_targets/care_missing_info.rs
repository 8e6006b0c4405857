//! The missing-information POST body (plain JSON array and FHIR QuestionnaireResponse) on
//! arbitrary bytes: it must refuse or parse, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte chooses the form, so one corpus exercises both parsers.
    let (fhir, body) = match data.split_first() {
        Some((b, rest)) => (b & 1 == 1, rest),
        None => (false, data),
    };
    let _ = slipway_care::fuzzing::parse_missing_info_body(body, fhir);
});
