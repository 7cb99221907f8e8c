//! Per-language extraction tests: exact definitions (kind, qualified name, lines, parent,
//! docs), imports and references, on small sources with the tricky cases.

use super::parse_file;
use crate::model::{DefKind, Lang, ParsedFile, RefKind};

/// (kind, qualified name, start line, end line, parent's qualified name)
pub(super) fn outline(f: &ParsedFile) -> Vec<(DefKind, String, u32, u32, Option<String>)> {
    f.definitions
        .iter()
        // Regions have tests of their own (`regions.rs`); these check the visitors.
        .filter(|d| !matches!(d.kind, DefKind::File | DefKind::Region))
        .map(|d| {
            (
                d.kind,
                d.qualified_name.clone(),
                d.start_line,
                d.end_line,
                d.parent
                    .map(|p| f.definitions[p as usize].qualified_name.clone()),
            )
        })
        .collect()
}

pub(super) fn find<'a>(f: &'a ParsedFile, qualified: &str) -> &'a crate::model::Definition {
    f.definitions
        .iter()
        .find(|d| d.qualified_name == qualified)
        .unwrap_or_else(|| panic!("no {qualified} in {:#?}", outline(f)))
}

pub(super) fn has_ref(f: &ParsedFile, kind: RefKind, receiver: Option<&str>, name: &str) -> bool {
    f.references
        .iter()
        .any(|r| r.kind == kind && r.name == name && r.receiver == receiver)
}

/// Whether the definition qualified `scope` holds a reference of `kind` to `name`.
fn has_ref_in(f: &ParsedFile, kind: RefKind, name: &str, scope: &str) -> bool {
    let scope = f
        .definitions
        .iter()
        .position(|d| d.qualified_name == scope)
        .map(|i| i as u32);
    f.references
        .iter()
        .any(|r| r.kind == kind && r.name == name && r.scope == scope)
}

use DefKind::*;

fn o(
    kind: DefKind,
    q: &str,
    a: u32,
    b: u32,
    p: Option<&str>,
) -> (DefKind, String, u32, u32, Option<String>) {
    (kind, q.to_string(), a, b, p.map(str::to_string))
}

#[test]
fn python_definitions() {
    let src = r#"import os
from .models import Request as Req, Response
from . import utils

MAX_RETRIES = 3

def decorator(f):
    return f

@decorator
def top(a: int) -> "Req":
    """Top-level function.

    More text."""
    def inner():
        return helper()
    return inner()

class Session(Base, mixins.Mixin):
    """A session."""

    def __init__(self):
        self.adapter = Adapter()

    @property
    def send(self, req: Req):
        self.adapter.send(req)
        utils.to_native(req)
        return self.merge(req)
"#;
    let f = parse_file("pkg/sessions.py", Lang::Python, src.as_bytes());
    assert_eq!(
        outline(&f),
        vec![
            o(Constant, "MAX_RETRIES", 5, 5, None),
            o(Function, "decorator", 7, 8, None),
            o(Function, "top", 10, 17, None),
            o(Function, "top.inner", 15, 16, Some("top")),
            o(Class, "Session", 19, 29, None),
            o(Constructor, "Session.__init__", 22, 23, Some("Session")),
            o(Method, "Session.send", 25, 29, Some("Session")),
        ]
    );
    assert_eq!(
        find(&f, "top").doc.as_deref(),
        Some("Top-level function.\nMore text.")
    );
    assert_eq!(find(&f, "Session").doc.as_deref(), Some("A session."));
    assert!(
        find(&f, "top")
            .signature
            .starts_with("@decorator def top(a: int)")
    );
    assert!(has_ref(&f, RefKind::Inherits, None, "Base"));
    assert!(has_ref(&f, RefKind::Inherits, Some("mixins"), "Mixin"));
    assert!(has_ref(&f, RefKind::Call, Some("self"), "merge"));
    assert!(has_ref(&f, RefKind::Call, Some("utils"), "to_native"));
    assert!(has_ref(&f, RefKind::Call, None, "helper"));
    // A decorator is the decorated definition's use of it, bare or called.
    for (decorator, scope) in [("decorator", "top"), ("property", "Session.send")] {
        assert!(
            has_ref_in(&f, RefKind::Call, decorator, scope),
            "{decorator} in {scope}"
        );
    }
    // `req: Req` binds the receiver type for calls on `req`; `self.adapter = Adapter()` too.
    assert!(
        f.references
            .iter()
            .any(|r| r.name == "send" && r.receiver == Some("self.adapter"))
    );
    let imports: Vec<(&str, Vec<(String, String)>)> = f
        .imports
        .iter()
        .map(|i| (i.module.as_str(), i.names.clone()))
        .collect();
    assert_eq!(imports[0].0, "os");
    assert_eq!(
        imports[1],
        (
            ".models",
            vec![
                ("Request".into(), "Req".into()),
                ("Response".into(), "Response".into())
            ]
        )
    );
    assert_eq!(imports[2], (".", vec![("utils".into(), "utils".into())]));
}

