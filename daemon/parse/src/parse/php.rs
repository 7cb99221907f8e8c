//! PHP: classes, interfaces, traits, enums, methods (`__construct` is the constructor),
//! functions, class and namespace constants; the namespace (`namespace A\B;` or bracketed) is
//! the file's package and `use A\B\C;`, `use A\B\{C, D as E};`, `use function A\f;` import
//! from it — spelled with dots inside, as Java's packages are, so the package-based resolution
//! is shared. PSR-4 requires a class's declared namespace to match its path, so the declared
//! namespaces are the mapping `composer.json` would give. Calls: `f()`, `$x->m()`,
//! `$this->a->m()`, `A::m()`, `self::`/`static::`/`parent::`, `new A()`; `extends`,
//! `implements` and a class's `use Trait;`; type uses. Parameter types, typed properties and
//! `$x = new A()` bind receiver types.

use super::Fields;
use tree_sitter::Node;

use super::{Cx, base_type_name, child_of_kind, children_of_kinds};
use crate::model::{DefKind, Import, RefKind};

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "namespace_definition" => namespace(cx, node),
        "namespace_use_declaration" => use_declaration(cx, node),
        "class_declaration" => type_decl(cx, node, DefKind::Class),
        "interface_declaration" => type_decl(cx, node, DefKind::Interface),
        "trait_declaration" => type_decl(cx, node, DefKind::Trait),
        "enum_declaration" => type_decl(cx, node, DefKind::Enum),
        "method_declaration" | "function_definition" => function(cx, node),
        "const_element" => {
            let Some(name) = child_of_kind(node, "name").map(|n| cx.text(n)) else {
                return cx.children(node, visit);
            };
            let idx = cx.define(node, name, DefKind::Constant, None);
            cx.within(idx, false, |cx| cx.children(node, visit));
        }
        // `use SomeTrait;` inside a class: its methods are the class's.
        "use_declaration" => supertypes(cx, node, RefKind::Inherits),
        "property_declaration" => property(cx, node),
        "simple_parameter" | "property_promotion_parameter" => {
            parameter(cx, node);
            cx.children(node, visit);
        }
        "assignment_expression" => {
            assignment(cx, node);
            cx.children(node, visit);
        }
        "function_call_expression" => {
            if let Some(f) = node.field("function") {
                match f.kind() {
                    "name" | "qualified_name" => {
                        let name = base_type_name(&cx.text(f)).to_string();
                        cx.reference(RefKind::Call, name, None, f);
                    }
                    _ => visit(cx, f),
                }
            }
            if let Some(args) = node.field("arguments") {
                cx.children(args, visit);
            }
        }
        "member_call_expression" | "nullsafe_member_call_expression" => {
            let object = node.field("object");
            if let (Some(object), Some(name)) = (object, node.field("name")) {
                if name.kind() == "name" {
                    let n = cx.text(name);
                    // `(new Foo)->bar()`: `bar` is a method of the class constructed;
                    // `$app->get(…)->setName(…)`: of what `get` returns (`link::chains`).
                    let receiver = receiver_text(cx, object);
                    cx.call_on_expression(n, object, receiver, node.kind(), call_parts, name);
                }
                visit(cx, object);
            }
            if let Some(args) = node.field("arguments") {
                cx.children(args, visit);
            }
        }
        "scoped_call_expression" => {
            let scope = node.field("scope");
            if let (Some(scope), Some(name)) = (scope, node.field("name"))
                && name.kind() == "name"
            {
                let receiver = match cx.text(scope).as_str() {
                    "self" | "static" => "self".to_string(),
                    "parent" => "super".to_string(),
                    other => base_type_name(other).to_string(),
                };
                let n = cx.text(name);
                cx.reference(RefKind::Call, n, Some(receiver), name);
            }
            if let Some(args) = node.field("arguments") {
                cx.children(args, visit);
            }
        }
        "object_creation_expression" => {
            let mut cursor = node.walk();
            let ty = node
                .named_children(&mut cursor)
                .find(|c| matches!(c.kind(), "name" | "qualified_name"));
            if let Some(ty) = ty {
                let name = base_type_name(&cx.text(ty)).to_string();
                cx.reference(RefKind::Call, name, None, ty);
            }
            cx.children_where(
                node,
                |c| !matches!(c.kind(), "name" | "qualified_name"),
                visit,
            );
        }
        // `Foo::class`, `Foo::CONSTANT`.
        "class_constant_access_expression" => {
            if let Some(first) = node.named_child(0)
                && matches!(first.kind(), "name" | "qualified_name")
            {
                let name = base_type_name(&cx.text(first)).to_string();
                if !matches!(name.as_str(), "self" | "static" | "parent") {
                    cx.reference(RefKind::Type, name, None, first);
                }
            }
        }
        "named_type" => {
            if let Some(n) = node.named_child(0) {
                let name = base_type_name(&cx.text(n)).to_string();
                cx.reference(RefKind::Type, name, None, n);
            }
        }
        _ => cx.children(node, visit),
    }
}

