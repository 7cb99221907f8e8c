//! Ruby: classes and modules (reopened across files: each opening is a node of the same
//! qualified name), methods (`def m`, `def self.m`, `class << self`), `alias`, constants;
//! `require` / `require_relative`; calls with receivers (`Foo.new`, `obj.m`, `self.m`), bare
//! calls with arguments, constants as type uses, `< Base` (inherits) and `include` / `extend` /
//! `prepend` (mixins, as implements). `x = Foo.new` and `@x = Foo.new` bind receiver types.
//!
//! Qualified names are Ruby's: `Mod::Class#method` for instance methods, `Mod::Class.method`
//! for class methods.

use super::Fields;
use tree_sitter::Node;

use super::Cx;
use crate::model::{DefKind, Import, RefKind};

/// Kinds of definitions for Ruby's separators (see [`Cx::qualify`]): an instance method is
/// `Method`, a class method `Function`.
pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "class" => container(cx, node, DefKind::Class),
        "module" => container(cx, node, DefKind::Module),
        "singleton_class" => {
            // `class << self`: its methods are class methods of the enclosing class.
            let was = cx.ruby_singleton;
            cx.ruby_singleton = true;
            cx.children(node, visit);
            cx.ruby_singleton = was;
        }
        "method" => {
            let kind = if cx.ruby_singleton {
                DefKind::Function
            } else {
                DefKind::Method
            };
            method(cx, node, kind)
        }
        "singleton_method" => method(cx, node, DefKind::Function),
        "alias" => {
            if let Some(name) = cx.field_text(node, "alias") {
                let kind = if cx.in_container() {
                    DefKind::Method
                } else {
                    DefKind::Function
                };
                cx.define(node, name, kind, None);
            }
        }
        "assignment" => assignment(cx, node),
        "call" => call(cx, node),
        "constant" => {
            let name = cx.text(node);
            // `MSG` is a value, `Parser` a class or module: both are constants in Ruby.
            let kind = if name.chars().any(|c| c.is_ascii_lowercase()) {
                RefKind::Type
            } else {
                RefKind::Call
            };
            cx.reference(kind, name, None, node);
        }
        "scope_resolution" => scoped_constant(cx, node, RefKind::Type),
        // A bare name as a statement (`finish`) is a call of a method without arguments;
        // inside expressions a bare name is mostly a local variable, and is left alone.
        "identifier"
            if node.parent().is_some_and(|p| {
                matches!(
                    p.kind(),
                    "body_statement" | "then" | "else" | "do" | "block_body"
                )
            }) =>
        {
            let name = cx.text(node);
            cx.reference(RefKind::Call, name, None, node);
        }
        _ => cx.children(node, visit),
    }
}

/// `A::B::C` as a reference to `C` with receiver `A::B`.
fn scoped_constant(cx: &mut Cx, node: Node, kind: RefKind) {
    let text = cx.text(node);
    let text = text.trim_start_matches("::");
    let (recv, name) = text.rsplit_once("::").unwrap_or(("", text));
    let receiver = (!recv.is_empty()).then(|| recv.to_string());
    cx.reference(kind, name.to_string(), receiver, node);
}

