//! MCP tool schemas and arguments, derived from the definitions: the properties a tool
//! offers are the parameters with `mcp`, with their docs, types, limits and the agent's
//! default; arguments are parsed and checked against the same list.

use serde_json::{Map, Value as Json, json};

use crate::{Default, Kind, Param, RequestError, Surface, Value, Values};

fn default_json(kind: Kind, d: Default) -> Option<Json> {
    Value::from_default(kind, d).map(|v| match v {
        Value::Bool(b) => json!(b),
        Value::Int(n) => json!(n),
        Value::Float(x) => json!(x),
        Value::Text(t) => json!(t),
        Value::List(l) => json!(l),
    })
}

fn property(p: &Param) -> Json {
    let mut o = match p.kind {
        Kind::Bool => json!({"type": "boolean"}),
        Kind::Int { min, max } => json!({"type": "integer", "minimum": min, "maximum": max}),
        Kind::Budget => json!({"type": "integer", "minimum": 0}),
        Kind::Float { min, max } => json!({"type": "number", "minimum": min, "maximum": max}),
        Kind::Text => json!({"type": "string"}),
        Kind::List => json!({"type": "array", "items": {"type": "string"}}),
        Kind::Choice(options) => json!({"type": "string", "enum": options}),
    };
    if let Json::Object(m) = &mut o {
        m.insert("description".into(), json!(p.doc));
        if !p.required
            && let Some(d) = default_json(p.kind, p.default_on(Surface::Mcp))
        {
            m.insert("default".into(), d);
        }
    }
    o
}

/// The JSON Schema of a tool taking `params` (an object; unknown properties refused).
pub fn tool_schema(params: &[Param]) -> Map<String, Json> {
    let offered: Vec<&Param> = params.iter().filter(|p| p.mcp).collect();
    let properties: Map<String, Json> = offered
        .iter()
        .map(|p| (p.name.to_string(), property(p)))
        .collect();
    let required: Vec<&str> = offered
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Json::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    schema
}

fn value_of(p: &Param, v: &Json) -> Result<Value, RequestError> {
    let bad = || RequestError::Invalid {
        param: p.name,
        why: format!("expected {}, got {v}", p.kind.describe()),
    };
    Ok(match p.kind {
        Kind::Bool => Value::Bool(v.as_bool().ok_or_else(bad)?),
        Kind::Int { .. } | Kind::Budget => {
            let n = v
                .as_u64()
                .or_else(|| {
                    v.as_f64()
                        .filter(|x| x.fract() == 0.0 && *x >= 0.0)
                        .map(|x| x as u64)
                })
                .ok_or_else(bad)?;
            Value::Int(u32::try_from(n).map_err(|_| bad())?)
        }
        Kind::Float { .. } => Value::Float(v.as_f64().ok_or_else(bad)? as f32),
        Kind::Text | Kind::Choice(_) => Value::Text(v.as_str().ok_or_else(bad)?.to_string()),
        Kind::List => Value::List(
            v.as_array()
                .ok_or_else(bad)?
                .iter()
                .map(|x| x.as_str().map(str::to_string).ok_or_else(bad))
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// Parses a tool call's arguments: every offered parameter gets its value or the agent's
/// default; `null` counts as absent; unknown properties and values outside a parameter's
/// limits are refused with a message naming the parameter.
pub fn tool_values(
    params: &'static [Param],
    args: &Map<String, Json>,
) -> Result<Values, RequestError> {
    let mut values = Values::defaults(params, Surface::Mcp);
    for (name, v) in args {
        let Some(p) = params.iter().find(|p| p.mcp && p.name == name) else {
            return Err(RequestError::Unknown(name.clone()));
        };
        if v.is_null() {
            continue;
        }
        values.set(params, p.name, value_of(p, v)?)?;
    }
    values.require(params, Surface::Mcp)?;
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Request;
    use crate::query::Query;

    fn args(v: Json) -> Map<String, Json> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_tool_call_gets_the_agents_defaults() {
        let v = tool_values(Query::PARAMS, &args(json!({"question": "how?"}))).unwrap();
        assert_eq!(v.int("budget"), crate::query::MCP_BUDGET);
        assert!(v.bool("skip_seen"));
        assert_eq!(v.text("question"), "how?");
    }

    #[test]
    fn bad_arguments_are_refused_by_name() {
        for (a, param) in [
            (json!({"question": "q", "budget": 5}), "budget"),
            (json!({"question": "q", "budget": "lots"}), "budget"),
            (json!({"question": 3}), "question"),
        ] {
            match tool_values(Query::PARAMS, &args(a)) {
                Err(RequestError::Invalid { param: p, .. }) => assert_eq!(p, param),
                other => panic!("{other:?}"),
            }
        }
        // A value out of range is refused naming the value sent, not a clamped one.
        match tool_values(
            Query::PARAMS,
            &args(json!({"question": "q", "budget": 1e12})),
        ) {
            Err(RequestError::Invalid { param, why }) => {
                assert_eq!(param, "budget");
                assert!(why.contains("1000000000000"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            tool_values(Query::PARAMS, &args(json!({"budget": 4000}))),
            Err(RequestError::Missing("question"))
        );
        assert_eq!(
            tool_values(Query::PARAMS, &args(json!({"question": "q", "json": true}))),
            Err(RequestError::Unknown("json".into()))
        );
    }

    #[test]
    fn the_schema_lists_exactly_the_offered_parameters() {
        let s = tool_schema(Query::PARAMS);
        let props: Vec<&String> = s["properties"].as_object().unwrap().keys().collect();
        assert_eq!(props, ["budget", "question", "repo", "skip_seen"]);
        assert_eq!(s["required"], json!(["question"]));
        assert_eq!(s["properties"]["budget"]["default"], json!(4000));
    }
}
