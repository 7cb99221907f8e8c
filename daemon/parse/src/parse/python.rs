//! Python: functions, methods, classes, module constants; imports; calls and type uses.

use super::Fields;
use tree_sitter::Node;

use super::Cx;
use crate::model::{DefKind, Import, RefKind};

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "decorated_definition" => match node.field("definition") {
            Some(def) => definition(cx, def, node),
            None => cx.children(node, visit),
        },
        "function_definition" | "class_definition" => definition(cx, node, node),
        "import_statement" => import_statement(cx, node),
        "import_from_statement" => import_from(cx, node),
        "call" => {
            call(cx, node);
            cx.children(node, visit);
        }
        "assignment" => {
            assignment(cx, node);
            cx.children(node, visit);
        }
        "type" => {
            type_refs(cx, node);
        }
        _ => cx.children(node, visit),
    }
}

/// `def` or `class`; `outer` is the node including decorators (the definition's extent).
fn definition(cx: &mut Cx, node: Node, outer: Node) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let body = node.field("body");
    if node.kind() == "class_definition" {
        let idx = cx.define(outer, name, DefKind::Class, body);
        cx.set_doc(idx, body.and_then(|b| docstring(cx, b)));
        if let Some(bases) = node.field("superclasses") {
            let mut cursor = bases.walk();
            let bases: Vec<Node> = bases.named_children(&mut cursor).collect();
            cx.within(idx, false, |cx| {
                for base in bases {
                    if matches!(base.kind(), "identifier" | "attribute") {
                        let (name, receiver) = split_dotted(&cx.text(base));
                        cx.reference(RefKind::Inherits, name, receiver, base);
                    }
                }
            });
        }
        cx.within(idx, false, |cx| {
            decorators(cx, outer);
            if let Some(body) = body {
                cx.children(body, visit);
            }
        });
        return;
    }
    let kind = if cx.in_container() {
        if name == "__init__" {
            DefKind::Constructor
        } else {
            DefKind::Method
        }
    } else {
        DefKind::Function
    };
    let idx = cx.define(outer, name, kind, body);
    cx.set_doc(idx, body.and_then(|b| docstring(cx, b)));
    let params = node.field("parameters");
    let ret = node.field("return_type");
    cx.within(idx, true, |cx| {
        decorators(cx, outer);
        if let Some(params) = params {
            parameters(cx, params);
        }
        if let Some(ret) = ret {
            type_refs(cx, ret);
        }
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
}

/// The decorators of a decorated definition (`outer`), as its own uses.
fn decorators(cx: &mut Cx, outer: Node) {
    cx.children_where(outer, |c| c.kind() == "decorator", decorator);
}

/// `@app.route("/")` calls `route`; a bare `@cached` calls `cached` with the function.
fn decorator(cx: &mut Cx, d: Node) {
    match d.named_child(0) {
        Some(e) if matches!(e.kind(), "identifier" | "attribute") => {
            let (name, receiver) = split_dotted(&cx.text(e));
            cx.reference(RefKind::Call, name, receiver, e);
        }
        _ => cx.children(d, visit),
    }
}

fn parameters(cx: &mut Cx, params: Node) {
    let mut cursor = params.walk();
    let params: Vec<Node> = params.named_children(&mut cursor).collect();
    for p in params {
        if matches!(p.kind(), "typed_parameter" | "typed_default_parameter") {
            let name = p
                .field("name")
                .or_else(|| p.named_child(0))
                .map(|n| cx.text(n));
            if let (Some(name), Some(ty)) = (name, p.field("type")) {
                let ty_text = cx.text(ty);
                cx.bind(name, super::base_type_name(&ty_text).to_string());
                type_refs(cx, ty);
            }
        } else if p.kind() == "default_parameter" {
            cx.children(p, visit);
        }
    }
}

fn docstring(cx: &Cx, body: Node) -> Option<String> {
    let first = body.named_child(0)?;
    if first.kind() != "expression_statement" {
        return None;
    }
    let s = first.named_child(0)?;
    if s.kind() != "string" {
        return None;
    }
    let text = cx.text(s);
    let text = text
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .trim_matches(|c| c == '"' || c == '\'');
    let doc = clean_doc(text);
    (!doc.is_empty()).then_some(doc)
}

fn clean_doc(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn call(cx: &mut Cx, node: Node) {
    let Some(func) = node.field("function") else {
        return;
    };
    match func.kind() {
        "identifier" => {
            let name = cx.text(func);
            cx.reference(RefKind::Call, name, None, func);
        }
        "attribute" => {
            let name = cx.field_text(func, "attribute").unwrap_or_default();
            // `Foo(…).bar()`: `bar` is a method of the class constructed (`Cx::call_on`).
            match func.field("object") {
                Some(o) => cx.call_on(name, o, receiver_text(cx, o), func),
                None => cx.reference(RefKind::Call, name, None, func),
            }
        }
        _ => {}
    }
}

/// A receiver as the linker can use it: dotted names as written, `super()` as `super`,
/// anything more complex as the empty string (unknown receiver).
fn receiver_text(cx: &Cx, node: Node) -> String {
    match node.kind() {
        "identifier" | "attribute" => cx.text(node),
        "call" => match node.field("function") {
            Some(f) if cx.text(f) == "super" => "super".into(),
            _ => String::new(),
        },
        _ => String::new(),
    }
}

fn assignment(cx: &mut Cx, node: Node) {
    let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
        if let (Some(left), Some(ty)) = (node.field("left"), node.field("type")) {
            let ty_text = cx.text(ty);
            let left = cx.text(left);
            cx.bind(left, super::base_type_name(&ty_text).to_string());
        }
        return;
    };
    let left_text = cx.text(left);
    // `x = Foo(...)` binds x to Foo for receiver resolution; `self.x = Foo()` binds `self.x`.
    if let Some(base) = cx.created_class(right) {
        cx.bind(left_text.clone(), base);
    }
    if let Some(ty) = node.field("type") {
        let ty_text = cx.text(ty);
        cx.bind(
            left_text.clone(),
            super::base_type_name(&ty_text).to_string(),
        );
    }
    // Module-level constants (`NAME = ...` in upper case) and type aliases
    // (`X: TypeAlias = ...`, `T = TypeVar(...)`), outside any definition.
    if cx.scope().is_none()
        && left.kind() == "identifier"
        && node
            .parent()
            .is_some_and(|p| p.kind() == "expression_statement")
    {
        let annotation = cx.field_text(node, "type").unwrap_or_default();
        let value = cx.text(right);
        let kind = if annotation.ends_with("TypeAlias") || value.starts_with("TypeVar(") {
            Some(DefKind::TypeAlias)
        } else if is_constant_name(&left_text) {
            Some(DefKind::Constant)
        } else {
            None
        };
        if let (Some(kind), Some(stmt)) = (kind, node.parent()) {
            cx.define(stmt, left_text, kind, None);
        }
    }
}

fn is_constant_name(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

fn type_refs(cx: &mut Cx, node: Node) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" => {
                let name = cx.text(n);
                if !matches!(
                    name.as_str(),
                    "None" | "str" | "int" | "float" | "bool" | "bytes"
                ) {
                    cx.reference(RefKind::Type, name, None, n);
                }
            }
            "attribute" => {
                let (name, receiver) = split_dotted(&cx.text(n));
                cx.reference(RefKind::Type, name, receiver, n);
            }
            _ => {
                let mut cursor = n.walk();
                stack.extend(n.named_children(&mut cursor));
            }
        }
    }
}

