//! Java: classes, interfaces, enums, records, annotation types, methods, constructors,
//! static final constants, anonymous classes; package and imports; invocations, `new`,
//! heritage and type uses. Local variables and parameters bind receiver types.

use super::Fields;
use tree_sitter::Node;

use super::{Cx, base_type_name};
use crate::model::{DefKind, Import, RefKind};

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "package_declaration" => {
            if let Some(name) = node.named_child(0).filter(|n| n.kind() != "annotation") {
                cx.file.package = Some(cx.text(name));
            }
        }
        "import_declaration" => import(cx, node),
        "class_declaration" => type_decl(cx, node, DefKind::Class),
        "interface_declaration" | "annotation_type_declaration" => {
            type_decl(cx, node, DefKind::Interface)
        }
        "enum_declaration" => type_decl(cx, node, DefKind::Enum),
        "record_declaration" => type_decl(cx, node, DefKind::Record),
        "method_declaration" => method(cx, node, DefKind::Method),
        "constructor_declaration" | "compact_constructor_declaration" => {
            method(cx, node, DefKind::Constructor)
        }
        "field_declaration" | "constant_declaration" => field(cx, node),
        "local_variable_declaration" => {
            bind_declarators(cx, node);
            cx.children(node, visit);
        }
        "method_invocation" => {
            let name = cx.field_text(node, "name").unwrap_or_default();
            if let Some(name_node) = node.field("name") {
                match node.field("object") {
                    Some(o) => cx.call_on_expression(
                        name,
                        o,
                        receiver_text(cx, o),
                        "method_invocation",
                        call_parts,
                        name_node,
                    ),
                    None => cx.reference(RefKind::Call, name, None, name_node),
                }
            }
            cx.children(node, visit);
        }
        "object_creation_expression" => creation(cx, node),
        "type_identifier" => {
            let name = cx.text(node);
            cx.reference(RefKind::Type, name, None, node);
        }
        "scoped_type_identifier" => {
            let text = cx.text(node);
            let (recv, name) = text.rsplit_once('.').unwrap_or(("", &text));
            let receiver = (!recv.is_empty()).then(|| recv.to_string());
            cx.reference(RefKind::Type, name.to_string(), receiver, node);
        }
        _ => cx.children(node, visit),
    }
}

/// A `method_invocation` for [`Cx::call_chain`]: its name and object.
fn call_parts<'t>(cx: &Cx, call: Node<'t>) -> Option<(String, Option<Node<'t>>)> {
    Some((cx.field_text(call, "name")?, call.field("object")))
}

fn receiver_text(cx: &Cx, node: Node) -> String {
    match node.kind() {
        "identifier" | "field_access" | "this" | "super" | "scoped_identifier" => cx.text(node),
        _ => String::new(),
    }
}

fn type_decl(cx: &mut Cx, node: Node, kind: DefKind) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    cx.with_type_params(node, |cx| type_body(cx, node, idx, body));
}

fn type_body(cx: &mut Cx, node: Node, idx: u32, body: Option<Node>) {
    cx.within(idx, false, |cx| {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "superclass" => heritage(cx, child, RefKind::Inherits),
                "super_interfaces" => heritage(cx, child, RefKind::Implements),
                // An interface's `extends` list.
                "extends_interfaces" => heritage(cx, child, RefKind::Inherits),
                // Record components; type parameters' bounds (the parameters are skipped).
                "formal_parameters" | "type_parameters" => {
                    cx.children(child, visit);
                }
                _ => {}
            }
        }
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
}

fn heritage(cx: &mut Cx, node: Node, kind: RefKind) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "type_identifier" => {
                let name = cx.text(n);
                cx.reference(kind, name, None, n);
            }
            "scoped_type_identifier" => {
                let text = cx.text(n);
                let (recv, name) = text.rsplit_once('.').unwrap_or(("", &text));
                cx.reference(kind, name.to_string(), Some(recv.to_string()), n);
            }
            "generic_type" => {
                if let Some(first) = n.named_child(0) {
                    stack.push(first);
                }
            }
            _ => {
                let mut cursor = n.walk();
                stack.extend(n.named_children(&mut cursor));
            }
        }
    }
}

fn method(cx: &mut Cx, node: Node, kind: DefKind) {
    let name = cx
        .field_text(node, "name")
        .or_else(|| cx.scope_def().map(|d| d.name.clone()))
        .unwrap_or_default();
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    cx.with_type_params(node, |cx| method_body(cx, node, idx, body));
}

