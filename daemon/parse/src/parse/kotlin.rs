//! Kotlin: classes, interfaces, enum classes, objects, companion objects (their members are
//! the class's: `Pricing.create()` reaches them), functions (extension functions included),
//! constructors, `const val` constants, type aliases; the package and imports (`a.b.C`,
//! `a.b.*`, `a.b.C as D`); calls (`f()`, `x.f()`, `Foo()` constructing Foo), supertypes (a
//! supertype called as a constructor is the base class, the others interfaces) and type uses.
//! Parameters, properties and `val x = Foo()` bind receiver types. Kotlin shares Java's
//! family: packages and imports resolve across the two.

use tree_sitter::Node;

use super::{Cx, child_of_kind};
use crate::model::{DefKind, Import, RefKind};

/// A class whose primary constructor starts on the next line (`class Options` then `private
/// constructor(`, as formatters wrap long headers) is valid Kotlin, but inside a class body
/// the grammar ends the declaration at the line break and the enclosing class is lost. A
/// copy of `bytes` with each such line break moved to the line after the constructor's (its
/// first indentation byte becomes the break) to parse instead, or `None` when there is none:
/// offsets are unchanged and every line after the two keeps its number.
pub(super) fn join_wrapped_constructors(bytes: &[u8]) -> Option<Vec<u8>> {
    if !bytes
        .windows(12)
        .any(|w| w == b"constructor(" || w.starts_with(b"constructor "))
    {
        return None;
    }
    let mut out: Option<Vec<u8>> = None;
    let line_ends: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i)
        .collect();
    for k in 0..line_ends.len().saturating_sub(1) {
        let (header_end, ctor_end) = (line_ends[k], line_ends[k + 1]);
        let header_start = k.checked_sub(1).map_or(0, |j| line_ends[j] + 1);
        let header = &bytes[header_start..header_end];
        let ctor = &bytes[header_end + 1..ctor_end];
        let next = bytes.get(ctor_end + 1).copied();
        if ends_in_class_name(header)
            && starts_primary_constructor(ctor)
            && matches!(next, Some(b' ' | b'\t'))
        {
            let copy = out.get_or_insert_with(|| bytes.to_vec());
            copy[header_end] = b' ';
            if header_end > 0 && copy[header_end - 1] == b'\r' {
                copy[header_end - 1] = b' ';
            }
            copy[ctor_end + 1] = b'\n';
        }
    }
    out
}

/// The copy of a Kotlin file the grammar reads, when it needs one ([`join_wrapped_constructors`],
/// [`guards_as_conditions`]): same length, same line breaks but the moved ones, so offsets and
/// later lines' numbers hold.
pub(super) fn readable_copy(bytes: &[u8]) -> Option<Vec<u8>> {
    let joined = join_wrapped_constructors(bytes);
    let source = joined.as_deref().unwrap_or(bytes);
    guards_as_conditions(source).or(joined)
}

/// A `when` branch with a guard (`is Literal<*> if e.isJson -> …`, Kotlin 2.1) is beyond
/// tree-sitter-kotlin-ng 1.1.0 (the newest), and the error swallows the whole file. The guard
/// is read as a second condition of the branch instead (`is Literal<*> ,  e.isJson`): the same
/// names and calls at the same offsets. `None` when no line needs it.
fn guards_as_conditions(bytes: &[u8]) -> Option<Vec<u8>> {
    if !bytes.windows(4).any(|w| w == b" if ") {
        return None;
    }
    let mut out: Option<Vec<u8>> = None;
    let mut start = 0;
    while start < bytes.len() {
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| start + i);
        let line = &bytes[start..end];
        let code = line.trim_ascii_start();
        if code.starts_with(b"is ") || code.starts_with(b"!is ") {
            let guard = line.windows(4).position(|w| w == b" if ");
            let arrow = line.windows(2).position(|w| w == b"->");
            if let Some(at) = guard.filter(|&g| arrow.is_none_or(|a| g < a)) {
                let copy = out.get_or_insert_with(|| bytes.to_vec());
                copy[start + at + 1] = b',';
                copy[start + at + 2] = b' ';
            }
        }
        start = end + 1;
    }
    out
}

/// Whether `line` ends with `class Name` or `class Name<T, …>` (a header with nothing after
/// the name).
fn ends_in_class_name(line: &[u8]) -> bool {
    let Ok(line) = std::str::from_utf8(line) else {
        return false;
    };
    let line = line.trim_end();
    let code = line.trim_start();
    if code.starts_with("//") || code.starts_with('*') {
        return false;
    }
    let Some(at) = line.rfind("class ") else {
        return false;
    };
    if at > 0 && line.as_bytes()[at - 1].is_ascii_alphanumeric() {
        return false;
    }
    let rest = line[at + "class ".len()..].trim_start();
    let name_end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let (name, tail) = rest.split_at(name_end);
    !name.is_empty() && (tail.is_empty() || (tail.starts_with('<') && tail.ends_with('>')))
}

