//! C: functions, structs, unions, enums, typedefs, macros (`#define` — function-like ones as
//! macros, object-like ones as constants — calling what their replacement lists call),
//! `static const` constants; `#include`; calls (`f(x)`, `s->f(x)`, `s.f(x)`) and type uses. Prototypes are not definitions: a call
//! resolves to the function's one definition, wherever its header declares it. Locals and
//! parameters bind receiver types (`struct jv *v`, `jv v`).

use super::Fields;
use tree_sitter::Node;

use super::Cx;
use crate::model::{DefKind, Import, RefKind};

/// A visitor: C's, or C++'s, which hands what C++ shares with C to [`visit_shared`].
pub(super) type Visit = fn(&mut Cx, Node);

pub(super) fn visit(cx: &mut Cx, node: Node) {
    visit_shared(cx, node, visit)
}

/// The constructs C++ shares with C, recursing into children with `visit`.
pub(super) fn visit_shared(cx: &mut Cx, node: Node, visit: Visit) {
    match node.kind() {
        "function_definition" => function(cx, node, visit),
        "struct_specifier" | "union_specifier" => record(cx, node, DefKind::Struct, visit),
        "enum_specifier" => record(cx, node, DefKind::Enum, visit),
        "type_definition" => typedef(cx, node, visit),
        "preproc_function_def" => {
            if let Some(name) = cx.field_text(node, "name") {
                let idx = cx.define(node, name, DefKind::Macro, None);
                cx.within(idx, false, |cx| macro_calls(cx, node));
            }
        }
        "preproc_def" => {
            if let Some(name) = cx.field_text(node, "name") {
                let idx = cx.define(node, name, DefKind::Constant, None);
                cx.within(idx, false, |cx| macro_calls(cx, node));
            }
        }
        "preproc_include" => include(cx, node),
        "declaration" => declaration(cx, node, visit),
        "parameter_declaration" => {
            bind_declared(cx, node);
            cx.children(node, visit);
        }
        "call_expression" => call(cx, node, visit),
        "type_identifier" => {
            let name = cx.text(node);
            cx.reference(RefKind::Type, name, None, node);
        }
        _ => cx.children(node, visit),
    }
}

/// Words of a macro's replacement list that are not calls though `(` follows them.
const NOT_CALLED: [&str; 14] = [
    "if",
    "while",
    "for",
    "switch",
    "return",
    "sizeof",
    "defined",
    "do",
    "else",
    "case",
    "_Alignof",
    "alignof",
    "typeof",
    "__typeof__",
];

/// The calls a macro's replacement list makes (`#define GROW(b) buffer_grow((b), 2)` calls
/// `buffer_grow`): the grammar keeps the list as unparsed text, so its `name(` words are read
/// lexically — not the macro's parameters, not member calls (`.f(`, `->f(`), not the names
/// `#` and `##` make.
fn macro_calls(cx: &mut Cx, node: Node) {
    let Some(value) = node.field("value") else {
        return;
    };
    let params: Vec<String> = node
        .field("parameters")
        .map(|p| {
            let mut cursor = p.walk();
            p.named_children(&mut cursor).map(|c| cx.text(c)).collect()
        })
        .unwrap_or_default();
    let text = cx.text(value);
    let first_line = value.start_position().row as u32 + 1;
    let bytes = text.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        // Literals and comments hold no calls.
        let skip_to = match bytes[i] {
            q @ (b'"' | b'\'') => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != q {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                Some(j + 1)
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => Some(
                text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |e| i + 2 + e + 2),
            ),
            b'/' if bytes.get(i + 1) == Some(&b'/') => Some(bytes.len()),
            _ => None,
        };
        if let Some(j) = skip_to {
            i = j;
            continue;
        }
        if !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') || (i > 0 && ident(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && ident(bytes[i]) {
            i += 1;
        }
        let name = &text[start..i];
        let called = text[i..].trim_start_matches([' ', '\t']).starts_with('(');
        let before = text[..start].trim_end_matches([' ', '\t']);
        let member_or_pasted =
            before.ends_with('.') || before.ends_with("->") || before.ends_with('#');
        if called
            && !member_or_pasted
            && !NOT_CALLED.contains(&name)
            && !params.iter().any(|p| p == name)
        {
            let line = first_line + text[..start].matches('\n').count() as u32;
            cx.reference_at_line(RefKind::Call, name, line);
        }
    }
}

