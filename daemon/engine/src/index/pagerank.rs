//! PageRank by sparse power iteration: O(iterations × edges), so 50k nodes take milliseconds.

/// A directed graph laid out for power iteration: in-edges grouped by target (so each node
/// pulls from its sources, reading memory in order) and each source's share precomputed.
/// Built once per snapshot; personalised PageRank runs on it per query.
pub struct Transitions {
    n: usize,
    /// `sources[in_start[v]..in_start[v + 1]]` are the nodes with an edge to `v`.
    in_start: Vec<u32>,
    sources: Vec<u32>,
    /// 1 / out-degree, 0 for nodes without out-edges.
    share: Vec<f32>,
    dangling: Vec<u32>,
}

impl Transitions {
    /// Heap bytes of the walk's arrays.
    pub fn heap_bytes(&self) -> usize {
        (self.in_start.capacity() + self.sources.capacity() + self.share.capacity()) * 4
    }
}

impl Transitions {
    pub fn new(n: usize, edges: &[(u32, u32)]) -> Transitions {
        let mut out_degree = vec![0u32; n];
        let mut in_degree = vec![0u32; n + 1];
        for &(from, to) in edges {
            out_degree[from as usize] += 1;
            in_degree[to as usize + 1] += 1;
        }
        let mut in_start = in_degree;
        for i in 1..in_start.len() {
            in_start[i] += in_start[i - 1];
        }
        let mut fill = in_start.clone();
        let mut sources = vec![0u32; edges.len()];
        for &(from, to) in edges {
            sources[fill[to as usize] as usize] = from;
            fill[to as usize] += 1;
        }
        let share = out_degree
            .iter()
            .map(|&d| if d == 0 { 0.0 } else { 1.0 / d as f32 })
            .collect();
        let dangling = (0..n as u32)
            .filter(|&v| out_degree[v as usize] == 0)
            .collect();
        Transitions {
            n,
            in_start,
            sources,
            share,
            dangling,
        }
    }
}

/// Steps of the global (not personalised) PageRank.
pub const GLOBAL_ITERATIONS: usize = 50;

/// Ranks the nodes of `walk`. With `teleport` (non-negative weights, one per node) the random
/// surfer jumps back to those nodes only: personalised PageRank. At most `max_iter` steps
/// (global ranks converge within 50 on every repository measured).
pub fn pagerank(walk: &Transitions, teleport: Option<&[f32]>, max_iter: usize) -> Vec<f32> {
    let n = walk.n;
    if n == 0 {
        return Vec::new();
    }
    const DAMPING: f32 = 0.85;
    const TOLERANCE: f32 = 1e-6;
    let jump: Vec<f32> = match teleport {
        Some(t) if t.len() == n && t.iter().sum::<f32>() > 0.0 => {
            let total: f32 = t.iter().sum();
            t.iter().map(|w| w / total).collect()
        }
        _ => vec![1.0 / n as f32; n],
    };
    let mut rank = jump.clone();
    let mut scaled = vec![0.0f32; n];
    let mut next = vec![0.0f32; n];
    for _ in 0..max_iter {
        // Rank held by nodes without out-edges is redistributed like a teleport.
        let dangling: f32 = walk.dangling.iter().map(|&v| rank[v as usize]).sum();
        for ((s, r), share) in scaled.iter_mut().zip(&rank).zip(&walk.share) {
            *s = DAMPING * r * share;
        }
        let base = 1.0 - DAMPING + DAMPING * dangling;
        let mut delta = 0.0f32;
        for v in 0..n {
            let (a, b) = (walk.in_start[v] as usize, walk.in_start[v + 1] as usize);
            let pulled: f32 = walk.sources[a..b].iter().map(|&u| scaled[u as usize]).sum();
            let x = base * jump[v] + pulled;
            delta += (x - rank[v]).abs();
            next[v] = x;
        }
        std::mem::swap(&mut rank, &mut next);
        if delta < TOLERANCE {
            break;
        }
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_ranks_highest_and_sums_to_one() {
        // 1, 2, 3 all point at 0.
        let r = pagerank(
            &Transitions::new(4, &[(1, 0), (2, 0), (3, 0)]),
            None,
            GLOBAL_ITERATIONS,
        );
        assert!(r[0] > r[1] && r[0] > r[2] && r[0] > r[3]);
        assert!((r.iter().sum::<f32>() - 1.0).abs() < 1e-3);
    }

    #[test]
    fn personalisation_favours_the_seed_neighbourhood() {
        // Two components: 0→1 and 2→3. Seeding 0 lifts 1 above 3.
        let mut seed = vec![0.0; 4];
        seed[0] = 1.0;
        let r = pagerank(&Transitions::new(4, &[(0, 1), (2, 3)]), Some(&seed), 20);
        assert!(r[1] > r[3]);
    }
}
