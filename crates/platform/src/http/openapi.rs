//! `GET /v1/openapi.json`: the hand-written OpenAPI 3.1 document of the API, served as is.
//! It is public (no token needed) so tools can read it before they have a token.

use axum::http::header;
use axum::response::IntoResponse;

/// The document, embedded at compile time.
pub const DOCUMENT: &str = include_str!("../openapi.json");

/// Serves [`DOCUMENT`].
pub async fn serve() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn document_is_json_and_lists_exactly_the_routes() {
        let doc: Value = serde_json::from_str(DOCUMENT).expect("openapi.json is valid JSON");
        assert!(doc["openapi"].as_str().unwrap_or("").starts_with("3."));
        let mut documented = Vec::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for method in item.as_object().expect("path item").keys() {
                if method != "parameters" {
                    documented.push((method.clone(), path.clone()));
                }
            }
        }
        documented.sort();
        let mut routes: Vec<(String, String)> = crate::http::ROUTES
            .iter()
            .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
            .collect();
        routes.sort();
        assert_eq!(documented, routes);
    }
}
