//! Command-line flags derived from the definitions (feature `cli`). A command flattens
//! [`Flags<R>`] to take every flag of request `R`; the command's own arguments (a path, a
//! question) are declared by the command and set into the values it builds.

use std::marker::PhantomData;

use clap::builder::{BoolishValueParser, PossibleValuesParser};
use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::{CliForm, Default, Kind, Param, Request, Surface, Value, Values};

/// The flags of request `R`, parsed into complete [`Values`] (command-line defaults filled).
/// With `LOCAL` false, only the flags that travel on the wire: what `fittokd`, which runs the
/// request itself, takes (`fittok query --model` is for the client's LLM, not the engine).
pub struct Flags<R, const LOCAL: bool = true> {
    pub values: Values,
    request: PhantomData<R>,
}

/// The wire flags of `R` (see [`Flags`]).
pub type WireFlags<R> = Flags<R, false>;

// By hand: derives would ask the same of `R`, a marker type.
impl<R, const LOCAL: bool> Clone for Flags<R, LOCAL> {
    fn clone(&self) -> Self {
        Flags {
            values: self.values.clone(),
            request: PhantomData,
        }
    }
}

impl<R, const LOCAL: bool> std::fmt::Debug for Flags<R, LOCAL> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.values.fmt(f)
    }
}

fn parse_float(min: f32, max: f32) -> impl Fn(&str) -> Result<f32, String> + Clone {
    move |s: &str| {
        let x: f32 = s
            .trim()
            .parse()
            .map_err(|_| format!("{s:?} is not a number"))?;
        if x.is_finite() && x >= min && x <= max {
            Ok(x)
        } else {
            Err(format!("{x} is outside {min}..={max}"))
        }
    }
}

/// The clap argument for a flag parameter.
pub fn arg(p: &Param) -> Arg {
    let default = p.default_on(Surface::Cli);
    // A `--no-x` flag is described by what it turns off, not by what the parameter does.
    let help = match (p.kind, default) {
        (Kind::Bool, Default::Bool(true)) => p.off_doc.unwrap_or(p.doc),
        _ => p.doc,
    };
    let mut a = Arg::new(p.name).long(p.flag()).help(help);
    for alias in p.aliases {
        a = a.visible_alias(*alias);
    }
    if let Some(var) = p.env {
        a = a.env(var);
    }
    match p.kind {
        Kind::Bool => a
            .action(ArgAction::SetTrue)
            .value_parser(BoolishValueParser::new()),
        Kind::Int { min, max } => {
            let a = a.value_parser(clap::value_parser!(u32).range(i64::from(min)..=i64::from(max)));
            match default {
                Default::Int(n) => a.default_value(n.to_string()),
                _ => a,
            }
        }
        Kind::Budget => {
            let a = a
                .value_parser(fittok_proto::parse_budget)
                .value_name("TOKENS");
            match default {
                Default::Int(n) => a.default_value(n.to_string()),
                _ => a.default_value("0"),
            }
        }
        Kind::Float { min, max } => {
            let a = a.value_parser(parse_float(min, max));
            match default {
                Default::Float(x) => a.default_value(x.to_string()),
                _ => a,
            }
        }
        Kind::Text => a.value_parser(clap::value_parser!(String)),
        Kind::Choice(options) => {
            let a = a.value_parser(PossibleValuesParser::new(options.iter().copied()));
            match default {
                Default::Text(t) => a.default_value(t),
                _ => a,
            }
        }
        Kind::List => {
            let a = a
                .value_delimiter(',')
                .action(ArgAction::Append)
                .value_parser(clap::value_parser!(String));
            match default {
                Default::List(l) => a.default_values(l.iter().copied()),
                _ => a,
            }
        }
    }
}

fn is_flag(p: &Param, local: bool) -> bool {
    p.cli == CliForm::Flag && (local || p.wire)
}

/// Every flag of `params` (`local`: with the ones a client consumes itself).
pub fn args(params: &[Param], local: bool) -> Vec<Arg> {
    params
        .iter()
        .filter(|p| is_flag(p, local))
        .map(arg)
        .collect()
}

