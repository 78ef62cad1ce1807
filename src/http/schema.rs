//! Values the strict parsers check, declared once for every request document that holds them
//! (utoipa's derive takes no bounds on a newtype, so these say their schema themselves). A leaf:
//! the handlers' request documents use these, and `openapi.rs` gathers them all.

use crate::core::value_schema;

/// Most documents one `/route/batch` call may carry.
pub const MAX_BATCH: usize = 10_000;
use utoipa::openapi::schema::{ObjectBuilder, Type};

pub use crate::core::path::RepoPathDoc;
pub use crate::core::runs::{CatchCodeDoc, ExitCodeDoc, TestIdDoc};

value_schema!(
    /// A SHA-256 digest.
    Sha256Doc(String) as "Sha256Hex",
    || ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some("A SHA-256 digest: 64 hex digits, either case."))
        .pattern(Some("^[0-9a-fA-F]{64}$"))
);

value_schema!(
    /// A git commit id.
    CommitDoc(String) as "CommitId",
    || ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some("A git commit id: 4 to 64 hex digits."))
        .pattern(Some("^[0-9a-fA-F]{4,64}$"))
);

value_schema!(
    /// A check's name.
    CheckNameDoc(String) as "CheckName",
    || ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some("A check's name: a check run's `name` or a status's `context`; 1 to 4096 bytes."))
        .min_length(Some(1))
        .max_length(Some(4096))
);

value_schema!(
    /// A `/route/batch` body: up to 10,000 values, each read as a `/route` document in its own
    /// slot (a slot that is not one is answered there with its 422, and the batch is still a
    /// 200).
    RouteBatchDoc as "RouteBatch",
    || utoipa::openapi::schema::ArrayBuilder::new()
        .description(Some(
            "Up to 10,000 documents, each a `/route` body (`RouteRequestDoc`). Each is checked on its own: one that is not a valid document is answered in its slot with its 422 problem, and the batch is still a 200.",
        ))
        .items(ObjectBuilder::new().schema_type(utoipa::openapi::schema::SchemaType::AnyValue))
        .max_items(Some(MAX_BATCH))
);