fn method_body(cx: &mut Cx, node: Node, idx: u32, body: Option<Node>) {
    cx.within(idx, true, |cx| {
        if let Some(params) = node.field("parameters") {
            let mut cursor = params.walk();
            let params: Vec<Node> = params.named_children(&mut cursor).collect();
            for p in params {
                if let (Some(name), Some(ty)) = (cx.field_text(p, "name"), p.field("type")) {
                    let ty_text = cx.text(ty);
                    cx.bind(name, base_type_name(&ty_text).to_string());
                }
                cx.children(p, visit);
            }
        }
        if let Some(ty) = node.field("type") {
            visit(cx, ty);
        }
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
}

fn field(cx: &mut Cx, node: Node) {
    let text_head = node
        .named_child(0)
        .filter(|m| m.kind() == "modifiers")
        .map(|m| cx.text(m))
        .unwrap_or_default();
    let in_interface = cx.scope_def().is_some_and(|d| d.kind == DefKind::Interface);
    let is_constant = (text_head.contains("static") && text_head.contains("final")) || in_interface;
    bind_declarators(cx, node);
    if is_constant {
        let mut cursor = node.walk();
        let names: Vec<String> = node
            .fields("declarator", &mut cursor)
            .filter_map(|d| cx.field_text(d, "name"))
            .collect();
        if let Some(name) = names.into_iter().next() {
            let idx = cx.define(node, name, DefKind::Constant, None);
            cx.within(idx, false, |cx| cx.children(node, visit));
            return;
        }
    }
    cx.children(node, visit);
}

/// `Foo x = …` binds `x` (and `this.x` for fields) to `Foo`.
fn bind_declarators(cx: &mut Cx, node: Node) {
    let Some(ty) = node.field("type") else {
        return;
    };
    let ty_text = cx.text(ty);
    let base = base_type_name(&ty_text).to_string();
    let is_field = node.kind() == "field_declaration";
    let mut cursor = node.walk();
    let names: Vec<String> = node
        .fields("declarator", &mut cursor)
        .filter_map(|d| cx.field_text(d, "name"))
        .collect();
    for name in names {
        if is_field {
            cx.bind(format!("this.{name}"), base.clone());
        }
        cx.bind(name, base.clone());
    }
}

fn creation(cx: &mut Cx, node: Node) {
    let ty = node.field("type");
    let type_name = ty.map(|t| base_type_name(&cx.text(t)).to_string());
    if let (Some(t), Some(name)) = (ty, type_name.clone()) {
        cx.reference(RefKind::Call, name, None, t);
    }
    let body = node
        .named_children(&mut node.walk())
        .find(|c| c.kind() == "class_body");
    match (body, type_name) {
        (Some(body), Some(name)) => {
            // An anonymous class: a class node named after what it extends.
            let idx = cx.define(
                node,
                format!("anonymous {name}"),
                DefKind::Class,
                Some(body),
            );
            if let Some(t) = ty {
                cx.within(idx, false, |cx| {
                    cx.reference(RefKind::Inherits, name.clone(), None, t)
                });
            }
            if let Some(args) = node.field("arguments") {
                cx.children(args, visit);
            }
            cx.within(idx, false, |cx| cx.children(body, visit));
        }
        _ => {
            if let Some(args) = node.field("arguments") {
                cx.children(args, visit);
            }
        }
    }
}

fn import(cx: &mut Cx, node: Node) {
    let text = cx.text(node);
    let wildcard = text.contains('*');
    let is_static = text.contains("static ");
    let Some(path) = node
        .named_children(&mut node.walk())
        .find(|c| matches!(c.kind(), "scoped_identifier" | "identifier"))
        .map(|c| cx.text(c))
    else {
        return;
    };
    let line = node.start_position().row as u32 + 1;
    let import = if wildcard {
        Import {
            module: path,
            names: Vec::new(),
            module_alias: None,
            wildcard: true,
            line,
        }
    } else {
        let (module, name) = path.rsplit_once('.').unwrap_or(("", &path));
        if is_static {
            // `import static a.b.C.m;` imports member m of class a.b.C.
            Import {
                module: module.to_string(),
                names: vec![(name.to_string(), name.to_string())],
                module_alias: None,
                wildcard: false,
                line,
            }
        } else {
            // `import a.b.C;` — the module is the class's FQN; the name binds the class.
            Import {
                module: path.clone(),
                names: vec![(name.to_string(), name.to_string())],
                module_alias: None,
                wildcard: false,
                line,
            }
        }
    };
    cx.import(import);
}
