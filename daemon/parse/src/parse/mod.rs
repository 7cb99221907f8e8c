//! Stage 2: one file's bytes → a [`ParsedFile`]: definitions, imports, references.
//!
//! Invariant: [`parse_file`] never fails and never panics. Broken code yields the definitions
//! tree-sitter could still see plus diagnostics; non-UTF-8 bytes are parsed as they are (so
//! byte offsets stay exact) and text taken from them is decoded lossily.
//!
//! Each language is one module with a `visit` function over tree-sitter nodes; the shared
//! machinery (scopes, local type bindings, docs, signatures) lives in [`Cx`].

mod builtins;
mod c_lang;
mod cpp;
pub use cpp::is_fixture_test;
mod csharp;
pub use csharp::using_import as csharp_using_import;
mod fields;
mod go;
mod java;
mod js;
mod kotlin;
mod markdown;
mod php;
mod python;
mod regions;
mod ruby;
mod rust_lang;
mod scala;
mod swift;

use tree_sitter::{Node, Parser};

pub(crate) use fields::Fields;

use crate::model::{
    DefKind, Definition, Diagnostic, Import, Lang, ParsedFile, RefKind, Reference,
    ReferencesBuilder, is_test_path,
};

/// Past this depth the walk stops descending (pathological nesting would exhaust the stack).
const MAX_DEPTH: usize = 400;
/// Diagnostics kept per file.
const MAX_DIAGNOSTICS: usize = 20;

/// The grammar of `lang`; `None` for Markdown, which has none. Every grammar is linked into
/// the binary: nothing is loaded at run time, so a grammar is never missing.
pub fn ts_language(lang: Lang) -> Option<tree_sitter::Language> {
    Some(match lang {
        Lang::Python => tree_sitter_python::LANGUAGE.into(),
        Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Lang::Java => tree_sitter_java::LANGUAGE.into(),
        Lang::Go => tree_sitter_go::LANGUAGE.into(),
        Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
        Lang::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        Lang::Ruby => tree_sitter_ruby::LANGUAGE.into(),
        Lang::C => tree_sitter_c::LANGUAGE.into(),
        Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Lang::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
        Lang::Scala => tree_sitter_scala::LANGUAGE.into(),
        Lang::Php => tree_sitter_php::LANGUAGE_PHP.into(),
        Lang::Swift => tree_sitter_swift::LANGUAGE.into(),
        Lang::Markdown => return None,
    })
}

/// Every language with a grammar, and whether this build's parser accepts it (`Err` with the
/// parser's reason when not): what `fittok status` shows.
pub fn grammar_status() -> Vec<(Lang, Result<(), String>)> {
    Lang::ALL
        .iter()
        .filter_map(|&lang| {
            let language = ts_language(lang)?;
            let loaded = Parser::new()
                .set_language(&language)
                .map_err(|e| e.to_string());
            Some((lang, loaded))
        })
        .collect()
}

/// The start of the diagnostic of a file whose grammar the parser refused (an ABI this
/// tree-sitter does not support): such a parse is empty through no fault of the file, and is
/// never written to the parse cache ([`crate::model::ParsedFile::grammar_failed`]).
pub const GRAMMAR_FAILED: &str = "grammar not usable";

/// Whether parsing adds region nodes (code outside definitions, see [`regions`]): a fix often
/// lands in imports, top-level code or a type's fields, which no definition holds. Fusion keeps
/// them out of its ranking (they shift BM25's length norm and IDF and take places in each
/// signal's list); the learned ranker ranks them with the rest.
pub const REGION_NODES: bool = true;

/// Whether a `.h` header is C++: it opens a namespace or a class, declares a template or an
/// access section, or includes a C++ standard header.
fn looks_like_cpp(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]);
    text.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("namespace ")
            || l.starts_with("template <")
            || l.starts_with("template<")
            || (l.starts_with("class ") && !l.ends_with(';'))
            || matches!(l.trim_end(), "public:" | "private:" | "protected:")
            || [
                "<string>",
                "<vector>",
                "<memory>",
                "<iostream>",
                "<map>",
                "<utility>",
            ]
            .iter()
            .any(|h| l.starts_with("#include") && l.contains(h))
    })
}

/// Parses one file. Always returns a result.
pub fn parse_file(path: &str, lang: Lang, bytes: &[u8]) -> ParsedFile {
    parse_file_with(path, lang, bytes, REGION_NODES)
}

