//! C++: namespaces (modules: `ns::Class::method`), classes, structs, unions and enums (with
//! their inline methods, constructors and destructors), out-of-line member definitions
//! (`void Parser::parse() {…}` is `Parser`'s method, qualified `ns::Parser::parse`), function
//! templates and class templates (the template's declaration), `using X = …` aliases,
//! `constexpr`/`const` constants, macros; `#include`; calls (`f()`, `ns::f()`, `obj.f()`,
//! `p->f()`, `f<T>()`), constructions (`new T`, `T{…}`), base classes and type uses. What C++
//! shares with C (macros, typedefs, includes, declarations, C calls) is C's visitor
//! ([`super::c_lang`]), recursing through this one.

use super::Fields;
use tree_sitter::Node;

use super::Cx;
use super::c_lang::{self, declared_name};
use crate::model::{DefKind, RefKind};

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "namespace_definition" => namespace(cx, node),
        "class_specifier" => class(cx, node, DefKind::Class),
        "struct_specifier" | "union_specifier" => class(cx, node, DefKind::Struct),
        "function_definition" => function(cx, node),
        "field_declaration" => field(cx, node),
        "alias_declaration" => alias(cx, node),
        "call_expression" => call(cx, node),
        "new_expression" => {
            if let Some(t) = node.field("type") {
                construct(cx, t);
            }
            if let Some(args) = node.field("arguments") {
                cx.children(args, visit);
            }
        }
        "base_class_clause" => bases(cx, node),
        "template_type" => {
            if let Some(n) = node.field("name") {
                let name = cx.text(n);
                cx.reference(RefKind::Type, name, None, n);
            }
            if let Some(args) = node.field("arguments") {
                cx.children(args, visit);
            }
        }
        // `using namespace std;`, `using std::string;`: C++'s lookup is by name already.
        "using_declaration" => {}
        "qualified_identifier" if in_std(cx, node) => std_arguments(cx, node),
        "compound_statement" => match fixture_test_case(cx, node) {
            Some((fixture, name, start)) => fixture_method(cx, node, start, &fixture, name),
            None => c_lang::visit_shared(cx, node, visit),
        },
        "template_declaration" => template(cx, node),
        _ => c_lang::visit_shared(cx, node, visit),
    }
}

/// `template <typename T, class... Args> …`: `T` and `Args` are in scope for what it declares.
fn template(cx: &mut Cx, node: Node) {
    let before = cx.type_params.len();
    if let Some(params) = node.field("parameters") {
        let mut cursor = params.walk();
        for p in params.named_children(&mut cursor) {
            let name = match p.kind() {
                "type_parameter_declaration" | "variadic_type_parameter_declaration" => {
                    let mut c = p.walk();
                    p.named_children(&mut c)
                        .find(|n| n.kind() == "type_identifier")
                        .map(|n| cx.text(n))
                }
                "optional_type_parameter_declaration" => cx.field_text(p, "name"),
                "template_template_parameter_declaration" => None,
                _ => p.field("declarator").and_then(|d| declared_name(cx, d)),
            };
            if let Some(n) = name {
                cx.type_params.push(n);
            }
        }
    }
    let mut cursor = node.walk();
    let inner: Vec<Node> = node
        .named_children(&mut cursor)
        .filter(|c| c.kind() != "template_parameter_list")
        .collect();
    for c in inner {
        visit(cx, c);
    }
    cx.type_params.truncate(before);
}

/// `namespace a::b { … }` is a module `a::b`; an anonymous one holds its members directly.
fn namespace(cx: &mut Cx, node: Node) {
    let body = node.field("body");
    match (cx.field_text(node, "name"), body) {
        (Some(name), Some(b)) => {
            let idx = cx.define(node, name, DefKind::Module, Some(b));
            cx.within(idx, false, |cx| cx.children(b, visit));
        }
        (None, Some(b)) => cx.children(b, visit),
        _ => {}
    }
}

fn class(cx: &mut Cx, node: Node, kind: DefKind) {
    let body = node.field("body");
    let name = node.field("name").map(|n| last_segment(cx, n));
    match (name, body) {
        (Some(name), Some(b)) => {
            let idx = cx.define(node, name, kind, Some(b));
            cx.within(idx, false, |cx| {
                let mut cursor = node.walk();
                let bases: Vec<Node> = node
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() == "base_class_clause")
                    .collect();
                for c in bases {
                    bases_of(cx, c);
                }
                cx.children(b, visit);
            });
        }
        // `class Foo;` / `struct Foo *p`: a use of the type.
        (Some(name), None) => {
            if let Some(n) = node.field("name") {
                cx.reference(RefKind::Type, name, None, n);
            }
        }
        (None, Some(b)) => cx.children(b, visit),
        (None, None) => {}
    }
}

