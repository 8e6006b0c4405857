use http::{HeaderMap, HeaderName, HeaderValue};

use super::*;

const SECRET: &str = "whsec_test";

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.insert(
            HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    h
}

const GITHUB_PUSH: &str = r#"{"ref":"refs/heads/main","before":"1111111111111111111111111111111111111111","after":"2222222222222222222222222222222222222222","deleted":false,"head_commit":{"id":"2222222222222222222222222222222222222222","message":"Ship it"}}"#;

#[test]
fn a_github_push_signed_with_the_secret_is_read() {
    let sig = format!("sha256={}", sign(SECRET, GITHUB_PUSH.as_bytes()));
    let h = headers(&[
        ("X-GitHub-Event", "push"),
        ("X-GitHub-Delivery", "d-1"),
        ("X-Hub-Signature-256", &sig),
    ]);
    let d = read(&h, GITHUB_PUSH.as_bytes(), SECRET).unwrap();
    assert_eq!(d.sender, Sender::GitHub);
    assert_eq!(d.id.as_deref(), Some("d-1"));
    assert_eq!(
        d.event,
        Event::Push {
            branch: Some("main".into()),
            refname: "refs/heads/main".into(),
            sha: "2222222222222222222222222222222222222222".into(),
            deleted: false,
        }
    );
}

#[test]
fn a_tampered_unsigned_or_wrongly_signed_delivery_is_refused() {
    let sig = format!("sha256={}", sign(SECRET, GITHUB_PUSH.as_bytes()));
    let tampered = GITHUB_PUSH.replace("main", "prod");
    let h = headers(&[("X-GitHub-Event", "push"), ("X-Hub-Signature-256", &sig)]);
    assert_eq!(
        read(&h, tampered.as_bytes(), SECRET),
        Err(HookError::BadSignature("X-Hub-Signature-256"))
    );
    assert_eq!(
        read(&h, GITHUB_PUSH.as_bytes(), "another secret"),
        Err(HookError::BadSignature("X-Hub-Signature-256"))
    );
    let h = headers(&[
        ("X-GitHub-Event", "push"),
        ("X-Hub-Signature-256", "sha1=abc"),
    ]);
    assert!(matches!(
        read(&h, GITHUB_PUSH.as_bytes(), SECRET),
        Err(HookError::BadSignature(_))
    ));
    let h = headers(&[("X-GitHub-Event", "push")]);
    assert_eq!(
        read(&h, GITHUB_PUSH.as_bytes(), SECRET),
        Err(HookError::Unsigned("X-Hub-Signature-256"))
    );
    let h = headers(&[("Content-Type", "application/json")]);
    assert_eq!(
        read(&h, GITHUB_PUSH.as_bytes(), SECRET),
        Err(HookError::UnknownSender)
    );
    // Signed, but not the payload it claims to be.
    let body = br#"{"zen":"hi"}"#;
    let sig = format!("sha256={}", sign(SECRET, body));
    let h = headers(&[("X-GitHub-Event", "push"), ("X-Hub-Signature-256", &sig)]);
    assert!(matches!(
        read(&h, body, SECRET),
        Err(HookError::BadPayload { .. })
    ));
}

#[test]
fn github_pull_requests_pings_and_other_events() {
    let body = r#"{"action":"synchronize","number":7,"pull_request":{"title":"Faster","head":{"sha":"abc","ref":"feature/x","repo":{"full_name":"acme/shop"}},"base":{"ref":"main","repo":{"full_name":"acme/shop"}}}}"#;
    let sig = format!("sha256={}", sign(SECRET, body.as_bytes()));
    let h = headers(&[
        ("X-GitHub-Event", "pull_request"),
        ("X-Hub-Signature-256", &sig),
    ]);
    assert_eq!(
        read(&h, body.as_bytes(), SECRET).unwrap().event,
        Event::PullRequest {
            number: 7,
            action: PullAction::Updated,
            head_sha: "abc".into(),
            base_branch: "main".into(),
            title: "Faster".into(),
            from_fork: false,
        }
    );
    // From a fork, or a payload that does not say: no preview.
    for (head, base) in [("mallory/shop", "acme/shop"), ("", "")] {
        let body = if head.is_empty() {
            r#"{"action":"opened","number":8,"pull_request":{"head":{"sha":"f"},"base":{"ref":"main"}}}"#.to_owned()
        } else {
            format!(
                r#"{{"action":"opened","number":8,"pull_request":{{"head":{{"sha":"f","repo":{{"full_name":"{head}"}}}},"base":{{"ref":"main","repo":{{"full_name":"{base}"}}}}}}}}"#
            )
        };
        let sig = format!("sha256={}", sign(SECRET, body.as_bytes()));
        let h = headers(&[
            ("X-GitHub-Event", "pull_request"),
            ("X-Hub-Signature-256", &sig),
        ]);
        assert!(matches!(
            read(&h, body.as_bytes(), SECRET).unwrap().event,
            Event::PullRequest {
                from_fork: true,
                ..
            }
        ));
    }
    for (name, want) in [
        ("ping", Event::Ping),
        ("issues", Event::Other("issues".into())),
    ] {
        let h = headers(&[
            ("X-GitHub-Event", name),
            (
                "X-Hub-Signature-256",
                &format!("sha256={}", sign(SECRET, b"{}")),
            ),
        ]);
        assert_eq!(read(&h, b"{}", SECRET).unwrap().event, want);
    }
    let deleted = r#"{"ref":"refs/tags/v1","after":"0000000000000000000000000000000000000000"}"#;
    let h = headers(&[
        ("X-GitHub-Event", "push"),
        (
            "X-Hub-Signature-256",
            &format!("sha256={}", sign(SECRET, deleted.as_bytes())),
        ),
    ]);
    let Event::Push {
        branch, deleted, ..
    } = read(&h, deleted.as_bytes(), SECRET).unwrap().event
    else {
        panic!("a push")
    };
    assert_eq!((branch, deleted), (None, true));
}