/// [`parse_file`], with or without region nodes.
pub fn parse_file_with(path: &str, lang: Lang, bytes: &[u8], region_nodes: bool) -> ParsedFile {
    // `.h` serves C and C++ alike: a header that uses C++ is parsed as C++.
    let lang = if lang == Lang::C && path.ends_with(".h") && looks_like_cpp(bytes) {
        Lang::Cpp
    } else {
        lang
    };
    let lossy = std::str::from_utf8(bytes).is_err();
    let lines = if bytes.is_empty() {
        0
    } else {
        bytes.iter().filter(|&&b| b == b'\n').count() as u32 + u32::from(!bytes.ends_with(b"\n"))
    };
    let mut file = ParsedFile {
        path: path.to_string(),
        lang,
        bytes: bytes.len() as u32,
        lines,
        package: None,
        definitions: Vec::new(),
        references: Default::default(),
        imports: Vec::new(),
        diagnostics: Vec::new(),
        lossy,
        is_test_file: is_test_path(path),
        targets: Vec::new(),
        project_imports: Vec::new(),
        inherited_imports: Vec::new(),
    };
    if lossy {
        file.diagnostics.push(Diagnostic {
            line: 0,
            message: "not valid UTF-8; text decoded lossily".into(),
        });
    }
    if lang == Lang::Markdown {
        markdown::extract(&mut file, bytes);
        return file;
    }
    let Some(language) = ts_language(lang) else {
        return file;
    };
    let mut parser = Parser::new();
    if let Err(e) = parser.set_language(&language) {
        file.diagnostics.push(Diagnostic {
            line: 0,
            message: format!("{GRAMMAR_FAILED}: {e}"),
        });
        return file;
    }
    // C and C++ export macros are blanked in the copy the grammar reads, and Kotlin's wrapped
    // constructors joined to their class and `when` guards made conditions; names, signatures
    // and lines come from the file as it is (offsets are the same).
    let blanked = match lang {
        Lang::C | Lang::Cpp => c_lang::blank_export_macros(bytes),
        Lang::Kotlin => kotlin::readable_copy(bytes),
        _ => None,
    };
    let Some(tree) = parser.parse(blanked.as_deref().unwrap_or(bytes), None) else {
        file.diagnostics.push(Diagnostic {
            line: 0,
            message: "parser gave up".into(),
        });
        return file;
    };
    let root = tree.root_node();
    let mut cx = Cx::new(&mut file, bytes);
    if root.has_error() {
        cx.collect_errors(root);
    }
    match lang {
        Lang::Python => python::visit(&mut cx, root),
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => js::visit(&mut cx, root),
        Lang::Java => java::visit(&mut cx, root),
        Lang::CSharp => csharp::visit(&mut cx, root),
        Lang::Ruby => ruby::visit(&mut cx, root),
        Lang::C => c_lang::visit(&mut cx, root),
        Lang::Cpp => cpp::visit(&mut cx, root),
        Lang::Kotlin => kotlin::visit(&mut cx, root),
        Lang::Scala => scala::visit(&mut cx, root),
        Lang::Php => php::visit(&mut cx, root),
        Lang::Swift => swift::visit(&mut cx, root),
        Lang::Go => go::visit(&mut cx, root),
        Lang::Rust => {
            rust_lang::collect_field_types(&mut cx, root);
            rust_lang::visit(&mut cx, root)
        }
        Lang::Markdown => {}
    }
    cx.finish();
    if region_nodes {
        regions::push_regions(&mut file, bytes);
    }
    push_file_node(&mut file, bytes);
    let test_file = file.is_test_file;
    if test_file {
        for def in &mut file.definitions {
            def.is_test = true;
        }
    }
    file
}

/// Every source file also is a node of its own, last in its definitions: its outline carries
/// the code outside any definition (imports, module-level statements).
fn push_file_node(file: &mut ParsedFile, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let name = file
        .path
        .rsplit('/')
        .next()
        .unwrap_or(&file.path)
        .to_string();
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(2048)]).into_owned();
    let doc = module_doc(&head);
    file.definitions.push(Definition {
        name,
        qualified_name: file.path.clone(),
        kind: DefKind::File,
        start_line: 1,
        end_line: file.lines.max(1),
        start_byte: 0,
        end_byte: bytes.len() as u32,
        signature: file.path.clone(),
        doc,
        parent: None,
        is_test: false,
        is_prose: false,
    });
}

