//! Rust: functions, methods in impl and trait blocks (`Type::method`), impl blocks named
//! `impl Trait for Type`, structs, enums, unions, traits, type aliases, consts and statics,
//! inline modules, macro_rules; `use` trees; calls through paths, methods and `Self`;
//! `#[cfg(test)]` modules and `#[test]` functions marked as tests.

use super::Fields;
use tree_sitter::Node;

use super::{Cx, base_type_name};
use crate::model::{DefKind, Import, RefKind};

/// Every struct's named fields and their types, before the visit: an impl may come before
/// the struct it is for.
pub(super) fn collect_field_types(cx: &mut Cx, node: Node) {
    if node.kind() == "struct_item"
        && let Some(owner) = cx.field_text(node, "name")
        && let Some(body) = node.field("body")
    {
        let mut walk = body.walk();
        for field in body.named_children(&mut walk) {
            if field.kind() != "field_declaration" {
                continue;
            }
            let (Some(name), Some(ty)) =
                (cx.field_text(field, "name"), cx.field_text(field, "type"))
            else {
                continue;
            };
            cx.field_type(owner.clone(), name, base_type_name(&ty).to_string());
        }
    }
    let mut walk = node.walk();
    for child in node.named_children(&mut walk) {
        collect_field_types(cx, child);
    }
}

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "function_item" | "function_signature_item" => function(cx, node),
        "struct_item" | "union_item" => item(cx, node, DefKind::Struct),
        "enum_item" => item(cx, node, DefKind::Enum),
        "trait_item" => item(cx, node, DefKind::Trait),
        "type_item" => item(cx, node, DefKind::TypeAlias),
        "const_item" | "static_item" => item(cx, node, DefKind::Constant),
        "macro_definition" => item(cx, node, DefKind::Macro),
        "mod_item" => {
            if node.field("body").is_some() {
                item(cx, node, DefKind::Module);
            } else if let Some(name) = cx.field_text(node, "name") {
                // `mod foo;` brings the file foo.rs (or foo/mod.rs) in under the name `foo`.
                cx.import(Import {
                    module: format!("self::{name}"),
                    names: Vec::new(),
                    module_alias: Some(name),
                    wildcard: false,
                    line: node.start_position().row as u32 + 1,
                });
            }
        }
        "impl_item" => impl_item(cx, node),
        "use_declaration" => {
            if let Some(arg) = node.field("argument") {
                let line = node.start_position().row as u32 + 1;
                let mut uses = Vec::new();
                flatten_use(cx, arg, "", &mut uses);
                for (path, alias, wildcard) in uses {
                    let import = match path.rsplit_once("::") {
                        _ if wildcard => Import {
                            module: path,
                            names: Vec::new(),
                            module_alias: None,
                            wildcard: true,
                            line,
                        },
                        Some((module, name)) => Import {
                            module: module.to_string(),
                            names: vec![(name.to_string(), alias)],
                            module_alias: None,
                            wildcard: false,
                            line,
                        },
                        None => Import {
                            module: path.clone(),
                            names: Vec::new(),
                            module_alias: Some(alias),
                            wildcard: false,
                            line,
                        },
                    };
                    cx.import(import);
                }
            }
        }
        "call_expression" => {
            if let Some(func) = node.field("function") {
                call(cx, func);
            }
            cx.children(node, visit);
        }
        "let_declaration" => {
            let pattern = node.field("pattern");
            let var = pattern
                .filter(|p| p.kind() == "identifier")
                .map(|p| cx.text(p));
            let ty = node
                .field("type")
                .map(|t| cx.text(t))
                .or_else(|| node.field("value").and_then(|v| value_type(cx, v)));
            if let (Some(var), Some(ty)) = (var, ty) {
                cx.bind(var, base_type_name(&ty).to_string());
            }
            cx.children(node, visit);
        }
        "parameter" => {
            if let (Some(p), Some(ty)) = (node.field("pattern"), node.field("type")) {
                let var = cx.text(p);
                let var = var.trim_start_matches("mut ").to_string();
                let ty = cx.text(ty);
                cx.bind(var, base_type_name(&ty).to_string());
            }
            cx.children(node, visit);
        }
        "struct_expression" => {
            if let Some(name) = node.field("name") {
                type_ref(cx, name, RefKind::Type);
            }
            if let Some(body) = node.field("body") {
                cx.children(body, visit);
            }
        }
        "type_identifier" | "scoped_type_identifier" => type_ref(cx, node, RefKind::Type),
        "macro_invocation" => {
            if let Some(m) = node.field("macro") {
                let text = cx.text(m);
                let (receiver, name) = match text.rsplit_once("::") {
                    Some((r, n)) => (Some(r.to_string()), n.to_string()),
                    None => (None, text),
                };
                cx.reference(RefKind::MacroCall, name, receiver, m);
            }
            // Its arguments are a token tree, not expressions: calls in them (`write!(f, "{}",
            // List::or(x))`, `assert_eq!(a.len(), 1)`) are read off the tokens.
            let mut walk = node.walk();
            for child in node.named_children(&mut walk) {
                if child.kind() == "token_tree" {
                    token_tree_calls(cx, child);
                }
            }
        }
        _ => cx.children(node, visit),
    }
}

