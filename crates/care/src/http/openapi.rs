//! `{base}/openapi.json`: the hand-written OpenAPI 3.0 document, with the namespace segment
//! and the base path of this deployment filled in.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::Value;

use super::AppState;

const DOCUMENT: &str = include_str!("../openapi.json");

/// The document for a deployment: paths written with the `care` namespace are moved to
/// `namespace`, and `servers` points at the base path.
pub fn render(base_path: &str, namespace: &str) -> String {
    let Ok(mut doc) = serde_json::from_str::<Value>(DOCUMENT) else {
        return DOCUMENT.to_owned();
    };
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        let old = std::mem::take(paths);
        for (path, item) in old {
            let path = match path.strip_prefix("/care/") {
                Some(rest) => format!("/{namespace}/{rest}"),
                None => path,
            };
            paths.insert(path, item);
        }
    }
    let url = if base_path.is_empty() { "/" } else { base_path };
    doc["servers"] = serde_json::json!([{ "url": url }]);
    doc.to_string()
}

/// Serves the rendered document.
pub async fn serve(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        state.inner.openapi.clone(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_is_json_and_follows_namespace_and_base() {
        let doc: Value = serde_json::from_str(&render("/services/apexrest", "mvn")).unwrap();
        assert_eq!(doc["servers"][0]["url"], "/services/apexrest");
        assert!(doc["paths"].get("/mvn/eRxApi").is_some());
        assert!(doc["paths"].get("/care/eRxApi").is_none());
    }
}