/// The docstring or comment block at the top of a file: what the file is about.
fn module_doc(head: &str) -> Option<String> {
    let trimmed = head.trim_start();
    let text = if let Some(q) = ["\"\"\"", "'''"].iter().find(|q| trimmed.starts_with(**q)) {
        let rest = &trimmed[3..];
        rest.split(*q).next().unwrap_or(rest).to_string()
    } else if trimmed.starts_with("//") || trimmed.starts_with('#') || trimmed.starts_with("/*") {
        let lines: Vec<&str> = trimmed
            .lines()
            .map(str::trim_start)
            .take_while(|l| {
                l.starts_with("//")
                    || l.starts_with('#')
                    || l.starts_with("/*")
                    || l.starts_with('*')
            })
            .collect();
        clean_comment(&lines.join("\n"))
    } else {
        return None;
    };
    let first: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    (!first.is_empty()).then(|| first.join("\n"))
}

/// The extraction context: the file being filled, the scope stack, local type bindings.
pub(crate) struct Cx<'f, 's> {
    pub file: &'f mut ParsedFile,
    pub src: &'s [u8],
    /// Indices of the enclosing definitions, innermost last.
    scopes: Vec<u32>,
    /// Local variable → type name, one frame per callable scope.
    bindings: Vec<Vec<(String, String)>>,
    depth: usize,
    /// Ruby: inside `class << self`, where `def m` defines a class method.
    pub ruby_singleton: bool,
    /// Type parameters in scope (C++ `template <typename T>`): uses of them name no
    /// definition, so they are not references.
    pub type_params: Vec<String>,
    /// The file's references, moved into it when the visit ends ([`Cx::finish`]).
    refs: ReferencesBuilder,
    /// (type, field, field's type) of the file's struct fields: `self.field.m()` calls a
    /// member of the field's type.
    field_types: Vec<(String, String, String)>,
}

impl<'f, 's> Cx<'f, 's> {
    fn new(file: &'f mut ParsedFile, src: &'s [u8]) -> Self {
        Cx {
            file,
            src,
            scopes: Vec::new(),
            bindings: vec![Vec::new()],
            depth: 0,
            ruby_singleton: false,
            type_params: Vec::new(),
            refs: ReferencesBuilder::default(),
            field_types: Vec::new(),
        }
    }

    /// Ends the visit: the references found move into the file.
    fn finish(self) {
        self.file.references = self.refs.finish();
    }

    pub fn text(&self, node: Node) -> String {
        let range = node.start_byte().min(self.src.len())..node.end_byte().min(self.src.len());
        String::from_utf8_lossy(&self.src[range]).into_owned()
    }

    pub fn field_text(&self, node: Node, field: &'static str) -> Option<String> {
        node.field(field).map(|n| self.text(n))
    }

    pub fn lang(&self) -> Lang {
        self.file.lang
    }

    pub fn scope(&self) -> Option<u32> {
        self.scopes.last().copied()
    }

    pub fn scope_def(&self) -> Option<&Definition> {
        self.scope().map(|i| &self.file.definitions[i as usize])
    }

    /// The innermost enclosing definition that is a container (class, impl, trait…).
    pub fn enclosing_container(&self) -> Option<&Definition> {
        self.scopes
            .iter()
            .rev()
            .map(|&i| &self.file.definitions[i as usize])
            .find(|d| d.kind.is_container())
    }

    /// Whether the innermost scope is a type body (so a function here is a method). A module
    /// or namespace holds functions, not methods.
    pub fn in_container(&self) -> bool {
        self.scope_def()
            .is_some_and(|d| d.kind.is_container() && d.kind != DefKind::Module)
    }

    pub fn in_test(&self) -> bool {
        self.scope_def().is_some_and(|d| d.is_test)
    }