#[test]
fn javascript_definitions() {
    let src = r#"const path = require('path');
const { join } = require('./util');
import Router, { route as r } from './router';

export default function createApp(opts) {
  return new Application(opts);
}

const handler = async (req, res) => {
  res.send(join('a', 'b'));
};

class Application extends EventEmitter {
  constructor(opts) {
    super();
    this.router = new Router();
  }
  listen(port) {
    return this.router.handle(port);
  }
}

app.handle = function handle(req) {
  return r(req);
};

const obj = new Foo({
  method() { return 1; },
});
"#;
    let f = parse_file("lib/app.js", Lang::JavaScript, src.as_bytes());
    assert_eq!(
        outline(&f),
        vec![
            o(Function, "createApp", 5, 7, None),
            o(Function, "handler", 9, 11, None),
            o(Class, "Application", 13, 21, None),
            o(
                Constructor,
                "Application.constructor",
                14,
                17,
                Some("Application")
            ),
            o(Method, "Application.listen", 18, 20, Some("Application")),
            o(Function, "app.handle", 23, 25, None),
            o(Constant, "obj", 27, 29, None),
            o(Function, "obj.method", 28, 28, Some("obj")),
        ]
    );
    assert!(has_ref(&f, RefKind::Inherits, None, "EventEmitter"));
    assert!(has_ref(&f, RefKind::Call, None, "Application"));
    assert!(has_ref(&f, RefKind::Call, Some("this.router"), "handle"));
    assert!(has_ref(&f, RefKind::Call, None, "join"));
    let modules: Vec<&str> = f.imports.iter().map(|i| i.module.as_str()).collect();
    assert_eq!(modules, ["path", "./util", "./router"]);
    assert_eq!(f.imports[0].module_alias.as_deref(), Some("path"));
    assert_eq!(
        f.imports[1].names,
        vec![("join".to_string(), "join".to_string())]
    );
    assert_eq!(
        f.imports[2].names,
        vec![
            ("default".to_string(), "Router".to_string()),
            ("route".to_string(), "r".to_string())
        ]
    );
}

#[test]
fn typescript_definitions() {
    let src = r#"import * as z from "./types";

/** A shape. */
export interface Shape<T> extends Base {
  area(): number;
}

export type Id = string | number;

export enum Color { Red, Green }

export abstract class Square<T> implements Shape<T> {
  private side: number = 1;
  area(): number { return this.side * this.side; }
  static make = (n: Config): Square<number> => z.build(n);
}

namespace Geometry {
  export function origin(): Point { return { x: 0 }; }
}
"#;
    let f = parse_file("src/shape.ts", Lang::TypeScript, src.as_bytes());
    assert_eq!(
        outline(&f),
        vec![
            o(Interface, "Shape", 4, 6, None),
            o(Method, "Shape.area", 5, 5, Some("Shape")),
            o(TypeAlias, "Id", 8, 8, None),
            o(Enum, "Color", 10, 10, None),
            o(Class, "Square", 12, 16, None),
            o(Method, "Square.area", 14, 14, Some("Square")),
            o(Method, "Square.make", 15, 15, Some("Square")),
            o(Module, "Geometry", 18, 20, None),
            o(Function, "Geometry.origin", 19, 19, Some("Geometry")),
        ]
    );
    assert_eq!(find(&f, "Shape").doc.as_deref(), Some("A shape."));
    assert!(has_ref(&f, RefKind::Inherits, None, "Base"));
    assert!(has_ref(&f, RefKind::Implements, None, "Shape"));
    assert!(has_ref(&f, RefKind::Type, None, "Config"));
    assert!(has_ref(&f, RefKind::Call, Some("z"), "build"));
    assert_eq!(f.imports[0].module_alias.as_deref(), Some("z"));

    let tsx = "export const App = () => <div onClick={() => go()}>hi</div>;\n";
    let f = parse_file("src/App.tsx", Lang::Tsx, tsx.as_bytes());
    assert_eq!(outline(&f), vec![o(Function, "App", 1, 1, None)]);
    assert!(has_ref(&f, RefKind::Call, None, "go"));
}

#[test]
fn java_definitions() {
    let src = r#"package com.example.app;

import java.util.List;
import com.example.util.Strings;

/** Greets people. */
public class Greeter extends Base implements Runnable {
    public static final int MAX = 3;
    private final Strings strings = new Strings();

    public Greeter(String name) {
        this.name = name;
    }

    @Override
    public void run() {
        Helper h = new Helper();
        h.help(strings.trim(name));
        Runnable r = new Runnable() {
            public void run() { greet(); }
        };
    }

    record Pair(int a, int b) {}

    enum Mode { ON, OFF }
}
"#;
    let f = parse_file(
        "src/main/java/com/example/app/Greeter.java",
        Lang::Java,
        src.as_bytes(),
    );
    assert_eq!(f.package.as_deref(), Some("com.example.app"));
    assert_eq!(
        outline(&f),
        vec![
            o(Class, "Greeter", 7, 27, None),
            o(Constant, "Greeter.MAX", 8, 8, Some("Greeter")),
            o(Constructor, "Greeter.Greeter", 11, 13, Some("Greeter")),
            o(Method, "Greeter.run", 15, 22, Some("Greeter")),
            o(
                Class,
                "Greeter.run.anonymous Runnable",
                19,
                21,
                Some("Greeter.run")
            ),
            o(
                Method,
                "Greeter.run.anonymous Runnable.run",
                20,
                20,
                Some("Greeter.run.anonymous Runnable")
            ),
            o(Record, "Greeter.Pair", 24, 24, Some("Greeter")),
            o(Enum, "Greeter.Mode", 26, 26, Some("Greeter")),
        ]
    );
    assert_eq!(find(&f, "Greeter").doc.as_deref(), Some("Greets people."));
    assert!(has_ref(&f, RefKind::Inherits, None, "Base"));
    assert!(has_ref(&f, RefKind::Implements, None, "Runnable"));
    let help = f
        .references
        .iter()
        .find(|r| r.name == "help")
        .expect("help call");
    assert_eq!(help.receiver_type, Some("Helper"));
    let trim = f
        .references
        .iter()
        .find(|r| r.name == "trim")
        .expect("trim call");
    assert_eq!(trim.receiver_type, Some("Strings"));
    assert_eq!(f.imports[1].module, "com.example.util.Strings");
}

