//! Go: functions, methods (value and pointer receivers, named `Type.Method`), `type`
//! declarations named by the type (struct, interface, other), constants; package and import
//! specs; calls through identifiers and selectors; receiver and local variable types.

use super::Fields;
use tree_sitter::Node;

use super::{Cx, base_type_name, unquote};
use crate::model::{DefKind, Import, RefKind};

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "package_clause" => {
            if let Some(name) = node.named_child(0) {
                cx.file.package = Some(cx.text(name));
            }
        }
        "import_spec" => import(cx, node),
        "function_declaration" => function(cx, node, None),
        "method_declaration" => {
            let receiver_type = node
                .field("receiver")
                .and_then(|r| r.named_child(0))
                .and_then(|p| {
                    let var = cx.field_text(p, "name");
                    let ty = cx.field_text(p, "type")?;
                    Some((var, base_type_name(&ty).to_string()))
                });
            function(cx, node, receiver_type);
        }
        "type_spec" | "type_alias" => type_spec(cx, node),
        "const_spec" if cx.scope().is_none() => {
            let name = cx.field_text(node, "name").unwrap_or_default();
            let idx = cx.define(node, name, DefKind::Constant, None);
            cx.within(idx, false, |cx| cx.children(node, visit));
        }
        "method_elem" | "method_spec" => {
            let name = cx.field_text(node, "name").unwrap_or_default();
            let idx = cx.define(node, name, DefKind::Method, None);
            cx.within(idx, true, |cx| cx.children(node, visit));
        }
        "parameter_declaration" => {
            if let Some(ty) = node.field("type") {
                let ty_text = cx.text(ty);
                let mut cursor = node.walk();
                let names: Vec<String> = node
                    .fields("name", &mut cursor)
                    .map(|n| cx.text(n))
                    .collect();
                for name in names {
                    cx.bind(name, base_type_name(&ty_text).to_string());
                }
            }
            cx.children(node, visit);
        }
        "short_var_declaration" | "assignment_statement" => {
            bind_short_var(cx, node);
            cx.children(node, visit);
        }
        "var_spec" => {
            if let Some(ty) = node.field("type") {
                let ty_text = cx.text(ty);
                if let Some(name) = cx.field_text(node, "name") {
                    cx.bind(name, base_type_name(&ty_text).to_string());
                }
            }
            cx.children(node, visit);
        }
        "call_expression" => {
            if let Some(func) = node.field("function") {
                call(cx, func);
            }
            cx.children(node, visit);
        }
        "composite_literal" => {
            if let Some(ty) = node.field("type") {
                type_ref(cx, ty);
            }
            if let Some(body) = node.field("body") {
                cx.children(body, visit);
            }
        }
        "type_identifier" | "qualified_type" => type_ref(cx, node),
        _ => cx.children(node, visit),
    }
}