    fn qualify(&self, name: &str, kind: DefKind) -> String {
        let sep = match self.lang() {
            Lang::Rust | Lang::Cpp | Lang::Php => "::",
            // Ruby: `Mod::Class#instance_method`, `Mod::Class.class_method`.
            Lang::Ruby => match kind {
                DefKind::Method => "#",
                DefKind::Function => ".",
                _ => "::",
            },
            _ => ".",
        };
        match self.scope_def() {
            Some(parent) if parent.kind == DefKind::Section => name.to_string(),
            Some(parent) => {
                let prefix = match parent.kind {
                    // Methods of `impl Display for Point` are `Point::fmt`.
                    DefKind::Impl => impl_self_type(&parent.name),
                    _ => parent.qualified_name.as_str(),
                };
                format!("{prefix}{sep}{name}")
            }
            None => match (&self.file.package, self.lang()) {
                (Some(pkg), Lang::Go) => format!("{pkg}.{name}"),
                _ => name.to_string(),
            },
        }
    }

    /// Records a definition spanning `node` and returns its index. `doc_anchor` is the node
    /// whose preceding comments are its documentation (the outermost wrapper, with decorators).
    pub fn define(&mut self, node: Node, name: String, kind: DefKind, body: Option<Node>) -> u32 {
        let qualified_name = self.qualify(&name, kind);
        let signature = self.signature(node, body);
        let doc = self.leading_comment(node);
        let def = Definition {
            name,
            qualified_name,
            kind,
            start_line: node.start_position().row as u32 + 1,
            end_line: end_line(node),
            start_byte: node.start_byte() as u32,
            end_byte: node.end_byte() as u32,
            signature,
            doc,
            parent: self.scope(),
            is_test: self.in_test(),
            is_prose: kind == DefKind::Constant && is_prose(node),
        };
        self.file.definitions.push(def);
        (self.file.definitions.len() - 1) as u32
    }

    pub fn set_doc(&mut self, def: u32, doc: Option<String>) {
        if let Some(doc) = doc.filter(|d| !d.is_empty()) {
            self.file.definitions[def as usize].doc = Some(doc);
        }
    }

    pub fn mark_test(&mut self, def: u32) {
        self.file.definitions[def as usize].is_test = true;
    }

    /// Visits `children` inside the scope of definition `def`.
    pub fn within(&mut self, def: u32, callable: bool, f: impl FnOnce(&mut Self)) {
        self.scopes.push(def);
        if callable {
            self.bindings.push(Vec::new());
        }
        f(self);
        if callable {
            self.bindings.pop();
        }
        self.scopes.pop();
    }

    /// [`Cx::within`] a callable or type whose type parameters `f` declares (pushes onto
    /// `type_params`): they are forgotten when it ends.
    pub fn within_generic(&mut self, def: u32, f: impl FnOnce(&mut Self)) {
        let before = self.type_params.len();
        self.within(def, true, f);
        self.type_params.truncate(before);
    }

    /// Runs `f` with the type parameters `decl` declares in scope (`<T, K : Comparable<K>>`
    /// of a class, method or function): a use of one names no definition, in the repository
    /// or outside it. Their bounds are the language visitor's to read.
    pub fn with_type_params(&mut self, decl: Node, f: impl FnOnce(&mut Self)) {
        let before = self.type_params.len();
        for list in children_of_kinds(decl, &["type_parameters", "type_parameter_list"]) {
            let mut cursor = list.walk();
            let params: Vec<Node> = list.named_children(&mut cursor).collect();
            for p in params {
                let is_name = |n: &Node| {
                    matches!(
                        n.kind(),
                        "type_identifier" | "identifier" | "simple_identifier"
                    )
                };
                let name = if is_name(&p) {
                    Some(p)
                } else {
                    p.field("name").or_else(|| p.field("left")).or_else(|| {
                        let mut c = p.walk();
                        p.named_children(&mut c).find(is_name)
                    })
                };
                if let Some(name) = name {
                    let name = self.text(name);
                    self.type_params.push(name);
                }
            }
        }
        f(self);
        self.type_params.truncate(before);
    }

