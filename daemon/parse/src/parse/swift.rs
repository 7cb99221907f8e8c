//! Swift: classes, structs, enums, actors, protocols, extensions (an `Impl` named after the
//! type it extends, so its members are the type's, as Rust's `impl` blocks are), methods,
//! initialisers (constructors named after their type), functions, `static let` and top-level
//! `let` constants, type aliases. A module is a target directory: `Sources/<Target>/…` (and
//! `Tests/<Target>/…`) in SwiftPM's layout, else the file's top directory; files of one module
//! see each other's declarations without imports, and `import X` brings module X's. Calls
//! (`f()`, `x.f()`, `self.a?.f()`, `Type()` constructing Type), inheritance and conformance,
//! and type uses; parameters and properties bind receiver types.

use super::Fields;
use tree_sitter::Node;

use super::{Cx, child_of_kind};
use crate::model::{DefKind, Import, RefKind};

/// The module a file belongs to, by path: the target directory under `Sources`/`Tests`
/// (SwiftPM's convention), else the top directory (an Xcode project's target folder).
pub(super) fn module_of(path: &str) -> String {
    let dirs: Vec<&str> = path.split('/').collect();
    let dirs = &dirs[..dirs.len().saturating_sub(1)];
    for (i, d) in dirs.iter().enumerate() {
        if matches!(*d, "Sources" | "Tests")
            && let Some(target) = dirs.get(i + 1)
        {
            return (*target).to_string();
        }
    }
    dirs.first().map(|d| d.to_string()).unwrap_or_default()
}

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "source_file" => {
            let module = module_of(&cx.file.path);
            cx.file.package = Some(module);
            if is_manifest(&cx.file.path) {
                manifest_targets(cx, node);
            }
            cx.children(node, visit);
        }
        "import_declaration" => {
            if let Some(id) = child_of_kind(node, "identifier") {
                let module = cx.text(id);
                let line = node.start_position().row as u32 + 1;
                cx.import(Import::everything(module, line));
            }
        }
        "class_declaration" => type_decl(cx, node),
        "protocol_declaration" => {
            let Some(name) = cx.field_text(node, "name") else {
                return cx.children(node, visit);
            };
            let body = node.field("body");
            let idx = cx.define(node, name, DefKind::Interface, body);
            cx.within(idx, true, |cx| {
                supertypes(cx, node, RefKind::Inherits, RefKind::Inherits);
                if let Some(body) = body {
                    cx.children(body, visit);
                }
            });
        }
        "function_declaration" | "protocol_function_declaration" => function(cx, node),
        "init_declaration" => {
            let owner = cx.scope_def().map(|d| match d.kind {
                DefKind::Impl => crate::parse::impl_self_type(&d.name).to_string(),
                _ => d.name.clone(),
            });
            let body = node.field("body");
            let idx = cx.define(node, owner.unwrap_or_default(), DefKind::Constructor, body);
            cx.within(idx, true, |cx| cx.children(node, visit));
        }
        "property_declaration" | "protocol_property_declaration" => property(cx, node),
        "typealias_declaration" => {
            let Some(name) = cx.field_text(node, "name") else {
                return cx.children(node, visit);
            };
            let idx = cx.define(node, name, DefKind::TypeAlias, None);
            cx.within(idx, false, |cx| {
                cx.children_where(node, |c| c.kind() != "type_identifier", visit);
            });
        }
        "parameter" => {
            bind_parameter(cx, node);
            cx.children(node, visit);
        }
        "call_expression" => call(cx, node),
        "user_type" => {
            // `Outer.Inner`: the last component names the type.
            let mut cursor = node.walk();
            let ids: Vec<Node> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "type_identifier")
                .collect();
            if let Some(last) = ids.last() {
                let name = cx.text(*last);
                let receiver = (ids.len() > 1).then(|| cx.text(ids[0]));
                cx.reference(RefKind::Type, name, receiver, *last);
            }
            let mut cursor = node.walk();
            let args: Vec<Node> = node
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "type_arguments")
                .collect();
            for a in args {
                cx.children(a, visit);
            }
        }
        _ => cx.children(node, visit),
    }
}

/// `Package.swift`, or a version-specific `Package@swift-6.0.swift`.
fn is_manifest(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name == "Package.swift" || name.starts_with("Package@swift")
}

/// Every `.target(…)` call of a manifest, however deep (a manifest is one small expression).
fn manifest_targets(cx: &mut Cx, root: Node) {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "call_expression" {
            manifest_target(cx, node);
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        // Reversed onto the stack: targets come out in source order.
        stack.extend(children.into_iter().rev());
    }
}