fn split_dotted(text: &str) -> (String, Option<String>) {
    match text.rsplit_once('.') {
        Some((recv, name)) => (name.to_string(), Some(recv.to_string())),
        None => (text.to_string(), None),
    }
}

fn import_statement(cx: &mut Cx, node: Node) {
    let line = node.start_position().row as u32 + 1;
    let mut cursor = node.walk();
    let names: Vec<Node> = node.fields("name", &mut cursor).collect();
    for n in names {
        let (module, alias) = match n.kind() {
            "aliased_import" => (
                cx.field_text(n, "name").unwrap_or_default(),
                cx.field_text(n, "alias"),
            ),
            _ => (cx.text(n), None),
        };
        // `import a.b` binds `a.b` as written in calls (`a.b.f()`).
        let alias = alias.unwrap_or_else(|| module.clone());
        cx.import(Import {
            module,
            names: Vec::new(),
            module_alias: Some(alias),
            wildcard: false,
            line,
        });
    }
}

fn import_from(cx: &mut Cx, node: Node) {
    let line = node.start_position().row as u32 + 1;
    let module = cx.field_text(node, "module_name").unwrap_or_default();
    let mut names = Vec::new();
    let mut wildcard = false;
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if child.kind() == "wildcard_import" {
            wildcard = true;
        }
    }
    let mut cursor = node.walk();
    let name_nodes: Vec<Node> = node.fields("name", &mut cursor).collect();
    for n in name_nodes {
        match n.kind() {
            "aliased_import" => {
                let name = cx.field_text(n, "name").unwrap_or_default();
                let alias = cx.field_text(n, "alias").unwrap_or_else(|| name.clone());
                names.push((name, alias));
            }
            _ => {
                let name = cx.text(n);
                names.push((name.clone(), name));
            }
        }
    }
    cx.import(Import {
        module,
        names,
        module_alias: None,
        wildcard,
        line,
    });
}