/// Whether `line` is a primary constructor's start: modifiers and annotations, then
/// `constructor(`.
fn starts_primary_constructor(line: &[u8]) -> bool {
    let Ok(line) = std::str::from_utf8(line) else {
        return false;
    };
    let mut rest = line.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix("constructor") {
            return after.trim_start().starts_with('(');
        }
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..word_end];
        let modifier = matches!(word, "private" | "protected" | "internal" | "public")
            || (word.starts_with('@') && !word.contains('('));
        if !modifier || word_end == rest.len() {
            return false;
        }
        rest = rest[word_end..].trim_start();
    }
}

pub(super) fn visit(cx: &mut Cx, node: Node) {
    match node.kind() {
        "package_header" => {
            if let Some(q) = child_of_kind(node, "qualified_identifier") {
                cx.file.package = Some(cx.text(q));
            }
        }
        "import" => import(cx, node),
        "class_declaration" => {
            let kind = if has_token(node, "interface") {
                DefKind::Interface
            } else if child_of_kind(node, "enum_class_body").is_some() {
                DefKind::Enum
            } else {
                DefKind::Class
            };
            type_decl(cx, node, kind)
        }
        "object_declaration" => type_decl(cx, node, DefKind::Class),
        // A companion's members are called through the class: they are the class's.
        "companion_object" => {
            if let Some(body) = child_of_kind(node, "class_body") {
                cx.children(body, visit);
            }
        }
        "function_declaration" => function(cx, node),
        "secondary_constructor" => {
            let name = cx.scope_def().map(|d| d.name.clone()).unwrap_or_default();
            let idx = cx.define(node, name, DefKind::Constructor, None);
            cx.within(idx, true, |cx| cx.children(node, visit));
        }
        "property_declaration" => property(cx, node),
        "type_alias" => {
            if let Some(name) = cx.field_text(node, "type") {
                let idx = cx.define(node, name, DefKind::TypeAlias, None);
                cx.within(idx, false, |cx| {
                    let mut cursor = node.walk();
                    let rest: Vec<Node> = node
                        .named_children(&mut cursor)
                        .filter(|c| c.kind() == "user_type")
                        .collect();
                    for t in rest {
                        visit(cx, t);
                    }
                });
            }
        }
        "parameter" | "class_parameter" => {
            bind_typed(cx, node, node.kind() == "class_parameter");
            cx.children(node, visit);
        }
        "call_expression" => call(cx, node),
        "user_type" => {
            if let Some(id) = child_of_kind(node, "identifier") {
                let name = cx.text(id);
                cx.reference(RefKind::Type, name, None, id);
            }
            if let Some(args) = child_of_kind(node, "type_arguments") {
                cx.children(args, visit);
            }
        }
        _ => cx.children(node, visit),
    }
}

/// Whether `node` has an anonymous child token `token` (a keyword).
fn has_token(node: Node, token: &str) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .any(|c| !c.is_named() && c.kind() == token)
}

fn type_decl(cx: &mut Cx, node: Node, kind: DefKind) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let body = child_of_kind(node, "class_body").or_else(|| child_of_kind(node, "enum_class_body"));
    let idx = cx.define(node, name, kind, body);
    cx.with_type_params(node, |cx| {
        cx.within(idx, false, |cx| {
            // Bounds (`<T : Item>`) name types; the parameters themselves are skipped.
            if let Some(params) = child_of_kind(node, "type_parameters") {
                cx.children(params, visit);
            }
            if let Some(ctor) = child_of_kind(node, "primary_constructor") {
                cx.children(ctor, visit);
            }
            if let Some(supers) = child_of_kind(node, "delegation_specifiers") {
                supertypes(cx, supers, kind);
            }
            if let Some(body) = body {
                cx.children(body, visit);
            }
        })
    });
}

/// `: Base(), Api`: the supertype called as a constructor is the base class; the others are
/// interfaces (an interface extends interfaces).
fn supertypes(cx: &mut Cx, node: Node, kind: DefKind) {
    let mut cursor = node.walk();
    let specs: Vec<Node> = node.named_children(&mut cursor).collect();
    for spec in specs {
        let (ty, called) = match child_of_kind(spec, "constructor_invocation") {
            Some(inv) => (child_of_kind(inv, "user_type"), Some(inv)),
            None => (child_of_kind(spec, "user_type"), None),
        };
        if let Some(id) = ty.and_then(|t| child_of_kind(t, "identifier")) {
            let name = cx.text(id);
            let rel = if called.is_some() || kind == DefKind::Interface {
                RefKind::Inherits
            } else {
                RefKind::Implements
            };
            cx.reference(rel, name, None, id);
        }
        if let Some(args) = called.and_then(|c| child_of_kind(c, "value_arguments")) {
            cx.children(args, visit);
        }
    }
}

