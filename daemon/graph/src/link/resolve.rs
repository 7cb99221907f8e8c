//! Name resolution: the repository-wide symbol tables and one file's view (its imports).

use std::collections::{HashMap, HashSet};

use super::common::is_common_method;
use super::{Graph, How, ModuleIndex};
use crate::model::{DefKind, Lang, RefKind, Reference};

const SELF_WORDS: &[&str] = &["self", "this", "cls", "Self"];

/// Repository-wide tables, built once per link.
pub struct Symbols {
    /// Simple name → nodes (sections excluded).
    by_name: Table<String, Vec<u32>>,
    /// [`member_key`]`(owner type, member name)` → nodes.
    members: Table<String, Vec<u32>>,
    /// Member name → nodes that have an owner type.
    member_names: Table<String, Vec<u32>>,
    /// Type name → names of its bases (inherits/implements/embeds), by name.
    bases: Table<String, Vec<String>>,
    /// Ruby modules included at the top level of some file (`include Jekyll` in a test
    /// helper): mixed into `Object`, their constants are visible everywhere.
    ruby_global_mixins: Vec<String>,
}

/// The symbol tables hash names by FNV: built for every link and update (a fifth of a kafka
/// save with SipHash), over a repository's own names, which need no defence against flooding.
type Table<K, V> = HashMap<K, V, fittok_util::hash::FnvBuild>;

/// Between owner and member in a member key: a character no identifier holds.
const MEMBER_SEPARATOR: char = '\u{1}';

/// The key of `owner`'s members named `name`.
fn member_key(owner: &str, name: &str) -> String {
    let mut key = String::with_capacity(owner.len() + name.len() + 1);
    key.push_str(owner);
    end_member_key(&mut key, name);
    key
}

/// Completes a member key whose owner `key` already holds.
fn end_member_key(key: &mut String, name: &str) {
    key.push(MEMBER_SEPARATOR);
    key.push_str(name);
}

/// `node` under `key`, the key allocated only the first time it is seen.
fn push_under(table: &mut Table<String, Vec<u32>>, key: &str, node: u32) {
    match table.get_mut(key) {
        Some(nodes) => nodes.push(node),
        None => {
            table.insert(key.to_string(), vec![node]);
        }
    }
}

/// C# extension methods of the repository's own types, with the type each extends: a
/// `policy.Raise()` on a `Policy` calls `Raise(this Policy p)` as if it were a member (after
/// the type's own members and its bases'). One on a type the repository does not define (a
/// BCL `IList<T>`, which every collection implements) stays a member of its static class
/// only: without the library's type hierarchy a member lookup could not tell which receivers
/// it fits.
pub(super) fn csharp_extensions(g: &Graph) -> Vec<(&str, u32)> {
    if !g.files.iter().any(|f| f.lang == Lang::CSharp) {
        return Vec::new();
    }
    let is_csharp = |n: u32| g.file_of(n).lang == Lang::CSharp;
    let types: HashSet<&str> = (0..g.nodes.len() as u32)
        .filter(|&n| is_csharp(n) && g.def(n).kind.is_type())
        .map(|n| g.def(n).name.as_str())
        .collect();
    (0..g.nodes.len() as u32)
        .filter(|&n| is_csharp(n) && g.def(n).kind == DefKind::Method)
        .filter_map(|n| {
            let ty = super::chains::extension_receiver(Lang::CSharp, &g.def(n).signature)?;
            types.contains(ty).then_some((ty, n))
        })
        .collect()
}

