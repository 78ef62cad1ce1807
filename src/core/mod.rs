//! The pure decision core: no I/O, no clock, no randomness, no HTTP.
//!
//! Everything here takes values and returns values, so the server, the CLI and the tests all
//! reach the same decision through the same code. Identifiers that need randomness (decision
//! ids) are made at the edge and handed in.

/// A closed set of words (a verdict, a kind, a strength): one enum whose every variant is
/// written alike in JSON (serde), in text (strum) and in the API document (utoipa), lowercase
/// unless a case is given first (`"SCREAMING_SNAKE_CASE"; pub enum …`), and can be listed
/// (`VARIANTS`), and ordered as declared.
macro_rules! words {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($body:tt)* }) => {
        $crate::core::words! { "lowercase"; $(#[$meta])* $vis enum $name { $($body)* } }
    };
    ($case:tt; $(#[$meta:meta])* $vis:vis enum $name:ident { $($body:tt)* }) => {
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            PartialOrd,
            Ord,
            Hash,
            serde::Serialize,
            serde::Deserialize,
            utoipa::ToSchema,
            strum::IntoStaticStr,
            strum::VariantArray,
        )]
        #[serde(rename_all = $case)]
        #[strum(serialize_all = $case)]
        $(#[$meta])*
        $vis enum $name { $($body)* }
    };
}
pub(crate) use words;

/// Declares the schema of a value the strict parsers check, named `$name` in the API document
/// (utoipa's derive takes no bounds on a newtype, and says nothing of a body that is read slot
/// by slot): a newtype over `$inner`, or a unit type for a whole body. `$build` makes the
/// schema; `uses` names schemas it refers to, so they land in the document with it.
macro_rules! value_schema {
    ($(#[$doc:meta])* $ty:ident($inner:ty) as $name:literal, $build:expr) => {
        $(#[$doc])*
        #[allow(dead_code, reason = "a schema's type: the strict parser reads the value, never this field")]
        #[derive(serde::Deserialize)]
        pub struct $ty($inner);
        $crate::core::value_schema!(@impl $ty, $name, $build,);
    };
    ($(#[$doc:meta])* $ty:ident as $name:literal, $build:expr $(, uses $dep:ty)*) => {
        $(#[$doc])*
        #[allow(dead_code, reason = "a schema's type, never built")]
        pub struct $ty;
        $crate::core::value_schema!(@impl $ty, $name, $build, $($dep)*);
    };
    (@impl $ty:ident, $name:literal, $build:expr, $($dep:ty)*) => {
        impl utoipa::PartialSchema for $ty {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                ($build)().into()
            }
        }

        impl utoipa::ToSchema for $ty {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed($name)
            }

            #[allow(unused_variables, reason = "`schemas` is unused when the schema refers to none")]
            fn schemas(
                schemas: &mut Vec<(
                    String,
                    utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
                )>,
            ) {
                $(
                    schemas.push((
                        <$dep as utoipa::ToSchema>::name().into_owned(),
                        <$dep as utoipa::PartialSchema>::schema(),
                    ));
                    <$dep as utoipa::ToSchema>::schemas(schemas);
                )*
            }
        }
    };
}
pub(crate) use value_schema;

pub mod admit;
pub mod answer;
pub mod catalog;
pub mod checks;
pub mod date;
pub mod decision;
pub mod digest;
pub mod evidence;
pub mod fields;
pub mod freeze_ledger;
pub mod gate;
pub mod json;
pub mod json_out;
pub mod ladder;
pub mod patch;
pub mod path;
pub mod problem;
pub mod quorum;
pub mod route;
pub mod rules;
pub mod runs;
pub mod seal;
pub mod text;

/// The tracing target of decision-log lines (what `/review` reads back).
pub const DECISION_TARGET: &str = "patchgate::decision";
