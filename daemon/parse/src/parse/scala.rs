//! Scala (2 and 3): classes, case classes, objects (a companion object's members sit beside
//! its class's under the same name, so `Log.apply()` reaches them), traits, enums, package
//! objects, functions and methods (auxiliary constructors `def this(…)` are constructors),
//! upper-case `val`s of objects and files as constants, type aliases; chained package clauses
//! (`package a` / `package b` is `a.b`) and imports (`a.b.C`, `a.b._`, `a.b.*`,
//! `a.b.{C, D => E, _}`, `a.b.C as D`); calls (`f()`, `x.f()`, `f[T]()`, `new Foo(…)`, and
//! `Obj.member` without parentheses), supertypes (the type after `extends` is the base, the
//! ones after `with` are mixins) and type uses. Parameters, class parameters and `val x: T` /
//! `val x = new T(…)` bind receiver types. Scala shares Java's family: packages and imports
//! resolve across Scala, Java and Kotlin.

use super::Fields;
use tree_sitter::Node;

use super::{Cx, child_of_kind};
use crate::model::{DefKind, Import, RefKind};

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "package_clause" => package(cx, node),
        "import_declaration" => import(cx, node),
        "class_definition" => type_decl(cx, node, DefKind::Class),
        "object_definition" => type_decl(cx, node, DefKind::Class),
        "trait_definition" => type_decl(cx, node, DefKind::Trait),
        "enum_definition" => type_decl(cx, node, DefKind::Enum),
        "package_object" => type_decl(cx, node, DefKind::Module),
        "function_definition" | "function_declaration" => function(cx, node),
        "val_definition" | "var_definition" | "val_declaration" | "var_declaration" => {
            value(cx, node)
        }
        "type_definition" => {
            let Some(name) = cx.field_text(node, "name") else {
                return cx.children(node, visit);
            };
            let idx = cx.define(node, name, DefKind::TypeAlias, None);
            cx.within(idx, false, |cx| {
                if let Some(t) = node.field("type") {
                    visit(cx, t);
                }
            });
        }
        "parameter" | "class_parameter" => {
            bind_typed(cx, node, node.kind() == "class_parameter");
            cx.children(node, visit);
        }
        "call_expression" => call(cx, node),
        "instance_expression" => instance(cx, node),
        // `Obj.member` without parentheses: a parameterless method of an object. Lower-case
        // receivers are values whose fields would only add noise.
        "field_expression" => {
            let recv = node.field("value");
            let field = node.field("field");
            if let (Some(recv), Some(field)) = (recv, field)
                && recv.kind() == "identifier"
            {
                let r = cx.text(recv);
                if r.starts_with(char::is_uppercase) || r == "this" {
                    let name = cx.text(field);
                    cx.reference(RefKind::Call, name, Some(r), field);
                    return;
                }
            }
            cx.children(node, visit)
        }
        "type_identifier" => {
            let name = cx.text(node);
            cx.reference(RefKind::Type, name, None, node);
        }
        // `RequestChannel.Request`: a member type.
        "stable_type_identifier" => {
            let text = cx.text(node);
            let (recv, name) = text.rsplit_once('.').unwrap_or(("", &text));
            let receiver = (!recv.is_empty()).then(|| recv.to_string());
            cx.reference(RefKind::Type, name.to_string(), receiver, node);
        }
        _ => cx.children(node, visit),
    }
}

/// Chained clauses nest: `package kafka` then `package server` is `kafka.server`. A clause
/// with a body (`package a { … }`) scopes what it holds.
fn package(cx: &mut Cx, node: Node) {
    if let Some(name) = node.field("name") {
        let name = cx.text(name);
        cx.file.package = Some(match cx.file.package.take() {
            Some(outer) => format!("{outer}.{name}"),
            None => name,
        });
    }
    if let Some(body) = node.field("body") {
        cx.children(body, visit);
    }
}

fn type_decl(cx: &mut Cx, node: Node, kind: DefKind) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    cx.within_generic(idx, |cx| {
        type_params(cx, node);
        let mut cursor = node.walk();
        let parts: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| Some(*c) != body)
            .collect();
        for p in parts {
            match p.kind() {
                "extends_clause" => supertypes(cx, p),
                "type_parameters" | "modifiers" | "identifier" => {}
                _ => visit(cx, p),
            }
        }
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
}