#[test]
fn go_definitions() {
    let src = r#"package router

import (
	"fmt"
	lg "github.com/acme/app/core/logx"
)

// MaxDepth bounds nesting.
const MaxDepth = 8

// Router routes requests.
type Router struct {
	*Base
	trees map[string]*node
}

type Handler interface {
	Serve(w Writer)
}

type HandlerFunc func()

// Handle registers a route.
func (r *Router) Handle(path string) error {
	n := newNode()
	n.insert(path)
	lg.Info(fmt.Sprint(path))
	return r.check(path)
}

func newNode() *node { return &node{} }
"#;
    let f = parse_file("core/router/router.go", Lang::Go, src.as_bytes());
    assert_eq!(f.package.as_deref(), Some("router"));
    assert_eq!(
        outline(&f),
        vec![
            o(Constant, "router.MaxDepth", 9, 9, None),
            o(Struct, "router.Router", 12, 15, None),
            o(Interface, "router.Handler", 17, 19, None),
            o(
                Method,
                "router.Handler.Serve",
                18,
                18,
                Some("router.Handler")
            ),
            o(TypeAlias, "router.HandlerFunc", 21, 21, None),
            o(Method, "Router.Handle", 24, 29, None),
            o(Function, "router.newNode", 31, 31, None),
        ]
    );
    assert_eq!(
        find(&f, "router.Router").doc.as_deref(),
        Some("Router routes requests.")
    );
    assert_eq!(
        find(&f, "Router.Handle").doc.as_deref(),
        Some("Handle registers a route.")
    );
    assert!(has_ref(&f, RefKind::Inherits, None, "Base"));
    let check = f
        .references
        .iter()
        .find(|r| r.name == "check")
        .expect("check");
    assert_eq!(check.receiver_type, Some("Router"));
    // A method refers to its receiver's type, as it does to its parameters' types.
    assert!(has_ref_in(&f, RefKind::Type, "Router", "Router.Handle"));
    assert!(has_ref(&f, RefKind::Call, Some("lg"), "Info"));
    assert_eq!(f.imports[1].module, "github.com/acme/app/core/logx");
    assert_eq!(f.imports[1].module_alias.as_deref(), Some("lg"));
    assert_eq!(f.imports[0].module_alias.as_deref(), Some("fmt"));
}

#[test]
fn rust_definitions() {
    let src = r#"use std::fmt;
use crate::search::{Searcher, sink::{Sink as S, self}};

/// A point.
#[derive(Debug)]
pub struct Point<T> { x: T }

pub trait Shape: fmt::Debug {
    fn area(&self) -> f64;
}

impl<T: fmt::Display> fmt::Display for Point<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.x)
    }
}

impl<T> Point<T> {
    /// Makes one.
    pub fn new(x: T) -> Self {
        let s = Searcher::new();
        s.search(Self::check());
        Point { x }
    }
}

macro_rules! square { ($x:expr) => { $x * $x }; }

#[cfg(test)]
mod tests {
    #[test]
    fn works() { super::Point::new(1); }
}
"#;
    let f = parse_file("src/point.rs", Lang::Rust, src.as_bytes());
    assert_eq!(
        outline(&f),
        vec![
            o(Struct, "Point", 6, 6, None),
            o(Trait, "Shape", 8, 10, None),
            o(Method, "Shape::area", 9, 9, Some("Shape")),
            o(Impl, "impl fmt::Display for Point<T>", 12, 16, None),
            o(
                Method,
                "Point::fmt",
                13,
                15,
                Some("impl fmt::Display for Point<T>")
            ),
            o(Impl, "impl Point<T>", 18, 25, None),
            o(Method, "Point::new", 20, 24, Some("impl Point<T>")),
            o(Macro, "square", 27, 27, None),
            o(Module, "tests", 30, 33, None),
            o(Function, "tests::works", 32, 32, Some("tests")),
        ]
    );
    assert_eq!(find(&f, "Point").doc.as_deref(), Some("A point."));
    assert_eq!(find(&f, "Point::new").doc.as_deref(), Some("Makes one."));
    assert!(find(&f, "tests").is_test && find(&f, "tests::works").is_test);
    assert!(!find(&f, "Point::new").is_test);
    let search = f
        .references
        .iter()
        .find(|r| r.name == "search")
        .expect("search");
    assert_eq!(search.receiver_type, Some("Searcher"));
    assert!(has_ref(&f, RefKind::Call, Some("Self"), "check"));
    assert!(has_ref(&f, RefKind::Implements, Some("fmt"), "Display"));
    assert!(has_ref(&f, RefKind::Call, Some("super::Point"), "new"));
    type Use = (String, Vec<(String, String)>, Option<String>);
    let uses: Vec<Use> = f
        .imports
        .iter()
        .map(|i| (i.module.clone(), i.names.clone(), i.module_alias.clone()))
        .collect();
    assert_eq!(
        uses,
        vec![
            ("std".into(), vec![("fmt".into(), "fmt".into())], None),
            (
                "crate::search".into(),
                vec![("Searcher".into(), "Searcher".into())],
                None
            ),
            (
                "crate::search::sink".into(),
                vec![("Sink".into(), "S".into())],
                None
            ),
            (
                "crate::search".into(),
                vec![("sink".into(), "sink".into())],
                None
            ),
        ]
    );
}

