//! C#: classes, structs, interfaces, enums, records, delegates, methods (extension methods
//! included), constructors, destructors, operators, indexers, properties, local functions,
//! constants (`const`, `static readonly`); the namespace (block or file-scoped) as the file's
//! package, `using` directives; invocations (`a.M()`, `a?.M()`), `new`, base lists and type
//! uses. Locals, parameters and fields bind receiver types (`var x = new Foo()` too).
//!
//! Qualified names are `Class.Method`, as in Java: the namespace is the file's package, which
//! resolution uses, and the path already places it in an id.

use super::Fields;
use tree_sitter::Node;

use super::{Cx, base_type_name, child_of_kind, children_of_kinds};
use crate::model::{DefKind, Import, RefKind};

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "namespace_declaration" | "file_scoped_namespace_declaration" => {
            if cx.file.package.is_none()
                && let Some(name) = cx.field_text(node, "name")
            {
                cx.file.package = Some(name);
            }
            cx.children(node, visit);
        }
        "using_directive" => using(cx, node),
        "class_declaration" => type_decl(cx, node, DefKind::Class),
        "struct_declaration" => type_decl(cx, node, DefKind::Struct),
        "interface_declaration" => type_decl(cx, node, DefKind::Interface),
        "enum_declaration" => type_decl(cx, node, DefKind::Enum),
        "record_declaration" | "record_struct_declaration" => type_decl(cx, node, DefKind::Record),
        "delegate_declaration" => {
            let Some(name) = cx.field_text(node, "name") else {
                return cx.children(node, visit);
            };
            let idx = cx.define(node, name, DefKind::TypeAlias, None);
            cx.with_type_params(node, |cx| cx.within(idx, false, |cx| types_in(cx, node)));
        }
        "method_declaration" => method(cx, node, DefKind::Method, None),
        "local_function_statement" => method(cx, node, DefKind::Function, None),
        "constructor_declaration" => method(cx, node, DefKind::Constructor, None),
        "destructor_declaration" => {
            let name = cx.field_text(node, "name").map(|n| format!("~{n}"));
            method(cx, node, DefKind::Method, name)
        }
        "operator_declaration" | "conversion_operator_declaration" => {
            let op = node
                .field("operator")
                .map(|o| cx.text(o))
                .or_else(|| node.field("type").map(|t| cx.text(t)))
                .unwrap_or_default();
            method(cx, node, DefKind::Method, Some(format!("operator {op}")))
        }
        "indexer_declaration" => method(cx, node, DefKind::Method, Some("this[]".into())),
        "property_declaration" => property(cx, node),
        "field_declaration" => field(cx, node),
        "local_declaration_statement" | "using_statement" => {
            if let Some(decl) = child_of_kind(node, "variable_declaration") {
                bind_declaration(cx, decl, false);
            }
            cx.children(node, visit);
        }
        "invocation_expression" => invocation(cx, node),
        "object_creation_expression" => {
            if let Some(t) = node.field("type") {
                let name = base_type_name(&cx.text(t)).to_string();
                if !name.is_empty() {
                    cx.reference(RefKind::Call, name, None, t);
                }
            }
            cx.children(node, visit);
        }
        "variable_declaration"
        | "parameter"
        | "cast_expression"
        | "type_argument_list"
        | "typeof_expression"
        | "is_pattern_expression"
        | "declaration_pattern" => {
            types_in(cx, node);
            cx.children_except_types(node);
        }
        _ => cx.children(node, visit),
    }
}

impl Cx<'_, '_> {
    /// Visits `node`'s children other than its `type` field (already taken as type uses).
    fn children_except_types(&mut self, node: Node) {
        let ty = node.field("type").map(|t| t.id());
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            if Some(child.id()) != ty {
                visit(self, child);
            }
        }
    }
}

/// Type uses under a node's `type` / `returns` fields (and generic arguments).
fn types_in(cx: &mut Cx, node: Node) {
    for field in ["type", "returns"] {
        if let Some(t) = node.field(field) {
            type_refs(cx, t, RefKind::Type);
        }
    }
}