/// `[T, U <: Base]`: type parameters are not references to repository types.
fn type_params(cx: &mut Cx, node: Node) {
    let mut cursor = node.walk();
    let lists: Vec<Node> = node
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "type_parameters")
        .collect();
    for list in lists {
        let mut cursor = list.walk();
        let names: Vec<String> = list
            .named_children(&mut cursor)
            .filter_map(|c| match c.kind() {
                "identifier" => Some(cx.text(c)),
                // `+A`, `-B`
                "covariant_type_parameter" | "contravariant_type_parameter" => {
                    c.field("name").map(|n| cx.text(n))
                }
                _ => None,
            })
            .collect();
        cx.type_params.extend(names);
        // Bounds (`T <: Base`, `E: Monoid`) do name repository types.
        let mut cursor = list.walk();
        let bounds: Vec<Node> = list
            .named_children(&mut cursor)
            .filter_map(|c| match c.kind() {
                "identifier" => None,
                "covariant_type_parameter" | "contravariant_type_parameter" => c.field("bound"),
                _ => Some(c),
            })
            .collect();
        for b in bounds {
            visit(cx, b);
        }
    }
}

/// `extends Base(args) with Mixin[T]`: the first type is the base class (or the first trait
/// of a trait), the others mixins.
fn supertypes(cx: &mut Cx, node: Node) {
    let mut first = true;
    let mut cursor = node.walk();
    let parts: Vec<Node> = node.named_children(&mut cursor).collect();
    for p in parts {
        let ty = match p.kind() {
            "generic_type" => p.field("type"),
            "type_identifier" | "stable_type_identifier" => Some(p),
            "arguments" => {
                cx.children(p, visit);
                continue;
            }
            _ => {
                visit(cx, p);
                continue;
            }
        };
        if let Some(ty) = ty {
            let text = cx.text(ty);
            let name = text.rsplit('.').next().unwrap_or(&text).to_string();
            let rel = if first {
                RefKind::Inherits
            } else {
                RefKind::Implements
            };
            cx.reference(rel, name, None, ty);
            first = false;
        }
        if let Some(args) = p.field("type_arguments") {
            cx.children(args, visit);
        }
    }
}

fn function(cx: &mut Cx, node: Node) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let (name, kind) = if name == "this" {
        let owner = cx.scope_def().map(|d| d.name.clone()).unwrap_or_default();
        (owner, DefKind::Constructor)
    } else if cx.in_container() {
        (name, DefKind::Method)
    } else {
        (name, DefKind::Function)
    };
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    cx.within_generic(idx, |cx| {
        type_params(cx, node);
        let skip =
            |c: &Node| Some(*c) == body || matches!(c.kind(), "type_parameters" | "identifier");
        cx.children_where(node, |c| !skip(c), visit);
        if let Some(body) = body {
            visit(cx, body);
        }
    });
}

/// `val MaxSize = 10` in an object or a file is a constant (Scala names constants in upper
/// camel case); every `val x: T` / `val x = new T(…)` binds `x`'s type, and `this.x` for a
/// member.
fn value(cx: &mut Cx, node: Node) {
    let name = node
        .field("pattern")
        .filter(|p| p.kind() == "identifier")
        .map(|p| cx.text(p));
    let declared = node.field("type").and_then(|t| type_name(cx, t));
    let constructed = node
        .field("value")
        .filter(|v| v.kind() == "instance_expression")
        .and_then(|v| instance_type(v))
        .and_then(|t| type_name(cx, t));
    let is_member = cx.in_container();
    if let (Some(name), Some(ty)) = (name.clone(), declared.or(constructed)) {
        if is_member {
            cx.bind(format!("this.{name}"), ty.clone());
        }
        cx.bind(name, ty);
    }
    let constant_home = match cx.scope_def() {
        None => true,
        Some(d) => matches!(d.kind, DefKind::Class | DefKind::Module),
    };
    if node.kind().starts_with("val")
        && constant_home
        && let Some(name) = name.filter(|n| n.starts_with(char::is_uppercase))
    {
        let idx = cx.define(node, name, DefKind::Constant, None);
        cx.within(idx, false, |cx| cx.children(node, visit));
        return;
    }
    cx.children(node, visit);
}

/// The class named by a type (`Foo`, `Foo[T]`, `pkg.Foo`).
fn type_name(cx: &Cx, ty: Node) -> Option<String> {
    let ty = match ty.kind() {
        "generic_type" => ty.field("type")?,
        _ => ty,
    };
    matches!(ty.kind(), "type_identifier" | "stable_type_identifier").then(|| {
        let text = cx.text(ty);
        text.rsplit('.').next().unwrap_or(&text).to_string()
    })
}

fn instance_type(node: Node) -> Option<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).find(|c| {
        matches!(
            c.kind(),
            "type_identifier" | "generic_type" | "stable_type_identifier"
        )
    })
}

/// `name: Type` binds `name` (and `this.name` for a class parameter, which is a field).
fn bind_typed(cx: &mut Cx, node: Node, member: bool) {
    let (Some(name), Some(ty)) = (
        node.field("name").map(|n| cx.text(n)),
        node.field("type").and_then(|t| type_name(cx, t)),
    ) else {
        return;
    };
    if member {
        cx.bind(format!("this.{name}"), ty.clone());
    }
    cx.bind(name, ty);
}