#[test]
fn every_source_file_has_an_outline_node() {
    let src = "\"\"\"Sessions and their settings.\"\"\"\nimport os\n\ndef f():\n    pass\n";
    let f = parse_file("pkg/s.py", Lang::Python, src.as_bytes());
    let file = f.definitions.last().unwrap();
    assert_eq!(
        (file.kind, file.qualified_name.as_str()),
        (File, "pkg/s.py")
    );
    assert_eq!(
        (file.start_line, file.end_line, file.end_byte as usize),
        (1, 5, src.len())
    );
    assert_eq!(file.doc.as_deref(), Some("Sessions and their settings."));
    assert!(
        parse_file("empty.py", Lang::Python, b"")
            .definitions
            .is_empty()
    );
}

#[test]
fn markdown_sections() {
    let src = "# Title\n\nintro\n\n## Install\n\n```sh\n# not a heading\n```\n\nSetext\n------\n\ntext\n\n# Second\n";
    let f = parse_file("README.md", Lang::Markdown, src.as_bytes());
    assert_eq!(
        outline(&f),
        vec![
            o(Section, "Title", 1, 15, None),
            o(Section, "Title > Install", 5, 10, Some("Title")),
            o(Section, "Title > Setext", 11, 15, Some("Title")),
            o(Section, "Second", 16, 16, None),
        ]
    );
}

#[test]
fn syntax_errors_yield_definitions_and_diagnostics() {
    let src =
        "def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass Fine:\n    def m(self): pass\n";
    let f = parse_file("x.py", Lang::Python, src.as_bytes());
    assert!(!f.diagnostics.is_empty());
    assert!(f.definitions.iter().any(|d| d.name == "ok"));
    assert!(f.definitions.iter().any(|d| d.name == "Fine"));
}