fn container(cx: &mut Cx, node: Node, kind: DefKind) {
    let Some(name_node) = node.field("name") else {
        return cx.children(node, visit);
    };
    // `class A::B::C` is C, nested where its scope says: the name is the last segment.
    let full = cx.text(name_node);
    let name = full.rsplit("::").next().unwrap_or(&full).to_string();
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    let was = cx.ruby_singleton;
    cx.ruby_singleton = false;
    cx.within(idx, false, |cx| {
        if let Some(sup) = node.field("superclass") {
            let mut cursor = sup.walk();
            let bases: Vec<Node> = sup.named_children(&mut cursor).collect();
            for b in bases {
                match b.kind() {
                    "constant" => {
                        let base = cx.text(b);
                        cx.reference(RefKind::Inherits, base, None, b);
                    }
                    "scope_resolution" => scoped_constant(cx, b, RefKind::Inherits),
                    _ => visit(cx, b),
                }
            }
        }
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
    cx.ruby_singleton = was;
}

fn method(cx: &mut Cx, node: Node, kind: DefKind) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let body = node.field("body");
    let idx = cx.define(node, name, kind, body);
    cx.within(idx, true, |cx| {
        if let Some(params) = node.field("parameters") {
            cx.children(params, visit);
        }
        if let Some(body) = body {
            if body.kind() == "body_statement" {
                cx.children(body, visit);
            } else {
                visit(cx, body);
            }
        }
    });
}

/// `CONST = …` defines a constant; `x = Foo.new` / `@x = Foo.new` bind a receiver type.
fn assignment(cx: &mut Cx, node: Node) {
    let (Some(left), right) = (node.field("left"), node.field("right")) else {
        return cx.children(node, visit);
    };
    if left.kind() == "constant" {
        let name = cx.text(left);
        let idx = cx.define(node, name, DefKind::Constant, None);
        if let Some(r) = right {
            cx.within(idx, false, |cx| visit(cx, r));
        }
        return;
    }
    if matches!(left.kind(), "identifier" | "instance_variable")
        && let Some(r) = right
        && let Some(ty) = cx.created_class(r)
    {
        let var = cx.text(left);
        match var.strip_prefix('@') {
            Some(field) => {
                cx.bind_member(format!("self.{field}"), ty.clone());
                cx.bind_member(var, ty);
            }
            None => cx.bind(var, ty),
        }
    }
    cx.children(node, visit);
}

fn call(cx: &mut Cx, node: Node) {
    let method = cx.field_text(node, "method").unwrap_or_default();
    let receiver = node.field("receiver");
    let args = node.field("arguments");
    if receiver.is_none() {
        match method.as_str() {
            "require" | "require_relative" | "load" => {
                if let Some(path) = args.and_then(|a| first_string(cx, a)) {
                    let module = if method == "require_relative" {
                        format!("./{path}")
                    } else {
                        path
                    };
                    cx.import(Import::everything(
                        module,
                        node.start_position().row as u32 + 1,
                    ));
                }
                return;
            }
            "include" | "extend" | "prepend" => {
                if let Some(a) = args {
                    let mut cursor = a.walk();
                    let mixins: Vec<Node> = a.named_children(&mut cursor).collect();
                    for m in mixins {
                        match m.kind() {
                            "constant" => {
                                let name = cx.text(m);
                                cx.reference(RefKind::Implements, name, None, m);
                            }
                            "scope_resolution" => scoped_constant(cx, m, RefKind::Implements),
                            _ => visit(cx, m),
                        }
                    }
                }
                return;
            }
            "attr_reader" | "attr_writer" | "attr_accessor" | "private" | "protected"
            | "public" | "module_function" => {
                if let Some(a) = args {
                    cx.children(a, visit);
                }
                return;
            }
            _ => {}
        }
    }
    // `describe Foo do … end`: inside, RSpec's `described_class` is `Foo`.
    if method == "describe"
        && receiver.is_none_or(|r| cx.text(r) == "RSpec")
        && let Some(described) = args.and_then(|a| a.named_child(0))
        && matches!(described.kind(), "constant" | "scope_resolution")
    {
        let text = cx.text(described);
        let class = text.rsplit("::").next().unwrap_or(&text).to_string();
        cx.bindings.push(vec![(DESCRIBED_CLASS.to_string(), class)]);
        if let Some(a) = args {
            cx.children(a, visit);
        }
        if let Some(b) = node.field("block") {
            visit(cx, b);
        }
        cx.bindings.pop();
        return;
    }
    if let Some(m) = node.field("method") {
        match receiver {
            // `Foo.new` constructs Foo: a call to the class, as `new Foo()` is elsewhere.
            Some(r) if method == "new" && matches!(r.kind(), "constant" | "scope_resolution") => {
                let text = cx.text(r);
                let name = text.rsplit("::").next().unwrap_or(&text).to_string();
                cx.reference(RefKind::Call, name, None, r);
            }
            // `described_class.new(…)` constructs the described class.
            Some(r) if let Some(class) = described_new(cx, node) => {
                cx.reference(RefKind::Call, class, None, r);
            }
            // `File.join(…)`, `expect(x).to …`, `is_expected.to`: a method of a built-in, or of
            // what one returns (an RSpec expectation, a core object), is the library's, as the
            // built-in is.
            Some(r) if of_builtin(cx, r) => visit(cx, r),
            // `described_class.new(…).bar`: an instance method of the described class.
            Some(r) if let Some(class) = described_new(cx, r) => {
                cx.reference_on_type(RefKind::Call, method.clone(), class, m);
                visit(cx, r);
            }
            // `Foo.new(…).bar`: `bar` is an instance method of Foo (`Cx::call_on`).
            Some(r) => {
                cx.call_on(method.clone(), r, receiver_text(cx, r), m);
                visit(cx, r);
            }
            None => cx.reference(RefKind::Call, method.clone(), None, m),
        }
    }
    if let Some(a) = args {
        cx.children(a, visit);
    }
    if let Some(b) = node.field("block") {
        visit(cx, b);
    }
}

/// What RSpec calls the class a `describe` block is about.
const DESCRIBED_CLASS: &str = "described_class";

/// The described class, when `node` is `described_class.new(…)`.
fn described_new(cx: &Cx, node: Node) -> Option<String> {
    let receiver = node.field("receiver")?;
    (node.kind() == "call"
        && cx.field_text(node, "method").as_deref() == Some("new")
        && receiver.kind() == "identifier"
        && cx.text(receiver) == DESCRIBED_CLASS)
        .then(|| cx.lookup(DESCRIBED_CLASS))
        .flatten()
}

/// Whether `receiver` is a built-in (`File.join`, `JSON.parse`, `Time.now`: the core and
/// standard library's classes and modules) or what one returns: a call of one without a
/// receiver (`expect(x)`), or RSpec's `is_expected`.
fn of_builtin(cx: &Cx, receiver: Node) -> bool {
    match receiver.kind() {
        "constant" => super::builtins::is_builtin(crate::model::Lang::Ruby, &cx.text(receiver)),
        "call" => {
            receiver.field("receiver").is_none()
                && receiver.field("method").is_some_and(|m| {
                    super::builtins::is_builtin(crate::model::Lang::Ruby, &cx.text(m))
                })
        }
        "identifier" => cx.text(receiver) == "is_expected",
        _ => false,
    }
}

fn receiver_text(cx: &Cx, node: Node) -> String {
    match node.kind() {
        "self" => "self".into(),
        "identifier" | "constant" | "scope_resolution" => cx.text(node),
        "instance_variable" => {
            let t = cx.text(node);
            format!("self.{}", t.trim_start_matches('@'))
        }
        _ => String::new(),
    }
}

/// The first string literal among a call's arguments, unquoted (`require "a/b"`).
fn first_string(cx: &Cx, args: Node) -> Option<String> {
    let mut cursor = args.walk();
    let s = args
        .named_children(&mut cursor)
        .find(|c| c.kind() == "string")?;
    let mut c2 = s.walk();
    let content = s
        .named_children(&mut c2)
        .find(|c| c.kind() == "string_content")?;
    Some(cx.text(content))
}