/// A base class clause is read with its class (see [`class`]); met elsewhere, its types.
fn bases(cx: &mut Cx, node: Node) {
    bases_of(cx, node)
}

fn bases_of(cx: &mut Cx, node: Node) {
    let mut cursor = node.walk();
    let types: Vec<Node> = node
        .named_children(&mut cursor)
        .filter(|c| {
            matches!(
                c.kind(),
                "type_identifier" | "qualified_identifier" | "template_type"
            )
        })
        .collect();
    for t in types {
        let name = last_segment(cx, t);
        cx.reference(RefKind::Inherits, name, None, t);
        if t.kind() == "template_type"
            && let Some(args) = t.field("arguments")
        {
            cx.children(args, visit);
        }
    }
}

fn is_keyword(name: &str) -> bool {
    matches!(
        name,
        "namespace" | "class" | "struct" | "union" | "enum" | "template" | "typename" | "using"
    )
}

/// The last name of a possibly qualified or templated name: `Parser` for `ns::Parser<T>`.
fn last_segment(cx: &Cx, node: Node) -> String {
    match node.kind() {
        "qualified_identifier" => node
            .field("name")
            .map_or_else(|| cx.text(node), |n| last_segment(cx, n)),
        "template_type" | "template_function" => node
            .field("name")
            .map_or_else(|| cx.text(node), |n| cx.text(n)),
        _ => cx.text(node),
    }
}

/// The scope segments and the name a function declarator names: `(["Parser"], "parse")` for
/// `Parser::parse`, `([], "~Parser")`, `([], "operator==")`.
fn function_name(cx: &Cx, node: Node) -> Option<(Vec<String>, String)> {
    let mut cur = node;
    loop {
        match cur.kind() {
            "function_declarator" | "pointer_declarator" | "reference_declarator" => {
                cur = cur.field("declarator")?
            }
            "qualified_identifier" => {
                let mut scope = Vec::new();
                let mut q = cur;
                loop {
                    if let Some(s) = q.field("scope") {
                        scope.push(last_segment(cx, s));
                    }
                    match q.field("name") {
                        Some(n) if n.kind() == "qualified_identifier" => q = n,
                        Some(n) => return Some((scope, last_segment(cx, n))),
                        None => return None,
                    }
                }
            }
            "identifier" | "field_identifier" | "destructor_name" | "operator_name" => {
                return Some((Vec::new(), cx.text(cur)));
            }
            "template_function" => return Some((Vec::new(), last_segment(cx, cur))),
            _ => return None,
        }
    }
}

/// Test macros whose body is a method of a fixture class, named by their first argument: the
/// body's bare calls and fields are the fixture's (gtest `TEST_F(DBTest, Empty) {…}`, Catch2
/// `TEST_CASE_METHOD(TApp, "name") {…}`).
const FIXTURE_TESTS: [&str; 5] = [
    "TEST_F",
    "TEST_P",
    "TYPED_TEST",
    "TYPED_TEST_P",
    "TEST_CASE_METHOD",
];

/// Whether `def` is a fixture test's body ([`FIXTURE_TESTS`]): a method of its fixture that
/// nothing calls by name, so its name (the test's, `Empty`, `"NonEmptyFile"`) is not one a call
/// may find — a test named like the helper it tests would take its calls.
pub fn is_fixture_test(def: &crate::model::Definition) -> bool {
    def.kind == DefKind::Method
        && FIXTURE_TESTS.iter().any(|m| {
            def.signature
                .strip_prefix(m)
                .is_some_and(|rest| rest.starts_with('('))
        })
}

