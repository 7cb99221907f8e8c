//! JavaScript and TypeScript modules: ES imports and exports, CommonJS `require`,
//! `module.exports` and `exports.x`. What a module exports under another name than its
//! definition's is recorded as an own export ([`Import::own`]), so importers look it up as
//! through a re-export.

use tree_sitter::Node;

use super::super::{Cx, Fields, unquote};
use super::{class, class_index, function, function_index, is_function, visit};
use crate::model::{DefKind, Import};

/// `module.exports = …` / `exports.x = …` at the top of a module: defines what is assigned in
/// place and records what the module exports. Returns whether it was such an assignment.
pub(super) fn commonjs_assignment(cx: &mut Cx, node: Node, left: Node) -> bool {
    if cx.scope().is_some() {
        return false;
    }
    let (Some(slot), Some(value)) = (commonjs_slot(cx, left), assigned_value(node)) else {
        return false;
    };
    if is_function(value) || value.kind() == "class" {
        // `module.exports = function createApplication() {}` is named by the function;
        // `exports.f = function () {}` by `f`, as a member of what it is assigned to.
        let target = cx.text(left);
        let own = cx.field_text(value, "name").filter(|_| slot.is_none());
        let member = own.is_none();
        let name = own.unwrap_or_else(|| {
            let last = target.rsplit('.').next().unwrap_or(&target);
            last.to_string()
        });
        let outer = match node.parent() {
            Some(p) if p.kind() == "expression_statement" => p,
            _ => node,
        };
        let idx = if value.kind() == "class" {
            class_index(cx, value, outer, name.clone(), DefKind::Class)
        } else {
            function_index(cx, outer, value, name.clone())
        };
        if member && left.kind() == "member_expression" {
            cx.file.definitions[idx as usize].qualified_name = target;
        }
        let exported = slot.unwrap_or_else(|| "default".to_string());
        let line = node.start_position().row as u32 + 1;
        cx.export_own(vec![(name, exported)], line);
        return true;
    }
    if !commonjs_export(cx, node, slot, value) {
        visit(cx, value);
    }
    true
}

/// What a CommonJS assignment exports: `module.exports = …` / `exports = …` the module
/// itself (`None`), `exports.x = …` / `module.exports.x = …` the name `x`.
fn commonjs_slot(cx: &Cx, left: Node) -> Option<Option<String>> {
    match cx.text(left).as_str() {
        "module.exports" | "exports" => Some(None),
        text => {
            let name = text
                .strip_prefix("module.exports.")
                .or_else(|| text.strip_prefix("exports."))?;
            let plain = name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
            plain.then(|| Some(name.to_string()))
        }
    }
}

/// `module.exports = f`, `exports = module.exports = require('./x')`, `exports.g = f`,
/// `module.exports = { a, b: f }`: what the module exports, recorded as own exports (a
/// definition, exported as `default` or a name) or as a re-export of the required module. A
/// function or class assigned in place is defined by the caller and exported here under the
/// name it was defined with. Returns whether the value was handled (nothing left to visit).
fn commonjs_export(cx: &mut Cx, node: Node, slot: Option<String>, value: Node) -> bool {
    let line = node.start_position().row as u32 + 1;
    let exported = slot.clone().unwrap_or_else(|| "default".to_string());
    match value.kind() {
        "identifier" => {
            cx.export_own(vec![(cx.text(value), exported)], line);
            true
        }
        "call_expression" if is_require(cx, value) => {
            if let Some(module) = require_module(cx, value) {
                cx.import(match slot {
                    None => Import::everything(module, line),
                    Some(name) => Import {
                        module,
                        names: vec![("default".to_string(), name)],
                        module_alias: None,
                        wildcard: false,
                        line,
                    },
                });
            }
            true
        }
        "object" if slot.is_none() => {
            let mut names = Vec::new();
            let mut cursor = value.walk();
            for entry in value.named_children(&mut cursor) {
                // `{ a }` exports the definition `a` under its own name: nothing to record.
                if entry.kind() != "pair" {
                    continue;
                }
                let key = entry.field("key").map(|k| unquote(&cx.text(k)));
                let v = entry.field("value").filter(|v| v.kind() == "identifier");
                if let (Some(key), Some(v)) = (key, v) {
                    names.push((cx.text(v), key));
                }
            }
            cx.export_own(names, line);
            false
        }
        _ => false,
    }
}

/// The value finally assigned by `a = b = value`.
fn assigned_value(node: Node) -> Option<Node> {
    let mut value = node.field("right")?;
    while value.kind() == "assignment_expression" {
        value = value.field("right")?;
    }
    Some(value)
}

