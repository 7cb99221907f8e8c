//! Every fittok request, defined once.
//!
//! A request is a list of [`Param`]s: name, documentation, kind with its limits, default per
//! surface, and where it is offered. From that one list come the command-line flags of
//! `fittok` and `fittokd` ([`cli`], feature `cli`), the MCP tool schemas and argument parsing
//! of `fittok-mcp` ([`schema`]), and the wire message, built in one function per request
//! (`query::request`, `fit::request`, …). A parameter's name is its proto field, its MCP
//! property and, in kebab case, its flag; a test (`drift`) fails when `fittok.proto` and the
//! definitions disagree, and each front end tests that its surface is the one derived here.
//!
//! API boundary: plain data and pure functions; no I/O but [`Values`] parsing. Clients
//! resolve paths (a repository, a document) before building a request.

#[cfg(feature = "cli")]
pub mod cli;
pub mod expand;
pub mod fit;
pub mod graph;
pub mod index;
pub mod map;
pub mod navigate;
pub mod query;
pub mod schema;
pub mod typed;
mod values;

#[cfg(test)]
mod drift;
#[cfg(test)]
mod wiring;

pub use values::{Value, Values};

/// Where a request is made. Defaults and the parameters offered differ by surface; the engine
/// and the wire do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// `fittok` and `fittokd` on a command line.
    Cli,
    /// An agent through `fittok-mcp`.
    Mcp,
    /// The Claude Code prompt hook (`fittok hook`).
    Hook,
}

/// A parameter's type, with its limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Bool,
    /// A whole number in `min..=max`.
    Int {
        min: u32,
        max: u32,
    },
    /// A token budget: 0 (no cap) or at least [`fittok_proto::MIN_BUDGET`].
    Budget,
    /// A number in `min..=max`.
    Float {
        min: f32,
        max: f32,
    },
    Text,
    /// Several texts (a comma-separated flag, a JSON array).
    List,
    /// One of these texts.
    Choice(&'static [&'static str]),
}

/// A default value, constant so that definitions are `static`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Default {
    /// Absent: false, 0, empty.
    Empty,
    Bool(bool),
    Int(u32),
    Float(f32),
    Text(&'static str),
    List(&'static [&'static str]),
}

/// How the command line takes a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliForm {
    /// `--kebab-name` (a `true` default makes the flag `--no-kebab-name`).
    Flag,
    /// An argument of the command, declared by the command itself (a path, a question).
    Argument,
    /// Not on the command line.
    Absent,
}

/// One parameter of a request.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// snake_case: the proto field (when [`Param::wire`]), the MCP property, the flag.
    pub name: &'static str,
    pub doc: &'static str,
    pub kind: Kind,
    /// Defaults by surface: the first entry naming the surface, else the entry with `None`.
    pub defaults: &'static [(Option<Surface>, Default)],
    pub cli: CliForm,
    /// Offered to agents as an MCP tool property.
    pub mcp: bool,
    /// A field of the request's proto message (else a front end consumes it).
    pub wire: bool,
    /// Required wherever it is offered.
    pub required: bool,
    /// The environment variable a command-line flag falls back to.
    pub env: Option<&'static str>,
    /// Other spellings of the flag (kept for compatibility).
    pub aliases: &'static [&'static str],
    /// For a boolean on by default: what its command-line flag, `--no-…`, does (the `doc`
    /// says what the parameter does when on).
    pub off_doc: Option<&'static str>,
}

impl Param {
    /// A wire parameter offered on the command line and to agents, optional, empty default.
    pub const fn new(name: &'static str, kind: Kind, doc: &'static str) -> Param {
        Param {
            name,
            doc,
            kind,
            defaults: &[(None, Default::Empty)],
            cli: CliForm::Flag,
            mcp: true,
            wire: true,
            required: false,
            env: None,
            aliases: &[],
            off_doc: None,
        }
    }

    pub const fn off_doc(mut self, doc: &'static str) -> Param {
        self.off_doc = Some(doc);
        self
    }

    pub const fn defaults(mut self, d: &'static [(Option<Surface>, Default)]) -> Param {
        self.defaults = d;
        self
    }

    pub const fn cli(mut self, form: CliForm) -> Param {
        self.cli = form;
        self
    }

    pub const fn no_mcp(mut self) -> Param {
        self.mcp = false;
        self
    }

    /// Consumed by a front end, not sent.
    pub const fn local(mut self) -> Param {
        self.wire = false;
        self
    }

