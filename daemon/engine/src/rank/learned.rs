//! The learned ranker: gradient-boosted regression trees (LambdaRank, trained offline by
//! `scripts/train/train.py` on fixes mined from other repositories' history and on public bug
//! reports with their fixes) that score each
//! candidate from its [`super::features`], calibrated into a probability of relevance.
//!
//! The model is a small JSON file compiled into the binary (`daemon/engine/assets/ranker.json`).
//! Invariant: a model is only used when it names exactly the features this build computes,
//! in the same order; otherwise [`model`] is `None` and ranking falls back to reciprocal rank
//! fusion, with a warning. A model ranks the languages it was trained on and those laid out
//! like them, not C and C++ unless trained on ([`Model::knows`]).

use std::sync::OnceLock;

use serde::Deserialize;

use super::features;
use crate::model::Lang;

/// One tree as the model file holds it: internal node `i` tests
/// `x[feature[i]] <= threshold[i]`; a child `c >= 0` is an internal node, `c < 0` is leaf `!c`.
#[derive(Debug, Deserialize)]
struct Tree {
    feature: Vec<u32>,
    threshold: Vec<f32>,
    left: Vec<i32>,
    right: Vec<i32>,
    leaf: Vec<f32>,
}

/// Platt scaling: probability = 1 / (1 + exp(-(a * raw + b))).
#[derive(Debug, Deserialize)]
struct Calibration {
    a: f32,
    b: f32,
}

#[derive(Debug, Deserialize)]
struct ModelFile {
    features: Vec<String>,
    trees: Vec<Tree>,
    calibration: Calibration,
    #[serde(default)]
    meta: Meta,
}

/// What the training script records of the model; only the languages are read.
#[derive(Debug, Default, Deserialize)]
struct Meta {
    /// The languages of the training instances (`Lang::name`, TSX counting as TypeScript);
    /// absent in a model file that does not say, which is then taken to know every language.
    languages: Option<Vec<String>>,
}

/// One node of the compiled forest: a split sends `x` to `next[0]` when
/// `x[feature] <= threshold` and to `next[1]` otherwise (NaN included); a leaf points at itself
/// and holds its `value`, so every walk can take the same number of steps.
#[derive(Debug, Clone, Copy)]
struct Node {
    feature: u32,
    threshold: f32,
    next: [u32; 2],
    value: f32,
}

/// Every tree in one array of nodes (the shipped forest: 7,134 nodes, ~140 KB). A query evaluates
/// every tree on every candidate: walked a fixed number of steps (the tree's depth), several
/// candidates at once, their dependent loads overlap instead of waiting on each other, and
/// no step needs a bounds or leaf check.
#[derive(Debug)]
pub struct Model {
    nodes: Vec<Node>,
    /// Per tree: its root's index and its depth.
    roots: Vec<(u32, u32)>,
    calibration: Calibration,
    languages: Option<Vec<String>>,
}

/// How many candidates walk a tree side by side.
const LANES: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("ranker model is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("ranker model was trained on other features ({0}); this build computes {1}")]
    Features(String, String),
    #[error("ranker model has a malformed tree ({0})")]
    Tree(usize),
}

impl Model {
    pub fn parse(text: &str) -> Result<Model, ModelError> {
        let m: ModelFile = serde_json::from_str(text)?;
        if m.features != features::NAMES {
            return Err(ModelError::Features(
                m.features.join(","),
                features::NAMES.join(","),
            ));
        }
        let mut model = Model {
            nodes: Vec::new(),
            roots: Vec::with_capacity(m.trees.len()),
            calibration: m.calibration,
            languages: m.meta.languages,
        };
        for (i, t) in m.trees.iter().enumerate() {
            let n = t.feature.len();
            let ok = t.threshold.len() == n
                && t.left.len() == n
                && t.right.len() == n
                && t.feature.iter().all(|&f| (f as usize) < features::N)
                && t.left.iter().chain(&t.right).all(|&c| {
                    if c >= 0 {
                        (c as usize) < n
                    } else {
                        (!c as usize) < t.leaf.len()
                    }
                })
                && (n > 0 || !t.leaf.is_empty());
            if !ok {
                return Err(ModelError::Tree(i));
            }
            let base = model.nodes.len() as u32;
            // Splits keep their numbers, leaves follow them.
            let at = |c: i32| {
                if c >= 0 {
                    base + c as u32
                } else {
                    base + (n + !c as usize) as u32
                }
            };
            for j in 0..n {
                model.nodes.push(Node {
                    feature: t.feature[j],
                    threshold: t.threshold[j],
                    next: [at(t.left[j]), at(t.right[j])],
                    value: 0.0,
                });
            }
            for (k, &value) in t.leaf.iter().enumerate() {
                let me = base + (n + k) as u32;
                model.nodes.push(Node {
                    feature: 0,
                    threshold: 0.0,
                    next: [me, me],
                    value,
                });
            }
            let depth = depth(t).ok_or(ModelError::Tree(i))?;
            model
                .roots
                .push((if n == 0 { at(-1) } else { base }, depth));
        }
        Ok(model)
    }