/// Calls in a macro's token tree: `name(…)`, `a::b::name(…)`, `recv.name(…)`, and nested
/// macros `name!(…)`, each an identifier followed by a parenthesised tree.
fn token_tree_calls(cx: &mut Cx, tree: Node) {
    let mut walk = tree.walk();
    let tokens: Vec<Node> = tree.children(&mut walk).collect();
    for (i, &t) in tokens.iter().enumerate() {
        if t.kind() == "token_tree" {
            token_tree_calls(cx, t);
            continue;
        }
        if t.kind() != "identifier" {
            continue;
        }
        let next = tokens.get(i + 1).copied();
        let opens = |n: Option<Node>| {
            n.is_some_and(|n| n.kind() == "token_tree" && cx.text(n).starts_with('('))
        };
        let name = cx.text(t);
        if next.is_some_and(|n| n.kind() == "!") && opens(tokens.get(i + 2).copied()) {
            cx.reference(RefKind::MacroCall, name, None, t);
            continue;
        }
        if !opens(next) {
            continue;
        }
        let before = |k: usize| i.checked_sub(k).and_then(|j| tokens.get(j)).copied();
        let receiver = match before(1).map(|n| n.kind()) {
            // `recv.name(…)`: the receiver when it is a plain name, else unknown.
            Some(".") => Some(
                before(2)
                    .filter(|n| matches!(n.kind(), "identifier" | "self"))
                    .map(|n| cx.text(n))
                    .unwrap_or_default(),
            ),
            // `a::b::name(…)`: the path before the name.
            Some("::") => {
                let mut parts = Vec::new();
                let mut k = 2;
                while let Some(n) = before(k)
                    .filter(|n| matches!(n.kind(), "identifier" | "self" | "crate" | "super"))
                {
                    parts.push(cx.text(n));
                    if before(k + 1).is_some_and(|n| n.kind() == "::") {
                        k += 2;
                    } else {
                        break;
                    }
                }
                parts.reverse();
                Some(parts.join("::"))
            }
            _ => None,
        };
        cx.reference(RefKind::Call, name, receiver, t);
    }
}

/// The outermost node of an item: itself. Attributes are siblings before it.
fn attributes_text(cx: &Cx, node: Node) -> String {
    let mut out = String::new();
    let mut prev = node.prev_sibling();
    while let Some(p) = prev {
        match p.kind() {
            "attribute_item" => out.push_str(&cx.text(p)),
            "line_comment" | "block_comment" => {}
            _ => break,
        }
        prev = p.prev_sibling();
    }
    out
}

fn item(cx: &mut Cx, node: Node, kind: DefKind) {
    let name = cx.field_text(node, "name").unwrap_or_default();
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    let attrs = attributes_text(cx, node);
    if attrs.contains("cfg(test)") {
        cx.mark_test(idx);
    }
    cx.with_type_params(node, |cx| {
        cx.within(idx, false, |cx| {
            if kind == DefKind::Trait
                && let Some(bounds) = node.field("bounds")
            {
                heritage(cx, bounds, RefKind::Inherits);
            }
            for field in ["type", "value", "parameters"] {
                if let Some(child) = node.field(field) {
                    visit(cx, child);
                }
            }
            if let Some(body) = body
                && kind != DefKind::Macro
            {
                cx.children(body, visit);
            }
        })
    });
}

