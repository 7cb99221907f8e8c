//! Every typed struct against its table, and every wire field against its parameter: setting
//! one parameter to a value of its own changes exactly the message field of the same name. A
//! builder that reads the wrong field (`budget: a.explain`) fails here.

use std::collections::BTreeMap;

use crate::typed::Fields;
use crate::{Kind, Param, Surface, Value, Values};

fn names(params: &[Param]) -> Vec<&'static str> {
    params.iter().map(|p| p.name).collect()
}

#[test]
fn every_table_has_its_typed_fields() {
    use crate::*;
    let pairs: [(&str, Vec<&str>, &[&str]); 7] = [
        (
            "query",
            names(query::Query::PARAMS),
            query::QueryArgs::FIELDS,
        ),
        (
            "navigate",
            names(navigate::Navigate::PARAMS),
            navigate::NavigateArgs::FIELDS,
        ),
        (
            "expand",
            names(expand::Expand::PARAMS),
            expand::ExpandArgs::FIELDS,
        ),
        (
            "index",
            names(index::Index::PARAMS),
            index::IndexArgs::FIELDS,
        ),
        (
            "graph",
            names(graph::Graph::PARAMS),
            graph::GraphArgs::FIELDS,
        ),
        ("map", names(map::Map::PARAMS), map::MapArgs::FIELDS),
        ("fit", names(fit::Fit::PARAMS), fit::FitArgs::FIELDS),
    ];
    for (request, table, fields) in pairs {
        assert_eq!(
            table, fields,
            "{request}: the table and its typed struct disagree"
        );
    }
}

/// `Message { a: 1, b: "x", c: [] }` → {a: "1", b: "\"x\"", c: "[]"} (top-level fields only).
fn fields_of(debug: &str) -> BTreeMap<String, String> {
    let body =
        &debug[debug.find('{').map_or(0, |i| i + 1)..debug.rfind('}').unwrap_or(debug.len())];
    let mut out = BTreeMap::new();
    let (mut depth, mut quoted, mut escaped, mut start) = (0i32, false, false, 0);
    let mut push = |part: &str| {
        if let Some((k, v)) = part.split_once(':') {
            out.insert(k.trim().to_string(), v.trim().to_string());
        }
    };
    for (i, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '[' | '{' | '(' if !quoted => depth += 1,
            ']' | '}' | ')' if !quoted => depth -= 1,
            ',' if !quoted && depth == 0 => {
                push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    push(&body[start..]);
    out
}

/// A valid value of `p` unlike its default.
fn other_value(p: &Param, now: Option<&Value>) -> Value {
    let v = match p.kind {
        Kind::Bool => Value::Bool(!matches!(now, Some(Value::Bool(true)))),
        Kind::Int { min, max } => {
            let n = if min < max { min + 1 } else { min };
            match now {
                Some(Value::Int(d)) if *d == n => Value::Int((n + 1).min(max)),
                _ => Value::Int(n),
            }
        }
        Kind::Budget => Value::Int(777),
        Kind::Float { min, max } => Value::Float((min + max) / 2.0 + 0.25),
        Kind::Text => Value::Text(format!("set-{}", p.name)),
        Kind::List => Value::List(vec![format!("set-{}", p.name)]),
        Kind::Choice(options) => Value::Text(
            options
                .iter()
                .find(|o| !matches!(now, Some(Value::Text(t)) if t == *o))
                .copied()
                .unwrap_or(options[0])
                .to_string(),
        ),
    };
    assert!(p.check(&v).is_ok(), "{}: {v:?}", p.name);
    v
}

/// For each wire parameter of `params`, the message fields that change when only it does;
/// `wire` builds the message's Debug text from a request's values.
fn changes(params: &'static [Param], wire: impl Fn(&Values) -> String) -> Vec<String> {
    let base = Values::defaults(params, Surface::Cli);
    let before = fields_of(&wire(&base));
    let mut problems = Vec::new();
    for p in params.iter().filter(|p| p.wire) {
        let mut v = base.clone();
        v.set(params, p.name, other_value(p, base.get(p.name)))
            .expect("a valid value");
        let after = fields_of(&wire(&v));
        let changed: Vec<&String> = after
            .iter()
            .filter(|(k, val)| before.get(*k) != Some(*val))
            .map(|(k, _)| k)
            .collect();
        if changed != [p.name] {
            problems.push(format!("setting {} changed {changed:?}", p.name));
        }
    }
    problems
}

fn all_changes() -> Vec<String> {
    use crate::*;
    let repo = |v: &Values| v.opt_text("repo").unwrap_or_default();
    let mut out = Vec::new();
    out.extend(changes(query::Query::PARAMS, |v| {
        format!(
            "{:?}",
            query::request(repo(v), &query::QueryArgs::from_values(v))
        )
    }));
    out.extend(changes(navigate::Navigate::PARAMS, |v| {
        format!(
            "{:?}",
            navigate::request(repo(v), &navigate::NavigateArgs::from_values(v))
        )
    }));
    out.extend(changes(expand::Expand::PARAMS, |v| {
        format!(
            "{:?}",
            expand::request(repo(v), &expand::ExpandArgs::from_values(v))
        )
    }));
    out.extend(changes(index::Index::PARAMS, |v| {
        format!(
            "{:?}",
            index::request(repo(v), &index::IndexArgs::from_values(v))
        )
    }));
    out.extend(changes(graph::Graph::PARAMS, |v| {
        format!(
            "{:?}",
            graph::request(repo(v), &graph::GraphArgs::from_values(v))
        )
    }));
    out.extend(changes(map::Map::PARAMS, |v| {
        let a = map::MapArgs::from_values(v);
        format!(
            "{:?}",
            map::request(repo(v), a.fit_dir.clone().unwrap_or_default(), &a)
        )
    }));
    out.extend(changes(fit::Fit::PARAMS, |v| {
        let a = fit::FitArgs::from_values(v);
        let path = a.path.clone();
        format!(
            "{:?}",
            fit::request(fittok_proto::v1::FitAction::Generate, path, &a)
        )
    }));
    out.extend(changes(fit::FitMeasure::PARAMS, |v| {
        let a = fit::FitArgs::from_values(v);
        let path = a.path.clone();
        format!(
            "{:?}",
            fit::request(fittok_proto::v1::FitAction::Measure, path, &a)
        )
    }));
    out
}

#[test]
fn each_wire_field_carries_its_own_parameter() {
    let problems = all_changes();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_debug_text_splits_into_its_fields() {
    let f = fields_of(r#"M { a: "x, \"y\"", b: [1, 2], c: Some(Foo { d: 1 }), e: 0 }"#);
    assert_eq!(f.len(), 4, "{f:?}");
    assert_eq!(f["a"], r#""x, \"y\"""#);
    assert_eq!(f["b"], "[1, 2]");
}
