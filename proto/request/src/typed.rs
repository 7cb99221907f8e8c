//! Typed values: each request's parameters as a struct with one field per parameter, made by
//! [`typed_args!`] next to the request's table. Front ends read fields, never names; the only
//! reads by name are the ones the macro writes from the field identifiers, and a test
//! (`every_table_has_its_typed_fields`) fails when a table and its struct disagree.

/// The parameter names of a typed struct, in declaration order.
pub trait Fields {
    const FIELDS: &'static [&'static str];
}

/// `typed_args! { pub struct QueryArgs { question: text, budget: int, … } }` makes the struct
/// and `QueryArgs::from_values(&Values)`. Kinds: `flag` (bool), `int` (u32; budgets too),
/// `float` (f32), `text` (String, empty when absent), `opt_text` (Option<String>), `list`
/// (Vec<String>, texts and choices alike).
#[macro_export]
macro_rules! typed_args {
    ($(#[$meta:meta])* pub struct $name:ident { $($field:ident : $kind:ident),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct $name {
            $(pub $field: $crate::typed_args!(@type $kind),)*
        }

        impl $name {
            /// The typed view of `v` (which holds every offered parameter: see [`Values`]).
            pub fn from_values(v: &$crate::Values) -> $name {
                $name {
                    $($field: $crate::typed_args!(@read v, $field, $kind),)*
                }
            }
        }

        impl $crate::typed::Fields for $name {
            const FIELDS: &'static [&'static str] = &[$(stringify!($field)),*];
        }
    };
    (@type flag) => { bool };
    (@type int) => { u32 };
    (@type float) => { f32 };
    (@type text) => { String };
    (@type opt_text) => { Option<String> };
    (@type list) => { Vec<String> };
    (@read $v:ident, $field:ident, flag) => { $v.bool(stringify!($field)) };
    (@read $v:ident, $field:ident, int) => { $v.int(stringify!($field)) };
    (@read $v:ident, $field:ident, float) => { $v.float(stringify!($field)) };
    (@read $v:ident, $field:ident, text) => { $v.text(stringify!($field)) };
    (@read $v:ident, $field:ident, opt_text) => { $v.opt_text(stringify!($field)) };
    (@read $v:ident, $field:ident, list) => { $v.list(stringify!($field)) };
}