    /// Visits the named children of `node` that `keep` accepts with `visit`, guarding the
    /// depth (the parts of a declaration other than its name, type parameters or body).
    pub fn children_where(
        &mut self,
        node: Node,
        keep: impl Fn(&Node) -> bool,
        visit: fn(&mut Self, Node),
    ) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        let mut cursor = node.walk();
        let parts: Vec<Node> = node
            .named_children(&mut cursor)
            .filter(|c| keep(c))
            .collect();
        for p in parts {
            visit(self, p);
        }
        self.depth -= 1;
    }

    /// Visits every named child of `node` with `visit`, guarding the depth.
    pub fn children(&mut self, node: Node, visit: fn(&mut Self, Node)) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        let mut cursor = node.walk();
        if cursor.goto_first_child() {
            loop {
                let child = cursor.node();
                if child.is_named() {
                    visit(self, child);
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        self.depth -= 1;
    }

    pub fn bind(&mut self, var: String, ty: String) {
        if var.is_empty() || ty.is_empty() {
            return;
        }
        if let Some(frame) = self.bindings.last_mut() {
            frame.push((var, ty));
        }
    }

    /// Binds a member (`@x` set in `initialize`) where every method of the class sees it:
    /// in the frame around the current callable.
    pub fn bind_member(&mut self, var: String, ty: String) {
        if var.is_empty() || ty.is_empty() {
            return;
        }
        let n = self.bindings.len();
        if let Some(frame) = self.bindings.get_mut(n.saturating_sub(2)) {
            frame.push((var, ty));
        }
    }

    pub fn lookup(&self, var: &str) -> Option<String> {
        let bound = self
            .bindings
            .iter()
            .rev()
            .flat_map(|frame| frame.iter().rev())
            .find(|(v, _)| v == var)
            .map(|(_, t)| t.clone());
        bound.or_else(|| {
            // `self.field`: the declared type of the field of `self`'s type.
            let field = var.strip_prefix("self.").filter(|f| !f.contains('.'))?;
            let owner = self.lookup("self")?;
            self.field_types
                .iter()
                .find(|(t, f, _)| *t == owner && f == field)
                .map(|(_, _, ty)| ty.clone())
        })
    }

    /// Records that `owner`'s field `field` has type `ty` (see [`Cx::lookup`]).
    pub fn field_type(&mut self, owner: String, field: String, ty: String) {
        if !owner.is_empty() && !field.is_empty() && !ty.is_empty() {
            self.field_types.push((owner, field, ty));
        }
    }

    /// Records a use of `name` at `node`: the name itself, or the expression that ends with it
    /// (`builder\n    .caseless(true)`), whose last line is where the name is written.
    pub fn reference(&mut self, kind: RefKind, name: String, receiver: Option<String>, node: Node) {
        if name.is_empty() || receiver.is_none() && builtins::is_builtin(self.lang(), &name) {
            return;
        }
        if receiver.is_none() && self.type_params.contains(&name) {
            return;
        }
        let receiver_type = receiver.as_deref().and_then(|r| self.lookup(r));
        self.push_reference(
            kind,
            &name,
            receiver.as_deref(),
            receiver_type.as_deref(),
            name_line(node),
        );
    }

    fn push_reference(
        &mut self,
        kind: RefKind,
        name: &str,
        receiver: Option<&str>,
        receiver_type: Option<&str>,
        line: u32,
    ) {
        let scope = self.scope();
        self.refs.push(Reference {
            kind,
            name,
            receiver,
            receiver_type,
            line,
            scope,
        });
    }

    /// Records a use of `name` without a receiver at `line` (1-based), for text the grammar
    /// leaves unparsed (a C macro's replacement list).
    pub fn reference_at_line(&mut self, kind: RefKind, name: &str, line: u32) {
        if !name.is_empty() && !builtins::is_builtin(self.lang(), name) {
            self.push_reference(kind, name, None, None, line);
        }
    }

    /// Records a use of `name` on a receiver that is an expression (written as the empty
    /// receiver, as for any expression) whose type the expression itself says: a constructor
    /// call (`Foo.new(…).name`, `new Foo().name()`), where no binding would tell. When the
    /// type has no such member (an extension method, a base outside the repository) the use
    /// resolves as on any other expression.
    pub fn reference_on_type(
        &mut self,
        kind: RefKind,
        name: String,
        receiver_type: String,
        node: Node,
    ) {
        if !name.is_empty() {
            self.push_reference(kind, &name, Some(""), Some(&receiver_type), name_line(node));
        }
    }

    /// The class a constructor expression creates, by its last name: `new Foo(…)` (Java, C#,
    /// PHP `object_creation_expression`; JavaScript and TypeScript `new_expression`),
    /// parenthesised or not; `Foo.new(…)` (Ruby); a call of a capitalised name (`Foo(…)`,
    /// `Moshi.Builder()`, `mod.Foo(…)`: Kotlin and Python name classes so, functions not).
    pub fn created_class(&self, node: Node) -> Option<String> {
        let mut node = node;
        while node.kind() == "parenthesized_expression" {
            node = node.named_child(0)?;
        }
        let lang = self.lang();
        let ty = match node.kind() {
            // PHP's names its class as a child, not a field.
            "object_creation_expression" => node.field("type").or_else(|| {
                children_of_kinds(node, &["name", "qualified_name"])
                    .first()
                    .copied()
            })?,
            "new_expression" => node.field("constructor")?,
            "call_expression" if lang == Lang::Kotlin => {
                let callee = node.named_child(0)?;
                match callee.kind() {
                    "identifier" => callee,
                    "navigation_expression" => {
                        let mut cursor = callee.walk();
                        let last = callee.named_children(&mut cursor).last()?;
                        (last.kind() == "identifier").then_some(last)?
                    }
                    _ => return None,
                }
            }
            "call" if lang == Lang::Python => node
                .field("function")
                .filter(|f| matches!(f.kind(), "identifier" | "attribute"))?,
            "call" if lang == Lang::Ruby => {
                if self.field_text(node, "method").as_deref() != Some("new") {
                    return None;
                }
                node.field("receiver")
                    .filter(|r| matches!(r.kind(), "constant" | "scope_resolution"))?
            }
            _ => return None,
        };
        let name = base_type_name(&self.text(ty)).to_string();
        let by_case = matches!(lang, Lang::Kotlin | Lang::Python);
        (!name.is_empty() && (!by_case || name.starts_with(char::is_uppercase))).then_some(name)
    }

    /// A receiver that is a chain of calls, written without arguments for the linker to
    /// follow through declared return types (`link::chains`): `new Builder().add(x)` as
    /// `<Builder>.add()`. `parts` reads the grammar's call: its method's name and what it is
    /// called on (none for a bare `f()`). `None` past [`MAX_CHAIN`] links or from a start
    /// the linker cannot follow (see [`Cx::chain_link`]).
    pub fn call_chain(&self, call: Node, parts: CallParts) -> Option<String> {
        self.chain_from(call, parts, 0)
    }

    fn chain_from(&self, call: Node, parts: CallParts, depth: usize) -> Option<String> {
        if depth > MAX_CHAIN {
            return None;
        }
        let (name, base) = parts(self, call)?;
        let Some(base) = base else {
            return Some(format!("{name}()"));
        };
        let chain = match base.kind() == call.kind() && self.created_class(base).is_none() {
            true => Some(self.chain_from(base, parts, depth + 1)?),
            false => None,
        };
        self.chain_link(base, chain, &name)
    }

    /// A call of `name` on `receiver`: on the class the receiver creates when it is a `new`
    /// expression (`new Foo().bar()`), else as [`Cx::reference`] takes it.
    pub fn call_on(&mut self, name: String, receiver_node: Node, receiver: String, node: Node) {
        match self.created_class(receiver_node) {
            Some(ty) => self.reference_on_type(RefKind::Call, name, ty, node),
            None => self.reference(RefKind::Call, name, Some(receiver), node),
        }
    }

    /// A call of `name` on the expression `receiver_node` (written `receiver`): as
    /// [`Cx::call_on`] takes it, except that a receiver which is itself a call (of the
    /// grammar's `call_kind`, read by `parts`) is the chain it ends (`a.b(…).c()`: `c` on what
    /// `b` returns, `link::chains`).
    pub fn call_on_expression(
        &mut self,
        name: String,
        receiver_node: Node,
        receiver: String,
        call_kind: &str,
        parts: CallParts,
        node: Node,
    ) {
        let receiver =
            if receiver_node.kind() == call_kind && self.created_class(receiver_node).is_none() {
                self.call_chain(receiver_node, parts).unwrap_or_default()
            } else {
                receiver
            };
        self.call_on(name, receiver_node, receiver, node);
    }

    /// A link of a chain of calls as `link::chains` reads it: `base.name()`, where the base
    /// is `this`/`self` (`self`), a variable of a known type (`<Type>`), a capitalised name
    /// (a static or companion call: `Type::name()`), or the chain before it (`chain`, already
    /// written); `None` when the base is none of these.
    pub fn chain_link(&self, base: Node, chain: Option<String>, name: &str) -> Option<String> {
        if let Some(ty) = self.created_class(base) {
            return Some(format!("<{ty}>.{name}()"));
        }
        match base.kind() {
            "this" | "this_expression" => Some(format!("self.{name}()")),
            // PHP's `$this` and `$x`.
            "variable_name" if self.text(base) == "$this" => Some(format!("self.{name}()")),
            "identifier" | "variable_name" => {
                let text = self.text(base);
                let var = text.trim_start_matches('$').to_string();
                match self.lookup(&var) {
                    // A variable bound to what a chain returns continues that chain.
                    Some(chain) if chain.ends_with("()") => Some(format!("{chain}.{name}()")),
                    Some(ty) => Some(format!("<{ty}>.{name}()")),
                    None if var.starts_with(char::is_uppercase) => Some(format!("{var}::{name}()")),
                    None => None,
                }
            }
            _ => Some(format!("{}.{name}()", chain?)),
        }
    }

    /// Records an import. One without a module (a syntax error, `require('')`) imports
    /// nothing; an empty module is reserved for [`Cx::export_own`].
    pub fn import(&mut self, import: Import) {
        if !import.module.is_empty() {
            self.file.imports.push(import);
        }
    }

    /// Records this file's definitions exported under other names ([`Import::own`]). A pair
    /// whose names agree needs no record: the definition is found under its own name.
    pub fn export_own(&mut self, mut names: Vec<(String, String)>, line: u32) {
        names.retain(|(name, exported)| name != exported);
        if !names.is_empty() {
            self.file.imports.push(Import::own(names, line));
        }
    }

    /// Text from the start of `node` to the start of its body, whitespace-trimmed, at most
    /// a few lines: what a reader needs to call it.
    fn signature(&self, node: Node, body: Option<Node>) -> String {
        let end = body.map_or(node.end_byte(), |b| b.start_byte());
        let range = node.start_byte().min(self.src.len())..end.min(self.src.len());
        let text = String::from_utf8_lossy(&self.src[range]);
        let mut out = crate::lines::joined(text.lines().take(4));
        if text.lines().nth(4).is_some() {
            out.push_str(" …");
        }
        let trimmed = out.trim_end_matches(['{', ':', ' ', '=']).trim_end();
        truncate_chars(trimmed, 300)
    }

    /// Comments immediately above `node` (no blank line between), cleaned of comment markers.
    pub fn leading_comment(&self, node: Node) -> Option<String> {
        let mut lines = Vec::new();
        let mut prev = node.prev_sibling();
        let mut next_row = node.start_position().row;
        while let Some(p) = prev {
            let is_comment = p.kind().contains("comment");
            let is_attr = matches!(p.kind(), "attribute_item" | "decorator" | "annotation");
            if !(is_comment || is_attr) || p.end_position().row + 1 < next_row {
                break;
            }
            if is_comment {
                lines.push(self.text(p));
            }
            next_row = p.start_position().row;
            prev = p.prev_sibling();
        }
        if lines.is_empty() {
            // `export interface X` keeps its comment above the `export`.
            return match node.parent() {
                Some(p) if p.kind() == "export_statement" => self.leading_comment(p),
                _ => None,
            };
        }
        lines.reverse();
        let doc = clean_comment(&lines.join("\n"));
        (!doc.is_empty()).then_some(doc)
    }

    fn collect_errors(&mut self, node: Node) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if self.file.diagnostics.len() >= MAX_DIAGNOSTICS {
                return;
            }
            if n.is_error() || n.is_missing() {
                let message = if n.is_missing() {
                    format!("syntax error: missing {}", n.kind())
                } else {
                    "syntax error".to_string()
                };
                self.file.diagnostics.push(Diagnostic {
                    line: n.start_position().row as u32 + 1,
                    message,
                });
                continue;
            }
            if n.has_error() {
                let mut cursor = n.walk();
                let children: Vec<Node> = n.children(&mut cursor).collect();
                stack.extend(children.into_iter().rev());
            }
        }
    }
}

