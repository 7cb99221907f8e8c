//! The namespaces a C# project imports for all its files: `global using` directives in any of
//! its files, and the `<Using Include="…"/>` items of its project files (`*.csproj`, and the
//! nearest `Directory.Build.props` and `Directory.Build.targets` above it, which MSBuild
//! imports into every project beneath). A file's own `using`s are not enough to resolve its
//! names: modern projects list their common namespaces once, there.
//!
//! A project is the directory of a `.csproj` and everything under it but nested projects; files
//! under no project form one. Items are read without evaluating MSBuild: a `Condition` is not
//! weighed (a namespace imported where the build would not import it only makes more names
//! visible), and `<Using Remove="…"/>` removes nothing the repository defines.
//!
//! Pure: the project files' text comes from the caller ([`crate::walk::Listing::project_files`]
//! names them).

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::{Import, Lang, ParsedFile, dir_of};

/// The `<Using Include="…"/>` items of an MSBuild file, as imports: `Static="true"` imports a
/// type's members, `Alias="X"` binds `X`. Line 0: no line of the file that inherits them.
pub fn using_items(text: &str) -> Vec<Import> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("<Using") {
        rest = &rest[at + "<Using".len()..];
        // `<Usings>` or `<UsingTask>` are other elements.
        if !rest.starts_with(|c: char| c.is_whitespace()) {
            continue;
        }
        let end = rest.find('>').unwrap_or(rest.len());
        let attrs = &rest[..end];
        rest = &rest[end..];
        let Some(target) = attribute(attrs, "Include") else {
            continue;
        };
        let target = target.trim();
        if target.is_empty() || target.contains(['$', '@', '%', ';']) {
            continue;
        }
        let alias = attribute(attrs, "Alias").map(|a| a.trim().to_string());
        out.push(crate::parse::csharp_using_import(
            target.to_string(),
            alias.filter(|a| !a.is_empty()),
            0,
        ));
    }
    out
}

/// The value of attribute `name` in an element's attribute text (`Include="A.B"` or `'A.B'`).
fn attribute<'a>(attrs: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = attrs;
    loop {
        let at = rest.find(name)?;
        let before_ok = rest[..at]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace);
        let after = rest[at + name.len()..].trim_start();
        rest = &rest[at + name.len()..];
        let Some(value) = after.strip_prefix('=').map(str::trim_start) else {
            continue;
        };
        if !before_ok {
            continue;
        }
        let quote = value.chars().next().filter(|&q| q == '"' || q == '\'')?;
        let value = &value[1..];
        return value.find(quote).map(|end| &value[..end]);
    }
}

/// `dir` and its ancestors, nearest first, the root (`""`) last.
fn ancestors(dir: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(dir);
    std::iter::from_fn(move || {
        let d = next?;
        next = (!d.is_empty()).then(|| dir_of(d));
        Some(d)
    })
}

/// The C# projects of a repository and the usings each gives its files.
pub struct Projects {
    /// Project directory → its `.csproj` files' usings.
    projects: HashMap<String, Vec<Import>>,
    /// Directory → its `Directory.Build.props` usings, and its `Directory.Build.targets`'.
    props: HashMap<String, Vec<Import>>,
    targets: HashMap<String, Vec<Import>>,
    /// Project directory → the `global using`s of its files.
    global: HashMap<String, Vec<Import>>,
}

impl Projects {
    /// The projects of `project_files` (path and text of each), with the `global using`s of
    /// the C# files in `files`.
    pub fn new(project_files: &[(String, String)], files: &[Arc<ParsedFile>]) -> Projects {
        let mut p = Projects {
            projects: HashMap::new(),
            props: HashMap::new(),
            targets: HashMap::new(),
            global: HashMap::new(),
        };
        for (path, text) in project_files {
            let name = path.rsplit('/').next().unwrap_or(path);
            let table = match name {
                "Directory.Build.props" => &mut p.props,
                "Directory.Build.targets" => &mut p.targets,
                _ => &mut p.projects,
            };
            table
                .entry(dir_of(path).to_string())
                .or_default()
                .extend(using_items(text));
        }
        for f in files.iter().filter(|f| f.lang == Lang::CSharp) {
            if !f.project_imports.is_empty() {
                let project = p.project_of(&f.path).to_string();
                p.global
                    .entry(project)
                    .or_default()
                    .extend(f.project_imports.iter().cloned());
            }
        }
        p
    }