/// References for every named type in a type expression: `Foo`, `A.B.Foo`, `List<Foo>`,
/// `Foo[]`, `Foo?`. Keywords (`int`, `string`, `var`) are predefined types, not identifiers.
fn type_refs(cx: &mut Cx, node: Node, kind: RefKind) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "identifier" => {
                let name = cx.text(n);
                if name != "var" && name != "dynamic" {
                    cx.reference(kind, name, None, n);
                }
            }
            "qualified_name" => {
                let text = cx.text(n);
                let base = text.split('<').next().unwrap_or(&text);
                let (recv, name) = base.rsplit_once('.').unwrap_or(("", base));
                let receiver = (!recv.is_empty()).then(|| recv.to_string());
                cx.reference(kind, name.to_string(), receiver, n);
                if let Some(args) = child_of_kind(n, "generic_name")
                    .and_then(|g| child_of_kind(g, "type_argument_list"))
                {
                    stack.push(args);
                }
            }
            "generic_name" => {
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    match c.kind() {
                        "identifier" => {
                            let name = cx.text(c);
                            cx.reference(kind, name, None, c);
                        }
                        // Type arguments are uses, not bases.
                        _ => type_refs(cx, c, RefKind::Type),
                    }
                }
            }
            _ => {
                let mut cursor = n.walk();
                stack.extend(n.named_children(&mut cursor));
            }
        }
    }
}

fn type_decl(cx: &mut Cx, node: Node, kind: DefKind) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    let doc = xml_doc(cx, node);
    cx.set_doc(idx, doc);
    cx.with_type_params(node, |cx| {
        cx.within(idx, false, |cx| {
            let mut cursor = node.walk();
            let children: Vec<Node> = node.named_children(&mut cursor).collect();
            for child in children {
                match child.kind() {
                    "base_list" => bases(cx, child, kind),
                    // A primary constructor's parameters (records, C# 12 classes).
                    "parameter_list" => {
                        bind_parameters(cx, child);
                        cx.children(child, visit);
                    }
                    // `where T : Item`: the bound names a type (`T` is skipped).
                    "type_parameter_constraints_clause" => {
                        type_refs(cx, child, RefKind::Type);
                    }
                    _ => {}
                }
            }
            if let Some(body) = body {
                cx.children(body, visit);
            }
        })
    });
}

/// A base list: the base class and the interfaces, which C# does not tell apart in syntax;
/// by the universal convention an interface is named `I` + capital.
fn bases(cx: &mut Cx, node: Node, kind: DefKind) {
    let mut cursor = node.walk();
    let entries: Vec<Node> = node.named_children(&mut cursor).collect();
    for entry in entries {
        if entry.kind() == "argument_list" {
            cx.children(entry, visit);
            continue;
        }
        let text = cx.text(entry);
        let name = base_type_name(text.split('(').next().unwrap_or(&text)).to_string();
        let looks_like_interface = {
            let mut chars = name.chars();
            chars.next() == Some('I') && chars.next().is_some_and(char::is_uppercase)
        };
        let rel = if kind == DefKind::Interface || !looks_like_interface {
            RefKind::Inherits
        } else {
            RefKind::Implements
        };
        type_refs(cx, entry, rel);
    }
}

fn bind_parameters(cx: &mut Cx, params: Node) {
    let mut cursor = params.walk();
    let params: Vec<Node> = params.named_children(&mut cursor).collect();
    for p in params {
        if let (Some(name), Some(ty)) = (cx.field_text(p, "name"), p.field("type")) {
            let ty_text = cx.text(ty);
            cx.bind(name, base_type_name(&ty_text).to_string());
        }
    }
}