#[test]
fn gitlab_deliveries_carry_the_shared_token() {
    let push = r#"{"object_kind":"push","ref":"refs/heads/main","before":"1","after":"3333333333333333333333333333333333333333"}"#;
    let h = headers(&[
        ("X-Gitlab-Event", "Push Hook"),
        ("X-Gitlab-Token", SECRET),
        ("Idempotency-Key", "k-9"),
        ("X-Gitlab-Event-UUID", "u-1"),
    ]);
    let d = read(&h, push.as_bytes(), SECRET).unwrap();
    assert_eq!((d.sender, d.id.as_deref()), (Sender::GitLab, Some("k-9")));
    assert!(matches!(d.event, Event::Push { ref sha, .. } if sha.starts_with("3333")));
    let h = headers(&[("X-Gitlab-Event", "Push Hook"), ("X-Gitlab-Token", "guess")]);
    assert_eq!(
        read(&h, push.as_bytes(), SECRET),
        Err(HookError::BadSignature("X-Gitlab-Token"))
    );
    let h = headers(&[("X-Gitlab-Event", "Push Hook")]);
    assert_eq!(
        read(&h, push.as_bytes(), SECRET),
        Err(HookError::Unsigned("X-Gitlab-Token"))
    );
    let mr = |action: &str, oldrev: &str| {
        format!(
            r#"{{"object_kind":"merge_request","object_attributes":{{"iid":4,"action":"{action}","target_branch":"main","source_branch":"f","title":"T","source_project_id":9,"target_project_id":9,"last_commit":{{"id":"cafe"}}{oldrev}}}}}"#
        )
    };
    let h = headers(&[
        ("X-Gitlab-Event", "Merge Request Hook"),
        ("X-Gitlab-Token", SECRET),
    ]);
    for (action, oldrev, want) in [
        ("open", "", PullAction::Opened),
        ("update", r#","oldrev":"beef""#, PullAction::Updated),
        ("update", "", PullAction::Other("update".into())),
        ("merge", "", PullAction::Closed),
        ("close", "", PullAction::Closed),
    ] {
        let body = mr(action, oldrev);
        let Event::PullRequest {
            number,
            action,
            head_sha,
            ..
        } = read(&h, body.as_bytes(), SECRET).unwrap().event
        else {
            panic!("a merge request")
        };
        assert_eq!((number, action, head_sha.as_str()), (4, want, "cafe"));
    }
}

#[test]
fn gitea_and_forgejo_sign_without_a_prefix() {
    let body = r#"{"action":"synchronized","number":2,"pull_request":{"title":"x","head":{"sha":"f00d","ref":"b","repo":{"full_name":"t/a"}},"base":{"ref":"main","repo":{"full_name":"t/a"}}}}"#;
    for (event, sig, delivery) in [
        ("X-Gitea-Event", "X-Gitea-Signature", "X-Gitea-Delivery"),
        (
            "X-Forgejo-Event",
            "X-Forgejo-Signature",
            "X-Forgejo-Delivery",
        ),
    ] {
        let h = headers(&[
            (event, "pull_request"),
            // Sent alongside for compatibility; the forge's own header decides.
            ("X-GitHub-Event", "pull_request"),
            (sig, &sign(SECRET, body.as_bytes())),
            (delivery, "g-1"),
        ]);
        let d = read(&h, body.as_bytes(), SECRET).unwrap();
        assert_eq!((d.sender, d.id.as_deref()), (Sender::Gitea, Some("g-1")));
        assert!(matches!(
            d.event,
            Event::PullRequest {
                number: 2,
                action: PullAction::Updated,
                ..
            }
        ));
        let h = headers(&[
            (event, "pull_request"),
            (sig, &sign("nope", body.as_bytes())),
        ]);
        assert!(matches!(
            read(&h, body.as_bytes(), SECRET),
            Err(HookError::BadSignature(_))
        ));
    }
    assert_eq!(Sender::Gitea.pull_ref(2), "refs/pull/2/head");
    assert_eq!(Sender::GitLab.pull_ref(2), "refs/merge-requests/2/head");
}