/// gtest's `TEST_F(Fixture, Name) {…}`, which the grammar reads as a function named `TEST_F`
/// with two parameters: the fixture and the test's name.
fn fixture_test(cx: &Cx, node: Node) -> Option<(String, String)> {
    let declarator = node.field("declarator")?;
    let name = declarator.field("declarator")?;
    if declarator.kind() != "function_declarator"
        || name.kind() != "identifier"
        || !FIXTURE_TESTS.contains(&cx.text(name).as_str())
    {
        return None;
    }
    let params = declarator.field("parameters")?;
    let mut cursor = params.walk();
    let names: Vec<String> = params
        .named_children(&mut cursor)
        .map(|p| {
            let mut c = p.walk();
            let parts: Vec<Node> = p.named_children(&mut c).collect();
            match parts.as_slice() {
                [t] if t.kind() == "type_identifier" => Some(cx.text(*t)),
                _ => None,
            }
        })
        .collect::<Option<_>>()?;
    match names.as_slice() {
        [fixture, test, ..] => Some((fixture.clone(), test.clone())),
        _ => None,
    }
}

/// Catch2's `TEST_CASE_METHOD(Fixture, "name", …) {…}`, which the grammar reads as a call
/// followed by a block: for the block, the fixture, the test's name and where the call starts.
fn fixture_test_case<'t>(cx: &Cx, block: Node<'t>) -> Option<(String, String, Node<'t>)> {
    let statement = block.prev_named_sibling()?;
    let call = statement.named_child(0)?;
    if statement.kind() != "expression_statement" || call.kind() != "call_expression" {
        return None;
    }
    let function = call.field("function")?;
    if function.kind() != "identifier" || !FIXTURE_TESTS.contains(&cx.text(function).as_str()) {
        return None;
    }
    let args = call.field("arguments")?;
    let mut cursor = args.walk();
    let mut args = args.named_children(&mut cursor);
    let fixture = args.next().filter(|a| a.kind() == "identifier")?;
    let name = args
        .next()
        .filter(|a| a.kind() == "string_literal")
        .map(|a| cx.text(a).trim_matches('"').to_string())
        .filter(|n| !n.is_empty())?;
    Some((cx.text(fixture), name, statement))
}

/// A fixture test's body as a method of its fixture, qualified `ns::Fixture::name`: its bare
/// calls are the fixture's members (see `owner_type`). `start` is where the test's macro
/// begins, the signature its first line.
fn fixture_method(cx: &mut Cx, body: Node, start: Node, fixture: &str, name: String) {
    let idx = cx.define(body, name.clone(), DefKind::Method, Some(body));
    let prefix = match cx.scope_def() {
        Some(d) => format!("{}::", d.qualified_name),
        None => String::new(),
    };
    let signature = cx.text(start);
    let def = &mut cx.file.definitions[idx as usize];
    def.qualified_name = format!("{prefix}{fixture}::{name}");
    def.start_line = start.start_position().row as u32 + 1;
    def.start_byte = start.start_byte() as u32;
    let first_line = signature.lines().next().unwrap_or("").trim();
    def.signature = super::truncate_chars(first_line.trim_end_matches(['{', ' ']), 300);
    cx.reference(RefKind::Type, fixture.to_string(), None, start);
    cx.within(idx, true, |cx| cx.children(body, visit));
}

fn function(cx: &mut Cx, node: Node) {
    if let (Some((fixture, name)), Some(body)) = (fixture_test(cx, node), node.field("body")) {
        return fixture_method(cx, body, node, &fixture, name);
    }
    let Some((scope, name)) = node
        .field("declarator")
        .and_then(|d| function_name(cx, d))
        // An unknown macro before `namespace x {` (fmt's `FMT_BEGIN_NAMESPACE`) makes
        // tree-sitter read a "function" named by a keyword: read its body as code instead.
        .filter(|(_, name)| !is_keyword(name))
    else {
        return cx.children(node, visit);
    };
    let body = node.field("body");
    let owner = scope.last().cloned().or_else(|| {
        cx.in_container()
            .then(|| cx.scope_def().map(|d| d.name.clone()))
            .flatten()
    });
    let kind = match &owner {
        Some(o) if *o == name => DefKind::Constructor,
        Some(_) => DefKind::Method,
        None => DefKind::Function,
    };
    let idx = cx.define(node, name.clone(), kind, body);
    if !scope.is_empty() {
        // Out of line: `ns::Parser::parse`, found as `Parser`'s member (see `owner_type`).
        let prefix = match cx.scope_def() {
            Some(d) => format!("{}::", d.qualified_name),
            None => String::new(),
        };
        cx.file.definitions[idx as usize].qualified_name =
            format!("{prefix}{}::{name}", scope.join("::"));
    }
    cx.within(idx, true, |cx| {
        if let Some(t) = node.field("type") {
            visit(cx, t);
        }
        if let Some(d) = node.field("declarator") {
            cx.children(d, visit);
        }
        let mut cursor = node.walk();
        let inits: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "field_initializer_list")
            .collect();
        for i in inits {
            cx.children(i, visit);
        }
        if let Some(body) = body {
            cx.children(body, visit);
        }
    });
}