/// The values of `params` in `m`: flags as given, defaults otherwise.
pub fn values(
    params: &'static [Param],
    local: bool,
    m: &ArgMatches,
) -> Result<Values, clap::Error> {
    let mut values = Values::defaults(params, Surface::Cli);
    for p in params.iter().filter(|p| is_flag(p, local)) {
        let v = match p.kind {
            Kind::Bool => {
                let given = m.get_flag(p.name);
                // `--no-x` turns off what is on by default.
                let on_by_default = p.default_on(Surface::Cli) == Default::Bool(true);
                Some(Value::Bool(given != on_by_default))
            }
            Kind::Int { .. } | Kind::Budget => m.get_one::<u32>(p.name).copied().map(Value::Int),
            Kind::Float { .. } => m.get_one::<f32>(p.name).copied().map(Value::Float),
            Kind::Text | Kind::Choice(_) => m.get_one::<String>(p.name).cloned().map(Value::Text),
            Kind::List => m
                .get_many::<String>(p.name)
                .map(|l| Value::List(l.filter(|s| !s.is_empty()).cloned().collect())),
        };
        if let Some(v) = v {
            values
                .set(params, p.name, v)
                .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, e))?;
        }
    }
    Ok(values)
}

impl<R: Request, const LOCAL: bool> clap::FromArgMatches for Flags<R, LOCAL> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Flags {
            values: values(R::PARAMS, LOCAL, m)?,
            request: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        self.values = values(R::PARAMS, LOCAL, m)?;
        Ok(())
    }
}

impl<R: Request, const LOCAL: bool> clap::Args for Flags<R, LOCAL> {
    fn augment_args(cmd: Command) -> Command {
        cmd.args(args(R::PARAMS, LOCAL))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        cmd.args(args(R::PARAMS, LOCAL))
    }
}