fn function(cx: &mut Cx, node: Node) {
    let name = cx.field_text(node, "name").unwrap_or_default();
    let kind = if cx.in_container() {
        DefKind::Method
    } else {
        DefKind::Function
    };
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    let attrs = attributes_text(cx, node);
    if attrs.contains("#[test]") || attrs.contains("cfg(test)") || attrs.contains("::test]") {
        cx.mark_test(idx);
    }
    let self_type = cx.enclosing_container().map(|c| match c.kind {
        DefKind::Impl => super::impl_self_type(&c.name).to_string(),
        _ => c.name.clone(),
    });
    cx.with_type_params(node, |cx| {
        cx.within(idx, true, |cx| {
            if let Some(ty) = self_type {
                cx.bind("self".into(), ty.clone());
                cx.bind("Self".into(), ty);
            }
            for field in ["parameters", "return_type"] {
                if let Some(child) = node.field(field) {
                    visit(cx, child);
                }
            }
            if let Some(body) = body {
                cx.children(body, visit);
            }
        })
    });
}

fn impl_item(cx: &mut Cx, node: Node) {
    let ty = cx.field_text(node, "type").unwrap_or_default();
    let name = match cx.field_text(node, "trait") {
        Some(tr) => format!("impl {tr} for {ty}"),
        None => format!("impl {ty}"),
    };
    let body = node.field("body");
    let idx = cx.define(node, name, DefKind::Impl, body);
    if attributes_text(cx, node).contains("cfg(test)") {
        cx.mark_test(idx);
    }
    cx.with_type_params(node, |cx| {
        cx.within(idx, false, |cx| {
            if let Some(tr) = node.field("trait") {
                type_ref(cx, tr, RefKind::Implements);
            }
            if let Some(t) = node.field("type") {
                type_ref(cx, t, RefKind::Type);
            }
            if let Some(body) = body {
                cx.children(body, visit);
            }
        })
    });
}

fn heritage(cx: &mut Cx, node: Node, kind: RefKind) {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    for child in children {
        type_ref(cx, child, kind);
    }
}

fn type_ref(cx: &mut Cx, node: Node, kind: RefKind) {
    match node.kind() {
        "type_identifier" => {
            let name = cx.text(node);
            cx.reference(kind, name, None, node);
        }
        "scoped_type_identifier" => {
            let path = cx.field_text(node, "path");
            let name = cx.field_text(node, "name").unwrap_or_default();
            cx.reference(kind, name, path, node);
        }
        "generic_type" => {
            if let Some(t) = node.field("type") {
                type_ref(cx, t, kind);
            }
            if let Some(args) = node.field("type_arguments") {
                cx.children(args, visit);
            }
        }
        _ => cx.children(node, visit),
    }
}

fn call(cx: &mut Cx, func: Node) {
    match func.kind() {
        "identifier" => {
            let name = cx.text(func);
            cx.reference(RefKind::Call, name, None, func);
        }
        "field_expression" => {
            let name = cx.field_text(func, "field").unwrap_or_default();
            let receiver = func.field("value").map(|v| match v.kind() {
                "identifier" | "self" | "field_expression" | "scoped_identifier" => cx.text(v),
                "call_expression" => call_chain(cx, v, 0).unwrap_or_default(),
                _ => String::new(),
            });
            cx.reference(RefKind::Call, name, receiver, func);
        }
        "scoped_identifier" => {
            let name = cx.field_text(func, "name").unwrap_or_default();
            let path = func.field("path").map(|p| {
                let text = cx.text(p);
                // `Vec::<T>::new` / `Foo::<T>::bar`: drop turbofish generics from the path.
                match text.find("::<") {
                    Some(i) => text[..i].to_string(),
                    None => text,
                }
            });
            cx.reference(RefKind::Call, name, path, func);
        }
        "generic_function" => {
            if let Some(inner) = func.field("function") {
                call(cx, inner);
            }
        }
        _ => {}
    }
}

