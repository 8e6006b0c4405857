//! Updating `imageUri` keeps every comment and every other line byte for byte.

use slipway_devfile::{Devfile, set_image_uri, validate};

use super::BASE;

#[test]
fn image_uri_update_keeps_everything_else() {
    let commented = BASE
        .replace("  - name: api-image\n", "  # the api image; build_app writes imageUri below\n  - name: api-image   # trailing comment\n")
        .replace("      imageName: web\n", "      imageName: web   # web image\n");
    let first = set_image_uri(&commented, "web", "registry.local/shop/web@sha256:1111").unwrap();
    let second = set_image_uri(&first, "web", "registry.local/shop/web@sha256:2222").unwrap();
    for out in [&first, &second] {
        let removed: Vec<&str> = commented
            .lines()
            .filter(|l| !out.lines().any(|o| o == *l))
            .collect();
        assert!(removed.is_empty(), "lines changed: {removed:?}");
        assert!(validate(out, None).valid());
    }
    // The only new lines are the two that hold the value, inserted above `image:`.
    let mut expected: Vec<&str> = commented.lines().collect();
    let at = expected
        .iter()
        .position(|l| *l == "      imageName: web   # web image")
        .unwrap()
        - 1;
    expected.splice(
        at..at,
        [
            "    attributes:",
            "      imageUri: registry.local/shop/web@sha256:2222",
        ],
    );
    assert_eq!(second.lines().collect::<Vec<_>>(), expected);
    let model = Devfile::parse(&second).unwrap();
    let web = model
        .services()
        .into_iter()
        .find(|s| s.name == "web")
        .unwrap();
    assert_eq!(
        web.image_uri.as_deref(),
        Some("registry.local/shop/web@sha256:2222")
    );
    // Exactly one line differs between the two builds.
    let diff: Vec<(&str, &str)> = first
        .lines()
        .zip(second.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(diff.len(), 1);
    assert_eq!(first.lines().count(), second.lines().count());
}