fn function(cx: &mut Cx, node: Node, receiver: Option<(Option<String>, String)>) {
    let name = cx.field_text(node, "name").unwrap_or_default();
    let body = node.field("body");
    let (kind, name) = match &receiver {
        Some(_) => (DefKind::Method, name),
        None => (DefKind::Function, name),
    };
    let idx = cx.define(node, name.clone(), kind, body);
    if let Some((_, ty)) = &receiver {
        // Methods are named by their receiver type wherever the type is declared.
        cx.file.definitions[idx as usize].qualified_name = format!("{ty}.{name}");
    }
    cx.within(idx, true, |cx| {
        if let Some((Some(var), ty)) = receiver {
            cx.bind(var, ty);
        }
        // The receiver's type is part of the signature, as the parameters' are: a method
        // refers to the type it is a method of.
        for field in ["receiver", "parameters", "result"] {
            if let Some(p) = node.field(field) {
                visit(cx, p);
            }
        }
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
}

fn type_spec(cx: &mut Cx, node: Node) {
    let name = cx.field_text(node, "name").unwrap_or_default();
    let ty = node.field("type");
    let kind = match ty.map(|t| t.kind()) {
        Some("struct_type") => DefKind::Struct,
        Some("interface_type") => DefKind::Interface,
        _ => DefKind::TypeAlias,
    };
    // The doc comment sits above `type X struct`, outside the spec, unless in a group.
    let outer = match node.parent() {
        Some(p) if p.kind() == "type_declaration" && p.named_child_count() == 1 => p,
        _ => node,
    };
    let idx = cx.define(outer, name, kind, None);
    if let Some(ty) = ty {
        cx.within(idx, false, |cx| {
            if ty.kind() == "struct_type" {
                // Embedded fields are Go's inheritance.
                embedded_fields(cx, ty);
            }
            visit(cx, ty);
        });
    }
}

fn embedded_fields(cx: &mut Cx, struct_type: Node) {
    let mut stack = vec![struct_type];
    while let Some(n) = stack.pop() {
        if n.kind() == "field_declaration" && n.field("name").is_none() {
            if let Some(ty) = n.field("type") {
                let text = cx.text(ty);
                let text = text.trim_start_matches('*');
                let (receiver, name) = match text.rsplit_once('.') {
                    Some((r, n)) => (Some(r.to_string()), n.to_string()),
                    None => (None, text.to_string()),
                };
                cx.reference(RefKind::Inherits, name, receiver, ty);
            }
            continue;
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
}

fn type_ref(cx: &mut Cx, node: Node) {
    match node.kind() {
        "type_identifier" => {
            let name = cx.text(node);
            cx.reference(RefKind::Type, name, None, node);
        }
        "qualified_type" => {
            let pkg = cx.field_text(node, "package");
            let name = cx.field_text(node, "name").unwrap_or_default();
            cx.reference(RefKind::Type, name, pkg, node);
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
        "selector_expression" => {
            let name = cx.field_text(func, "field").unwrap_or_default();
            let receiver = func.field("operand").map(|o| match o.kind() {
                "identifier" | "selector_expression" => cx.text(o),
                _ => String::new(),
            });
            cx.reference(RefKind::Call, name, receiver, func);
        }
        "generic_type" | "index_expression" => {
            if let Some(inner) = func.named_child(0) {
                call(cx, inner);
            }
        }
        _ => {}
    }
}

/// `x := Foo{}`, `x := &Foo{}`, `x := pkg.NewFoo()` (a `New<T>` constructor) bind x's type.
fn bind_short_var(cx: &mut Cx, node: Node) {
    let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
        return;
    };
    let (Some(var), Some(value)) = (left.named_child(0), right.named_child(0)) else {
        return;
    };
    let var = cx.text(var);
    let value = if value.kind() == "unary_expression" {
        value.field("operand").unwrap_or(value)
    } else {
        value
    };
    let ty = match value.kind() {
        "composite_literal" => value.field("type").map(|t| cx.text(t)),
        "call_expression" => value.field("function").and_then(|f| {
            let text = cx.text(f);
            let name = text.rsplit('.').next().unwrap_or(&text);
            name.strip_prefix("New")
                .filter(|t| t.chars().next().is_some_and(char::is_uppercase))
                .map(str::to_string)
        }),
        _ => None,
    };
    if let Some(ty) = ty {
        cx.bind(var, base_type_name(&ty).to_string());
    }
}

fn import(cx: &mut Cx, node: Node) {
    let Some(path) = cx.field_text(node, "path").map(|p| unquote(&p)) else {
        return;
    };
    let alias = cx.field_text(node, "name");
    let wildcard = alias.as_deref() == Some(".");
    let module_alias = match alias {
        Some(a) if a == "." || a == "_" => None,
        Some(a) => Some(a),
        // Without an alias the package name is usually the last path element.
        None => path.rsplit('/').next().map(str::to_string),
    };
    cx.import(Import {
        module: path,
        names: Vec::new(),
        module_alias,
        wildcard,
        line: node.start_position().row as u32 + 1,
    });
}
