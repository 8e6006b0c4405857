//! Request parsing shared by handlers: a request's fields from a JSON body or a query string
//! (unknown ones refused, each named in its error), read as strings, secret paths, scopes,
//! app ids, payload objects and booleans.

use axum::extract::Query;
use axum::extract::rejection::QueryRejection;
use serde_json::{Map, Value};

use super::apps::parse_app_id;
use super::error::ApiError;
use crate::vault;
use crate::vault::access::Scope;
use crate::vault::payload::{self, Part};

/// The request's fields, from a JSON body or a query string, with unknown ones refused.
pub(crate) struct Fields {
    map: Map<String, Value>,
    /// Whether the fields came from a query string (every value a string).
    from_query: bool,
}

impl Fields {
    pub(crate) fn from_body(map: Map<String, Value>, allowed: &[&str]) -> Result<Self, ApiError> {
        if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(ApiError::invalid(
                unknown,
                format!("unknown field; allowed fields are {}", allowed.join(", ")),
            ));
        }
        Ok(Self {
            map,
            from_query: false,
        })
    }

    pub(crate) fn from_query(
        query: Result<Query<Vec<(String, String)>>, QueryRejection>,
        allowed: &[&str],
    ) -> Result<Self, ApiError> {
        let Query(pairs) = query
            .map_err(|_| ApiError::InvalidBody("the query string could not be read".into()))?;
        let mut map = Map::new();
        for (key, value) in pairs {
            if !allowed.contains(&key.as_str()) {
                return Err(ApiError::invalid(
                    &key,
                    format!(
                        "unknown query parameter; allowed are {}",
                        allowed.join(", ")
                    ),
                ));
            }
            if map.insert(key.clone(), Value::String(value)).is_some() {
                return Err(ApiError::invalid(&key, "must be given at most once"));
            }
        }
        Ok(Self {
            map,
            from_query: true,
        })
    }

    /// The fields with string values (every field of a query string), by name.
    pub(crate) fn into_strings(self) -> std::collections::HashMap<String, String> {
        self.map
            .into_iter()
            .filter_map(|(key, value)| match value {
                Value::String(s) => Some((key, s)),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn string(&self, name: &str) -> Result<Option<String>, ApiError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ApiError::invalid(name, "must be a string")),
        }
    }

    pub(crate) fn required(&self, name: &str) -> Result<String, ApiError> {
        self.string(name)?
            .ok_or_else(|| ApiError::invalid(name, "is required"))
    }

    pub(crate) fn path(&self, name: &str) -> Result<String, ApiError> {
        let raw = self.required(name)?;
        vault::path::check(&raw).map_err(|rule| ApiError::invalid(name, rule))?;
        Ok(raw)
    }

    pub(crate) fn scope(&self, name: &str) -> Result<Scope, ApiError> {
        Scope::parse(&self.required(name)?)
            .ok_or_else(|| ApiError::invalid(name, "must be one of user, app, shared"))
    }

    /// `app_id`: required with scope `app`, refused with the others.
    pub(crate) fn app_id(
        &self,
        scope: Scope,
        scope_field: &str,
    ) -> Result<Option<String>, ApiError> {
        match (scope, self.string("app_id")?) {
            (Scope::App, None) => Err(ApiError::invalid(
                "app_id",
                format!("is required when {scope_field} is app"),
            )),
            (Scope::App, Some(raw)) => parse_app_id(&raw).map(Some),
            (_, None) => Ok(None),
            (_, Some(_)) => Err(ApiError::invalid(
                "app_id",
                format!("is only used when {scope_field} is app"),
            )),
        }
    }

    pub(crate) fn object(
        &self,
        name: &str,
        part: Part,
    ) -> Result<Option<Map<String, Value>>, ApiError> {
        match self.map.get(name) {
            None | Some(Value::Null) if part == Part::Metadata => Ok(None),
            None | Some(Value::Null) => Err(ApiError::invalid(name, "is required")),
            Some(v) => payload::check(part, v)
                .map(Some)
                .map_err(|rule| ApiError::invalid(name, rule)),
        }
    }

    pub(crate) fn boolean(&self, name: &str, default: bool) -> Result<bool, ApiError> {
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(ApiError::invalid(name, "must be true or false")),
        }
    }

    /// A list of strings (absent or null is `None`), at most `max` long.
    pub(crate) fn strings(&self, name: &str, max: usize) -> Result<Option<Vec<String>>, ApiError> {
        let rule = || ApiError::invalid(name, format!("must be a list of at most {max} strings"));
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) if items.len() <= max => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned).ok_or_else(rule))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(rule()),
        }
    }

    /// A whole number: a JSON number without a fraction in a body (`7` or `7.0`, as JSON
    /// Schema's `integer`), digits in a query string; absent or null is `None`.
    pub(crate) fn integer(&self, name: &str) -> Result<Option<i64>, ApiError> {
        let whole = || ApiError::invalid(name, "must be a whole number");
        match self.map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Ok(Some(i)),
                #[allow(
                    clippy::cast_possible_truncation,
                    reason = "checked whole and in range"
                )]
                (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => Ok(Some(f as i64)),
                _ => Err(whole()),
            },
            Some(Value::String(s)) if self.from_query => s.parse().map(Some).map_err(|_| whole()),
            Some(_) => Err(whole()),
        }
    }
}
