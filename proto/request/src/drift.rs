//! The definitions against `fittok.proto`: every wire parameter is a field of its message with
//! a matching type, and every field of a request message is a wire parameter (or one of the
//! few a front end sets itself, named here). A field added to the proto without a definition,
//! or a definition renamed without its field, fails here.

use crate::{Kind, Param, Request};

/// Fields a front end sets from the command it runs, not from a parameter.
/// `exclude_versions` goes with `exclude`, from an MCP session's memory.
const SET_BY_FRONT_END: &[(&str, &str)] = &[
    ("FitRequest", "action"),
    ("QueryRequest", "exclude_versions"),
];

/// `(type, name)` of each field of `message` in the proto text.
fn fields(proto: &str, message: &str) -> Vec<(String, String)> {
    let start = proto
        .find(&format!("message {message} {{"))
        .unwrap_or_else(|| panic!("no message {message} in fittok.proto"));
    let body = &proto[start..];
    let end = body.find("\n}").expect("message ends");
    body[..end]
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && !l.starts_with("reserved") && l.contains('='))
        .map(|l| {
            let decl = l.split('=').next().unwrap_or_default();
            let words: Vec<&str> = decl.split_whitespace().collect();
            let (ty, name) = match words.as_slice() {
                ["repeated", ty, name] => (format!("repeated {ty}"), name.to_string()),
                [ty, name] => (ty.to_string(), name.to_string()),
                _ => panic!("unreadable field {l:?}"),
            };
            (ty, name)
        })
        .collect()
}

fn proto_type(kind: Kind) -> &'static str {
    match kind {
        Kind::Bool => "bool",
        Kind::Int { .. } | Kind::Budget => "uint32",
        Kind::Float { .. } => "float",
        Kind::Text | Kind::Choice(_) => "string",
        Kind::List => "repeated string",
    }
}

/// Disagreements between `params` and the message `message` of `proto`.
fn disagreements(proto: &str, message: &str, params: &[Param]) -> Vec<String> {
    let fields = fields(proto, message);
    let mut out = Vec::new();
    for p in params.iter().filter(|p| p.wire) {
        match fields.iter().find(|(_, name)| name == p.name) {
            None => out.push(format!(
                "{message} has no field {} (defined as a wire parameter)",
                p.name
            )),
            Some((ty, _)) if ty != proto_type(p.kind) => out.push(format!(
                "{message}.{} is {ty} in the proto, {} in the definition",
                p.name,
                proto_type(p.kind)
            )),
            Some(_) => {}
        }
    }
    for (_, name) in &fields {
        let defined = params.iter().any(|p| p.wire && p.name == name);
        let set_by_front_end = SET_BY_FRONT_END.contains(&(message, name.as_str()));
        if !defined && !set_by_front_end {
            out.push(format!(
                "{message}.{name} has no definition in fittok-request"
            ));
        }
    }
    out
}

fn message_of<R: Request>() -> String {
    let mut name = R::NAME.to_string();
    name[..1].make_ascii_uppercase();
    format!("{name}Request")
}

fn check<R: Request>(proto: &str) -> Vec<String> {
    disagreements(proto, &message_of::<R>(), R::PARAMS)
}

fn proto() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fittok.proto");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn all(proto: &str) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(check::<crate::query::Query>(proto));
    out.extend(check::<crate::fit::Fit>(proto));
    out.extend(check::<crate::map::Map>(proto));
    out.extend(check::<crate::expand::Expand>(proto));
    out.extend(check::<crate::index::Index>(proto));
    out.extend(check::<crate::graph::Graph>(proto));
    out.extend(check::<crate::navigate::Navigate>(proto));
    out
}

#[test]
fn every_request_message_matches_its_definition() {
    let problems = all(&proto());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_mismatched_field_is_caught() {
    // A field added to the proto without a definition, and one whose type changed.
    let proto = proto()
        .replace(
            "  bool show_savings = 7;",
            "  bool show_savings = 7;\n  uint32 max_blocks = 9;",
        )
        .replace("  uint32 explain = 5;", "  string explain = 5;");
    let problems = check::<crate::query::Query>(&proto);
    assert_eq!(
        problems,
        [
            "QueryRequest.explain is string in the proto, uint32 in the definition",
            "QueryRequest.max_blocks has no definition in fittok-request",
        ]
    );
}
