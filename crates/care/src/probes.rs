//! What the load bench's storage probes run that only the service knows (not an API): the
//! statement a missing-information GET reads with, exactly as the service sends it, so that
//! the probe of a GET cannot drift from the GET it is the limit of.

use crate::db::Backend;

/// The one statement of a missing-information GET's read (the caller a token names and the
/// request a UUID names, with what it refers to), with `$1` the token's hash and `$2` the
/// request's UUID, in `backend`'s dialect.
pub fn missing_info_read(backend: Backend) -> &'static str {
    crate::store::data_requests::caller_and_request_statement(backend)
}

/// The stored hash of a bearer token (`$1` of [`missing_info_read`]).
pub fn token_hash(token: &str) -> String {
    crate::auth::hash_token(token)
}