/// The name a declarator declares: through pointers, arrays, parentheses and functions.
pub(super) fn declared_name(cx: &Cx, node: Node) -> Option<String> {
    let mut cur = node;
    loop {
        match cur.kind() {
            "identifier" | "field_identifier" | "type_identifier" => return Some(cx.text(cur)),
            _ => cur = cur.field("declarator")?,
        }
    }
}

/// Whether a declarator declares a function (a prototype, when it has no body).
pub(super) fn declares_function(node: Node) -> bool {
    let mut cur = Some(node);
    while let Some(n) = cur {
        if n.kind() == "function_declarator" {
            return true;
        }
        cur = n.field("declarator");
    }
    false
}

fn function(cx: &mut Cx, node: Node, visit: Visit) {
    let Some(name) = node.field("declarator").and_then(|d| declared_name(cx, d)) else {
        return cx.children(node, visit);
    };
    let body = node.field("body");
    let idx = cx.define(node, name, DefKind::Function, body);
    cx.within(idx, true, |cx| {
        if let Some(t) = node.field("type") {
            visit(cx, t);
        }
        if let Some(d) = node.field("declarator") {
            cx.children(d, visit);
        }
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
}

pub(super) fn record(cx: &mut Cx, node: Node, kind: DefKind, visit: Visit) {
    let name = cx.field_text(node, "name");
    match (name, node.field("body")) {
        (Some(name), Some(body)) => {
            let idx = cx.define(node, name, kind, Some(body));
            cx.within(idx, false, |cx| cx.children(body, visit));
        }
        // `struct foo *p`: a use of the type.
        (Some(name), None) => {
            if let Some(n) = node.field("name") {
                cx.reference(RefKind::Type, name, None, n);
            }
        }
        (None, Some(body)) => cx.children(body, visit),
        (None, None) => {}
    }
}

/// `typedef struct {…} jv;` defines `jv` (the anonymous struct is its body);
/// `typedef struct jv_s jv;` aliases a named one.
fn typedef(cx: &mut Cx, node: Node, visit: Visit) {
    let Some(name) = node.field("declarator").and_then(|d| declared_name(cx, d)) else {
        return cx.children(node, visit);
    };
    let ty = node.field("type");
    let anonymous_body = ty.filter(|t| {
        matches!(
            t.kind(),
            "struct_specifier" | "union_specifier" | "enum_specifier"
        ) && t.field("name").is_none()
    });
    match anonymous_body.and_then(|t| t.field("body").map(|b| (t, b))) {
        Some((t, body)) => {
            let kind = if t.kind() == "enum_specifier" {
                DefKind::Enum
            } else {
                DefKind::Struct
            };
            let idx = cx.define(node, name, kind, Some(body));
            cx.within(idx, false, |cx| cx.children(body, visit));
        }
        None => {
            let idx = cx.define(node, name, DefKind::TypeAlias, None);
            cx.within(idx, false, |cx| {
                if let Some(t) = ty {
                    visit(cx, t);
                }
            });
        }
    }
}

/// A declaration: a prototype (type uses only), a constant (`static const int N = 3;` at
/// file level), or a variable (its type bound for receivers).
fn declaration(cx: &mut Cx, node: Node, visit: Visit) {
    bind_declared(cx, node);
    let text_head: String = {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .filter(|c| matches!(c.kind(), "storage_class_specifier" | "type_qualifier"))
            .map(|c| cx.text(c))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let top_level = cx.scope().is_none();
    let declarator = node.field("declarator");
    if top_level
        && text_head.contains("const")
        && let Some(d) = declarator.filter(|d| d.kind() == "init_declarator")
        && !declares_function(d)
        && let Some(name) = declared_name(cx, d)
    {
        let idx = cx.define(node, name, DefKind::Constant, None);
        cx.within(idx, false, |cx| cx.children(node, visit));
        return;
    }
    cx.children(node, visit);
}

/// `jv x` / `struct jv_s *x` binds `x` to its type.
pub(super) fn bind_declared(cx: &mut Cx, node: Node) {
    let Some(ty) = node.field("type") else {
        return;
    };
    let ty_name = match ty.kind() {
        "type_identifier" => cx.text(ty),
        "struct_specifier" | "union_specifier" => match cx.field_text(ty, "name") {
            Some(n) => n,
            None => return,
        },
        _ => return,
    };
    let mut cursor = node.walk();
    let declarators: Vec<Node> = node.fields("declarator", &mut cursor).collect();
    for d in declarators {
        if declares_function(d) {
            continue;
        }
        if let Some(name) = declared_name(cx, d) {
            cx.bind(name, ty_name.clone());
        }
    }
}

/// `f(x)`, `s->f(x)`, `s.f(x)` (and C++'s `this->f(x)`, `v.template get<T>()`).
pub(super) fn call(cx: &mut Cx, node: Node, visit: Visit) {
    if let Some(f) = node.field("function") {
        match f.kind() {
            "identifier" => {
                let name = cx.text(f);
                cx.reference(RefKind::Call, name, None, f);
            }
            "field_expression" => {
                if let Some(field) = f.field("field") {
                    let text = cx.text(field);
                    let name = text.split('<').next().unwrap_or(&text).trim().to_string();
                    let receiver = f
                        .field("argument")
                        .filter(|a| matches!(a.kind(), "identifier" | "field_expression" | "this"))
                        .map(|a| cx.text(a));
                    cx.reference(RefKind::Call, name, receiver, field);
                }
                if let Some(a) = f.field("argument") {
                    visit(cx, a);
                }
            }
            _ => visit(cx, f),
        }
    }
    if let Some(args) = node.field("arguments") {
        cx.children(args, visit);
    }
}

/// `#include "a/b.h"` (beside the file, then the include directories) and
/// `#include <a/b.h>` (the include directories only).
fn include(cx: &mut Cx, node: Node) {
    let Some(path) = node.field("path") else {
        return;
    };
    let text = cx.text(path);
    let module = match path.kind() {
        "string_literal" => text.trim_matches('"').to_string(),
        "system_lib_string" => format!("<{}>", text.trim_matches(['<', '>'])),
        _ => return,
    };
    cx.import(Import::everything(
        module,
        node.start_position().row as u32 + 1,
    ));
}

/// Words that begin a declaration: a macro right before one is a specifier (`FMT_CONSTEXPR`,
/// `SPDLOG_INLINE`, `FMT_API`), not the declaration's type.
const SPECIFIERS: [&[u8]; 22] = [
    b"void",
    b"int",
    b"char",
    b"bool",
    b"auto",
    b"const",
    b"static",
    b"inline",
    b"constexpr",
    b"explicit",
    b"virtual",
    b"unsigned",
    b"signed",
    b"long",
    b"short",
    b"float",
    b"double",
    b"extern",
    b"friend",
    b"typename",
    b"template",
    b"struct",
];

/// `class SPDLOG_API logger : public base {`: an export macro (all capitals) between
/// `class`/`struct`/`union` and the name of a type being defined, which the grammar, not
/// expanding macros, reads as the type's name — the class then parses as a function named
/// `logger`, its bases and members lost. A copy of `bytes` with each such macro blanked to
/// spaces (offsets and lines unchanged) to parse instead, or `None` when there is none. The
/// name must be followed by a base clause or a body: `struct STAT st;` is left alone. Macros
/// before a specifier keyword (`FMT_CONSTEXPR auto f()`, see [`SPECIFIERS`]) are blanked too;
/// preprocessor lines are left as they are.
pub(super) fn blank_export_macros(bytes: &[u8]) -> Option<Vec<u8>> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let skip_space = |mut i: usize| {
        while bytes.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        i
    };
    let ident_end = |i: usize| {
        let mut j = i;
        while bytes.get(j).is_some_and(|&b| word(b)) {
            j += 1;
        }
        j
    };
    let mut out: Option<Vec<u8>> = None;
    let mut line_start = true;
    let mut preprocessor = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                // A directive continues past an escaped line end.
                preprocessor &= i > 0 && bytes[i - 1] == b'\\';
                line_start = true;
                i += 1;
                continue;
            }
            b'#' if line_start => preprocessor = true,
            b if !b.is_ascii_whitespace() => line_start = false,
            _ => {}
        }
        let at_word = i == 0 || !word(bytes[i - 1]);
        if preprocessor {
            i += 1;
            continue;
        }
        // `FMT_CONSTEXPR auto f()`, `SPDLOG_INLINE void logger::info()`: a macro (capitals
        // with an underscore) before a specifier keyword is a specifier itself. So is one
        // before a type that a declarator follows (`CLI11_INLINE App::App(…)`, `CLI11_NODISCARD
        // App *get(…)`, `API_A API_B Type name`): two names in a row begin a declaration, and
        // one in capitals first is the macro. A type in capitals declaring a variable
        // (`LARGE_INTEGER start;`, `MY_TYPE value = …`) is followed by no second name.
        if at_word && bytes[i].is_ascii_uppercase() {
            let end = ident_end(i);
            let name = &bytes[i..end];
            let next = skip_space(end);
            let next_end = ident_end(next);
            let next_word = &bytes[next..next_end];
            let after = skip_space(next_end);
            let declarator_follows = !next_word.is_empty()
                && !next_word[0].is_ascii_digit()
                && (bytes[after..].starts_with(b"::")
                    || matches!(bytes.get(after), Some(b'*' | b'&'))
                    || (after > next_end && bytes.get(after).is_some_and(|&b| word(b))));
            if name.len() >= 3
                && name.contains(&b'_')
                && name
                    .iter()
                    .all(|&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
                && next > end
                && (SPECIFIERS.contains(&next_word) || declarator_follows)
            {
                let copy = out.get_or_insert_with(|| bytes.to_vec());
                copy[i..end].fill(b' ');
                i = end;
                continue;
            }
        }
        let keyword = [&b"class"[..], b"struct", b"union"].into_iter().find(|k| {
            at_word
                && bytes[i..].starts_with(k)
                && !bytes.get(i + k.len()).is_some_and(|&b| word(b))
        });
        let Some(keyword) = keyword else {
            i += 1;
            continue;
        };
        let macro_start = skip_space(i + keyword.len());
        let macro_end = ident_end(macro_start);
        let is_macro = macro_end > macro_start + 1
            && bytes[macro_start..macro_end]
                .iter()
                .all(|&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
            && bytes[macro_start].is_ascii_uppercase();
        let name_start = skip_space(macro_end);
        let name_end = ident_end(name_start);
        if is_macro && name_end > name_start && macro_end < name_start {
            let mut next = skip_space(name_end);
            if bytes[next..].starts_with(b"final") && !bytes.get(next + 5).is_some_and(|&b| word(b))
            {
                next = skip_space(next + 5);
            }
            let opens = match bytes.get(next) {
                Some(b'{') => true,
                Some(b':') => bytes.get(next + 1) != Some(&b':'),
                _ => false,
            };
            if opens {
                let copy = out.get_or_insert_with(|| bytes.to_vec());
                copy[macro_start..macro_end].fill(b' ');
            }
        }
        i = macro_end.max(i + 1);
    }
    out
}