    /// One tree's leaf for `x`. Every index was checked by [`Model::parse`], and a walk of
    /// the tree's depth ends on a leaf.
    // `!(x <= t)`, not `x > t`: a NaN goes to `next[1]`, as the node layout says.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    fn tree(&self, (root, depth): (u32, u32), x: &[f32; features::N]) -> f32 {
        let mut c = root as usize;
        for _ in 0..depth {
            let s = &self.nodes[c];
            c = s.next[usize::from(!(x[s.feature as usize] <= s.threshold))] as usize;
        }
        self.nodes[c].value
    }

    /// Whether the model ranks code in `lang`: a language it was trained on, or one whose
    /// code is laid out like theirs — each definition in one place, a file's imports at its
    /// top. Not C and C++ unless trained on: a function is declared in a header and defined
    /// in a source file, macros stand for code, and the features its trees split on (content
    /// and file shares, graph degrees) take other values there. Measured: on C/C++ issue
    /// texts the shipped model held 11 points fewer hunks than fusion at 4000 tokens, on
    /// commit messages of C#, Kotlin, PHP, Ruby, Scala and Swift 7 more
    /// (`bench/results/languages.md`).
    pub fn knows(&self, lang: Lang) -> bool {
        let name = match lang {
            Lang::Tsx => Lang::TypeScript.name(),
            other => other.name(),
        };
        self.languages.as_ref().is_none_or(|known| {
            known.iter().any(|k| k == name) || !matches!(lang, Lang::C | Lang::Cpp)
        })
    }

    /// The model's raw score (a sum over trees).
    pub fn raw(&self, x: &[f32; features::N]) -> f32 {
        self.roots.iter().map(|&r| self.tree(r, x)).sum()
    }

    fn calibrated(&self, raw: f32) -> f32 {
        let z = self.calibration.a * raw + self.calibration.b;
        1.0 / (1.0 + (-z).exp())
    }

    /// The calibrated probability that the candidate holds code the fix changes.
    pub fn probability(&self, x: &[f32; features::N]) -> f32 {
        self.calibrated(self.raw(x))
    }

    /// [`Model::probability`] of every candidate, tree by tree: one tree's splits stay in the
    /// cache while every candidate walks it. Sums in the same order as [`Model::raw`], so the
    /// results are the same bit for bit.
    // The same `!(x <= t)` as in `tree`.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn probabilities(&self, xs: &[[f32; features::N]]) -> Vec<f32> {
        let mut raw = vec![0.0f32; xs.len()];
        for (sums, xs) in raw.chunks_mut(LANES).zip(xs.chunks(LANES)) {
            if xs.len() < LANES {
                for (sum, x) in sums.iter_mut().zip(xs) {
                    *sum = self.raw(x);
                }
                continue;
            }
            for &(root, depth) in &self.roots {
                let mut c = [root as usize; LANES];
                for _ in 0..depth {
                    for (c, x) in c.iter_mut().zip(xs) {
                        let s = &self.nodes[*c];
                        *c = s.next[usize::from(!(x[s.feature as usize] <= s.threshold))] as usize;
                    }
                }
                for (sum, c) in sums.iter_mut().zip(c) {
                    *sum += self.nodes[c].value;
                }
            }
        }
        raw.into_iter().map(|z| self.calibrated(z)).collect()
    }
}

/// The depth of a validated tree (children in range): the most splits on a path from the
/// root to a leaf, or `None` when a split is reached twice (a cycle, or a node shared by
/// two parents).
fn depth(t: &Tree) -> Option<u32> {
    let n = t.feature.len();
    let mut seen = vec![false; n];
    let mut deepest = 0;
    let mut stack = if n == 0 {
        Vec::new()
    } else {
        vec![(0usize, 1u32)]
    };
    while let Some((node, d)) = stack.pop() {
        if std::mem::replace(&mut seen[node], true) {
            return None;
        }
        deepest = deepest.max(d);
        for c in [t.left[node], t.right[node]] {
            if c >= 0 {
                stack.push((c as usize, d + 1));
            }
        }
    }
    Some(deepest)
}

