//! The learned ranker: gradient-boosted regression trees (LambdaRank, trained offline by
//! `scripts/train/train.py` on fixes mined from other repositories' history) that score each
//! candidate from its [`super::features`], calibrated into a probability of relevance.
//!
//! The model is a small JSON file compiled into the binary (`daemon/engine/assets/ranker.json`).
//! Invariant: a model is only used when it names exactly the features this build computes,
//! in the same order; otherwise [`model`] is `None` and ranking falls back to reciprocal rank
//! fusion, with a warning.

use std::sync::OnceLock;

use serde::Deserialize;

use super::features;

/// One tree, flattened: internal node `i` tests `x[feature[i]] <= threshold[i]`; a child
/// `c >= 0` is an internal node, `c < 0` is leaf `!c`.
#[derive(Debug, Deserialize)]
struct Tree {
    feature: Vec<u32>,
    threshold: Vec<f32>,
    left: Vec<i32>,
    right: Vec<i32>,
    leaf: Vec<f32>,
}

impl Tree {
    fn eval(&self, x: &[f32; features::N]) -> f32 {
        if self.feature.is_empty() {
            return self.leaf.first().copied().unwrap_or(0.0);
        }
        let mut node = 0usize;
        // A malformed tree (a cycle) cannot loop forever: depth is bounded by the node count.
        for _ in 0..=self.feature.len() {
            let f = self.feature[node] as usize;
            let next = if x.get(f).copied().unwrap_or(0.0) <= self.threshold[node] {
                self.left[node]
            } else {
                self.right[node]
            };
            if next < 0 {
                return self.leaf.get(!next as usize).copied().unwrap_or(0.0);
            }
            node = next as usize;
            if node >= self.feature.len() {
                return 0.0;
            }
        }
        0.0
    }
}

/// Platt scaling: probability = 1 / (1 + exp(-(a * raw + b))).
#[derive(Debug, Deserialize)]
struct Calibration {
    a: f32,
    b: f32,
}

#[derive(Debug, Deserialize)]
pub struct Model {
    features: Vec<String>,
    trees: Vec<Tree>,
    calibration: Calibration,
}

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
        let m: Model = serde_json::from_str(text)?;
        if m.features != features::NAMES {
            return Err(ModelError::Features(
                m.features.join(","),
                features::NAMES.join(","),
            ));
        }
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
        }
        Ok(m)
    }

    /// The model's raw score (a sum over trees).
    pub fn raw(&self, x: &[f32; features::N]) -> f32 {
        self.trees.iter().map(|t| t.eval(x)).sum()
    }

    /// The calibrated probability that the candidate holds code the fix changes.
    pub fn probability(&self, x: &[f32; features::N]) -> f32 {
        let z = self.calibration.a * self.raw(x) + self.calibration.b;
        1.0 / (1.0 + (-z).exp())
    }
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
    }

    #[test]
    fn the_shipped_model_loads() {
        assert!(
            model().is_some(),
            "daemon/engine/assets/ranker.json must match features::NAMES"
        );
    }
}
