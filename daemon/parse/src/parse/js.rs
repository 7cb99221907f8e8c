//! JavaScript, JSX, TypeScript and TSX: functions, arrow functions bound to names, classes,
//! methods, interfaces, type aliases, enums, namespaces, `obj.prop = function` assignments;
//! ES imports and `require`; calls, `new`, heritage and type uses.

use super::Fields;
use tree_sitter::Node;

use super::{Cx, base_type_name, unquote};
use crate::model::{DefKind, RefKind};

mod modules;
use modules::{commonjs_assignment, export, import, is_require, require, require_names};

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            match cx.field_text(node, "name") {
                Some(name) => function(cx, node, node, name),
                None => cx.children(node, visit),
            }
        }
        "class_declaration" | "abstract_class_declaration" | "class" => {
            let name = cx.field_text(node, "name");
            match name {
                Some(name) => class(cx, node, node, name, DefKind::Class),
                None => cx.children(node, visit),
            }
        }
        "interface_declaration" => {
            let name = cx.field_text(node, "name").unwrap_or_default();
            class(cx, node, node, name, DefKind::Interface);
        }
        "enum_declaration" => {
            let name = cx.field_text(node, "name").unwrap_or_default();
            let body = node.field("body");
            cx.define(node, name, DefKind::Enum, body);
        }
        "type_alias_declaration" => {
            let name = cx.field_text(node, "name").unwrap_or_default();
            let idx = cx.define(node, name, DefKind::TypeAlias, None);
            if let Some(value) = node.field("value") {
                cx.with_type_params(node, |cx| cx.within(idx, false, |cx| type_refs(cx, value)));
            }
        }
        "internal_module" | "module" => {
            let name = cx.field_text(node, "name").map(|n| unquote(&n));
            match (name, node.field("body")) {
                (Some(name), Some(body)) => {
                    let idx = cx.define(node, name, DefKind::Module, Some(body));
                    cx.within(idx, false, |cx| cx.children(body, visit));
                }
                _ => cx.children(node, visit),
            }
        }
        "method_definition" | "method_signature" | "abstract_method_signature" => {
            let name = cx.field_text(node, "name").unwrap_or_default();
            function(cx, node, node, name);
        }
        "public_field_definition" | "field_definition" => {
            let name = cx
                .field_text(node, "name")
                .or_else(|| cx.field_text(node, "property"))
                .unwrap_or_default();
            match node.field("value") {
                Some(v) if is_function(v) => {
                    function(cx, node, v, name);
                }
                _ => cx.children(node, visit),
            }
        }
        "variable_declarator" => declarator(cx, node),
        "assignment_expression" => assignment(cx, node),
        "pair" => {
            let key = node.field("key").map(|k| unquote(&cx.text(k)));
            match (key, node.field("value")) {
                (Some(key), Some(v)) if is_function(v) => {
                    function(cx, node, v, key);
                }
                _ => cx.children(node, visit),
            }
        }
        "export_statement" => export(cx, node),
        "import_statement" => import(cx, node),
        "call_expression" => {
            call(cx, node);
            cx.children(node, visit);
        }
        "new_expression" => {
            if let Some(ctor) = node.field("constructor") {
                let (name, receiver) = callee(cx, ctor);
                cx.reference(RefKind::Call, name, receiver, ctor);
            }
            cx.children(node, visit);
        }
        "type_annotation" | "type_arguments" => type_refs(cx, node),
        _ => cx.children(node, visit),
    }
}

fn is_function(node: Node) -> bool {
    matches!(
        node.kind(),
        "arrow_function" | "function_expression" | "function" | "generator_function"
    )
}

/// A function-like definition: `outer` is its extent, `func` the node with parameters/body.
fn function(cx: &mut Cx, outer: Node, func: Node, name: String) {
    function_index(cx, outer, func, name);
}

fn function_index(cx: &mut Cx, outer: Node, func: Node, name: String) -> u32 {
    let kind = if name == "constructor" && cx.in_container() {
        DefKind::Constructor
    } else if cx.in_container() {
        DefKind::Method
    } else {
        DefKind::Function
    };
    let body = func.field("body");
    let idx = cx.define(outer, name, kind, body);
    let params = func.field("parameters");
    let ret = func.field("return_type");
    cx.with_type_params(func, |cx| function_body(cx, idx, params, ret, body));
    idx
}

fn function_body(
    cx: &mut Cx,
    idx: u32,
    params: Option<Node>,
    ret: Option<Node>,
    body: Option<Node>,
) {
    cx.within(idx, true, |cx| {
        if let Some(params) = params {
            parameters(cx, params);
        }
        if let Some(ret) = ret {
            type_refs(cx, ret);
        }
        if let Some(body) = body {
            if body.kind() == "statement_block" {
                cx.children(body, visit);
            } else {
                visit(cx, body);
            }
        }
    });
}

