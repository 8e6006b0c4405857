//! List pagination: `page_size` and the opaque `next_page_token`. The token is a keyset
//! cursor — the `(created_at, id)` of the last item returned, base64url-encoded — so a page
//! starts strictly after that item whatever was added or deleted meanwhile: no item is
//! skipped or repeated, unlike an offset.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Page size when the caller gives none.
pub const DEFAULT_PAGE_SIZE: u32 = 20;
/// Largest page size accepted; larger ones are refused (400), not clamped.
pub const MAX_PAGE_SIZE: u32 = 100;

/// Version tag inside the token, so its format can change without misreading old tokens.
const TOKEN_VERSION: &str = "1";

/// Why a pagination parameter was refused; the message names the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    /// `page_size` is not an integer from 1 to 100.
    #[error("page_size must be an integer from 1 to {MAX_PAGE_SIZE}; got {0:?}")]
    PageSize(String),
    /// `next_page_token` was not produced by this server.
    #[error("next_page_token is not a token returned by a previous list call")]
    Token,
}

/// Parses `page_size`: absent means the default; otherwise 1 to [`MAX_PAGE_SIZE`].
pub fn parse_page_size(raw: Option<&str>) -> Result<u32, PageError> {
    let Some(raw) = raw else {
        return Ok(DEFAULT_PAGE_SIZE);
    };
    match raw.parse::<u32>() {
        Ok(n) if (1..=MAX_PAGE_SIZE).contains(&n) => Ok(n),
        _ => Err(PageError::PageSize(raw.to_owned())),
    }
}

/// The position after which the next page starts: the sort key of the last item returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// `created_at` of the last item (epoch milliseconds).
    pub created_at: i64,
    /// `id` of the last item, which breaks ties between equal times.
    pub id: String,
}

impl Cursor {
    /// The opaque token for this position.
    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{TOKEN_VERSION}.{}.{}", self.created_at, self.id))
    }

    /// Reads a token made by [`Cursor::encode`].
    pub fn decode(token: &str) -> Result<Self, PageError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| PageError::Token)?;
        let text = String::from_utf8(bytes).map_err(|_| PageError::Token)?;
        let mut parts = text.splitn(3, '.');
        let (Some(TOKEN_VERSION), Some(time), Some(id)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(PageError::Token);
        };
        let created_at = time.parse::<i64>().map_err(|_| PageError::Token)?;
        let id = uuid::Uuid::parse_str(id).map_err(|_| PageError::Token)?;
        Ok(Self {
            created_at,
            id: id.to_string(),
        })
    }
}

/// Cuts `rows` (fetched with one extra) to `page_size`; the last row kept when the extra one
/// was there (the next page starts after it), `None` on the last page.
pub fn cut_page<T>(rows: &mut Vec<T>, page_size: u32) -> Option<&T> {
    let more = rows.len() > page_size as usize;
    rows.truncate(page_size as usize);
    more.then(|| rows.last()).flatten()
}

/// Cuts `rows` (fetched with one extra) to `page_size`; the token of the next page (the
/// cursor of the last row kept, `key` giving its `(created_at, id)`) when the extra one was
/// there.
pub fn next_page<T>(
    rows: &mut Vec<T>,
    page_size: u32,
    key: impl Fn(&T) -> (i64, String),
) -> Option<String> {
    cut_page(rows, page_size).map(|row| {
        let (created_at, id) = key(row);
        Cursor { created_at, id }.encode()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_size_defaults_and_bounds() {
        assert_eq!(parse_page_size(None), Ok(20));
        assert_eq!(parse_page_size(Some("1")), Ok(1));
        assert_eq!(parse_page_size(Some("100")), Ok(100));
        for bad in ["0", "101", "-1", "ten", ""] {
            assert!(parse_page_size(Some(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_page_is_cut_to_its_size_and_names_where_the_next_starts() {
        let mut rows = vec![1, 2, 3];
        assert_eq!(cut_page(&mut rows, 2), Some(&2));
        assert_eq!(rows, [1, 2]);
        let mut rows = vec![1, 2];
        assert_eq!(cut_page(&mut rows, 2), None);
        assert_eq!(rows, [1, 2]);
        let id = uuid::Uuid::new_v4().to_string();
        let mut rows = vec![(5, id.clone()), (4, id.clone())];
        let token = next_page(&mut rows, 1, |r| (r.0, r.1.clone())).unwrap();
        assert_eq!(Cursor::decode(&token), Ok(Cursor { created_at: 5, id }));
    }

    #[test]
    fn cursor_round_trips_and_rejects_garbage() {
        let c = Cursor {
            created_at: 1_700_000_000_123,
            id: uuid::Uuid::new_v4().to_string(),
        };
        let token = c.encode();
        assert!(!token.contains('='), "unpadded base64url");
        assert_eq!(Cursor::decode(&token), Ok(c));
        for bad in [
            "",
            "!!",
            "MQ",
            &URL_SAFE_NO_PAD.encode("2.1.x"),
            &URL_SAFE_NO_PAD.encode("1.x.y"),
        ] {
            assert_eq!(Cursor::decode(bad), Err(PageError::Token), "{bad:?}");
        }
    }
}