impl Symbols {
    pub fn build(g: &Graph) -> Self {
        // Sections and regions are no names; a C++ fixture test's body is called by none.
        let named = |node: u32| {
            let def = g.def(node);
            !matches!(def.kind, DefKind::Section | DefKind::Region)
                && !crate::parse::is_fixture_test(def)
        };
        let by_name = || {
            let mut by_name = Table::default();
            for node in (0..g.nodes.len() as u32).filter(|&n| named(n)) {
                push_under(&mut by_name, &g.def(node).name, node);
            }
            by_name
        };
        let members = || {
            let (mut members, mut member_names) = (Table::default(), Table::default());
            // One buffer for every member key: a key is allocated only when first seen.
            let mut key = String::new();
            for node in (0..g.nodes.len() as u32).filter(|&n| named(n)) {
                let name = &g.def(node).name;
                key.clear();
                if g.owner_type_into(node, &mut key) {
                    end_member_key(&mut key, name);
                    push_under(&mut members, &key, node);
                    push_under(&mut member_names, name, node);
                }
            }
            for (ty, node) in csharp_extensions(g) {
                push_under(&mut members, &member_key(ty, &g.def(node).name), node);
            }
            (members, member_names)
        };
        // The tables are independent: two threads (a link or update waits on this).
        let (by_name, (members, member_names)) = std::thread::scope(|scope| {
            let other = scope.spawn(members);
            let by_name = by_name();
            let members = other.join().unwrap_or_else(|_| members());
            (by_name, members)
        });
        let mut s = Symbols {
            by_name,
            members,
            member_names,
            bases: Table::default(),
            ruby_global_mixins: Vec::new(),
        };
        for f in &g.files {
            for r in f
                .references
                .of_kinds(&[RefKind::Inherits, RefKind::Implements])
            {
                let top_level = r.scope.is_none_or(|s| {
                    let d = &f.definitions[s as usize];
                    d.kind == DefKind::Region && d.parent.is_none()
                });
                if f.lang == Lang::Ruby && r.kind == RefKind::Implements && top_level {
                    let name = match r.receiver {
                        Some(recv) => format!("{recv}::{}", r.name),
                        None => r.name.to_string(),
                    };
                    if !s.ruby_global_mixins.contains(&name) {
                        s.ruby_global_mixins.push(name);
                    }
                }
                let Some(mut scope) = r.scope else { continue };
                // A base named in a type's body (PHP's `use SomeTrait;`) lies in a region of
                // the type: the type is the owner.
                while f.definitions[scope as usize].kind == DefKind::Region
                    && let Some(parent) = f.definitions[scope as usize].parent
                {
                    scope = parent;
                }
                let owner = &f.definitions[scope as usize];
                if owner.kind == DefKind::Region {
                    continue;
                }
                let owner_name = match owner.kind {
                    DefKind::Impl => crate::parse::impl_self_type(&owner.name).to_string(),
                    _ => owner.name.clone(),
                };
                s.bases
                    .entry(owner_name)
                    .or_default()
                    .push(r.name.to_string());
            }
        }
        s
    }
}

/// What a local name in a file is bound to by an import.
#[derive(Debug, Default, Clone)]
struct Binding {
    defs: Vec<u32>,
    files: Vec<u32>,
}

/// One file's resolution context.
pub struct FileScope<'a> {
    pub(super) g: &'a Graph,
    sym: &'a Symbols,
    modules: &'a ModuleIndex,
    file: u32,
    lang: Lang,
    /// The file is test code: test helpers elsewhere are fair targets of its references.
    test_file: bool,
    bindings: HashMap<String, Binding>,
    wildcard_files: Vec<u32>,
    package_files: Vec<u32>,
    /// Resolved files of each import, in order.
    pub import_files: Vec<Vec<u32>>,
}