fn function(cx: &mut Cx, node: Node) {
    let Some(name) = cx.field_text(node, "name") else {
        return cx.children(node, visit);
    };
    let kind = if cx.in_container() {
        DefKind::Method
    } else {
        DefKind::Function
    };
    let body = child_of_kind(node, "function_body");
    let idx = cx.define(node, name, kind, body);
    cx.with_type_params(node, |cx| {
        cx.within(idx, true, |cx| {
            cx.children_where(node, |c| c.kind() != "function_body", visit);
            if let Some(body) = body {
                cx.children(body, visit);
            }
        })
    });
}

/// `const val X = …` (at the top level or in an object) is a constant; other properties bind
/// their type (`val store: Store`, `val calc = Calculator()`).
fn property(cx: &mut Cx, node: Node) {
    let decl = child_of_kind(node, "variable_declaration");
    let name = decl
        .and_then(|d| child_of_kind(d, "identifier"))
        .map(|i| cx.text(i));
    let is_const = child_of_kind(node, "modifiers").is_some_and(|m| cx.text(m).contains("const"));
    let is_member = cx.in_container() && cx.scope_def().is_some_and(|d| d.kind.is_container());
    if let Some(decl) = decl {
        let declared = child_of_kind(decl, "user_type")
            .and_then(|t| child_of_kind(t, "identifier"))
            .map(|i| cx.text(i));
        // `val calc = Calculator()`, or what a chain of calls returns
        // (`val moshi = Moshi.Builder().add(x).build()`, followed by the linker).
        let constructed = {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .find(|c| c.kind() == "call_expression")
                .and_then(|c| cx.created_class(c).or_else(|| cx.call_chain(c, call_parts)))
        };
        if let (Some(name), Some(ty)) = (name.clone(), declared.or(constructed)) {
            if is_member {
                cx.bind(format!("this.{name}"), ty.clone());
            }
            cx.bind(name, ty);
        }
    }
    if is_const && let Some(name) = name {
        let idx = cx.define(node, name, DefKind::Constant, None);
        cx.within(idx, false, |cx| cx.children(node, visit));
        return;
    }
    cx.children(node, visit);
}

/// `name: Type` binds `name` (and `this.name` for a constructor's `val`/`var`).
fn bind_typed(cx: &mut Cx, node: Node, member: bool) {
    let (Some(id), Some(ty)) = (
        child_of_kind(node, "identifier"),
        child_of_kind(node, "user_type").and_then(|t| child_of_kind(t, "identifier")),
    ) else {
        return;
    };
    let (name, ty) = (cx.text(id), cx.text(ty));
    if member {
        cx.bind(format!("this.{name}"), ty.clone());
    }
    cx.bind(name, ty);
}

fn call(cx: &mut Cx, node: Node) {
    if let Some(callee) = node.named_child(0) {
        match callee.kind() {
            "identifier" => {
                let name = cx.text(callee);
                cx.reference(RefKind::Call, name, None, callee);
            }
            "navigation_expression" => {
                let mut cursor = callee.walk();
                let parts: Vec<Node> = callee.named_children(&mut cursor).collect();
                if let (Some(recv), Some(name)) = (parts.first(), parts.last())
                    && parts.len() >= 2
                    && name.kind() == "identifier"
                {
                    let n = cx.text(*name);
                    let receiver = match recv.kind() {
                        "identifier" | "navigation_expression" | "this_expression" => {
                            cx.text(*recv)
                        }
                        _ => String::new(),
                    };
                    // `Foo(…).bar()`: a member of the class constructed; `a.b(…).c()`: `c` on
                    // what `b` returns.
                    cx.call_on_expression(n, *recv, receiver, "call_expression", call_parts, *name);
                    visit(cx, *recv);
                }
            }
            _ => visit(cx, callee),
        }
    }
    // Everything after the callee: arguments, trailing lambdas.
    let mut cursor = node.walk();
    let rest: Vec<Node> = node.named_children(&mut cursor).skip(1).collect();
    for r in rest {
        visit(cx, r);
    }
}

/// A `call_expression` for [`Cx::call_chain`]: the called name and what it is called on.
fn call_parts<'t>(cx: &Cx, call: Node<'t>) -> Option<(String, Option<Node<'t>>)> {
    let callee = call.named_child(0)?;
    match callee.kind() {
        "identifier" => Some((cx.text(callee), None)),
        "navigation_expression" => {
            let mut cursor = callee.walk();
            let parts: Vec<Node> = callee.named_children(&mut cursor).collect();
            let (base, name) = (*parts.first()?, *parts.last()?);
            (parts.len() >= 2 && name.kind() == "identifier").then(|| (cx.text(name), Some(base)))
        }
        _ => None,
    }
}

