//! Keyset pagination: 45 apps listed 20 at a time yield each exactly once, also while apps
//! are added and deleted between pages.

use std::collections::{BTreeSet, HashMap};

use crate::support::{TestApp, backends, spawn_app};

/// Registers `n` apps named `{prefix}-{i}` and returns name → id.
async fn register_many(app: &TestApp, prefix: &str, n: usize) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for i in 0..n {
        let name = format!("{prefix}-{i}");
        let body = app.register(&app.owner, &name).await;
        out.insert(name, body["id"].as_str().unwrap().to_owned());
    }
    out
}

#[tokio::test]
async fn forty_five_apps_twenty_at_a_time_each_exactly_once() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let ids = register_many(&app, "app", 45).await;
        let mut seen = Vec::new();
        let mut sizes = Vec::new();
        let mut next = None;
        loop {
            let (names, token) = app.list_page(&app.owner, 20, next.as_deref()).await;
            sizes.push(names.len());
            seen.extend(names);
            match token {
                Some(t) => next = Some(t),
                None => break,
            }
        }
        assert_eq!(sizes, vec![20, 20, 5], "{backend:?}");
        let unique: BTreeSet<&String> = seen.iter().collect();
        assert_eq!(unique.len(), seen.len(), "{backend:?}: no app twice");
        assert_eq!(unique, ids.keys().collect(), "{backend:?}: every app once");
        // The default page size is 20.
        let (status, body) = app.list_raw(&app.owner, "").await;
        assert_eq!(status, reqwest::StatusCode::OK);
        assert_eq!(body["apps"].as_array().unwrap().len(), 20, "{backend:?}");
        app.finish().await;
    }
}

#[tokio::test]
async fn pages_stay_correct_while_apps_are_added_and_deleted() {
    for backend in backends() {
        let app = spawn_app(backend).await;
        let ids = register_many(&app, "app", 45).await;
        let (first, token) = app.list_page(&app.owner, 20, None).await;
        assert_eq!(first.len(), 20);
        // Delete five already-seen apps (an offset would now skip five unseen ones) and three
        // not yet seen; add four new ones.
        let unseen: Vec<&String> = ids.keys().filter(|n| !first.contains(n)).collect();
        let mut deleted_unseen = BTreeSet::new();
        for name in first.iter().take(5).chain(unseen.iter().copied().take(3)) {
            let (status, body) = app.delete_app(&app.owner, &ids[name]).await;
            assert_eq!(status, reqwest::StatusCode::NO_CONTENT, "{body}");
            if !first.contains(name) {
                deleted_unseen.insert(name.clone());
            }
        }
        let added = register_many(&app, "late", 4).await;
        let mut seen = first.clone();
        let mut next = token;
        while let Some(t) = next {
            let (names, token) = app.list_page(&app.owner, 20, Some(&t)).await;
            // Churn between the second and third pages as well.
            if token.is_some() {
                register_many(&app, "later", 2).await;
            }
            seen.extend(names);
            next = token;
        }
        let unique: BTreeSet<&String> = seen.iter().collect();
        assert_eq!(
            unique.len(),
            seen.len(),
            "{backend:?}: no app twice: {seen:?}"
        );
        for name in ids.keys() {
            let want = usize::from(!deleted_unseen.contains(name));
            let got = seen.iter().filter(|n| *n == name).count();
            assert_eq!(got, want, "{backend:?}: {name}");
        }
        for name in added.keys() {
            assert!(
                seen.contains(name),
                "{backend:?}: {name} added before its page was read"
            );
        }
        app.finish().await;
    }
}