/// `.target(name: "X", path: "Source")` in a manifest: module X lives in `Source` (by default
/// `Sources/X`, or `Tests/X` for a test target), relative to the manifest's directory.
fn manifest_target(cx: &mut Cx, node: Node) {
    let Some(callee) = node
        .named_child(0)
        .filter(|c| c.kind() == "prefix_expression")
    else {
        return;
    };
    let kind = cx.text(callee);
    let default_root = match kind.as_str() {
        ".target" | ".executableTarget" | ".macro" | ".plugin" => "Sources",
        ".testTarget" => "Tests",
        _ => return,
    };
    let Some(args) =
        child_of_kind(node, "call_suffix").and_then(|s| child_of_kind(s, "value_arguments"))
    else {
        return;
    };
    let (mut name, mut path) = (None, None);
    let mut cursor = args.walk();
    let list: Vec<Node> = args.named_children(&mut cursor).collect();
    for arg in list {
        let label = arg.field("name").map(|l| cx.text(l));
        let value = arg
            .field("value")
            .filter(|v| v.kind() == "line_string_literal")
            .map(|v| cx.text(v).trim_matches('"').to_string());
        match label.as_deref() {
            Some("name") => name = value,
            Some("path") => path = value,
            _ => {}
        }
    }
    let Some(name) = name else { return };
    let dir = path.unwrap_or_else(|| format!("{default_root}/{name}"));
    let base = crate::model::dir_of(&cx.file.path);
    let dir = dir.trim_matches('/');
    let full = match (base.is_empty(), dir.is_empty() || dir == ".") {
        (true, true) => String::new(),
        (true, false) => dir.to_string(),
        (false, true) => base.to_string(),
        (false, false) => format!("{base}/{dir}"),
    };
    cx.file.targets.push((name, full));
}

/// The declaration keyword of a `class_declaration`: class, struct, enum, actor, extension.
fn keyword(node: Node) -> Option<&'static str> {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .filter(|c| !c.is_named())
        .find_map(|c| match c.kind() {
            "class" => Some("class"),
            "struct" => Some("struct"),
            "enum" => Some("enum"),
            "actor" => Some("actor"),
            "extension" => Some("extension"),
            _ => None,
        })
}

fn type_decl(cx: &mut Cx, node: Node) {
    let Some(name_node) = node.field("name") else {
        return cx.children(node, visit);
    };
    let keyword = keyword(node);
    // `extension Outer.Inner` extends Inner.
    let text = cx.text(name_node);
    let name = crate::parse::base_type_name(&text).to_string();
    let kind = match keyword {
        Some("struct") => DefKind::Struct,
        Some("enum") => DefKind::Enum,
        Some("extension") => DefKind::Impl,
        _ => DefKind::Class,
    };
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    cx.within_generic(idx, |cx| {
        type_params(cx, node);
        // A class's first supertype may be its base class; every other one is a protocol.
        let first = if kind == DefKind::Class {
            RefKind::Inherits
        } else {
            RefKind::Implements
        };
        supertypes(cx, node, first, RefKind::Implements);
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
}

/// `<T: Numeric>`: type parameters are not references; their constraints are.
fn type_params(cx: &mut Cx, node: Node) {
    let Some(list) = child_of_kind(node, "type_parameters") else {
        return;
    };
    let mut cursor = list.walk();
    let params: Vec<Node> = list
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "type_parameter")
        .collect();
    for p in params {
        if let Some(id) = child_of_kind(p, "type_identifier") {
            let name = cx.text(id);
            cx.type_params.push(name);
        }
        let mut cursor = p.walk();
        let bounds: Vec<Node> = p
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "type_identifier")
            .collect();
        for b in bounds {
            visit(cx, b);
        }
    }
}

fn supertypes(cx: &mut Cx, node: Node, first: RefKind, rest: RefKind) {
    let mut cursor = node.walk();
    let specs: Vec<Node> = node
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "inheritance_specifier")
        .collect();
    for (i, spec) in specs.into_iter().enumerate() {
        let Some(ty) = spec.field("inherits_from") else {
            continue;
        };
        let mut cursor = ty.walk();
        let last = ty
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "type_identifier")
            .last();
        if let Some(id) = last {
            let name = cx.text(id);
            cx.reference(if i == 0 { first } else { rest }, name, None, id);
        }
    }
}