/// `A\B\C` (or `\A\B\C`) → `A.B.C`: namespaces are packages, spelled as Java's are.
fn dotted(name: &str) -> String {
    name.trim_start_matches('\\').replace('\\', ".")
}

/// A member call for [`Cx::call_chain`]: the method's name and what it is called on.
fn call_parts<'t>(cx: &Cx, call: Node<'t>) -> Option<(String, Option<Node<'t>>)> {
    match call.kind() {
        "member_call_expression" | "nullsafe_member_call_expression" => {
            let name = call.field("name").filter(|n| n.kind() == "name")?;
            Some((cx.text(name), Some(call.field("object")?)))
        }
        _ => None,
    }
}

/// `$this->a->b` → `this.a.b`; `$x` → `x`; anything else (a call's result) is unknown.
fn receiver_text(cx: &Cx, node: Node) -> String {
    match node.kind() {
        "variable_name" => cx.text(node).trim_start_matches('$').to_string(),
        "member_access_expression" | "nullsafe_member_access_expression" => {
            let object = node.field("object");
            let name = node.field("name");
            match (object, name) {
                (Some(o), Some(n)) if n.kind() == "name" => {
                    let o = receiver_text(cx, o);
                    if o.is_empty() {
                        String::new()
                    } else {
                        format!("{o}.{}", cx.text(n))
                    }
                }
                _ => String::new(),
            }
        }
        _ => String::new(),
    }
}

/// `namespace A\B;` names the file's package from here on; `namespace A\B { … }` scopes it to
/// its body (the last one wins for the file, as one namespace per file is the rule).
fn namespace(cx: &mut Cx, node: Node) {
    if let Some(name) = node.field("name") {
        cx.file.package = Some(dotted(&cx.text(name)));
    }
    if let Some(body) = node.field("body") {
        cx.children(body, visit);
    }
}

/// `use A\B\C;`, `use A\B\C as D;`, `use A\B\{C, D as E};`, `use function A\f;`.
fn use_declaration(cx: &mut Cx, node: Node) {
    let line = node.start_position().row as u32 + 1;
    let prefix = child_of_kind(node, "namespace_name").map(|p| dotted(&cx.text(p)));
    let clauses: Vec<Node> = match node.field("body") {
        Some(group) => {
            let mut cursor = group.walk();
            group
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "namespace_use_clause")
                .collect()
        }
        None => {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .filter(|c| c.kind() == "namespace_use_clause")
                .collect()
        }
    };
    for clause in clauses {
        let mut cursor = clause.walk();
        let path = clause
            .named_children(&mut cursor)
            .find(|c| matches!(c.kind(), "qualified_name" | "name"))
            .map(|p| dotted(&cx.text(p)));
        let Some(path) = path else { continue };
        let module = match &prefix {
            Some(p) => format!("{p}.{path}"),
            None => path,
        };
        let name = module.rsplit('.').next().unwrap_or(&module).to_string();
        let alias = clause
            .field("alias")
            .map(|a| cx.text(a))
            .unwrap_or_else(|| name.clone());
        cx.import(Import {
            module,
            names: vec![(name, alias)],
            module_alias: None,
            wildcard: false,
            line,
        });
    }
}

