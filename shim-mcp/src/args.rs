//! Tool arguments, defined by `fittok-request`: the schema an agent sees is derived from the
//! request's parameters (those offered to agents, with the agent's defaults), and arguments
//! are checked against the same list. Parsing is lenient at the protocol level (any object):
//! a bad value becomes a tool error naming the parameter, which an agent can act on.

use std::borrow::Cow;
use std::marker::PhantomData;

use fittok_request::{Request, Values};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// The variables tool parameters fall back to, read once at start.
pub type Env = std::collections::HashMap<&'static str, String>;

/// The variables `params` name, from `var`.
pub fn env_of(params: &[&[fittok_request::Param]], var: impl Fn(&str) -> Option<String>) -> Env {
    params
        .iter()
        .flat_map(|ps| ps.iter())
        .filter_map(|p| p.env)
        .filter_map(|name| {
            var(name)
                .filter(|v| !v.trim().is_empty())
                .map(|v| (name, v))
        })
        .collect()
}

pub struct Args<R> {
    raw: Map<String, Value>,
    request: PhantomData<R>,
}

impl<R: Request> Args<R> {
    /// The checked values, every offered parameter filled: given, else the value of the
    /// variable a parameter names in `env` (this server's environment, as the command line
    /// falls back to it), else the agent's default.
    pub fn values(&self, env: &Env) -> Result<Values, String> {
        let mut raw = self.raw.clone();
        for p in R::PARAMS.iter().filter(|p| p.mcp) {
            if let Some(var) = p.env
                && !raw.contains_key(p.name)
                && let Some(v) = env.get(var)
            {
                raw.insert(p.name.into(), Value::String(v.clone()));
            }
        }
        fittok_request::schema::tool_values(R::PARAMS, &raw).map_err(|e| e.to_string())
    }
}

impl<'de, R> Deserialize<'de> for Args<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Args {
            raw: Option::<Map<String, Value>>::deserialize(d)?.unwrap_or_default(),
            request: PhantomData,
        })
    }
}

impl<R: Request> JsonSchema for Args<R> {
    fn schema_name() -> Cow<'static, str> {
        format!("{}_arguments", R::NAME).into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        Schema::from(fittok_request::schema::tool_schema(R::PARAMS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fittok_request::fit::Fit;

    /// Every fit setting reaches agents (hard threshold and the LLM levels' endpoint too).
    #[test]
    fn fit_markdown_offers_every_fit_parameter() {
        let schema = fittok_request::schema::tool_schema(Fit::PARAMS);
        let props = schema["properties"].as_object().expect("properties");
        for p in Fit::PARAMS {
            assert!(props.contains_key(p.name), "{} missing", p.name);
        }
    }
}