/// The last line a node covers: a node ending at column 0 ends on the line before.
fn end_line(node: Node) -> u32 {
    let end = node.end_position();
    let row = if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    };
    row as u32 + 1
}

/// `impl<T> Display for Point<T>` → `Point`; `impl Foo` → `Foo`.
pub fn impl_self_type(impl_name: &str) -> &str {
    let rest = impl_name.strip_prefix("impl ").unwrap_or(impl_name);
    let ty = rest.rsplit(" for ").next().unwrap_or(rest);
    base_type_name(ty)
}

/// Links of a chain of calls a parser writes out (builders run to a dozen or more).
pub(super) const MAX_CHAIN: usize = 24;

/// How a grammar's call reads for [`Cx::call_chain`]: the method's name, and the expression
/// it is called on (`None` for a bare call).
pub(super) type CallParts = for<'t> fn(&Cx, Node<'t>) -> Option<(String, Option<Node<'t>>)>;

/// `&mut Vec<T>` → `Vec`; `*pkg.Router` → `Router`; `a::b::C<T>` → `C`; `Foo[int]` → `Foo`;
/// `\App\Util\Str` → `Str`.
pub fn base_type_name(ty: &str) -> &str {
    let ty = ty.trim().trim_start_matches(['&', '*']).trim();
    let ty = ty.strip_prefix("mut ").unwrap_or(ty);
    let ty = ty.strip_prefix("dyn ").unwrap_or(ty);
    let ty = ty.split(['<', '[', '(', ' ']).next().unwrap_or(ty);
    let ty = ty.rsplit("::").next().unwrap_or(ty);
    let ty = ty.rsplit('\\').next().unwrap_or(ty);
    ty.rsplit('.').next().unwrap_or(ty).trim()
}

pub fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Strips `//`, `///`, `/** */`, `#` markers and leading `*` from comment text.
pub fn clean_comment(raw: &str) -> String {
    let mut out = Vec::new();
    for line in raw.lines() {
        let mut l = line.trim();
        for prefix in ["/**", "/*!", "/*", "///", "//!", "//", "#"] {
            if let Some(rest) = l.strip_prefix(prefix) {
                l = rest;
                break;
            }
        }
        l = l.strip_suffix("*/").unwrap_or(l).trim();
        l = l.strip_prefix('*').unwrap_or(l).trim();
        if !l.is_empty() {
            out.push(l);
        }
    }
    out.join("\n")
}

/// A string literal's content: quotes (and a Python prefix such as `r`, `b`, `f`) removed.
/// Text that is not a literal comes back as it is.
pub fn unquote(s: &str) -> String {
    let s = s.trim();
    let Some(q) = s.find(['"', '\'', '`']) else {
        return s.to_string();
    };
    if q > 2 || !s[..q].chars().all(|c| c.is_ascii_alphabetic()) {
        return s.to_string();
    }
    let s = s[q..].trim_start_matches(['"', '\'', '`']);
    s.trim_end_matches(['"', '\'', '`']).to_string()
}

/// Expressions that end with the member or path segment they name: their last line is the
/// name's, however the receiver before it is laid out.
const ENDS_WITH_NAME: &[&str] = &[
    "field_expression",
    "member_expression",
    "attribute",
    "selector_expression",
    "scoped_identifier",
    "navigation_expression",
    "member_access_expression",
    "field_access",
];

/// The line a reference is written on: for an expression ending with the name, its last line.
fn name_line(node: Node) -> u32 {
    let row = if ENDS_WITH_NAME.contains(&node.kind()) {
        node.end_position().row
    } else {
        node.start_position().row
    };
    row as u32 + 1
}

#[cfg(test)]
mod cpp_tests;
#[cfg(test)]
mod php_tests;
#[cfg(test)]
mod scala_tests;
#[cfg(test)]
mod swift_tests;
#[cfg(test)]
mod tests;

/// The first named child of `node` of kind `kind`.
/// `node`'s named children of any of `kinds`, in order.
pub(super) fn children_of_kinds<'t>(node: Node<'t>, kinds: &[&str]) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| kinds.contains(&c.kind()))
        .collect()
}

pub(super) fn child_of_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).find(|c| c.kind() == kind)
}

/// Whether `node` spans several lines and is mostly string literal (at least 60 % of its bytes).
fn is_prose(node: Node) -> bool {
    fn string_bytes(node: Node) -> usize {
        let kind = node.kind();
        if kind.ends_with("string") || kind.ends_with("string_literal") || kind == "text_block" {
            return node.byte_range().len();
        }
        let mut cursor = node.walk();
        node.children(&mut cursor).map(string_bytes).sum()
    }
    let lines = node.end_position().row - node.start_position().row + 1;
    lines >= 4 && string_bytes(node) * 10 >= node.byte_range().len() * 6
}