pub(super) fn export(cx: &mut Cx, node: Node) {
    if let Some(decl) = node.field("declaration") {
        // The definition's extent includes `export`.
        return match decl.kind() {
            "function_declaration" | "generator_function_declaration" => {
                let name = cx
                    .field_text(decl, "name")
                    .unwrap_or_else(|| "default".into());
                function(cx, node, decl, name)
            }
            "class_declaration" | "abstract_class_declaration" => {
                let name = cx
                    .field_text(decl, "name")
                    .unwrap_or_else(|| "default".into());
                class(cx, decl, node, name, DefKind::Class)
            }
            _ => visit(cx, decl),
        };
    }
    if let Some(value) = node.field("value") {
        // `export default function () {}` / `export default class {}` / `export default () => …`
        // / `export default app`: a named definition is exported as `default`.
        let line = node.start_position().row as u32 + 1;
        let named = match value.kind() {
            k if is_function(value) || k == "function_declaration" => {
                let name = cx.field_text(value, "name");
                let def = name.clone().unwrap_or_else(|| "default".into());
                function(cx, node, value, def);
                name
            }
            "class" | "class_declaration" => {
                let name = cx.field_text(value, "name");
                let def = name.clone().unwrap_or_else(|| "default".into());
                class(cx, value, node, def, DefKind::Class);
                name
            }
            "identifier" => Some(cx.text(value)),
            _ => {
                visit(cx, value);
                None
            }
        };
        if let Some(name) = named {
            cx.export_own(vec![(name, "default".to_string())], line);
        }
        return;
    }
    // `export function f` is parsed with the declaration as a plain child in some grammars.
    let mut cursor = node.walk();
    let children: Vec<Node> = node.named_children(&mut cursor).collect();
    for child in children {
        match child.kind() {
            "function_declaration" | "generator_function_declaration" => {
                let name = cx
                    .field_text(child, "name")
                    .unwrap_or_else(|| "default".into());
                function(cx, node, child, name);
            }
            "class_declaration" | "class" => {
                let name = cx
                    .field_text(child, "name")
                    .unwrap_or_else(|| "default".into());
                class(cx, child, node, name, DefKind::Class);
            }
            // `export { a as b }`: the definition `a` exported as `b`.
            "export_clause" if node.field("source").is_none() => {
                let line = node.start_position().row as u32 + 1;
                cx.export_own(export_clause_names(cx, child), line);
            }
            "export_clause" => {}
            _ => visit(cx, child),
        }
    }
    // Re-exports: `export * from './x'` passes on everything `./x` exports; `export { a, b as
    // c } from './x'` only those names; `export * as ns from './x'` only the namespace `ns`.
    if let Some(source) = node.field("source") {
        let module = unquote(&cx.text(source));
        let line = node.start_position().row as u32 + 1;
        let mut names = Vec::new();
        let mut module_alias = None;
        let mut listed = false;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "export_clause" => {
                    listed = true;
                    names.extend(export_clause_names(cx, child));
                }
                "namespace_export" => {
                    module_alias = child.named_child(0).map(|n| unquote(&cx.text(n)));
                }
                _ => {}
            }
        }
        cx.import(if listed || module_alias.is_some() {
            Import {
                module,
                names,
                module_alias,
                wildcard: false,
                line,
            }
        } else {
            Import::everything(module, line)
        });
    }
}

/// `{ a, b as c }` of an export: (name, exported name) pairs.
fn export_clause_names(cx: &Cx, clause: Node) -> Vec<(String, String)> {
    let mut names = Vec::new();
    let mut specs = clause.walk();
    for spec in clause.named_children(&mut specs) {
        if let Some(name) = cx.field_text(spec, "name") {
            let alias = cx.field_text(spec, "alias").unwrap_or_else(|| name.clone());
            names.push((unquote(&name), unquote(&alias)));
        }
    }
    names
}

pub(super) fn import(cx: &mut Cx, node: Node) {
    let Some(source) = node.field("source") else {
        return;
    };
    let module = unquote(&cx.text(source));
    let mut names = Vec::new();
    let mut module_alias = None;
    let mut cursor = node.walk();
    let clauses: Vec<Node> = node
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "import_clause")
        .collect();
    for clause in clauses {
        let mut cursor = clause.walk();
        for part in clause.named_children(&mut cursor) {
            match part.kind() {
                // `import x from './m'` binds the default export.
                "identifier" => names.push(("default".to_string(), cx.text(part))),
                "namespace_import" => {
                    module_alias = part.named_child(0).map(|n| cx.text(n));
                }
                "named_imports" => {
                    let mut c = part.walk();
                    for spec in part.named_children(&mut c) {
                        if spec.kind() != "import_specifier" {
                            continue;
                        }
                        let name = cx.field_text(spec, "name").unwrap_or_default();
                        let alias = cx.field_text(spec, "alias").unwrap_or_else(|| name.clone());
                        names.push((unquote(&name), alias));
                    }
                }
                _ => {}
            }
        }
    }
    cx.import(Import {
        module,
        names,
        module_alias,
        wildcard: false,
        line: node.start_position().row as u32 + 1,
    });
}

pub(super) fn is_require(cx: &Cx, call: Node) -> bool {
    call.field("function")
        .is_some_and(|f| f.kind() == "identifier" && cx.text(f) == "require")
}

fn require_module(cx: &Cx, call: Node) -> Option<String> {
    let args = call.field("arguments")?;
    let first = args.named_child(0)?;
    (first.kind() == "string").then(|| unquote(&cx.text(first)))
}

/// `const x = require('m')` binds `x` to the module, and to what the module exports as a
/// whole (`module.exports = f`), its `default`.
pub(super) fn require(cx: &mut Cx, call: Node, alias: Option<String>) {
    if let Some(module) = require_module(cx, call) {
        let alias = alias.filter(|a| !a.is_empty());
        cx.import(Import {
            module,
            names: alias
                .iter()
                .map(|a| ("default".to_string(), a.clone()))
                .collect(),
            module_alias: alias,
            wildcard: false,
            line: call.start_position().row as u32 + 1,
        });
    }
}

pub(super) fn require_names(cx: &mut Cx, call: Node, names: Vec<(String, String)>) {
    if let Some(module) = require_module(cx, call) {
        cx.import(Import {
            module,
            names,
            module_alias: None,
            wildcard: false,
            line: call.start_position().row as u32 + 1,
        });
    }
}
