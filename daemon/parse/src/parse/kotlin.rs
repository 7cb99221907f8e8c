//! Kotlin: classes, interfaces, enum classes, objects, companion objects (their members are
//! the class's: `Pricing.create()` reaches them), functions (extension functions included),
//! constructors, `const val` constants, type aliases; the package and imports (`a.b.C`,
//! `a.b.*`, `a.b.C as D`); calls (`f()`, `x.f()`, `Foo()` constructing Foo), supertypes (a
//! supertype called as a constructor is the base class, the others interfaces) and type uses.
//! Parameters, properties and `val x = Foo()` bind receiver types. Kotlin shares Java's
//! family: packages and imports resolve across the two.

use tree_sitter::Node;

use super::{Cx, child_of_kind};
use crate::model::{DefKind, Import, RefKind};

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "package_header" => {
            if let Some(q) = child_of_kind(node, "qualified_identifier") {
                cx.file.package = Some(cx.text(q));
            }
        }
        "import" => import(cx, node),
        "class_declaration" => {
            let kind = if has_token(node, "interface") {
                DefKind::Interface
            } else if child_of_kind(node, "enum_class_body").is_some() {
                DefKind::Enum
            } else {
                DefKind::Class
            };
            type_decl(cx, node, kind)
        }
        "object_declaration" => type_decl(cx, node, DefKind::Class),
        // A companion's members are called through the class: they are the class's.
        "companion_object" => {
            if let Some(body) = child_of_kind(node, "class_body") {
                cx.children(body, visit);
            }
        }
        "function_declaration" => function(cx, node),
        "secondary_constructor" => {
            let name = cx.scope_def().map(|d| d.name.clone()).unwrap_or_default();
            let idx = cx.define(node, name, DefKind::Constructor, None);
            cx.within(idx, true, |cx| cx.children(node, visit));
        }
        "property_declaration" => property(cx, node),
        "type_alias" => {
            if let Some(name) = cx.field_text(node, "type") {
                let idx = cx.define(node, name, DefKind::TypeAlias, None);
                cx.within(idx, false, |cx| {
                    let mut cursor = node.walk();
                    let rest: Vec<Node> = node
                        .named_children(&mut cursor)
                        .filter(|c| c.kind() == "user_type")
                        .collect();
                    for t in rest {
                        visit(cx, t);
                    }
                });
            }
        }
        "parameter" | "class_parameter" => {
            bind_typed(cx, node, node.kind() == "class_parameter");
            cx.children(node, visit);
        }
        "call_expression" => call(cx, node),
        "user_type" => {
            if let Some(id) = child_of_kind(node, "identifier") {
                let name = cx.text(id);
                cx.reference(RefKind::Type, name, None, id);
            }
            if let Some(args) = child_of_kind(node, "type_arguments") {
                cx.children(args, visit);
            }
        }
        _ => cx.children(node, visit),
    }
}

/// Whether `node` has an anonymous child token `token` (a keyword).
fn has_token(node: Node, token: &str) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .any(|c| !c.is_named() && c.kind() == token)
}

fn type_decl(cx: &mut Cx, node: Node, kind: DefKind) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let body = child_of_kind(node, "class_body").or_else(|| child_of_kind(node, "enum_class_body"));
    let idx = cx.define(node, name, kind, body);
    cx.with_type_params(node, |cx| {
        cx.within(idx, false, |cx| {
            // Bounds (`<T : Item>`) name types; the parameters themselves are skipped.
            if let Some(params) = child_of_kind(node, "type_parameters") {
                cx.children(params, visit);
            }
            if let Some(ctor) = child_of_kind(node, "primary_constructor") {
                cx.children(ctor, visit);
            }
            if let Some(supers) = child_of_kind(node, "delegation_specifiers") {
                supertypes(cx, supers, kind);
            }
            if let Some(body) = body {
                cx.children(body, visit);
            }
        })
    });
}

/// `: Base(), Api`: the supertype called as a constructor is the base class; the others are
/// interfaces (an interface extends interfaces).
fn supertypes(cx: &mut Cx, node: Node, kind: DefKind) {
    let mut cursor = node.walk();
    let specs: Vec<Node> = node.named_children(&mut cursor).collect();
    for spec in specs {
        let (ty, called) = match child_of_kind(spec, "constructor_invocation") {
            Some(inv) => (child_of_kind(inv, "user_type"), Some(inv)),
            None => (child_of_kind(spec, "user_type"), None),
        };
        if let Some(id) = ty.and_then(|t| child_of_kind(t, "identifier")) {
            let name = cx.text(id);
            let rel = if called.is_some() || kind == DefKind::Interface {
                RefKind::Inherits
            } else {
                RefKind::Implements
            };
            cx.reference(rel, name, None, id);
        }
        if let Some(args) = called.and_then(|c| child_of_kind(c, "value_arguments")) {
            cx.children(args, visit);
        }
    }
}

fn function(cx: &mut Cx, node: Node) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let kind = if cx.in_container() {
        DefKind::Method
    } else {
        DefKind::Function
    };
    let body = child_of_kind(node, "function_body");
    let idx = cx.define(node, name, kind, body);
    cx.with_type_params(node, |cx| {
        cx.within(idx, true, |cx| {
            cx.children_where(node, |c| c.kind() != "function_body", visit);
            if let Some(body) = body {
                cx.children(body, visit);
            }
        })
    });
}