    pub const fn required(mut self) -> Param {
        self.required = true;
        self
    }

    pub const fn env(mut self, var: &'static str) -> Param {
        self.env = Some(var);
        self
    }

    pub const fn aliases(mut self, a: &'static [&'static str]) -> Param {
        self.aliases = a;
        self
    }

    /// The default on `surface`.
    pub fn default_on(&self, surface: Surface) -> Default {
        self.defaults
            .iter()
            .find(|(s, _)| *s == Some(surface))
            .or_else(|| self.defaults.iter().find(|(s, _)| s.is_none()))
            .map_or(Default::Empty, |(_, d)| *d)
    }

    /// Whether `surface` offers this parameter.
    pub fn offered_on(&self, surface: Surface) -> bool {
        match surface {
            Surface::Cli => self.cli != CliForm::Absent,
            Surface::Mcp => self.mcp,
            Surface::Hook => false,
        }
    }

    /// The command-line flag: `--kebab-name`, or `--no-kebab-name` for a boolean whose
    /// command-line default is true.
    pub fn flag(&self) -> String {
        let kebab = self.name.replace('_', "-");
        if self.kind == Kind::Bool && self.default_on(Surface::Cli) == Default::Bool(true) {
            format!("no-{kebab}")
        } else {
            kebab
        }
    }

    /// Checks a value against the kind's limits; the message names the parameter.
    pub fn check(&self, v: &Value) -> Result<(), RequestError> {
        let bad = |why: String| RequestError::Invalid {
            param: self.name,
            why,
        };
        match (self.kind, v) {
            (Kind::Bool, Value::Bool(_)) | (Kind::Text, Value::Text(_)) => Ok(()),
            (Kind::List, Value::List(_)) => Ok(()),
            (Kind::Int { min, max }, Value::Int(n)) => {
                if (min..=max).contains(n) {
                    Ok(())
                } else {
                    Err(bad(format!("{n} is outside {min}..={max}")))
                }
            }
            (Kind::Budget, Value::Int(n)) => fittok_proto::check_budget(u64::from(*n))
                .map(|_| ())
                .map_err(bad),
            (Kind::Float { min, max }, Value::Float(x)) => {
                if x.is_finite() && *x >= min && *x <= max {
                    Ok(())
                } else {
                    Err(bad(format!("{x} is outside {min}..={max}")))
                }
            }
            (Kind::Choice(options), Value::Text(t)) => {
                if options.contains(&t.as_str()) {
                    Ok(())
                } else {
                    Err(bad(format!("{t:?} is not one of {}", options.join(", "))))
                }
            }
            (_, v) => Err(bad(format!("expected {}, got {v:?}", self.kind.describe()))),
        }
    }
}

impl Kind {
    /// What a value of this kind is, for messages and schemas.
    pub fn describe(&self) -> String {
        match self {
            Kind::Bool => "true or false".into(),
            Kind::Int { min, max } => format!("a whole number in {min}..={max}"),
            Kind::Budget => format!(
                "a token budget: 0 (no cap) or at least {}",
                fittok_proto::MIN_BUDGET
            ),
            Kind::Float { min, max } => format!("a number in {min}..={max}"),
            Kind::Text => "a text".into(),
            Kind::List => "a list of texts".into(),
            Kind::Choice(options) => format!("one of {}", options.join(", ")),
        }
    }
}

/// The repository a question is about, for the requests an agent makes: an argument on the
/// command line, an optional property for agents.
pub const WORKSPACE_REPO: Param = Param::new(
    "repo",
    Kind::Text,
    "Absolute path of the repository. Default: the client's workspace root, else the working directory's repository.",
)
.cli(CliForm::Argument);

/// A request: its parameters, in order.
pub trait Request {
    /// The command and message name (`query` → `QueryRequest`).
    const NAME: &'static str;
    const PARAMS: &'static [Param];
}

/// A request that cannot be made as given.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    #[error("{param}: {why}")]
    Invalid { param: &'static str, why: String },
    #[error("{0} is required")]
    Missing(&'static str),
    #[error("unknown parameter {0:?}")]
    Unknown(String),
}

/// Caps a query budget by an operator's maximum (`FITTOK_MAX_BUDGET`; 0 = none): a request
/// for no cap gets the maximum.
pub fn cap_budget(requested: u32, max: u32) -> u32 {
    match (requested, max) {
        (r, 0) => r,
        (0, m) => m,
        (r, m) => r.min(m),
    }
}