/// `import a.b.C`, `import a.b.*` (the package), `import a.b.C as D`.
fn import(cx: &mut Cx, node: Node) {
    let Some(path) = child_of_kind(node, "qualified_identifier").map(|q| cx.text(q)) else {
        return;
    };
    let line = node.start_position().row as u32 + 1;
    let text = cx.text(node);
    if text.trim_end().ends_with('*') {
        cx.import(Import::everything(path, line));
        return;
    }
    let name = path.rsplit('.').next().unwrap_or(&path).to_string();
    let alias = {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .filter(|c| c.kind() == "identifier")
            .last()
            .map(|a| cx.text(a))
    }
    .unwrap_or_else(|| name.clone());
    cx.import(Import {
        module: path,
        names: vec![(name, alias)],
        module_alias: None,
        wildcard: false,
        line,
    });
}

#[cfg(test)]
mod tests {
    use super::super::{parse_file, tests::outline};
    use crate::model::{DefKind, Lang};

    #[test]
    fn a_nested_class_whose_constructor_is_wrapped_keeps_its_enclosing_class() {
        let src = "package a\n\nclass Reader {\n  fun peek(): Int = 0\n\n  class Options\n  private constructor(\n    val strings: List<String>,\n  ) {\n    fun strings(): List<String> = strings\n  }\n\n  fun close() {}\n}\n";
        let f = parse_file("a/Reader.kt", Lang::Kotlin, src.as_bytes());
        assert!(f.diagnostics.is_empty(), "{:?}", f.diagnostics);
        let defs = outline(&f);
        let find = |name: &str| {
            defs.iter()
                .find(|d| d.1 == name)
                .unwrap_or_else(|| panic!("{name} missing from {defs:?}"))
        };
        // Lines are the file's own: the class on 6, its method on 10, the outer one's on 13.
        assert_eq!(find("Reader").0, DefKind::Class);
        assert_eq!(
            (find("Reader.Options").0, find("Reader.Options").2),
            (DefKind::Class, 6)
        );
        assert_eq!(find("Reader.Options.strings").2, 10);
        assert_eq!(find("Reader.close").2, 13);
        assert_eq!(find("Reader.peek").2, 4);
    }

    #[test]
    fn a_when_guard_is_read_as_a_second_condition() {
        let src = "fun f(e: Any) = when (e) {\n    is Lit<*> if e.json -> 1\n    !is Op if (\n        e.x\n    ) -> 2\n    is A -> if (c) 3 else 4\n    else -> 5\n}\n";
        let copy =
            super::guards_as_conditions(src.as_bytes()).map(|b| String::from_utf8(b).unwrap());
        assert_eq!(
            copy.as_deref(),
            Some(
                "fun f(e: Any) = when (e) {\n    is Lit<*> ,  e.json -> 1\n    !is Op ,  (\n        e.x\n    ) -> 2\n    is A -> if (c) 3 else 4\n    else -> 5\n}\n"
            )
        );
        // The rest of the file parses: the function after the `when` is found.
        let parsed = crate::parse::parse_file(
            "Guards.kt",
            crate::model::Lang::Kotlin,
            format!("class Dialect {{\n    {src}    fun after() = 1\n}}\n").as_bytes(),
        );
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        assert!(
            parsed
                .definitions
                .iter()
                .any(|d| d.qualified_name == "Dialect.after")
        );
        assert_eq!(
            super::guards_as_conditions(b"val x = if (a) 1 else 2\n"),
            None
        );
    }

    #[test]
    fn only_a_class_header_followed_by_a_constructor_is_joined() {
        let join = |s: &str| {
            super::join_wrapped_constructors(s.as_bytes()).map(|b| String::from_utf8(b).unwrap())
        };
        assert_eq!(
            join("  class A<T>\n  @Inject internal constructor(x: T) {\n    val y = 1\n")
                .as_deref(),
            Some("  class A<T>   @Inject internal constructor(x: T) {\n\n   val y = 1\n")
        );
        for unchanged in [
            "class A\nconstructor(x: Int)\n", // nothing indented after: no byte to move to
            "class A(x: Int)\n  constructor(y: String) : this(1)\n  val z = 2\n",
            "// class A\n  private constructor(\n    x: Int)\n",
            "class A {\n  private constructor(\n    x: Int)\n",
        ] {
            assert_eq!(join(unchanged), None, "{unchanged}");
        }
    }
}