fn call(cx: &mut Cx, node: Node) {
    if let Some(mut callee) = node.field("function") {
        if callee.kind() == "generic_function" {
            if let Some(args) = callee.field("type_arguments") {
                cx.children(args, visit);
            }
            match callee.field("function") {
                Some(f) => callee = f,
                None => return cx.children(node, visit),
            }
        }
        match callee.kind() {
            "identifier" => {
                let name = cx.text(callee);
                if name != "this" && name != "super" {
                    cx.reference(RefKind::Call, name, None, callee);
                }
            }
            "field_expression" => {
                let recv = callee.field("value");
                let field = callee.field("field");
                if let (Some(recv), Some(field)) = (recv, field) {
                    let receiver = match recv.kind() {
                        "identifier" | "field_expression" => cx.text(recv),
                        _ => String::new(),
                    };
                    let name = cx.text(field);
                    cx.reference(RefKind::Call, name, Some(receiver), field);
                    if recv.kind() != "identifier" {
                        visit(cx, recv);
                    }
                }
            }
            _ => visit(cx, callee),
        }
    }
    let callee = node.field("function");
    cx.children_where(node, |c| Some(*c) != callee, visit);
}

/// `new Foo(args)` constructs Foo; `new Runnable { … }` is an anonymous class extending it.
fn instance(cx: &mut Cx, node: Node) {
    let ty = instance_type(node);
    let name = ty.and_then(|t| type_name(cx, t));
    if let (Some(t), Some(name)) = (ty, name.clone()) {
        cx.reference(RefKind::Call, name, None, t);
        if let Some(args) = t.field("type_arguments") {
            cx.children(args, visit);
        }
    }
    let body = child_of_kind(node, "template_body");
    let mut cursor = node.walk();
    let args: Vec<Node> = node
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "arguments")
        .collect();
    for a in args {
        cx.children(a, visit);
    }
    if let Some(body) = body {
        let name = name.unwrap_or_default();
        let idx = cx.define(
            node,
            format!("anonymous {name}"),
            DefKind::Class,
            Some(body),
        );
        cx.within(idx, true, |cx| {
            if let Some(t) = ty {
                cx.reference(RefKind::Inherits, name, None, t);
            }
            cx.children(body, visit);
        });
    }
}

/// `import a.b.C`, `import a.b._` / `a.b.*` (the package), `import a.b.{C, D => E, _}`,
/// `import a.b.C as D`. Several comma-separated paths in one declaration each import.
fn import(cx: &mut Cx, node: Node) {
    let line = node.start_position().row as u32 + 1;
    let mut path: Vec<String> = Vec::new();
    let mut cursor = node.walk();
    let mut named = Vec::new();
    // After `_`/`*`, the path names a package, not a type to import.
    let mut wildcard = false;
    for i in 0..node.child_count() {
        let Some(c) = node.child(i) else {
            continue;
        };
        let field = node.field_name_for_child(i);
        match c.kind() {
            "identifier" if field == Some("path") => path.push(cx.text(c)),
            "namespace_wildcard" => {
                cx.import(Import::everything(path.join("."), line));
                wildcard = true;
            }
            "namespace_selectors" => {
                let sels: Vec<Node> = c.named_children(&mut cursor).collect();
                for s in sels {
                    match s.kind() {
                        "identifier" => {
                            let n = cx.text(s);
                            named.push((n.clone(), n));
                        }
                        "arrow_renamed_identifier" | "as_renamed_identifier" => {
                            if let (Some(n), Some(a)) = (s.field("name"), s.field("alias")) {
                                named.push((cx.text(n), cx.text(a)));
                            }
                        }
                        "namespace_wildcard" => {
                            cx.import(Import::everything(path.join("."), line));
                            wildcard = true;
                        }
                        _ => {}
                    }
                }
            }
            "as_renamed_identifier" => {
                if let (Some(n), Some(a)) = (c.field("name"), c.field("alias")) {
                    named.push((cx.text(n), cx.text(a)));
                }
            }
            // `import a.b, c.d`: the next path starts.
            "," => {
                flush(cx, &mut path, &mut named, wildcard, line);
                wildcard = false;
            }
            _ => {}
        }
    }
    flush(cx, &mut path, &mut named, wildcard, line);
}

/// Emits the imports of one path: its selected names, or its last segment as a name.
fn flush(
    cx: &mut Cx,
    path: &mut Vec<String>,
    named: &mut Vec<(String, String)>,
    wildcard: bool,
    line: u32,
) {
    if named.is_empty() {
        if path.len() >= 2 && !wildcard {
            let name = path.last().cloned().unwrap_or_default();
            named.push((name.clone(), name));
            path.pop();
        } else {
            path.clear();
            return;
        }
    }
    let prefix = path.join(".");
    for (name, alias) in named.drain(..) {
        cx.import(Import {
            module: format!("{prefix}.{name}"),
            names: vec![(name, alias)],
            module_alias: None,
            wildcard: false,
            line,
        });
    }
    path.clear();
}