    /// The directory of the project `path` belongs to: the nearest one above it holding a
    /// `.csproj`, else the root.
    fn project_of<'a>(&self, path: &'a str) -> &'a str {
        ancestors(dir_of(path))
            .find(|d| self.projects.contains_key(*d))
            .unwrap_or("")
    }

    /// The imports the C# file at `path` has from its project, its own `global using`s
    /// among them.
    pub fn inherited(&self, path: &str) -> Vec<Import> {
        let project = self.project_of(path);
        let nearest = |table: &HashMap<String, Vec<Import>>| {
            ancestors(project)
                .find_map(|d| table.get(d))
                .cloned()
                .unwrap_or_default()
        };
        let mut out = self.projects.get(project).cloned().unwrap_or_default();
        out.extend(nearest(&self.props));
        out.extend(nearest(&self.targets));
        out.extend(self.global.get(project).into_iter().flatten().cloned());
        let mut seen = std::collections::HashSet::new();
        out.retain(|i| seen.insert((i.module.clone(), i.names.clone())));
        out
    }
}

/// `files` with each C# file's [`ParsedFile::inherited_imports`] set from its project; a file
/// whose inherited imports are already those is kept as it is (not copied).
pub fn inherit_usings(
    project_files: &[(String, String)],
    files: Vec<Arc<ParsedFile>>,
) -> Vec<Arc<ParsedFile>> {
    if !files.iter().any(|f| f.lang == Lang::CSharp) {
        return files;
    }
    let projects = Projects::new(project_files, &files);
    files
        .into_iter()
        .map(|f| {
            if f.lang != Lang::CSharp {
                return f;
            }
            let inherited = projects.inherited(&f.path);
            if inherited == f.inherited_imports {
                return f;
            }
            let mut changed = (*f).clone();
            changed.inherited_imports = inherited;
            Arc::new(changed)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules(imports: &[Import]) -> Vec<&str> {
        imports.iter().map(|i| i.module.as_str()).collect()
    }

    #[test]
    fn using_items_are_read_with_their_static_and_alias_attributes() {
        let text = r#"<Project>
  <ItemGroup Condition="'$(IncludeUsings)' == 'true'">
    <Using Include="Polly.CircuitBreaker" />
    <Using Include="Polly.Specs.DictionaryHelpers" Static="true" />
    <Using Include='Serilog.Events.LogEventLevel' Alias="Level"/>
    <Using Remove="System.Net.Http" />
    <Using Include="$(RootNamespace).Internal" />
    <UsingTask TaskName="X" AssemblyFile="y.dll" />
  </ItemGroup>
</Project>"#;
        let items = using_items(text);
        assert_eq!(
            modules(&items),
            [
                "Polly.CircuitBreaker",
                "Polly.Specs.DictionaryHelpers",
                "Serilog.Events.LogEventLevel"
            ]
        );
        assert!(items[0].wildcard && items[1].wildcard);
        assert_eq!(
            items[2].names,
            [("LogEventLevel".to_string(), "Level".to_string())]
        );
        assert!(items.iter().all(|i| i.line == 0));
    }

    fn cs(path: &str, global: &[&str]) -> Arc<ParsedFile> {
        let mut f = crate::parse::parse_file(path, Lang::CSharp, b"class A {}\n");
        f.project_imports = global
            .iter()
            .map(|g| Import::everything(g.to_string(), 1))
            .collect();
        Arc::new(f)
    }

    #[test]
    fn a_file_inherits_its_projects_usings_and_the_nearest_directory_build_files() {
        let project_files = vec![
            (
                "Directory.Build.props".to_string(),
                r#"<Using Include="Root.Props" />"#.to_string(),
            ),
            (
                "src/Directory.Build.props".to_string(),
                r#"<Using Include="Src.Props" />"#.to_string(),
            ),
            (
                "Directory.Build.targets".to_string(),
                r#"<Using Include="Root.Targets" />"#.to_string(),
            ),
            (
                "src/Core/Core.csproj".to_string(),
                r#"<Using Include="Core.Common" />"#.to_string(),
            ),
            (
                "test/Core.Tests/Core.Tests.csproj".to_string(),
                r#"<Using Include="Core.Tests.Helpers" />"#.to_string(),
            ),
        ];
        let files = vec![
            cs("src/Core/GlobalUsings.cs", &["Core.Internal"]),
            cs("src/Core/Sub/Engine.cs", &[]),
            cs("test/Core.Tests/EngineTests.cs", &[]),
            cs("tools/Script.cs", &[]),
        ];
        let out = inherit_usings(&project_files, files);
        let of = |i: usize| modules(&out[i].inherited_imports);
        // Its project's items, the nearest props and targets, its project's global usings.
        assert_eq!(
            of(1),
            ["Core.Common", "Src.Props", "Root.Targets", "Core.Internal"]
        );
        assert_eq!(of(0), of(1));
        // Another project: its own items, the root's build files, none of Core's globals.
        assert_eq!(of(2), ["Core.Tests.Helpers", "Root.Props", "Root.Targets"]);
        // Under no project: the root's.
        assert_eq!(of(3), ["Root.Props", "Root.Targets"]);
        // Applied again, nothing changes and nothing is copied.
        let again = inherit_usings(&project_files, out.clone());
        assert!(out.iter().zip(&again).all(|(a, b)| Arc::ptr_eq(a, b)));
    }
}