impl<'a> FileScope<'a> {
    pub fn build(g: &'a Graph, modules: &'a ModuleIndex, sym: &'a Symbols, file: u32) -> Self {
        let f = &g.files[file as usize];
        let mut scope = FileScope {
            g,
            sym,
            modules,
            file,
            lang: f.lang,
            test_file: crate::model::is_test_path(&f.path),
            bindings: HashMap::new(),
            wildcard_files: Vec::new(),
            package_files: match f.lang {
                Lang::Go => modules.go_same_package(&f.path),
                Lang::Java
                | Lang::CSharp
                | Lang::Kotlin
                | Lang::Scala
                | Lang::Php
                | Lang::Swift => modules.same_package(f.lang, modules.package_of(file, f)),
                _ => Vec::new(),
            },
            import_files: Vec::new(),
        };
        // The file's own imports, then those it has from its project (C# `global using`s and
        // project files' usings): these bind names alike, but are no import edges of the
        // file, which would tie every file of a project to every namespace it uses.
        let own = f.imports.iter().filter(|i| !i.is_own()).map(|i| (i, true));
        let inherited = f.inherited_imports.iter().map(|i| (i, false));
        for (imp, written) in own.chain(inherited) {
            let files = modules.resolve(f, &imp.module);
            let mut all_files = files.clone();
            if let Some(alias) = &imp.module_alias {
                scope.bind(
                    alias,
                    Binding {
                        defs: Vec::new(),
                        files: files.clone(),
                    },
                );
            }
            if imp.wildcard {
                scope.wildcard_files.extend(files.iter().copied());
            }
            for (name, alias) in &imp.names {
                let mut defs = scope.exported(&files, name);
                if defs.is_empty() && name == "default" {
                    defs = scope.exported(&files, alias);
                }
                let mut binding = Binding {
                    defs,
                    files: Vec::new(),
                };
                if binding.defs.is_empty() {
                    // `from pkg import module` / `use crate::a::module`: the name is a module.
                    let sub = match f.lang {
                        Lang::Python => modules.python_submodule(&f.path, &imp.module, name),
                        Lang::Rust => modules.resolve(f, &format!("{}::{name}", imp.module)),
                        _ => Vec::new(),
                    };
                    let sub: Vec<u32> = sub.into_iter().filter(|s| !files.contains(s)).collect();
                    all_files.extend(sub.iter().copied());
                    binding.files = if sub.is_empty() && name == "default" {
                        files.clone()
                    } else {
                        sub
                    };
                }
                scope.bind(alias, binding);
            }
            if f.lang.has_classes_only() && !imp.wildcard {
                // `import a.b.C` depends on C's file, not on every file of package a.b.
                let def_files: Vec<u32> = imp
                    .names
                    .iter()
                    .filter_map(|(_, alias)| scope.bindings.get(alias))
                    .flat_map(|b| b.defs.iter().map(|&d| g.nodes[d as usize].file))
                    .collect();
                all_files = def_files;
            }
            if written {
                all_files.sort_unstable();
                all_files.dedup();
                scope.import_files.push(all_files);
            }
        }
        scope
    }

    fn bind(&mut self, name: &str, b: Binding) {
        let entry = self.bindings.entry(name.to_string()).or_default();
        entry.defs.extend(b.defs);
        entry.files.extend(b.files);
    }

    /// Definitions named `name` at the top of the given files (methods of Go types excluded).
    fn top_level(&self, files: &[u32], name: &str) -> Vec<u32> {
        let Some(nodes) = self.sym.by_name.get(name) else {
            return Vec::new();
        };
        nodes
            .iter()
            .copied()
            .filter(|&n| {
                let nr = self.g.nodes[n as usize];
                let def = self.g.def(n);
                files.contains(&nr.file)
                    && (def.parent.is_none()
                        || self.g.def(self.g.parent(n).unwrap_or(n)).kind == DefKind::Module)
                    && def.kind != DefKind::Method
            })
            .collect()
    }

    /// What a module exports under `name`: its own top-level definition, or one it re-exports
    /// (`from .api import get` in `__init__.py`, `export { x } from './x'`, `pub use a::X`).
    fn exported(&self, files: &[u32], name: &str) -> Vec<u32> {
        let mut seen = HashSet::new();
        self.exported_from(files, name, 0, &mut seen)
    }

    fn exported_from(
        &self,
        files: &[u32],
        name: &str,
        depth: u8,
        seen: &mut HashSet<(u32, String)>,
    ) -> Vec<u32> {
        let own = self.top_level(files, name);
        // Java and C# imports are not re-exports: a file's `using X;` shows X's types to that
        // file only. (Following them would also walk every namespace each file uses.)
        if !own.is_empty() || depth >= 3 || self.lang.has_classes_only() {
            return own;
        }
        let mut out = Vec::new();
        for &fi in files {
            if !seen.insert((fi, name.to_string())) {
                continue;
            }
            let f = &self.g.files[fi as usize];
            for imp in &f.imports {
                let original = imp
                    .names
                    .iter()
                    .find(|(_, alias)| alias == name)
                    .map(|(n, _)| n.as_str())
                    .or(imp.wildcard.then_some(name));
                if let Some(original) = original {
                    let targets = if imp.is_own() {
                        vec![fi]
                    } else {
                        self.modules.resolve(f, &imp.module)
                    };
                    out.extend(self.exported_from(&targets, original, depth + 1, seen));
                }
            }
        }
        out
    }