fn type_decl(cx: &mut Cx, node: Node, kind: DefKind) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    cx.within(idx, true, |cx| {
        let mut cursor = node.walk();
        let parts: Vec<Node> = node.named_children(&mut cursor).collect();
        for p in parts {
            match p.kind() {
                // An interface's `extends` lists interfaces it inherits.
                "base_clause" => supertypes(cx, p, RefKind::Inherits),
                "class_interface_clause" => supertypes(cx, p, RefKind::Implements),
                "declaration_list" | "enum_declaration_list" => cx.children(p, visit),
                _ => {}
            }
        }
    });
}

/// The types `node` names (`extends A`, `implements B, C`, `use T;`), as `rel` references.
fn supertypes(cx: &mut Cx, node: Node, rel: RefKind) {
    for n in children_of_kinds(node, &["name", "qualified_name"]) {
        let name = base_type_name(&cx.text(n)).to_string();
        cx.reference(rel, name, None, n);
    }
}

fn function(cx: &mut Cx, node: Node) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let (name, kind) = if node.kind() == "function_definition" {
        (name, DefKind::Function)
    } else if name.eq_ignore_ascii_case("__construct") {
        let owner = cx.scope_def().map(|d| d.name.clone()).unwrap_or(name);
        (owner, DefKind::Constructor)
    } else {
        (name, DefKind::Method)
    };
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    cx.within(idx, true, |cx| {
        cx.children_where(node, |c| Some(*c) != body && c.kind() != "name", visit);
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
}

/// The class named by a type (`Foo`, `?Foo`, `\A\Foo`); none for unions and builtins.
fn type_name(cx: &Cx, ty: Node) -> Option<String> {
    match ty.kind() {
        "named_type" => ty
            .named_child(0)
            .map(|n| base_type_name(&cx.text(n)).to_string()),
        "optional_type" => ty.named_child(0).and_then(|t| type_name(cx, t)),
        _ => None,
    }
}

/// `private Store $store;` binds `this.store`.
fn property(cx: &mut Cx, node: Node) {
    if let Some(ty) = node.field("type").and_then(|t| type_name(cx, t)) {
        let mut cursor = node.walk();
        let names: Vec<String> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "property_element")
            .filter_map(|e| e.field("name"))
            .map(|n| cx.text(n).trim_start_matches('$').to_string())
            .collect();
        for n in names {
            cx.bind(format!("this.{n}"), ty.clone());
        }
    }
    cx.children(node, visit);
}

/// `Store $store` binds `store`; a promoted constructor parameter (`private Store $store`)
/// also binds `this.store` where the class's methods see it.
fn parameter(cx: &mut Cx, node: Node) {
    let ty = node.field("type").and_then(|t| type_name(cx, t));
    let name = node
        .field("name")
        .map(|n| cx.text(n).trim_start_matches('$').to_string());
    if let (Some(ty), Some(name)) = (ty, name) {
        if node.kind() == "property_promotion_parameter" {
            cx.bind_member(format!("this.{name}"), ty.clone());
        }
        cx.bind(name, ty);
    }
}

/// `$x = new Foo(…)` binds `x`; `$this->x = new Foo(…)` binds `this.x` for the class;
/// `$route = $app->get(…)` binds `route` to the chain `link::chains` follows.
fn assignment(cx: &mut Cx, node: Node) {
    let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
        return;
    };
    let ty = cx.created_class(right).or_else(|| {
        matches!(
            right.kind(),
            "member_call_expression" | "nullsafe_member_call_expression"
        )
        .then(|| cx.call_chain(right, call_parts))
        .flatten()
    });
    let Some(ty) = ty else {
        return;
    };
    let var = receiver_text(cx, left);
    if var.starts_with("this.") {
        cx.bind_member(var, ty);
    } else if !var.is_empty() {
        cx.bind(var, ty);
    }
}
