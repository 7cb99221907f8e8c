//! A request's parameter values, complete: every parameter a surface offers has a value (its
//! default when not given), so that building a message never guesses.

use std::collections::BTreeMap;

use crate::{Default, Kind, Param, RequestError, Surface};

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(u32),
    Float(f32),
    Text(String),
    List(Vec<String>),
}

impl Value {
    /// The default of `kind` as a value (`None`: absent).
    pub fn from_default(kind: Kind, d: Default) -> Option<Value> {
        Some(match (kind, d) {
            (Kind::Bool, Default::Empty) => Value::Bool(false),
            (Kind::Int { .. } | Kind::Budget, Default::Empty) => Value::Int(0),
            (Kind::List, Default::Empty) => Value::List(Vec::new()),
            (_, Default::Empty) => return None,
            (_, Default::Bool(b)) => Value::Bool(b),
            (_, Default::Int(n)) => Value::Int(n),
            (_, Default::Float(x)) => Value::Float(x),
            (_, Default::Text(t)) => Value::Text(t.into()),
            (_, Default::List(l)) => Value::List(l.iter().map(|s| s.to_string()).collect()),
        })
    }
}

/// Parameter name → value. Text parameters without a default may be absent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Values {
    map: BTreeMap<&'static str, Value>,
}

impl Values {
    /// The defaults of every parameter of `params` on `surface`.
    pub fn defaults(params: &'static [Param], surface: Surface) -> Values {
        let mut v = Values::default();
        for p in params {
            if let Some(d) = Value::from_default(p.kind, p.default_on(surface)) {
                v.map.insert(p.name, d);
            }
        }
        v
    }

    /// Sets `name` after checking it against its parameter.
    pub fn set(
        &mut self,
        params: &'static [Param],
        name: &str,
        value: Value,
    ) -> Result<(), RequestError> {
        let p = params
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| RequestError::Unknown(name.to_string()))?;
        p.check(&value)?;
        self.map.insert(p.name, value);
        Ok(())
    }

    /// Fails on the first required parameter of `surface` without a value.
    pub fn require(&self, params: &'static [Param], surface: Surface) -> Result<(), RequestError> {
        match params
            .iter()
            .find(|p| p.required && p.offered_on(surface) && !self.map.contains_key(p.name))
        {
            Some(p) => Err(RequestError::Missing(p.name)),
            None => Ok(()),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    pub fn bool(&self, name: &str) -> bool {
        matches!(self.map.get(name), Some(Value::Bool(true)))
    }

    pub fn int(&self, name: &str) -> u32 {
        match self.map.get(name) {
            Some(Value::Int(n)) => *n,
            _ => 0,
        }
    }

    pub fn float(&self, name: &str) -> f32 {
        match self.map.get(name) {
            Some(Value::Float(x)) => *x,
            _ => 0.0,
        }
    }

    /// A text parameter, empty when absent.
    pub fn text(&self, name: &str) -> String {
        self.opt_text(name).unwrap_or_default()
    }

    pub fn opt_text(&self, name: &str) -> Option<String> {
        match self.map.get(name) {
            Some(Value::Text(t)) => Some(t.clone()),
            _ => None,
        }
    }

    pub fn list(&self, name: &str) -> Vec<String> {
        match self.map.get(name) {
            Some(Value::List(l)) => l.clone(),
            _ => Vec::new(),
        }
    }
}