fn parameters(cx: &mut Cx, params: Node) {
    let mut cursor = params.walk();
    let params: Vec<Node> = params.named_children(&mut cursor).collect();
    for p in params {
        let pattern = p.field("pattern").map(|n| cx.text(n));
        if let (Some(name), Some(ty)) = (pattern, p.field("type")) {
            let ty_text = cx.text(ty);
            let ty_text = ty_text.trim_start_matches(':').trim();
            cx.bind(name, base_type_name(ty_text).to_string());
            type_refs(cx, ty);
        }
        if let Some(value) = p.field("value") {
            visit(cx, value);
        }
    }
}

fn class(cx: &mut Cx, node: Node, outer: Node, name: String, kind: DefKind) {
    class_index(cx, node, outer, name, kind);
}

fn class_index(cx: &mut Cx, node: Node, outer: Node, name: String, kind: DefKind) -> u32 {
    let body = node.field("body");
    let idx = cx.define(outer, name, kind, body);
    cx.with_type_params(node, |cx| class_body(cx, node, idx, body));
    idx
}

fn class_body(cx: &mut Cx, node: Node, idx: u32, body: Option<Node>) {
    cx.within(idx, false, |cx| {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "class_heritage" => heritage(cx, child),
                "extends_type_clause" => heritage_types(cx, child, RefKind::Inherits),
                _ => {}
            }
        }
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
}

fn heritage(cx: &mut Cx, node: Node) {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    for child in children {
        match child.kind() {
            "extends_clause" => heritage_types(cx, child, RefKind::Inherits),
            "implements_clause" => heritage_types(cx, child, RefKind::Implements),
            // Plain JS: `class A extends B` puts the expression right under class_heritage.
            "identifier" | "member_expression" => {
                let (name, receiver) = callee(cx, child);
                cx.reference(RefKind::Inherits, name, receiver, child);
            }
            _ => {}
        }
    }
}

fn heritage_types(cx: &mut Cx, clause: Node, kind: RefKind) {
    let mut cursor = clause.walk();
    let children: Vec<Node> = clause.named_children(&mut cursor).collect();
    for child in children {
        let target = if child.kind() == "generic_type" {
            child.field("name").unwrap_or(child)
        } else {
            child
        };
        if matches!(
            target.kind(),
            "identifier" | "type_identifier" | "member_expression" | "nested_type_identifier"
        ) {
            let (name, receiver) = callee(cx, target);
            cx.reference(kind, name, receiver, target);
        } else if target.kind() == "type_arguments" {
            type_refs(cx, target);
        }
    }
}

fn declarator(cx: &mut Cx, node: Node) {
    let name_node = node.field("name");
    let value = node.field("value");
    let name = name_node
        .filter(|n| n.kind() == "identifier")
        .map(|n| cx.text(n));
    if let (Some(name), Some(ty)) = (name.clone(), node.field("type")) {
        let ty_text = cx.text(ty);
        cx.bind(
            name,
            base_type_name(ty_text.trim_start_matches(':')).to_string(),
        );
        type_refs(cx, ty);
    }
    match (name, value) {
        (Some(name), Some(v)) if is_function(v) => {
            let outer = declaration_extent(node);
            function(cx, outer, v, name);
        }
        (Some(name), Some(v)) if v.kind() == "class" => {
            let outer = declaration_extent(node);
            class(cx, v, outer, name, DefKind::Class);
        }
        (Some(name), Some(v)) => {
            if v.kind() == "new_expression"
                && let Some(ctor) = v.field("constructor")
            {
                let ty = cx.text(ctor);
                cx.bind(name.clone(), base_type_name(&ty).to_string());
            }
            if v.kind() == "call_expression" && is_require(cx, v) {
                require(
                    cx,
                    v,
                    Some(name_node.map(|n| cx.text(n)).unwrap_or_default()),
                );
                return;
            }
            let top_level_const = cx.scope().is_none()
                && node.parent().is_some_and(|p| {
                    p.kind() == "lexical_declaration" && cx.text(p).starts_with("const")
                });
            if top_level_const && v.kind() != "call_expression" {
                let outer = declaration_extent(node);
                let idx = cx.define(outer, name, DefKind::Constant, None);
                cx.within(idx, false, |cx| visit(cx, v));
            } else {
                visit(cx, v);
            }
        }
        (None, Some(v)) => {
            if v.kind() == "call_expression" && is_require(cx, v) {
                // `const { a, b } = require('x')`
                let names = name_node
                    .map(|n| destructured_names(cx, n))
                    .unwrap_or_default();
                require_names(cx, v, names);
                return;
            }
            visit(cx, v);
        }
        _ => {}
    }
}

/// The statement a declarator belongs to (with `export`), so ranges include the keyword.
fn declaration_extent(declarator: Node) -> Node {
    let mut outer = declarator;
    if let Some(p) = declarator.parent()
        && matches!(p.kind(), "lexical_declaration" | "variable_declaration")
        && p.named_child_count() == 1
    {
        outer = p;
        if let Some(pp) = p.parent()
            && pp.kind() == "export_statement"
        {
            outer = pp;
        }
    }
    outer
}