fn function(cx: &mut Cx, node: Node) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let kind = if cx.scope_def().is_some_and(|d| d.kind.is_container()) {
        DefKind::Method
    } else {
        DefKind::Function
    };
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    cx.within_generic(idx, |cx| {
        type_params(cx, node);
        let skip = |c: &Node| {
            Some(*c) == body || matches!(c.kind(), "simple_identifier" | "type_parameters")
        };
        cx.children_where(node, |c| !skip(c), visit);
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
}

/// The type a declaration names: `Foo`, `Foo?`, `Foo<T>`; none for tuples, arrays, closures.
fn named_type(cx: &Cx, ty: Node) -> Option<String> {
    match ty.kind() {
        "user_type" => {
            let mut cursor = ty.walk();
            let last = ty
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "type_identifier")
                .last();
            last.map(|id| cx.text(id))
        }
        "optional_type" | "implicitly_unwrapped_type" => ty
            .field("wrapped")
            .or_else(|| ty.named_child(0))
            .and_then(|t| named_type(cx, t)),
        _ => None,
    }
}

/// `let x: Foo`, `var y = Foo()`: binds the name (and `self.name` for a member). A
/// top-level `let` and a type's `static let` are constants.
fn property(cx: &mut Cx, node: Node) {
    let name = node
        .field("name")
        .and_then(|p| p.field("bound_identifier").or(Some(p)))
        .map(|n| cx.text(n).trim_matches('`').to_string());
    let declared = child_of_kind(node, "type_annotation")
        .and_then(|a| a.field("name"))
        .and_then(|t| named_type(cx, t));
    let constructed = node
        .field("value")
        .filter(|v| v.kind() == "call_expression")
        .and_then(|v| v.named_child(0))
        .filter(|f| f.kind() == "simple_identifier")
        .map(|f| cx.text(f))
        .filter(|t| t.starts_with(char::is_uppercase));
    let in_type = cx.scope_def().is_some_and(|d| d.kind.is_container());
    if let (Some(name), Some(ty)) = (name.clone(), declared.or(constructed)) {
        if in_type {
            cx.bind(format!("self.{name}"), ty.clone());
        }
        cx.bind(name, ty);
    }
    // `var edges: Item { … }`: a computed property is a getter (and setter), a member in all
    // but syntax — the API of most Swift types.
    if let Some(body) = child_of_kind(node, "computed_property")
        && let Some(name) = name.clone().filter(|n| !n.is_empty())
    {
        let kind = if cx.in_container() {
            DefKind::Method
        } else {
            DefKind::Function
        };
        let idx = cx.define(node, name, kind, Some(body));
        cx.within(idx, true, |cx| cx.children(node, visit));
        return;
    }
    let is_let = child_of_kind(node, "value_binding_pattern").is_some_and(|p| cx.text(p) == "let");
    let is_static = child_of_kind(node, "modifiers")
        .is_some_and(|m| cx.text(m).split_whitespace().any(|w| w == "static"));
    let constant = is_let && (cx.scope_def().is_none() || (in_type && is_static));
    if constant && let Some(name) = name.filter(|n| !n.is_empty()) {
        let idx = cx.define(node, name, DefKind::Constant, None);
        cx.within(idx, false, |cx| cx.children(node, visit));
        return;
    }
    cx.children(node, visit);
}

/// `_ request: Request` binds `request`.
fn bind_parameter(cx: &mut Cx, node: Node) {
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    let name = children
        .iter()
        .find(|c| c.kind() == "simple_identifier" && node.field("external_name") != Some(**c))
        .map(|n| cx.text(*n));
    let ty = children.iter().find_map(|c| named_type(cx, *c));
    if let (Some(name), Some(ty)) = (name, ty) {
        cx.bind(name, ty);
    }
}

fn call(cx: &mut Cx, node: Node) {
    if let Some(callee) = node.named_child(0) {
        match callee.kind() {
            "simple_identifier" => {
                let name = cx.text(callee);
                cx.reference(RefKind::Call, name, None, callee);
            }
            "navigation_expression" => {
                let target = callee.field("target");
                let suffix = callee.field("suffix").and_then(|s| s.field("suffix"));
                if let (Some(target), Some(suffix)) = (target, suffix)
                    && suffix.kind() == "simple_identifier"
                {
                    let receiver = match target.kind() {
                        "simple_identifier" | "self_expression" | "super_expression" => {
                            cx.text(target)
                        }
                        "navigation_expression" => cx.text(target).replace('?', ""),
                        _ => String::new(),
                    };
                    let name = cx.text(suffix);
                    cx.reference(RefKind::Call, name, Some(receiver), suffix);
                    if !matches!(
                        target.kind(),
                        "simple_identifier" | "self_expression" | "super_expression"
                    ) {
                        visit(cx, target);
                    }
                }
            }
            _ => visit(cx, callee),
        }
    }
    let mut cursor = node.walk();
    let rest: Vec<Node> = node.named_children(&mut cursor).skip(1).collect();
    for r in rest {
        visit(cx, r);
    }
}