/// The model shipped with this build, parsed once; `None` (logged once) if it does not fit.
pub fn model() -> Option<&'static Model> {
    static MODEL: OnceLock<Option<Model>> = OnceLock::new();
    MODEL
        .get_or_init(|| match Model::parse(include_str!("../../assets/ranker.json")) {
            Ok(m) => Some(m),
            Err(e) => {
                tracing::warn!(error = %e, "learned ranker unavailable; ranking by rank fusion");
                None
            }
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> String {
        serde_json::to_string(features::NAMES).unwrap()
    }

    #[test]
    fn a_model_ranks_the_languages_it_was_trained_on_and_those_like_them() {
        let with = |meta: &str| {
            Model::parse(&format!(
                r#"{{"features":{},"calibration":{{"a":1.0,"b":0.0}},"trees":[]{meta}}}"#,
                names()
            ))
            .unwrap()
        };
        let m = with(r#","meta":{"languages":["python","typescript"]}"#);
        assert!(m.knows(Lang::Python) && m.knows(Lang::TypeScript) && m.knows(Lang::Tsx));
        assert!(
            m.knows(Lang::Ruby) && m.knows(Lang::Kotlin),
            "laid out like Python"
        );
        assert!(
            !m.knows(Lang::Cpp) && !m.knows(Lang::C),
            "headers apart from sources"
        );
        let c = with(r#","meta":{"languages":["c"]}"#);
        assert!(c.knows(Lang::C) && !c.knows(Lang::Cpp));
        // A model file that does not say is taken to know every language.
        assert!(with("").knows(Lang::Cpp) && with(r#","meta":{}"#).knows(Lang::Cpp));
        // The shipped model saw no C or C++.
        let shipped = model().expect("the shipped model fits this build");
        assert!(shipped.knows(Lang::Python) && shipped.knows(Lang::Rust));
        assert!(!shipped.knows(Lang::C) && !shipped.knows(Lang::Cpp));
    }

    #[test]
    fn trees_route_by_threshold_and_sum() {
        let text = format!(
            r#"{{"features":{},"calibration":{{"a":1.0,"b":0.0}},"trees":[
              {{"feature":[0,1],"threshold":[0.5,2.0],"left":[-1,-2],"right":[1,-3],"leaf":[1.0,2.0,3.0]}},
              {{"feature":[],"threshold":[],"left":[],"right":[],"leaf":[0.25]}}]}}"#,
            names()
        );
        let m = Model::parse(&text).unwrap();
        let mut x = [0.0f32; features::N];
        assert_eq!(m.raw(&x), 1.25);
        x[0] = 1.0;
        assert_eq!(m.raw(&x), 2.25);
        x[1] = 3.0;
        assert_eq!(m.raw(&x), 3.25);
        assert!(m.probability(&x) > 0.9);
        // Candidates walked eight abreast, and the rest one by one, agree with `probability`.
        let xs: Vec<[f32; features::N]> = (0..11)
            .map(|i| {
                let mut x = [0.0f32; features::N];
                x[0] = (i % 3) as f32 * 0.4;
                x[1] = if i == 5 { f32::NAN } else { i as f32 * 0.5 };
                x
            })
            .collect();
        let each: Vec<f32> = xs.iter().map(|x| m.probability(x)).collect();
        assert_eq!(m.probabilities(&xs), each);
        assert!(each.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn the_shipped_model_scores_a_pool_as_it_scores_each_candidate() {
        let m = model().unwrap();
        let xs: Vec<[f32; features::N]> = (0..37u32)
            .map(|i| std::array::from_fn(|f| ((i * 31 + f as u32 * 17) % 23) as f32 / 7.0))
            .collect();
        let each: Vec<f32> = xs.iter().map(|x| m.probability(x)).collect();
        assert_eq!(m.probabilities(&xs), each);
    }

    #[test]
    fn a_model_for_other_features_or_with_bad_trees_is_refused() {
        let other = r#"{"features":["a"],"calibration":{"a":1,"b":0},"trees":[]}"#;
        assert!(matches!(Model::parse(other), Err(ModelError::Features(..))));
        let bad = format!(
            r#"{{"features":{},"calibration":{{"a":1,"b":0}},"trees":[{{"feature":[0],"threshold":[0],"left":[5],"right":[-1],"leaf":[1]}}]}}"#,
            names()
        );
        assert!(matches!(Model::parse(&bad), Err(ModelError::Tree(0))));
        // Children in range, but split 1 leads back to split 0: no walk would end.
        let cycle = format!(
            r#"{{"features":{},"calibration":{{"a":1,"b":0}},"trees":[{{"feature":[0,0],"threshold":[0,0],"left":[1,0],"right":[-1,-1],"leaf":[1]}}]}}"#,
            names()
        );
        assert!(matches!(Model::parse(&cycle), Err(ModelError::Tree(0))));
    }

    #[test]
    fn the_shipped_model_loads() {
        assert!(
            model().is_some(),
            "daemon/engine/assets/ranker.json must match features::NAMES"
        );
    }
}