    fn same_family(&self, node: u32) -> bool {
        self.g.file_of(node).lang.family() == self.lang.family()
    }

    fn fits(&self, kind: RefKind, def: DefKind) -> bool {
        match kind {
            RefKind::MacroCall => def == DefKind::Macro,
            RefKind::Call => def.is_callable() || def.is_type() || def == DefKind::Constant,
            // Ruby names a module and a value constant as it names a class: `Rack::Utils.escape`,
            // `include Comparable`, `Jekyll.logger`, `Grape::Env::API_FORMAT`.
            _ => {
                def.is_type()
                    || (self.lang == Lang::Ruby
                        && matches!(def, DefKind::Module | DefKind::Constant))
            }
        }
    }

    /// The definitions `r` refers to (none: unresolved), and how they were found.
    pub fn resolve(&self, r: &Reference) -> (Vec<u32>, How) {
        let (found, how) = match r.receiver {
            None => self.bare(r.name, r.kind, r.scope),
            Some(recv) => self.qualified(recv, r),
        };
        let mut found: Vec<u32> = found
            .into_iter()
            .filter(|&n| self.fits(r.kind, self.g.def(n).kind))
            .collect();
        // A call cannot mean an interface, a trait or a type alias when a definition it can
        // mean shares the name: TypeScript merges `interface X` with `function X` or
        // `class X`, and the call is the function's or the class's.
        if r.kind == RefKind::Call && found.len() > 1 {
            let only_named = |n: &u32| {
                matches!(
                    self.g.def(*n).kind,
                    DefKind::Interface | DefKind::Trait | DefKind::TypeAlias
                )
            };
            if found.iter().any(|n| !only_named(n)) {
                found.retain(|n| !only_named(n));
            }
        }
        found.sort_unstable();
        found.dedup();
        (found, how)
    }

    /// Ancestors of a scope in this file, innermost first.
    fn scope_chain(&self, scope: Option<u32>) -> Vec<u32> {
        let defs = &self.g.files[self.file as usize].definitions;
        let mut chain = Vec::new();
        let mut cur = scope;
        while let Some(s) = cur {
            chain.push(s);
            cur = defs[s as usize].parent;
        }
        chain
    }

    /// The type whose members `self`/`this` refer to in a scope.
    pub(super) fn self_type(&self, scope: Option<u32>) -> Option<String> {
        for s in self.scope_chain(scope) {
            let node = self.g.node_id(self.file, s);
            let def = self.g.def(node);
            if def.kind.is_container() {
                return Some(match def.kind {
                    DefKind::Impl => crate::parse::impl_self_type(&def.name).to_string(),
                    _ => def.name.clone(),
                });
            }
            if let Some(owner) = self.g.owner_type(node) {
                return Some(owner);
            }
        }
        None
    }

