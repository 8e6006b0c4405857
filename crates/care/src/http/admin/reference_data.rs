//! The reference data of the admin API: vendors, programs, data use purposes and products.
//! Each is a collection listed in key order, a PUT that creates or replaces the record the
//! path's key names and answers it, and a DELETE by that key. One set of handlers serves all
//! four; a [`ReferenceData`] kind says only what differs between them (the key's rule, the
//! body, the store calls and a record's JSON), so the steps and their order are one rule.

use std::future::Future;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::{MethodRouter, get, put};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{ApiError, AppState, Deletable, begin_admin, delete_by_key, ok_json, parse};
use crate::db::Tx;
use crate::reference::{check_api_name, check_display_name, check_plain_id};
use crate::store::StoreError;
use crate::store::reference::{self, Named, NamedRow, Product};
use crate::violation::Violation;

/// One kind of reference data (its DELETE and 404 wording come from [`Deletable`]).
pub(super) trait ReferenceData: Deletable {
    /// The body of a PUT.
    type Body: DeserializeOwned + Send;
    /// A stored record.
    type Record: Send + Sync;

    /// The rule of the key in the path; checked after the token, before the body is read.
    fn check_key(self, key: &str) -> Result<(), Violation>;

    /// The record a PUT of `body` under `key` stores, or the first rule the body breaks.
    fn record(self, key: String, body: Self::Body) -> Result<Self::Record, Violation>;

    /// Every record, in key order.
    fn list(
        self,
        tx: &mut Tx,
    ) -> impl Future<Output = Result<Vec<Self::Record>, StoreError>> + Send;

    /// Creates or replaces `record`.
    fn put(
        self,
        tx: &mut Tx,
        record: &Self::Record,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A record as an entry of the list.
    fn listed(self, record: Self::Record) -> Value;

    /// A record as the answer of its PUT.
    fn stored(self, record: Self::Record) -> Value;
}

/// `GET` of the collection of `kind`.
pub(super) fn collection<R: ReferenceData>(kind: R) -> MethodRouter<AppState> {
    get(move |State(st): State<AppState>, headers: HeaderMap| list(kind, st, headers))
}

/// `PUT` and `DELETE` of one record of `kind`, by the path's one key.
pub(super) fn record<R: ReferenceData>(kind: R) -> MethodRouter<AppState> {
    put(
        move |State(st): State<AppState>,
              Path(key): Path<String>,
              headers: HeaderMap,
              body: Result<Bytes, BytesRejection>| replace(kind, st, key, headers, body),
    )
    .merge(delete_by_key(kind))
}

async fn list<R: ReferenceData>(
    kind: R,
    st: AppState,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    let records = kind.list(&mut tx).await?;
    tx.commit().await?;
    let out = records.into_iter().map(|r| kind.listed(r)).collect();
    Ok(ok_json(Value::Array(out)))
}

/// The steps of every PUT, in this order: the token, the key, the body's syntax, its rules,
/// the write.
async fn replace<R: ReferenceData>(
    kind: R,
    st: AppState,
    key: String,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let mut tx = begin_admin(&st, &headers).await?;
    kind.check_key(&key)?;
    let body: R::Body = parse(body)?;
    let record = kind.record(key, body)?;
    kind.put(&mut tx, &record).await?;
    tx.commit().await?;
    Ok(ok_json(kind.stored(record)))
}

/// The body of a key-and-name record.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NamedBody {
    name: String,
}

/// The JSON name of a key-and-name record's key: in a list entry, and in what a refused key
/// names.
fn key_field(kind: Named) -> &'static str {
    match kind {
        Named::Vendor | Named::Program => "apiName",
        Named::DataUsePurpose => "externalId",
    }
}

impl Deletable for Named {
    fn what(self) -> &'static str {
        match self {
            Named::Vendor => "vendor",
            Named::Program => "program",
            Named::DataUsePurpose => "data use purpose",
        }
    }

    async fn delete(self, tx: &mut Tx, key: &str) -> Result<bool, StoreError> {
        reference::delete_named(tx, self, key).await
    }
}

impl ReferenceData for Named {
    type Body = NamedBody;
    type Record = NamedRow;

    fn check_key(self, key: &str) -> Result<(), Violation> {
        match self {
            Named::Vendor | Named::Program => check_api_name(key, key_field(self)),
            Named::DataUsePurpose => check_plain_id(key, key_field(self)),
        }
    }

    fn record(self, key: String, body: NamedBody) -> Result<NamedRow, Violation> {
        check_display_name(&body.name)?;
        Ok(NamedRow {
            key,
            name: body.name,
        })
    }

    async fn list(self, tx: &mut Tx) -> Result<Vec<NamedRow>, StoreError> {
        reference::list_named(tx, self).await
    }

    async fn put(self, tx: &mut Tx, record: &NamedRow) -> Result<(), StoreError> {
        reference::put_named(tx, self, &record.key, &record.name).await
    }

    fn listed(self, record: NamedRow) -> Value {
        json!({ key_field(self): record.key, "name": record.name })
    }

    fn stored(self, record: NamedRow) -> Value {
        json!({ "id": record.key, "name": record.name })
    }
}

/// Products of programs, keyed by product ID.
#[derive(Debug, Clone, Copy)]
pub(super) struct Products;

/// The body of a product.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct ProductBody {
    name: String,
    program_api_name: String,
}

impl Deletable for Products {
    fn what(self) -> &'static str {
        "product"
    }

    async fn delete(self, tx: &mut Tx, key: &str) -> Result<bool, StoreError> {
        reference::delete_product(tx, key).await
    }
}

impl ReferenceData for Products {
    type Body = ProductBody;
    type Record = Product;

    fn check_key(self, key: &str) -> Result<(), Violation> {
        check_plain_id(key, "productId")
    }

    /// A product's name has no rule of its own (unlike the other kinds' display names).
    fn record(self, key: String, body: ProductBody) -> Result<Product, Violation> {
        check_api_name(&body.program_api_name, "programApiName")?;
        Ok(Product {
            code: key,
            name: body.name,
            program_api_name: body.program_api_name,
        })
    }

    async fn list(self, tx: &mut Tx) -> Result<Vec<Product>, StoreError> {
        reference::list_products(tx).await
    }

    async fn put(self, tx: &mut Tx, record: &Product) -> Result<(), StoreError> {
        reference::put_product(tx, record).await
    }

    fn listed(self, record: Product) -> Value {
        self.stored(record)
    }

    fn stored(self, record: Product) -> Value {
        json!({ "id": record.code, "name": record.name, "programApiName": record.program_api_name })
    }
}