fn method(cx: &mut Cx, node: Node, kind: DefKind, name: Option<String>) {
    let name = name
        .or_else(|| cx.field_text(node, "name"))
        .or_else(|| cx.scope_def().map(|d| d.name.clone()))
        .unwrap_or_default();
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    let doc = xml_doc(cx, node);
    cx.set_doc(idx, doc);
    cx.with_type_params(node, |cx| {
        cx.within(idx, true, |cx| {
            if let Some(params) = node.field("parameters") {
                bind_parameters(cx, params);
                // An extension method's `this Foo x` extends Foo: a use of the type.
                cx.children(params, visit);
            }
            types_in(cx, node);
            for c in children_of_kinds(node, &["constructor_initializer", "accessor_list"]) {
                cx.children(c, visit);
            }
            if let Some(v) = node.field("value") {
                visit(cx, v);
            }
            if let Some(body) = body {
                cx.children(body, visit);
            }
        })
    });
}

fn property(cx: &mut Cx, node: Node) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    if let Some(ty) = node.field("type") {
        let base = base_type_name(&cx.text(ty)).to_string();
        cx.bind(format!("this.{name}"), base.clone());
        cx.bind(name.clone(), base);
    }
    // A property is a method pair (get/set) in all but syntax.
    method(cx, node, DefKind::Method, Some(name));
}

fn field(cx: &mut Cx, node: Node) {
    let modifiers: Vec<String> = {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .filter(|c| c.kind() == "modifier")
            .map(|c| cx.text(c))
            .collect()
    };
    let has = |m: &str| modifiers.iter().any(|x| x == m);
    let is_constant = has("const") || (has("static") && has("readonly"));
    let Some(decl) = child_of_kind(node, "variable_declaration") else {
        return cx.children(node, visit);
    };
    bind_declaration(cx, decl, true);
    if is_constant {
        let names = declarator_names(cx, decl);
        if let Some(name) = names.into_iter().next() {
            let idx = cx.define(node, name, DefKind::Constant, None);
            let doc = xml_doc(cx, node);
            cx.set_doc(idx, doc);
            cx.within(idx, false, |cx| visit(cx, decl));
            return;
        }
    }
    visit(cx, decl);
}

fn declarator_names(cx: &Cx, decl: Node) -> Vec<String> {
    let mut cursor = decl.walk();
    decl.named_children(&mut cursor)
        .filter(|d| d.kind() == "variable_declarator")
        .filter_map(|d| cx.field_text(d, "name"))
        .collect()
}

/// `Foo x = …` binds `x` (and `this.x` for fields) to `Foo`; `var x = new Foo()` to `Foo`;
/// `var x = a.B()` to the chain `link::chains` follows.
fn bind_declaration(cx: &mut Cx, decl: Node, is_field: bool) {
    let declared = decl
        .field("type")
        .map(|t| base_type_name(&cx.text(t)).to_string())
        .filter(|t| t != "var");
    let mut cursor = decl.walk();
    let declarators: Vec<Node> = decl
        .named_children(&mut cursor)
        .filter(|d| d.kind() == "variable_declarator")
        .collect();
    for d in declarators {
        let Some(name) = cx.field_text(d, "name") else {
            continue;
        };
        // `var x = new Foo()`, or what a chain of calls returns (`var m =
        // config.CreateMapper()`, followed by the linker).
        let ty = declared.clone().or_else(|| {
            let mut c = d.walk();
            let init = d.named_children(&mut c).find(|n| {
                matches!(
                    n.kind(),
                    "object_creation_expression" | "invocation_expression"
                )
            })?;
            match init.kind() {
                "invocation_expression" => cx.call_chain(init, call_parts),
                _ => cx.created_class(init),
            }
        });
        if let Some(ty) = ty {
            if is_field {
                cx.bind(format!("this.{name}"), ty.clone());
            }
            cx.bind(name, ty);
        }
    }
}