#[test]
fn non_utf8_is_parsed_lossily_with_honest_offsets() {
    let mut src = b"# caf\xe9\ndef f():\n    return '\xff'\n\ndef g():\n    pass\n".to_vec();
    src.extend_from_slice(b"");
    let f = parse_file("latin1.py", Lang::Python, &src);
    assert!(f.lossy);
    let g = find(&f, "g");
    assert_eq!(
        &src[g.start_byte as usize..g.end_byte as usize],
        b"def g():\n    pass"
    );
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = crate::testing::Rng::new(0x2545_F491_4F6C_DD1D);
    let mut next = || rng.next_u64();
    let fragments: &[&[u8]] = &[
        b"def ", b"class ", b"fn ", b"func ", b"impl ", b"{", b"}", b"(", b")", b":", b"\n",
        b"    ", b"import ", b"use ", b"=>", b"\"", b"'", b"/*", b"*/", b"#", b"x", b"\xff", b"\0",
        b"`", b"<", b">", b"::", b".", b";", b"@", b"$", b"\r\n",
    ];
    for lang in Lang::ALL {
        for _ in 0..150 {
            let len = (next() % 200) as usize;
            let mut bytes = Vec::new();
            for _ in 0..len {
                if next() % 3 == 0 {
                    bytes.push((next() & 0xff) as u8);
                } else {
                    bytes.extend_from_slice(fragments[(next() as usize) % fragments.len()]);
                }
            }
            let f = parse_file("fuzz", lang, &bytes);
            for d in &f.definitions {
                assert!(
                    d.start_byte <= d.end_byte && d.end_byte as usize <= bytes.len(),
                    "{lang:?} {d:?} in {} bytes: {:?}",
                    bytes.len(),
                    String::from_utf8_lossy(&bytes)
                );
                assert!(d.start_line <= d.end_line, "{lang:?} {d:?}");
            }
        }
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    let src = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
    let f = parse_file("deep.py", Lang::Python, src.as_bytes());
    assert!(outline(&f).is_empty());
    let js = format!("const a = {}1{};\n", "[".repeat(5000), "]".repeat(5000));
    parse_file("deep.js", Lang::JavaScript, js.as_bytes());
}

#[test]
fn constants_that_are_mostly_text_are_prose() {
    let rust = "fn flag_regexp() {\n    const LONG: &str = \"\\\nA pattern to search for. This option can be provided\nmultiple times, where all patterns given are searched.\n\";\n    let x = 1;\n}\nconst TABLE: [u8; 8] = [\n    1, 2, 3, 4,\n    5, 6, 7, 8,\n];\nconst NAME: &str = \"rg\";\n";
    let f = parse_file("src/app.rs", Lang::Rust, rust.as_bytes());
    assert!(find(&f, "flag_regexp::LONG").is_prose);
    assert!(!find(&f, "TABLE").is_prose, "numbers are code");
    assert!(!find(&f, "NAME").is_prose, "one line is a name, not prose");
    assert!(!find(&f, "flag_regexp").is_prose, "only constants");

    let python = "USAGE = \"\"\"\nusage: tool [options]\n\n  -v  verbose output\n\"\"\"\nLIMITS = {\n    'a': 1,\n    'b': 2,\n}\n";
    let f = parse_file("tool/cli.py", Lang::Python, python.as_bytes());
    assert!(find(&f, "USAGE").is_prose);
    assert!(!find(&f, "LIMITS").is_prose);

    let go =
        "package main\n\nconst usage = `usage: tool [flags]\n\n  -v  verbose\n  -q  quiet\n`\n";
    let f = parse_file("main.go", Lang::Go, go.as_bytes());
    assert!(find(&f, "main.usage").is_prose);
}

#[test]
fn csharp_types_members_docs_usings_and_references() {
    let src = r#"using System.Text;
using Json = Newtonsoft.Json.JsonConvert;

namespace Acme.Billing
{
    /// <summary>Computes invoice totals.</summary>
    public partial class Invoice : BaseDocument, IPrintable
    {
        public const int MaxLines = 100;
        private static readonly string Currency = "EUR";
        private readonly TaxTable _taxes;

        public Invoice(TaxTable taxes) { _taxes = taxes; }

        /// <summary>The total with VAT.</summary>
        public decimal Total(string country)
        {
            var calc = new VatCalculator();
            return calc.Apply(_taxes.RateFor(country)) + Helpers.Round(1m);
        }

        public string Name { get; set; }

        public static Invoice operator +(Invoice a, Invoice b) => a;

        private void Log() => _logger?.Write("x");
    }

    public interface IPrintable { void Print(); }
    public struct Money { public decimal Amount; }
    public enum Status { Open, Paid }
    public record Line(string Sku, int Qty);
    public delegate void Changed(Invoice invoice);

    public static class Extensions
    {
        public static string Describe(this Invoice invoice) => invoice.Name;
    }
}
"#;
    let f = parse_file("src/Acme.Billing/Invoice.cs", Lang::CSharp, src.as_bytes());
    assert_eq!(f.package.as_deref(), Some("Acme.Billing"));
    let names: Vec<(DefKind, String)> = outline(&f)
        .into_iter()
        .filter(|o| o.0 != File)
        .map(|o| (o.0, o.1))
        .collect();
    for expected in [
        (Class, "Invoice"),
        (Constant, "Invoice.MaxLines"),
        (Constant, "Invoice.Currency"),
        (Constructor, "Invoice.Invoice"),
        (Method, "Invoice.Total"),
        (Method, "Invoice.Name"),
        (Method, "Invoice.operator +"),
        (Method, "Invoice.Log"),
        (Interface, "IPrintable"),
        (Method, "IPrintable.Print"),
        (Struct, "Money"),
        (Enum, "Status"),
        (Record, "Line"),
        (TypeAlias, "Changed"),
        (Class, "Extensions"),
        (Method, "Extensions.Describe"),
    ] {
        assert!(
            names.contains(&(expected.0, expected.1.to_string())),
            "{expected:?} missing from {names:?}"
        );
    }
    assert_eq!(
        find(&f, "Invoice").doc.as_deref(),
        Some("Computes invoice totals.")
    );
    assert_eq!(
        find(&f, "Invoice.Total").doc.as_deref(),
        Some("The total with VAT.")
    );
    assert!(has_ref(&f, RefKind::Inherits, None, "BaseDocument"));
    assert!(has_ref(&f, RefKind::Implements, None, "IPrintable"));
    assert!(has_ref(&f, RefKind::Call, None, "VatCalculator"));
    assert!(has_ref(&f, RefKind::Call, Some("Helpers"), "Round"));
    assert!(has_ref(&f, RefKind::Call, Some("_logger"), "Write"));
    assert!(has_ref(&f, RefKind::Type, None, "TaxTable"));
    // `var calc = new VatCalculator()` binds calc's type.
    let apply = f
        .references
        .iter()
        .find(|r| r.name == "Apply")
        .expect("Apply call");
    assert_eq!(apply.receiver_type, Some("VatCalculator"));
    let rate = f
        .references
        .iter()
        .find(|r| r.name == "RateFor")
        .expect("RateFor call");
    assert_eq!(rate.receiver_type, Some("TaxTable"));
    // `using A.B;` imports a namespace; `using X = A.B.C;` names one type.
    assert!(
        f.imports
            .iter()
            .any(|i| i.module == "System.Text" && i.wildcard)
    );
    assert!(f.imports.iter().any(|i| {
        i.module == "Newtonsoft.Json.JsonConvert"
            && i.names == [("JsonConvert".to_string(), "Json".to_string())]
    }));
}

#[test]
fn csharp_file_scoped_namespaces_and_broken_code() {
    let f = parse_file(
        "src/App/Program.cs",
        Lang::CSharp,
        b"namespace App.Cli;\n\npublic class Program { static void Main() { Run(); } static void Run( }\n",
    );
    assert_eq!(f.package.as_deref(), Some("App.Cli"));
    assert!(
        f.definitions
            .iter()
            .any(|d| d.qualified_name == "Program.Main")
    );
    assert!(!f.diagnostics.is_empty(), "the syntax error is reported");
}

#[test]
fn ruby_classes_modules_methods_requires_and_references() {
    let src = r#"require "json"
require_relative "store/base"

module Shop
  # Prices carts and applies discounts.
  class Pricing < Base
    include Comparable
    extend Forwardable

    RATE = 0.2

    def initialize(store)
      @store = Store.new(store)
    end

    # The total with tax.
    def total(cart)
      sum = cart.lines.sum(&:price)
      @store.record(sum)
      helper(sum) * (1 + RATE)
    end

    def self.build
      new(nil)
    end

    class << self
      def default
        build
      end
    end

    private

    def helper(x)
      x
    end
  end
end

class Shop::Cart; end
"#;
    let f = parse_file("lib/shop/pricing.rb", Lang::Ruby, src.as_bytes());
    let names: Vec<(DefKind, String)> = outline(&f)
        .into_iter()
        .filter(|o| o.0 != File)
        .map(|o| (o.0, o.1))
        .collect();
    for expected in [
        (Module, "Shop"),
        (Class, "Shop::Pricing"),
        (Constant, "Shop::Pricing::RATE"),
        (Method, "Shop::Pricing#initialize"),
        (Method, "Shop::Pricing#total"),
        (Function, "Shop::Pricing.build"),
        (Function, "Shop::Pricing.default"),
        (Method, "Shop::Pricing#helper"),
        (Class, "Cart"),
    ] {
        assert!(
            names.contains(&(expected.0, expected.1.to_string())),
            "{expected:?} missing from {names:?}"
        );
    }
    assert_eq!(
        find(&f, "Shop::Pricing#total").doc.as_deref(),
        Some("The total with tax.")
    );
    assert!(has_ref(&f, RefKind::Inherits, None, "Base"));
    // Core modules (Comparable) are builtins: not recorded.
    assert!(!has_ref(&f, RefKind::Implements, None, "Comparable"));
    assert!(has_ref(&f, RefKind::Implements, None, "Forwardable"));
    assert!(has_ref(&f, RefKind::Call, None, "Store"));
    assert!(has_ref(&f, RefKind::Call, None, "helper"));
    let record = f
        .references
        .iter()
        .find(|r| r.name == "record")
        .expect("record call");
    assert_eq!(record.receiver, Some("self.store"));
    assert_eq!(record.receiver_type, Some("Store"));
    assert!(
        f.imports
            .iter()
            .any(|i| i.module == "./store/base" && i.wildcard)
    );
    assert!(f.imports.iter().any(|i| i.module == "json"));
}

#[test]
fn c_functions_types_macros_includes_and_calls() {
    let src = r#"#include "jv.h"
#include <stdio.h>

#define MAX_DEPTH 256
#define CHECK(x) do { if (!(x)) abort(); } while (0)

static const int DEFAULT_SIZE = 16;

/** A parsed value. */
typedef struct {
  int kind;
  double number;
} jv;

struct parser {
  jv *stack;
  int depth;
};

enum token { TOK_NUM, TOK_STR };

typedef struct parser parser_t;

int jv_parse_number(struct parser *p, const char *text);

/** Parses text into a value. */
jv jv_parse(const char *text) {
  struct parser p;
  jv value = jv_number(0);
  jv_parse_number(&p, text);
  p.stack->kind = 1;
  value.kind = scan(p.stack);
  return value;
}
"#;
    let f = parse_file("src/jv_parse.c", Lang::C, src.as_bytes());
    let names: Vec<(DefKind, String)> = outline(&f)
        .into_iter()
        .filter(|o| o.0 != File)
        .map(|o| (o.0, o.1))
        .collect();
    for expected in [
        (Constant, "MAX_DEPTH"),
        (Macro, "CHECK"),
        (Constant, "DEFAULT_SIZE"),
        (Struct, "jv"),
        (Struct, "parser"),
        (Enum, "token"),
        (TypeAlias, "parser_t"),
        (Function, "jv_parse"),
    ] {
        assert!(
            names.contains(&(expected.0, expected.1.to_string())),
            "{expected:?} missing from {names:?}"
        );
    }
    // A prototype is not a definition: the call resolves to the function's body elsewhere.
    assert!(!names.iter().any(|n| n.1 == "jv_parse_number"), "{names:?}");
    assert_eq!(
        find(&f, "jv_parse").doc.as_deref(),
        Some("Parses text into a value.")
    );
    assert!(has_ref(&f, RefKind::Call, None, "jv_parse_number"));
    assert!(has_ref(&f, RefKind::Call, None, "jv_number"));
    assert!(has_ref(&f, RefKind::Type, None, "parser"));
    assert!(f.imports.iter().any(|i| i.module == "jv.h" && i.wildcard));
    assert!(f.imports.iter().any(|i| i.module == "<stdio.h>"));
}

#[test]
fn a_c_macro_calls_what_its_replacement_list_calls() {
    let src = "#define GROW(b, n) \\\n  buffer_grow((b), (n) * 2, \"x(1)\")\n\
               #define NEW_STACK stack_new(DEFAULT)\n\
               #define CALL(f, x) f(x) + s->push(x) + sizeof(x) + name##_get(x)\n";
    let f = parse_file("src/buf.h", Lang::C, src.as_bytes());
    assert!(has_ref_in(&f, RefKind::Call, "buffer_grow", "GROW"));
    assert!(has_ref_in(&f, RefKind::Call, "stack_new", "NEW_STACK"));
    let calls: Vec<(&str, u32)> = f
        .references
        .iter()
        .filter(|r| r.kind == RefKind::Call)
        .map(|r| (r.name, r.line))
        .collect();
    // The call's own line, past the continuation; no parameter, member call, keyword, pasted
    // name, string or comment.
    assert_eq!(calls, [("buffer_grow", 2), ("stack_new", 3)]);
}

#[test]
fn kotlin_classes_objects_functions_imports_and_references() {
    let src = r#"package com.example.shop

import com.example.store.Store
import com.example.util.*
import com.example.other.Thing as Other

/** Prices carts. */
class Pricing(private val store: Store) : Base(), Api {
    val rate: Double = 0.2

    /** The total with tax. */
    fun total(cart: Cart): Double {
        val calc = Calculator()
        store.save(cart)
        return calc.apply(cart.subtotal) + helper()
    }

    private fun helper() = 1.0

    constructor(name: String) : this(Store()) {}

    companion object {
        const val MAX = 10
        fun create(): Pricing = Pricing(Store())
    }
}

interface Api {
    fun run()
}

enum class Mode { ON, OFF }

object Registry {
    fun register(x: Any) {}
}

typealias Price = Double

fun String.shout(): String = uppercase()
"#;
    let f = parse_file(
        "src/main/kotlin/com/example/shop/Pricing.kt",
        Lang::Kotlin,
        src.as_bytes(),
    );
    assert_eq!(f.package.as_deref(), Some("com.example.shop"));
    let names: Vec<(DefKind, String)> = outline(&f)
        .into_iter()
        .filter(|o| o.0 != File)
        .map(|o| (o.0, o.1))
        .collect();
    for expected in [
        (Class, "Pricing"),
        (Method, "Pricing.total"),
        (Method, "Pricing.helper"),
        (Constructor, "Pricing.Pricing"),
        (Constant, "Pricing.MAX"),
        (Method, "Pricing.create"),
        (Interface, "Api"),
        (Method, "Api.run"),
        (Enum, "Mode"),
        (Class, "Registry"),
        (Method, "Registry.register"),
        (TypeAlias, "Price"),
        (Function, "shout"),
    ] {
        assert!(
            names.contains(&(expected.0, expected.1.to_string())),
            "{expected:?} missing from {names:?}"
        );
    }
    assert_eq!(
        find(&f, "Pricing.total").doc.as_deref(),
        Some("The total with tax.")
    );
    assert!(has_ref(&f, RefKind::Inherits, None, "Base"));
    assert!(has_ref(&f, RefKind::Implements, None, "Api"));
    assert!(has_ref(&f, RefKind::Call, None, "Calculator"));
    assert!(has_ref(&f, RefKind::Call, None, "helper"));
    let save = f
        .references
        .iter()
        .find(|r| r.name == "save")
        .expect("save call");
    assert_eq!(save.receiver_type, Some("Store"));
    let apply = f
        .references
        .iter()
        .find(|r| r.name == "apply")
        .expect("apply call");
    assert_eq!(apply.receiver_type, Some("Calculator"));
    assert!(
        f.imports
            .iter()
            .any(|i| i.module == "com.example.util" && i.wildcard)
    );
    assert!(f.imports.iter().any(|i| {
        i.module == "com.example.other.Thing"
            && i.names == [("Thing".to_string(), "Other".to_string())]
    }));
}

/// A call at the end of a chain laid out over several lines is on the line of its name, in
/// every language whose callee is an expression ending with it.
#[test]
fn a_chained_call_is_on_the_line_of_its_name() {
    for (path, lang, src) in [
        (
            "a.rs",
            Lang::Rust,
            "fn build(b: Builder) {\n    b\n        .caseless(true)\n        .build();\n}\n",
        ),
        (
            "a.py",
            Lang::Python,
            "def build(b):\n    return (b\n        .caseless(True)\n        .build())\n",
        ),
        (
            "a.js",
            Lang::JavaScript,
            "function build(b) {\n  return b\n    .caseless(true)\n    .build();\n}\n",
        ),
        (
            "a.go",
            Lang::Go,
            "package a\n\nfunc build(b B) {\n\tb.\n\t\tcaseless(true).\n\t\tbuild()\n}\n",
        ),
    ] {
        let f = parse_file(path, lang, src.as_bytes());
        let line = |name: &str| {
            f.references
                .iter()
                .find(|r| r.name == name && r.kind == RefKind::Call)
                .map(|r| r.line)
                .unwrap_or_else(|| panic!("{path}: no call of {name}"))
        };
        let want = if lang == Lang::Go { (5, 6) } else { (3, 4) };
        assert_eq!((line("caseless"), line("build")), want, "{path}");
    }
}

/// Calls inside a macro's arguments (a token tree to tree-sitter) are calls too.
#[test]
fn calls_in_macro_arguments_are_references() {
    let src = "fn show(f: &mut F, x: Vec<u8>) {\n    write!(f, \"{}\", List::or_ticked(x.iter()));\n    assert_eq!(self.len(), helper(1));\n    println!(\"{}\", render_row!(\"{}\", crate::util::name(2)));\n}\n";
    let f = parse_file("a.rs", Lang::Rust, src.as_bytes());
    let calls: Vec<(String, Option<String>, u32)> = f
        .references
        .iter()
        .filter(|r| r.kind == RefKind::Call)
        .map(|r| (r.name.to_string(), r.receiver.map(str::to_string), r.line))
        .collect();
    for want in [
        ("or_ticked", Some("List"), 2),
        ("iter", Some("x"), 2),
        ("len", Some("self"), 3),
        ("helper", None, 3),
        ("name", Some("crate::util"), 4),
    ] {
        assert!(
            calls
                .iter()
                .any(|(n, r, l)| n == want.0 && r.as_deref() == want.1 && *l == want.2),
            "{want:?} in {calls:?}"
        );
    }
    assert!(
        f.references
            .iter()
            .any(|r| r.kind == RefKind::MacroCall && r.name == "render_row" && r.line == 4)
    );
}

/// A re-export passes on what it names: everything (`export *`), the listed names (`export {
/// a, b as c }`), or one namespace (`export * as ns`), which exports none of the module's
/// names at the top.
#[test]
fn typescript_reexports_pass_on_what_they_name() {
    let src = "export * from \"./schemas.js\";\nexport { a, b as c } from \"./pair.js\";\n\
               export * as coerce from \"./coerce.js\";\nexport type { T } from \"./types.js\";\n";
    let f = parse_file("src/external.ts", Lang::TypeScript, src.as_bytes());
    let by_module = |m: &str| f.imports.iter().find(|i| i.module == m).expect(m);
    let all = by_module("./schemas.js");
    assert!(all.wildcard && all.names.is_empty());
    let pair = by_module("./pair.js");
    assert!(!pair.wildcard);
    assert_eq!(
        pair.names,
        vec![
            ("a".to_string(), "a".to_string()),
            ("b".to_string(), "c".to_string())
        ]
    );
    let coerce = by_module("./coerce.js");
    assert!(!coerce.wildcard && coerce.names.is_empty());
    assert_eq!(coerce.module_alias.as_deref(), Some("coerce"));
    assert_eq!(
        by_module("./types.js").names,
        vec![("T".to_string(), "T".to_string())]
    );
}

#[test]
fn type_parameters_are_no_references_but_their_bounds_and_the_other_types_are() {
    let cases: [(&str, Lang, &str); 6] = [
        (
            "Box.kt",
            Lang::Kotlin,
            "class Box<T : Item>(val v: T) {\n  fun <R> map(f: (T) -> R): Store<R> = TODO()\n}\n",
        ),
        (
            "Box.java",
            Lang::Java,
            "class Box<T extends Item> {\n  T v;\n  <R> Store<R> map(T t) { return null; }\n}\n",
        ),
        (
            "box.ts",
            Lang::TypeScript,
            "interface Box<T extends Item> { v: T }\nfunction map<R>(b: Box<R>): Store<R> { return b as any; }\ntype Pair<K> = [K, Item];\n",
        ),
        (
            "Box.cs",
            Lang::CSharp,
            "class Box<T> where T : Item {\n  T v;\n  Store<R> Map<R>(T t) { return null; }\n}\n",
        ),
        (
            "box.rs",
            Lang::Rust,
            "struct Boxed<T> { v: T, i: Item }\nimpl<T> Boxed<T> {\n  fn map<R>(&self, r: R) -> Store<R> { todo!() }\n}\n",
        ),
        (
            "box.kt",
            Lang::Kotlin,
            "fun <T> first(xs: List<T>): T? = xs.firstOrNull()\nfun later(x: T): Item = x\n",
        ),
    ];
    for (path, lang, src) in cases {
        let f = parse_file(path, lang, src.as_bytes());
        let types: Vec<&str> = f
            .references
            .iter()
            .filter(|r| r.kind == RefKind::Type)
            .map(|r| r.name)
            .collect();
        assert!(
            !types.contains(&"R") && types.contains(&"Item"),
            "{path}: {types:?}"
        );
        if path == "box.kt" {
            // Outside the function that declares it, `T` is a type like any other.
            assert!(types.contains(&"T"), "{path}: {types:?}");
        } else {
            assert!(
                !types.contains(&"T") && types.contains(&"Store"),
                "{path}: {types:?}"
            );
        }
    }
}

#[test]
fn an_rspec_describe_names_described_class_and_matchers_are_no_references() {
    let src = "RSpec.describe FactoryBot::Sequence do\n  it \"counts\" do\n    sequence = described_class.new(:count)\n    expect(sequence.next).to eq 1\n    expect(described_class.find(:user)).to be_truthy\n    is_expected.to be_valid\n  end\n  describe \"#rewind\" do\n    it { described_class.new(:x).rewind }\n  end\nend\nitems.first.to_s\n";
    let f = parse_file(
        "spec/factory_bot/sequence_spec.rb",
        Lang::Ruby,
        src.as_bytes(),
    );
    let refs: Vec<(RefKind, &str, Option<&str>, Option<&str>)> = f
        .references
        .iter()
        .map(|r| (r.kind, r.name, r.receiver, r.receiver_type))
        .collect();
    // `described_class` is the described class, in nested blocks too.
    let news = refs
        .iter()
        .filter(|r| r.0 == RefKind::Call && r.1 == "Sequence" && r.2.is_none())
        .count();
    assert_eq!(news, 2, "{refs:?}");
    assert!(
        refs.iter()
            .any(|r| r.1 == "find" && r.3 == Some("Sequence")),
        "{refs:?}"
    );
    assert!(
        refs.iter()
            .any(|r| r.1 == "rewind" && r.3 == Some("Sequence")),
        "{refs:?}"
    );
    // What an expectation is called with is the code's; the expectation's methods are not.
    assert!(refs.iter().any(|r| r.1 == "next"), "{refs:?}");
    for matcher in ["to", "describe"] {
        assert!(refs.iter().all(|r| r.1 != matcher), "{matcher} in {refs:?}");
    }
    // A method of anything else is a reference.
    assert!(refs.iter().any(|r| r.1 == "to_s"), "{refs:?}");
    // A core or standard module's methods are the library's; a class of the repository's
    // called the same way is the repository's.
    let src = "path = File.join(root, JSON.parse(text)['dir'])\nSite.process(path)\n";
    let f = parse_file("lib/site.rb", Lang::Ruby, src.as_bytes());
    let mut names: Vec<&str> = f.references.iter().map(|r| r.name).collect();
    names.sort_unstable();
    assert_eq!(names, ["Site", "process"], "{names:?}");
}

#[test]
fn a_javascript_test_runners_globals_and_the_platforms_objects_are_no_references() {
    let src = "describe('app', function () {\n  before(function () { setup(); });\n  it('sends', function (done) {\n    var body = Buffer.from(JSON.stringify({ a: 1 }));\n    console.log(Object.keys(body));\n    send(body, done);\n  });\n});\nfunction test(app) { return app.handle(); }\ntest(app);\n";
    let f = parse_file("test/app.js", Lang::JavaScript, src.as_bytes());
    let names: Vec<&str> = f.references.iter().map(|r| r.name).collect();
    for platform in [
        "describe",
        "it",
        "before",
        "from",
        "stringify",
        "log",
        "keys",
    ] {
        assert!(!names.contains(&platform), "{platform} in {names:?}");
    }
    // The code's own calls stay, and a file's own `test` function is its own.
    for own in ["setup", "send", "handle", "test"] {
        assert!(names.contains(&own), "{own} missing from {names:?}");
    }
}