fn destructured_names(cx: &Cx, pattern: Node) -> Vec<(String, String)> {
    let mut names = Vec::new();
    let mut cursor = pattern.walk();
    for child in pattern.named_children(&mut cursor) {
        match child.kind() {
            "shorthand_property_identifier_pattern" => {
                let n = cx.text(child);
                names.push((n.clone(), n));
            }
            "pair_pattern" => {
                let key = cx.field_text(child, "key").unwrap_or_default();
                let value = cx.field_text(child, "value").unwrap_or_default();
                names.push((key, value));
            }
            _ => {}
        }
    }
    names
}

/// `obj.prop = function () {}` / `module.exports.f = () => {}` / `Foo.prototype.bar = …`;
/// CommonJS exports.
fn assignment(cx: &mut Cx, node: Node) {
    let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
        return cx.children(node, visit);
    };
    if commonjs_assignment(cx, node, left) {
        return;
    }
    if is_function(right) {
        let name = match left.kind() {
            "member_expression" => cx.field_text(left, "property"),
            "identifier" => Some(cx.text(left)),
            _ => None,
        };
        if let Some(name) = name {
            let outer = match node.parent() {
                Some(p) if p.kind() == "expression_statement" => p,
                _ => node,
            };
            let top_level = cx.scope().is_none();
            let idx = function_index(cx, outer, right, name);
            // `app.handle = function …` / `Router.prototype.use = …`: a member of `app` /
            // `Router`, named by what it is assigned to.
            if top_level && left.kind() == "member_expression" {
                let target = cx.text(left).replace(".prototype.", ".");
                cx.file.definitions[idx as usize].qualified_name = target;
            }
            return;
        }
    }
    if right.kind() == "call_expression" && is_require(cx, right) {
        return require(cx, right, None);
    }
    if right.kind() == "new_expression"
        && let Some(ctor) = right.field("constructor")
    {
        let ty = cx.text(ctor);
        let left = cx.text(left);
        cx.bind(left, base_type_name(&ty).to_string());
    }
    cx.children(node, visit);
}

fn callee(cx: &Cx, node: Node) -> (String, Option<String>) {
    match node.kind() {
        "member_expression" => {
            let name = cx.field_text(node, "property").unwrap_or_default();
            let receiver = node.field("object").map(|o| match o.kind() {
                "identifier" | "this" | "super" | "member_expression" => cx.text(o),
                _ => String::new(),
            });
            (name, receiver)
        }
        "nested_type_identifier" => {
            let text = cx.text(node);
            match text.rsplit_once('.') {
                Some((r, n)) => (n.to_string(), Some(r.to_string())),
                None => (text, None),
            }
        }
        _ => (cx.text(node), None),
    }
}

fn call(cx: &mut Cx, node: Node) {
    let Some(func) = node.field("function") else {
        return;
    };
    if is_require(cx, node) {
        // A bare `require('x')` (side effect or inline use) is still an import.
        if !node
            .parent()
            .is_some_and(|p| matches!(p.kind(), "variable_declarator" | "assignment_expression"))
        {
            require(cx, node, None);
        }
        return;
    }
    if matches!(func.kind(), "identifier" | "member_expression") {
        let (name, receiver) = callee(cx, func);
        // `Buffer.from(…)`, `Object.keys(…)`, `console.log(…)`: a method of the platform's
        // global objects is the platform's, as the global is.
        if func.field("object").is_some_and(|o| {
            o.kind() == "identifier" && GLOBAL_OBJECTS.contains(&cx.text(o).as_str())
        }) {
            return;
        }
        match (func.field("object"), receiver) {
            (Some(object), Some(receiver)) => {
                cx.call_on_expression(name, object, receiver, "call_expression", call_parts, func)
            }
            (_, receiver) => cx.reference(RefKind::Call, name, receiver, func),
        }
    }
}

/// The JavaScript platform's global objects (ECMAScript's and Node's), whose methods no
/// repository defines. `window`, `document` and `globalThis` are left out: code assigns its
/// own names to them.
const GLOBAL_OBJECTS: [&str; 20] = [
    "Object", "Array", "Promise", "JSON", "Math", "Number", "String", "Boolean", "Symbol",
    "Reflect", "Date", "RegExp", "Error", "Intl", "Atomics", "BigInt", "console", "process",
    "Buffer", "Proxy",
];

/// A `call_expression` for [`Cx::call_chain`]: the called name and what it is called on.
fn call_parts<'t>(cx: &Cx, call: Node<'t>) -> Option<(String, Option<Node<'t>>)> {
    let func = call.field("function")?;
    match func.kind() {
        "identifier" => Some((cx.text(func), None)),
        "member_expression" => Some((
            cx.field_text(func, "property")?,
            Some(func.field("object")?),
        )),
        _ => None,
    }
}

fn type_refs(cx: &mut Cx, node: Node) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "type_identifier" => {
                let name = cx.text(n);
                cx.reference(RefKind::Type, name, None, n);
            }
            "nested_type_identifier" => {
                let (name, receiver) = callee(cx, n);
                cx.reference(RefKind::Type, name, receiver, n);
            }
            _ => {
                let mut cursor = n.walk();
                stack.extend(n.named_children(&mut cursor));
            }
        }
    }
}