fn invocation(cx: &mut Cx, node: Node) {
    if let Some(f) = node.field("function") {
        match f.kind() {
            "identifier" => {
                let name = cx.text(f);
                cx.reference(RefKind::Call, name, None, f);
            }
            "generic_name" => {
                if let Some(id) = child_of_kind(f, "identifier") {
                    let name = cx.text(id);
                    cx.reference(RefKind::Call, name, None, id);
                }
                type_refs(cx, f, RefKind::Type);
            }
            "member_access_expression" => {
                if let Some(name_node) = f.field("name") {
                    let name_node = child_of_kind(name_node, "identifier").unwrap_or(name_node);
                    let name = cx.text(name_node);
                    match f.field("expression") {
                        Some(e) => cx.call_on_expression(
                            name,
                            e,
                            receiver_text(cx, e),
                            "invocation_expression",
                            call_parts,
                            name_node,
                        ),
                        None => cx.reference(RefKind::Call, name, None, name_node),
                    }
                }
                if let Some(e) = f.field("expression") {
                    visit(cx, e);
                }
            }
            "conditional_access_expression" => {
                // `a?.M()`: the binding names the member, the condition is the receiver.
                let receiver = f.field("condition").map(|c| receiver_text(cx, c));
                if let Some(binding) = child_of_kind(f, "member_binding_expression")
                    && let Some(name_node) = binding.field("name")
                {
                    let name = cx.text(name_node);
                    cx.reference(RefKind::Call, name, receiver, name_node);
                }
                if let Some(c) = f.field("condition") {
                    visit(cx, c);
                }
            }
            _ => visit(cx, f),
        }
    }
    if let Some(args) = node.field("arguments") {
        cx.children(args, visit);
    }
}

/// An `invocation_expression` for [`Cx::call_chain`]: the method's name and what it is called
/// on.
fn call_parts<'t>(cx: &Cx, call: Node<'t>) -> Option<(String, Option<Node<'t>>)> {
    let f = call.field("function")?;
    match f.kind() {
        "identifier" => Some((cx.text(f), None)),
        "member_access_expression" => {
            let name_node = f.field("name")?;
            let name_node = child_of_kind(name_node, "identifier").unwrap_or(name_node);
            Some((cx.text(name_node), Some(f.field("expression")?)))
        }
        _ => None,
    }
}

fn receiver_text(cx: &Cx, node: Node) -> String {
    match node.kind() {
        "identifier"
        | "this_expression"
        | "this"
        | "base_expression"
        | "base"
        | "member_access_expression"
        | "qualified_name" => {
            let text = cx.text(node);
            match text.as_str() {
                "base" => "super".into(),
                _ => text,
            }
        }
        _ => String::new(),
    }
}

/// `using A.B;` (the namespace's types, like a wildcard), `using X = A.B.C;` (an alias),
/// `using static A.B.C;` (the type's members); `global using …` alike, for every file of the
/// project ([`crate::model::ParsedFile::project_imports`]).
fn using(cx: &mut Cx, node: Node) {
    let alias = cx.field_text(node, "name");
    let alias_id = node.field("name").map(|n| n.id());
    let mut cursor = node.walk();
    let target = node
        .named_children(&mut cursor)
        .filter(|c| Some(c.id()) != alias_id)
        .find(|c| matches!(c.kind(), "qualified_name" | "identifier" | "generic_name"))
        .map(|c| cx.text(c));
    let Some(target) = target else {
        return;
    };
    let line = node.start_position().row as u32 + 1;
    let import = using_import(target, alias, line);
    let mut cursor = node.walk();
    if node.children(&mut cursor).any(|c| c.kind() == "global") {
        cx.file.project_imports.push(import);
    } else {
        cx.import(import);
    }
}

/// The import a C# using of `target` makes, under `alias` when it has one (`using X = A.B.C;`
/// binds `X` to `A.B.C`); else the namespace's (or static class's) names.
pub fn using_import(target: String, alias: Option<String>, line: u32) -> Import {
    match alias {
        Some(alias) => {
            let name = target.rsplit('.').next().unwrap_or(&target).to_string();
            Import {
                module: target.clone(),
                names: vec![(name, alias)],
                module_alias: None,
                wildcard: false,
                line,
            }
        }
        None => Import::everything(target, line),
    }
}

/// The summary of an XML doc comment (`/// <summary>Adds.</summary>`), tags removed; else the
/// leading comment as it is.
fn xml_doc(cx: &Cx, node: Node) -> Option<String> {
    let raw = cx.leading_comment(node)?;
    let mut out = String::new();
    let mut in_tag = false;
    for c in raw.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    let text = out.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}
