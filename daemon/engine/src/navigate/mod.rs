//! Navigation answers: who calls a definition, what it calls, every use of it, and what a
//! change to it can reach — each site's enclosing definition with the referring lines marked,
//! within a token budget, with how every edge was resolved and what could not be.
//!
//! [`target`] finds the definition a request names (an id, a name, `Type.method`, or
//! `path:line`); [`sites`] walks the graph's edges from it; [`render`] shows the sites nearest
//! first and points to the rest; [`route`] recognises a question that asks for navigation.

mod render;
pub mod route;
mod sites;
pub mod target;

use crate::engine::Engine;
use crate::tokens::Encoding;

pub use sites::{Site, Unresolved};
pub use target::Target;

/// Which way to walk from the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Definitions that call the target.
    Callers,
    /// Definitions the target calls.
    Callees,
    /// Every use: calls, type uses, inheritance and implementation.
    References,
    /// Everything that reaches the target through calls and references, up to a depth.
    Impact,
}

impl Direction {
    pub const NAMES: [&'static str; 4] = ["callers", "callees", "references", "impact"];

    pub fn parse(name: &str) -> Option<Direction> {
        match name {
            "callers" => Some(Direction::Callers),
            "callees" => Some(Direction::Callees),
            "references" => Some(Direction::References),
            "impact" => Some(Direction::Impact),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        Direction::NAMES[self as usize]
    }
}

/// Depth of an impact walk when none is asked for.
pub const DEFAULT_DEPTH: u32 = 3;
/// The deepest impact walk: beyond it nearly everything reaches everything.
pub const MAX_DEPTH: u32 = 6;

/// A navigation request.
#[derive(Debug, Clone)]
pub struct Navigation {
    /// An id (`path#Qualified.name`), a name (`parse_header_links`, `Session.send`,
    /// `Router::route`) or `path:line`.
    pub target: String,
    pub direction: Direction,
    /// For [`Direction::Impact`]: how many steps of callers and references (1..=6).
    pub depth: u32,
    /// Token budget of the whole answer; 0 = no cap.
    pub budget: usize,
    pub encoding: Encoding,
    /// Overrides the engine's freshness note (the daemon knows what is pending).
    pub freshness: Option<String>,
}

impl Navigation {
    pub fn new(target: impl Into<String>, direction: Direction) -> Navigation {
        Navigation {
            target: target.into(),
            direction,
            depth: DEFAULT_DEPTH,
            budget: 0,
            encoding: Encoding::Cl100k,
            freshness: None,
        }
    }
}

/// Why a navigation request has no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NavigateError {
    #[error(
        "no definition matches {0:?}: give a name, `Type.method`, an id from an answer (`path#Name`) or `path:line`"
    )]
    NoTarget(String),
    #[error("{path} has no line {line} (it has {lines})")]
    NoLine { path: String, line: u32, lines: u32 },
    #[error("the target is empty")]
    Empty,
}

impl Engine {
    /// The answer to `nav`: the target's sites in the direction asked, nearest first.
    pub fn navigate(&self, nav: &Navigation) -> Result<crate::render::Answer, NavigateError> {
        let g = &self.repo.graph;
        let found = target::find(g, &self.index.pagerank, &nav.target)?;
        let walk = sites::walk(
            g,
            &self.index.pagerank,
            found.best,
            nav.direction,
            nav.depth,
        );
        Ok(render::answer(self, nav, &found, &walk))
    }
}

#[cfg(test)]
mod tests;