/// A member declaration: a method prototype (its types), a data member (its type bound for
/// `this->member` receivers), or a `static constexpr` constant.
fn field(cx: &mut Cx, node: Node) {
    let declarator = node.field("declarator");
    if let Some(d) = declarator
        && !c_lang::declares_function(d)
        && let Some(ty) = node.field("type")
        && let Some(name) = declared_name(cx, d)
    {
        if cx.text(node).contains("constexpr") && node.field("default_value").is_some() {
            let idx = cx.define(node, name, DefKind::Constant, None);
            cx.within(idx, false, |cx| cx.children(node, visit));
            return;
        }
        let ty_name = last_segment(cx, ty);
        if ty.kind() != "primitive_type" {
            cx.bind_member(name, ty_name);
        }
    }
    cx.children(node, visit);
}

/// `using Handler = std::function<void()>;`
fn alias(cx: &mut Cx, node: Node) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let ty = node.field("type");
    // `using json = nlohmann::json;` names another `json`, not itself.
    let aliases_namesake = ty.is_some_and(|t| {
        let mut cursor = t.walk();
        let last = t
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "type_qualifier")
            .last()
            .unwrap_or(t);
        last_segment(cx, last) == name || cx.text(t).ends_with(&format!("::{name}"))
    });
    let idx = cx.define(node, name, DefKind::TypeAlias, None);
    cx.within(idx, false, |cx| {
        if let Some(t) = ty.filter(|_| !aliases_namesake) {
            visit(cx, t);
        }
    });
}

/// `new T(…)` and `T{…}` construct a `T`: a call of its constructor, found through the type.
fn construct(cx: &mut Cx, ty: Node) {
    let name = last_segment(cx, ty);
    cx.reference(RefKind::Call, name, None, ty);
    if ty.kind() == "template_type"
        && let Some(args) = ty.field("arguments")
    {
        cx.children(args, visit);
    }
}

/// Whether a qualified name is the standard library's (`std::string`, `std::vector<T>`,
/// `std::chrono::seconds`): never the repository's, so not a reference to resolve, as a
/// language's built-in names are not.
fn in_std(cx: &Cx, node: Node) -> bool {
    node.field("scope")
        .is_some_and(|s| s.kind() == "namespace_identifier" && cx.text(s) == "std")
}

/// The template arguments inside a standard library name, which may be the repository's own
/// types (`std::vector<Option>`, `std::make_shared<ConfigINI>`).
fn std_arguments(cx: &mut Cx, node: Node) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "template_argument_list" => visit(cx, n),
            "qualified_identifier" | "template_type" | "template_function" => {
                let mut cursor = n.walk();
                stack.extend(n.named_children(&mut cursor));
            }
            _ => {}
        }
    }
}

/// C's calls, and `ns::f()`, `Parser::make()` (the innermost scope is the receiver) and
/// `f<T>()`; a call of the standard library (`std::move(x)`) only for its arguments.
fn call(cx: &mut Cx, node: Node) {
    let Some(f) = node
        .field("function")
        .filter(|f| matches!(f.kind(), "qualified_identifier" | "template_function"))
    else {
        return c_lang::call(cx, node, visit);
    };
    if f.kind() == "qualified_identifier" && in_std(cx, f) {
        std_arguments(cx, f);
        if let Some(args) = node.field("arguments") {
            cx.children(args, visit);
        }
        return;
    }
    let name = last_segment(cx, f);
    if f.kind() == "qualified_identifier" {
        // The innermost scope: `detail` in `json::detail::parse_as`.
        let mut q = f;
        while let Some(n) = q
            .field("name")
            .filter(|n| n.kind() == "qualified_identifier")
        {
            q = n;
        }
        let scope = q.field("scope").map(|s| last_segment(cx, s));
        cx.reference(RefKind::Call, name, scope, f);
    } else {
        cx.reference(RefKind::Call, name, None, f);
        if let Some(args) = f.field("arguments") {
            cx.children(args, visit);
        }
    }
    if let Some(args) = node.field("arguments") {
        cx.children(args, visit);
    }
}