/// A receiver that is a chain of calls, written without their arguments for the linker to
/// follow through return types (`link::chains`): `Builder::new().only(true)` as
/// `Builder::new().only()`. It starts at `Type::f(…)`, `f(…)`, `self`, or a variable of a
/// known type (`<Builder>.only()`); `None` when it starts elsewhere or runs past
/// [`super::MAX_CHAIN`] links.
fn call_chain(cx: &Cx, call: Node, depth: usize) -> Option<String> {
    if depth > super::MAX_CHAIN {
        return None;
    }
    let mut func = call.field("function")?;
    if func.kind() == "generic_function" {
        func = func.field("function")?;
    }
    match func.kind() {
        "identifier" => Some(format!("{}()", cx.text(func))),
        "scoped_identifier" => {
            let path = cx.field_text(func, "path")?;
            // `Vec::<T>::new`: the path without its turbofish.
            let path = path.split("::<").next().unwrap_or(&path);
            Some(format!("{path}::{}()", cx.field_text(func, "name")?))
        }
        "field_expression" => {
            let value = func.field("value")?;
            let base = match value.kind() {
                "self" => "self".to_string(),
                "call_expression" => call_chain(cx, value, depth + 1)?,
                // A variable or `self.field` of a type the parser knows: `<Type>`.
                "identifier" | "field_expression" => format!("<{}>", cx.lookup(&cx.text(value))?),
                _ => return None,
            };
            Some(format!("{base}.{}()", cx.field_text(func, "field")?))
        }
        _ => None,
    }
}

/// The type of `let x = Foo::new()` / `Foo { .. }` / `Foo(..)`, when it shows.
fn value_type(cx: &Cx, value: Node) -> Option<String> {
    match value.kind() {
        "struct_expression" => value.field("name").map(|n| cx.text(n)),
        "call_expression" => {
            let func = value.field("function")?;
            match func.kind() {
                "scoped_identifier" => {
                    let path = cx.field_text(func, "path")?;
                    let last = path.rsplit("::").next().unwrap_or(&path).to_string();
                    last.chars()
                        .next()
                        .is_some_and(char::is_uppercase)
                        .then_some(last)
                }
                _ => None,
            }
        }
        "reference_expression" => value.field("value").and_then(|v| value_type(cx, v)),
        _ => None,
    }
}

/// Flattens a use tree into (path, local name, wildcard) triples.
fn flatten_use(cx: &Cx, node: Node, prefix: &str, out: &mut Vec<(String, String, bool)>) {
    let join = |p: &str, s: &str| {
        if p.is_empty() {
            s.to_string()
        } else {
            format!("{p}::{s}")
        }
    };
    match node.kind() {
        "identifier" | "scoped_identifier" | "self" | "crate" | "super" => {
            let path = join(prefix, &cx.text(node));
            let local = path.rsplit("::").next().unwrap_or(&path).to_string();
            // `use a::b::{self}` binds `b`.
            let (path, local) = match path.strip_suffix("::self") {
                Some(p) => (
                    p.to_string(),
                    p.rsplit("::").next().unwrap_or(p).to_string(),
                ),
                None => (path.clone(), local),
            };
            out.push((path, local, false));
        }
        "use_as_clause" => {
            let path = join(prefix, &cx.field_text(node, "path").unwrap_or_default());
            let alias = cx.field_text(node, "alias").unwrap_or_default();
            out.push((path, alias, false));
        }
        "use_wildcard" => {
            let text = cx.text(node);
            let path = join(prefix, text.trim_end_matches("::*").trim_end_matches('*'));
            out.push((path.trim_end_matches("::").to_string(), String::new(), true));
        }
        "scoped_use_list" => {
            let path = join(prefix, &cx.field_text(node, "path").unwrap_or_default());
            if let Some(list) = node.field("list") {
                flatten_use(cx, list, &path, out);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                flatten_use(cx, child, prefix, out);
            }
        }
        _ => {}
    }
}