/// `fit generate` / `fit measure`, shared by `fittok` and `fittokd`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum FitCommand {
    /// Fit a document in place (the original is kept once as `<name>.unfit.md`).
    Generate(FitArgs),
    /// Size of a document against the thresholds. Exit status: 0 fits, 10 over the soft
    /// threshold, 11 over the hard one.
    Measure(MeasureArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct FitArgs {
    /// The Markdown document (fitted in place; subdocuments go in the folder beside it).
    pub path: std::path::PathBuf,
    #[command(flatten)]
    pub flags: Flags<crate::fit::Fit>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct MeasureArgs {
    /// The Markdown document to size (read only).
    pub path: std::path::PathBuf,
    #[command(flatten)]
    pub flags: Flags<crate::fit::FitMeasure>,
}

impl FitCommand {
    /// The action, the document and the values of its flags.
    pub fn parts(&self) -> (fittok_proto::v1::FitAction, &std::path::Path, &Values) {
        match self {
            FitCommand::Generate(a) => (
                fittok_proto::v1::FitAction::Generate,
                &a.path,
                &a.flags.values,
            ),
            FitCommand::Measure(a) => (
                fittok_proto::v1::FitAction::Measure,
                &a.path,
                &a.flags.values,
            ),
        }
    }
}

/// The long flags a command actually takes (for surface tests): `--help`/`--version` and the
/// ones in `extra` left out.
pub fn long_flags(cmd: &Command, extra: &[&str]) -> Vec<String> {
    let mut flags: Vec<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .filter(|f| f != "help" && f != "version" && !extra.contains(&f.as_str()))
        .collect();
    flags.sort();
    flags
}

/// Subcommands and arguments of `cmd` (recursively) that carry no description, as
/// `path: what` lines (for the binaries' help tests).
pub fn undescribed(cmd: &Command) -> Vec<String> {
    fn walk(cmd: &Command, path: &str, out: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            let id = a.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            if a.get_help().is_none() && a.get_long_help().is_none() {
                out.push(format!("{path}: argument {id}"));
            }
        }
        for sub in cmd.get_subcommands() {
            let name = format!("{path} {}", sub.get_name());
            if sub.get_name() != "help" && sub.get_about().is_none() {
                out.push(format!("{name}: no description"));
            }
            walk(sub, &name, out);
        }
    }
    let mut out = Vec::new();
    walk(cmd, cmd.get_name(), &mut out);
    out
}

/// The flags `R` defines (sorted; `local`: with the client's own), for comparison with
/// [`long_flags`].
pub fn expected_flags<R: Request>(local: bool) -> Vec<String> {
    let mut flags: Vec<String> = R::PARAMS
        .iter()
        .filter(|p| is_flag(p, local))
        .map(|p| p.flag())
        .collect();
    flags.sort();
    flags
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::Fit;
    use crate::query::Query;
    use clap::{Args, FromArgMatches};

    fn parse<R: Request>(argv: &[&str]) -> Result<Values, clap::Error> {
        let cmd = Flags::<R>::augment_args(Command::new("t").no_binary_name(true));
        let m = cmd.try_get_matches_from(argv)?;
        Flags::<R>::from_arg_matches(&m).map(|f| f.values)
    }

    #[test]
    fn flags_take_the_command_line_defaults() {
        let v = parse::<Query>(&[]).unwrap();
        assert_eq!(v.int("budget"), 0);
        assert!(!v.bool("json"));
        let v = parse::<Fit>(&[]).unwrap();
        assert_eq!(v.int("soft_threshold"), crate::fit::SOFT_THRESHOLD);
        assert_eq!(
            v.list("inline_languages"),
            ["python", "javascript", "typescript"]
        );
        assert_eq!(v.text("estimator"), "cl100k");
        assert_eq!(v.float("level"), 1.0);
    }

    #[test]
    fn flags_parse_and_limits_hold() {
        let v = parse::<Query>(&["--budget", "4000", "--json", "--explain", "5"]).unwrap();
        assert_eq!(
            (v.int("budget"), v.bool("json"), v.int("explain")),
            (4000, true, 5)
        );
        assert!(parse::<Query>(&["--budget", "10"]).is_err());
        assert!(parse::<Fit>(&["--min-segment-count", "1"]).is_err());
        assert!(parse::<Fit>(&["--level", "9"]).is_err());
        assert!(parse::<Fit>(&["--estimator", "words"]).is_err());
        let v = parse::<Fit>(&["--inline-languages", "rust,go"]).unwrap();
        assert_eq!(v.list("inline_languages"), ["rust", "go"]);
    }

    #[test]
    fn a_flag_on_by_default_is_turned_off_by_its_no_form() {
        let v = parse::<crate::index::Index>(&[]).unwrap();
        assert!(v.bool("wait_semantic"));
        let v = parse::<crate::index::Index>(&["--no-wait"]).unwrap();
        assert!(!v.bool("wait_semantic"));
        let v = parse::<crate::index::Index>(&["--no-wait-semantic"]).unwrap();
        assert!(!v.bool("wait_semantic"));
    }

    #[test]
    fn a_no_flag_says_what_turning_it_off_does() {
        let all = [
            crate::query::Query::PARAMS,
            crate::expand::Expand::PARAMS,
            crate::index::Index::PARAMS,
            crate::graph::Graph::PARAMS,
            crate::map::Map::PARAMS,
            crate::fit::Fit::PARAMS,
        ];
        for p in all.iter().flat_map(|ps| ps.iter()) {
            let negated = p.kind == Kind::Bool && p.default_on(Surface::Cli) == Default::Bool(true);
            if negated && p.offered_on(Surface::Cli) {
                let help = arg(p).get_help().map(|h| h.to_string()).unwrap_or_default();
                assert!(p.off_doc.is_some(), "--{} needs an off_doc", p.flag());
                assert_ne!(
                    help,
                    p.doc,
                    "--{} is described by what it turns off",
                    p.flag()
                );
            }
        }
        let help = arg(&crate::index::Index::PARAMS[1])
            .get_help()
            .unwrap()
            .to_string();
        assert!(
            help.starts_with("Return once lexical ranking is ready"),
            "{help}"
        );
    }
}