/// `const val X = …` (at the top level or in an object) is a constant; other properties bind
/// their type (`val store: Store`, `val calc = Calculator()`).
fn property(cx: &mut Cx, node: Node) {
    let decl = child_of_kind(node, "variable_declaration");
    let name = decl
        .and_then(|d| child_of_kind(d, "identifier"))
        .map(|i| cx.text(i));
    let is_const = child_of_kind(node, "modifiers").is_some_and(|m| cx.text(m).contains("const"));
    let is_member = cx.in_container() && cx.scope_def().is_some_and(|d| d.kind.is_container());
    if let Some(decl) = decl {
        let declared = child_of_kind(decl, "user_type")
            .and_then(|t| child_of_kind(t, "identifier"))
            .map(|i| cx.text(i));
        // `val calc = Calculator()`, or what a chain of calls returns
        // (`val moshi = Moshi.Builder().add(x).build()`, followed by the linker).
        let constructed = {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .find(|c| c.kind() == "call_expression")
                .and_then(|c| cx.created_class(c).or_else(|| cx.call_chain(c, call_parts)))
        };
        if let (Some(name), Some(ty)) = (name.clone(), declared.or(constructed)) {
            if is_member {
                cx.bind(format!("this.{name}"), ty.clone());
            }
            cx.bind(name, ty);
        }
    }
    if is_const && let Some(name) = name {
        let idx = cx.define(node, name, DefKind::Constant, None);
        cx.within(idx, false, |cx| cx.children(node, visit));
        return;
    }
    cx.children(node, visit);
}

/// `name: Type` binds `name` (and `this.name` for a constructor's `val`/`var`).
fn bind_typed(cx: &mut Cx, node: Node, member: bool) {
    let (Some(id), Some(ty)) = (
        child_of_kind(node, "identifier"),
        child_of_kind(node, "user_type").and_then(|t| child_of_kind(t, "identifier")),
    ) else {
        return;
    };
    let (name, ty) = (cx.text(id), cx.text(ty));
    if member {
        cx.bind(format!("this.{name}"), ty.clone());
    }
    cx.bind(name, ty);
}

fn call(cx: &mut Cx, node: Node) {
    if let Some(callee) = node.named_child(0) {
        match callee.kind() {
            "identifier" => {
                let name = cx.text(callee);
                cx.reference(RefKind::Call, name, None, callee);
            }
            "navigation_expression" => {
                let mut cursor = callee.walk();
                let parts: Vec<Node> = callee.named_children(&mut cursor).collect();
                if let (Some(recv), Some(name)) = (parts.first(), parts.last())
                    && parts.len() >= 2
                    && name.kind() == "identifier"
                {
                    let n = cx.text(*name);
                    let receiver = match recv.kind() {
                        "identifier" | "navigation_expression" | "this_expression" => {
                            cx.text(*recv)
                        }
                        _ => String::new(),
                    };
                    // `Foo(…).bar()`: a member of the class constructed; `a.b(…).c()`: `c` on
                    // what `b` returns.
                    cx.call_on_expression(n, *recv, receiver, "call_expression", call_parts, *name);
                    visit(cx, *recv);
                }
            }
            _ => visit(cx, callee),
        }
    }
    // Everything after the callee: arguments, trailing lambdas.
    let mut cursor = node.walk();
    let rest: Vec<Node> = node.named_children(&mut cursor).skip(1).collect();
    for r in rest {
        visit(cx, r);
    }
}

/// A `call_expression` for [`Cx::call_chain`]: the called name and what it is called on.
fn call_parts<'t>(cx: &Cx, call: Node<'t>) -> Option<(String, Option<Node<'t>>)> {
    let callee = call.named_child(0)?;
    match callee.kind() {
        "identifier" => Some((cx.text(callee), None)),
        "navigation_expression" => {
            let mut cursor = callee.walk();
            let parts: Vec<Node> = callee.named_children(&mut cursor).collect();
            let (base, name) = (*parts.first()?, *parts.last()?);
            (parts.len() >= 2 && name.kind() == "identifier").then(|| (cx.text(name), Some(base)))
        }
        _ => None,
    }
}

/// `import a.b.C`, `import a.b.*` (the package), `import a.b.C as D`.
fn import(cx: &mut Cx, node: Node) {
    let Some(path) = child_of_kind(node, "qualified_identifier").map(|q| cx.text(q)) else {
        return;
    };
    let line = node.start_position().row as u32 + 1;
    let text = cx.text(node);
    if text.trim_end().ends_with('*') {
        cx.import(Import::everything(path, line));
        return;
    }
    let name = path.rsplit('.').next().unwrap_or(&path).to_string();
    let alias = {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .filter(|c| c.kind() == "identifier")
            .last()
            .map(|a| cx.text(a))
    }
    .unwrap_or_else(|| name.clone());
    cx.import(Import {
        module: path,
        names: vec![(name, alias)],
        module_alias: None,
        wildcard: false,
        line,
    });
}