    fn bare(&self, name: &str, kind: RefKind, scope: Option<u32>) -> (Vec<u32>, How) {
        let f = &self.g.files[self.file as usize];
        // 1. Defined in this file, visible from the scope: top level or in an enclosing scope.
        let chain = self.scope_chain(scope);
        let local: Vec<u32> = f
            .definitions
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                d.name == name
                    && !matches!(d.kind, DefKind::Section | DefKind::Region)
                    && !crate::parse::is_fixture_test(d)
            })
            .filter(|(_, d)| match d.parent {
                // Methods defined outside their type (Go receivers, C++ `T::m`) are members.
                None => !(matches!(self.lang, Lang::Go | Lang::Cpp) && d.kind == DefKind::Method),
                Some(p) => {
                    chain.contains(&p)
                        && (d.kind != DefKind::Method || self.lang.implicit_self_calls())
                        || f.definitions[p as usize].kind == DefKind::Module
                }
            })
            .map(|(i, _)| self.g.node_id(self.file, i as u32))
            .filter(|&n| self.fits(kind, self.g.def(n).kind))
            .collect();
        if !local.is_empty() {
            return (local, How::Scope);
        }
        // 2. Imported.
        if let Some(b) = self.bindings.get(name) {
            return (b.defs.clone(), How::Import);
        }
        // 3. Same package (Go directory, Java package), then wildcard imports.
        let pkg = self.top_level(&self.package_files, name);
        if !pkg.is_empty() {
            return (pkg, How::Package);
        }
        let wild = self.exported(&self.wildcard_files, name);
        if !wild.is_empty() {
            return (wild, How::Import);
        }
        // 4. Java, C#, Ruby: an unqualified call is a method of this class or a base.
        if self.lang.implicit_self_calls()
            && let Some(owner) = self.self_type(scope)
        {
            let m = self.members_of(&owner, name);
            if !m.is_empty() {
                return (m, How::Member);
            }
        }
        // 5. Ruby: constants are looked up lexically — from `A::B::C`, a `Base` is
        //    `A::B::C::Base`, else `A::B::Base`, else `A::Base`, else a top-level `Base`,
        //    wherever (in whichever file) that module was opened.
        if self.lang == Lang::Ruby
            && let Some(found) = self.ruby_lexical_constant(scope, name, kind)
        {
            return (found, How::Scope);
        }
        // Ruby: a bare call whose receiver is whatever mixes the method in (helpers included
        // into specs, module functions) resolves to the one method of that name, if one.
        if self.lang == Lang::Ruby && kind == RefKind::Call {
            let methods = self.unique(self.named(name).filter(|&n| {
                self.same_family(n)
                    && matches!(self.g.def(n).kind, DefKind::Method | DefKind::Function)
            }));
            if !methods.is_empty() {
                return (methods, How::Name);
            }
        }
        // 6. A unique definition of that name in the language (tests only as a last resort).
        let unique = self.unique(self.named(name).filter(|&n| {
            let d = self.g.def(n);
            self.same_family(n)
                && self.fits(kind, d.kind)
                && d.kind != DefKind::Method
                && d.kind != DefKind::Constructor
        }));
        (unique, How::Name)
    }

    /// The definitions of constant `name` (a class, module or constant) nearest the lexical
    /// scope, by qualified name.
    fn ruby_lexical_constant(
        &self,
        scope: Option<u32>,
        name: &str,
        kind: RefKind,
    ) -> Option<Vec<u32>> {
        let candidates: Vec<u32> = self
            .sym
            .by_name
            .get(name)?
            .iter()
            .copied()
            .filter(|&n| {
                let d = self.g.def(n);
                self.same_family(n)
                    && self.fits(kind, d.kind)
                    && matches!(d.kind, DefKind::Class | DefKind::Module | DefKind::Constant)
            })
            .collect();
        // The enclosing modules' qualified names, innermost first, then the top level.
        let defs = &self.g.files[self.file as usize].definitions;
        let mut nesting: Vec<String> = self
            .scope_chain(scope)
            .into_iter()
            .map(|s| &defs[s as usize])
            .filter(|d| matches!(d.kind, DefKind::Class | DefKind::Module))
            .map(|d| d.qualified_name.clone())
            .collect();
        nesting.push(String::new());
        nesting.extend(self.sym.ruby_global_mixins.iter().cloned());
        for outer in nesting {
            let wanted = if outer.is_empty() {
                name.to_string()
            } else {
                format!("{outer}::{name}")
            };
            let found: Vec<u32> = candidates
                .iter()
                .copied()
                .filter(|&n| self.g.def(n).qualified_name == wanted)
                .collect();
            if !found.is_empty() {
                return Some(found);
            }
        }
        None
    }

    /// Every definition named `name`, in any file.
    fn named<'n>(&'n self, name: &str) -> impl Iterator<Item = u32> + 'n {
        self.sym.by_name.get(name).into_iter().flatten().copied()
    }

    fn unique(&self, candidates: impl Iterator<Item = u32>) -> Vec<u32> {
        // A test-only definition in another file (`tests::err`) is no target for code outside
        // tests: the name is unique only because the real one is not in the repository.
        let all: Vec<u32> = candidates
            .filter(|&n| {
                !self.g.def(n).is_test
                    || self.test_file
                    || self.g.nodes[n as usize].file == self.file
            })
            .collect();
        if all.len() <= 1 {
            return all;
        }
        let non_test: Vec<u32> = all
            .iter()
            .copied()
            .filter(|&n| !self.g.def(n).is_test)
            .collect();
        if non_test.len() == 1 {
            non_test
        } else {
            Vec::new()
        }
    }

    /// Members named `name` of type `owner` or of its bases (by name, a few levels up).
    pub(super) fn members_of(&self, owner: &str, name: &str) -> Vec<u32> {
        let mut seen = HashSet::new();
        let mut frontier = vec![owner.to_string()];
        for _ in 0..5 {
            let mut next = Vec::new();
            for t in frontier {
                if !seen.insert(t.clone()) {
                    continue;
                }
                if let Some(m) = self.sym.members.get(&member_key(&t, name)) {
                    let m: Vec<u32> = m.iter().copied().filter(|&n| self.same_family(n)).collect();
                    if !m.is_empty() {
                        return m;
                    }
                }
                if let Some(bases) = self.sym.bases.get(&t) {
                    next.extend(bases.iter().cloned());
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        Vec::new()
    }

    /// Of several definitions, those in this file, else those under this file's crate or
    /// package root (the directory above `/src`), else all.
    pub(super) fn nearest(&self, all: Vec<u32>) -> Vec<u32> {
        self.nearest_to(self.file, all)
    }

    /// Of several definitions, those in `file`, else those under its crate or package root,
    /// else all.
    fn nearest_to(&self, file: u32, all: Vec<u32>) -> Vec<u32> {
        if all.len() <= 1 {
            return all;
        }
        let here: Vec<u32> = all
            .iter()
            .copied()
            .filter(|&m| self.g.nodes[m as usize].file == file)
            .collect();
        if !here.is_empty() {
            return here;
        }
        let dir = super::dir_of(&self.g.files[file as usize].path);
        let root = dir.split("/src").next().unwrap_or(dir);
        let near: Vec<u32> = all
            .iter()
            .copied()
            .filter(|&m| self.g.file_of(m).path.starts_with(root))
            .collect();
        if near.is_empty() { all } else { near }
    }

    /// Members of a known type definition: of all types sharing its name, prefer members
    /// declared beside it (same file, then same directory tree).
    fn members_of_node(&self, ty: u32, name: &str) -> Vec<u32> {
        let all = self.members_of(&self.g.def(ty).name, name);
        self.nearest_to(self.g.nodes[ty as usize].file, all)
    }

    fn qualified(&self, recv: &str, r: &Reference) -> (Vec<u32>, How) {
        let name = r.name;
        // A variable bound to a chain of calls (`val m = Moshi.Builder().build()`) has the type
        // the chain returns — when the repository defines it; none known otherwise (a library's
        // type: its calls resolve by name, extension methods of the repository's own among
        // them).
        let chained;
        let r = match r.receiver_type {
            Some(chain) if chain.ends_with("()") => {
                chained = self
                    .chain_type(chain, r.scope)
                    .filter(|t| self.named(t).any(|n| self.g.def(n).kind.is_type()));
                &Reference {
                    receiver_type: chained.as_deref(),
                    ..*r
                }
            }
            _ => r,
        };
        if let Some(ty) = &r.receiver_type {
            let m = self.members_of(ty, name);
            if !m.is_empty() {
                return (m, How::Member);
            }
            // A type known by an imported alias (`import a.{Log => L}`, `using L = A.Log;`).
            if let Some(b) = self.bindings.get(&**ty) {
                let m: Vec<u32> = b
                    .defs
                    .iter()
                    .flat_map(|&d| self.members_of_node(d, name))
                    .collect();
                if !m.is_empty() {
                    return (m, How::Import);
                }
            }
        }
        if SELF_WORDS.contains(&recv) {
            let m = self.self_type(r.scope).map(|t| self.members_of(&t, name));
            return (m.unwrap_or_default(), How::Member);
        }
        if recv == "super" {
            let Some(owner) = self.self_type(r.scope) else {
                return (Vec::new(), How::Member);
            };
            for base in self.sym.bases.get(&owner).into_iter().flatten() {
                let m = self.members_of(base, name);
                if !m.is_empty() {
                    return (m, How::Member);
                }
            }
            return (Vec::new(), How::Member);
        }
        if recv.is_empty() {
            return (self.any_member(name, r.kind), How::Name);
        }
        // A chain of calls (`Builder::new().wide()`, written without arguments).
        if recv.ends_with("()") {
            if let Some(ty) = self.chain_type(recv, r.scope) {
                let m = self.members_of(&ty, name);
                if !m.is_empty() {
                    return (m, How::Member);
                }
            }
            return (self.any_member(name, r.kind), How::Name);
        }
        // An imported module or type. One that yields nothing (an import resolved to another
        // definition of the name, a re-export not followed) leaves the other readings open.
        if let Some(b) = self.bindings.get(recv) {
            let mut out = self.exported(&b.files, name);
            for &d in &b.defs {
                out.extend(self.members_of_node(d, name));
            }
            if !out.is_empty() || (b.defs.is_empty() && b.files.is_empty()) {
                return (out, How::Import);
            }
        }
        let sep = if self.lang == Lang::Rust || recv.contains("::") {
            "::"
        } else {
            "."
        };
        let last = recv.rsplit(sep).next().unwrap_or(recv);
        let first = recv.split(sep).next().unwrap_or(recv);
        // `a.b.f()` / `a::B::f()` where `a` is an imported module outside the repository (or
        // Rust's `std`, `core`, `alloc`): its members are not ours, whatever their names.
        let external_root = self.lang == Lang::Rust && matches!(first, "std" | "core" | "alloc");
        if first != recv
            && (external_root
                || self
                    .bindings
                    .get(first)
                    .is_some_and(|b| b.defs.is_empty() && b.files.is_empty()))
        {
            return (Vec::new(), How::Import);
        }
        if last == "Self" {
            let m = self.self_type(r.scope).map(|t| self.members_of(&t, name));
            return (m.unwrap_or_default(), How::Member);
        }
        // A type: `Type::new()`, `Foo.bar()`, `a::b::Type::f()`. Not imported, so it is in
        // scope here: of several types of that name, the one of this file, else this crate's.
        if last.chars().next().is_some_and(char::is_uppercase) {
            let m = self.nearest(self.members_of(last, name));
            if !m.is_empty() {
                return (m, How::Member);
            }
        }
        // A Rust module path: `crate::a::f()`, `super::f()`, `imported_mod::sub::f()`.
        if sep == "::" {
            let f = &self.g.files[self.file as usize];
            let files = self.modules.resolve(f, recv);
            let out = self.exported(&files, name);
            if !out.is_empty() {
                return (out, How::Import);
            }
            if let Some(b) = self.bindings.get(first) {
                let mut out = Vec::new();
                for &d in &b.defs {
                    out.extend(self.members_of(&self.g.def(d).name, name));
                }
                if !out.is_empty() {
                    return (out, How::Import);
                }
            }
        }
        // An object whose members are assigned by name (`app.handle = function …`).
        if last.chars().next().is_some_and(char::is_lowercase) {
            let m = self.members_of(last, name);
            if !m.is_empty() {
                return (m, How::Member);
            }
        }
        // A local variable of unknown type: a method name unique in the language.
        if r.receiver_type.is_none() && !self.bindings.contains_key(first) {
            return (self.any_member(name, r.kind), How::Name);
        }
        (Vec::new(), How::Name)
    }

    /// A method called on a receiver of unknown type: linked only when exactly one type in
    /// the language defines it, and it is not a name every standard library uses (a repo's
    /// only `unwrap` is not what `x.unwrap()` calls).
    fn any_member(&self, name: &str, kind: RefKind) -> Vec<u32> {
        if kind != RefKind::Call || is_common_method(self.lang, name) {
            return Vec::new();
        }
        self.unique(
            self.sym
                .member_names
                .get(name)
                .into_iter()
                .flatten()
                .copied()
                .filter(|&n| self.same_family(n) && self.g.def(n).kind.is_callable()),
        )
    }
}
