//! PageRank two ways. The global ranks: sparse power iteration, O(iterations × edges), once per
//! snapshot. The personalised ranks of a question: forward push from its seeds, whose work
//! follows the mass it moves rather than the graph's size — a power iteration per question
//! took 69 % of a warm query's time on kafka (115k nodes, 1M walk edges: ~30 ms for 20 steps).

/// A directed graph laid out for power iteration: in-edges grouped by target (so each node
/// pulls from its sources, reading memory in order) and each source's share precomputed.
/// Built for the global ranks, then dropped.
pub struct Transitions {
    n: usize,
    /// `sources[in_start[v]..in_start[v + 1]]` are the nodes with an edge to `v`.
    in_start: Vec<u32>,
    sources: Vec<u32>,
    /// 1 / out-degree, 0 for nodes without out-edges.
    share: Vec<f32>,
    dangling: Vec<u32>,
}

/// Compressed rows: each pair's second item grouped under its first, in input order —
/// `items[start[k]..start[k + 1]]` are the items of group `k` (`n` groups).
fn grouped(n: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> (Vec<u32>, Vec<u32>) {
    let mut start = vec![0u32; n + 1];
    for (group, _) in pairs.clone() {
        start[group as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut fill = start.clone();
    let mut items = vec![0u32; start[n] as usize];
    for (group, item) in pairs {
        items[fill[group as usize] as usize] = item;
        fill[group as usize] += 1;
    }
    (start, items)
}

impl Transitions {
    pub fn new(n: usize, edges: &[(u32, u32)]) -> Transitions {
        let mut out_degree = vec![0u32; n];
        for &(from, _) in edges {
            out_degree[from as usize] += 1;
        }
        let (in_start, sources) = grouped(n, edges.iter().map(|&(from, to)| (to, from)));
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

/// A directed graph laid out for pushing mass along out-edges: targets grouped by source.
/// Built once per snapshot; [`personalised`] runs on it per question.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Neighbours {
    /// `targets[start[u]..start[u + 1]]` are the nodes `u` has an edge to.
    start: Vec<u32>,
    targets: Vec<u32>,
}

impl Neighbours {
    pub fn new(n: usize, edges: &[(u32, u32)]) -> Neighbours {
        let (start, targets) = grouped(n, edges.iter().copied());
        Neighbours { start, targets }
    }

    pub fn len(&self) -> usize {
        self.start.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn of(&self, u: u32) -> &[u32] {
        &self.targets[self.start[u as usize] as usize..self.start[u as usize + 1] as usize]
    }

    fn degree(&self, u: u32) -> u32 {
        self.start[u as usize + 1] - self.start[u as usize]
    }

    /// Heap bytes of the arrays.
    pub fn heap_bytes(&self) -> usize {
        (self.start.capacity() + self.targets.capacity()) * 4
    }
}

/// The state of a forward push: mass not yet spread, and the nodes holding enough to spread.
struct Push<'a> {
    walk: &'a Neighbours,
    tolerance: f32,
    residual: Vec<f32>,
    queued: Vec<bool>,
    queue: std::collections::VecDeque<u32>,
}

impl Push<'_> {
    /// Gives `v` mass `m`; queues it once it holds more than the tolerance per out-edge.
    fn pass(&mut self, v: u32, m: f32) {
        let r = &mut self.residual[v as usize];
        *r += m;
        if !self.queued[v as usize] && *r > self.tolerance * self.walk.degree(v).max(1) as f32 {
            self.queued[v as usize] = true;
            self.queue.push_back(v);
        }
    }
}

/// The residual mass per out-edge that [`personalised`] leaves unpushed. The answer is within
/// this × (edges + nodes) of the exact ranks in L1 — 1e-6 on kafka's million walk edges is
/// ~1 % of the mass, spread over nodes far below any ranked one.
pub const PUSH_TOLERANCE: f32 = 1e-6;

/// Personalised PageRank by forward push (Andersen, Chung and Lang): the random surfer jumps
/// back to the nodes of `teleport` (non-negative weights, one per node) and, from a node with
/// no out-edges, jumps there too — the same fixed point [`pagerank`] iterates to. Every node
/// holding more than `tolerance` × its out-degree of unspread mass passes 15 % of it to its rank
/// and the rest along its edges, until none does. All zeros when `teleport` has no positive
/// weight or the wrong length.
pub fn personalised(walk: &Neighbours, teleport: &[f32], tolerance: f32) -> Vec<f32> {
    const DAMPING: f32 = 0.85;
    let n = walk.len();
    let mut rank = vec![0.0f32; n];
    let positive = |w: f32| w.is_finite() && w > 0.0;
    let total: f32 = teleport.iter().copied().filter(|&w| positive(w)).sum();
    if teleport.len() != n || total <= 0.0 {
        return rank;
    }
    let seeds: Vec<(u32, f32)> = (0..n as u32)
        .filter(|&v| positive(teleport[v as usize]))
        .map(|v| (v, teleport[v as usize] / total))
        .collect();
    let mut push = Push {
        walk,
        tolerance: tolerance.max(f32::MIN_POSITIVE),
        residual: vec![0.0f32; n],
        queued: vec![false; n],
        queue: std::collections::VecDeque::new(),
    };
    for &(s, w) in &seeds {
        push.residual[s as usize] = w;
        push.queued[s as usize] = true;
        push.queue.push_back(s);
    }
    let (mut pushes, mut moves) = (0usize, 0usize);
    // Mass reaching a node without out-edges jumps back to the seeds, as a teleport does. Rather
    // than sending it round again (an isolated seed bounced its mass through every seed ~85
    // times: 6× a power iteration's work on psf/requests), it is counted as `lost` and the
    // ranks scaled at the end: with y the ranks of the walk that loses it, the fixed point is
    // y / (1 − lost), since returning mass m to the seeds adds m × y.
    let mut lost = 0.0f32;
    while let Some(u) = push.queue.pop_front() {
        pushes += 1;
        push.queued[u as usize] = false;
        let mass = std::mem::take(&mut push.residual[u as usize]);
        rank[u as usize] += (1.0 - DAMPING) * mass;
        let out = walk.of(u);
        moves += out.len();
        if out.is_empty() {
            lost += DAMPING * mass;
        } else {
            let share = DAMPING * mass / out.len() as f32;
            for &v in out {
                push.pass(v, share);
            }
        }
    }
    // At least 1 − DAMPING of all mass stays in ranks, so `lost` < DAMPING < 1.
    let scale = 1.0 / (1.0 - lost.min(DAMPING));
    for r in &mut rank {
        *r *= scale;
    }
    tracing::debug!(
        pushes,
        moves,
        edges = walk.targets.len(),
        "personalised PageRank"
    );
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
        let r = personalised(
            &Neighbours::new(4, &[(0, 1), (2, 3)]),
            &seed,
            PUSH_TOLERANCE,
        );
        assert!(r[1] > 0.0 && r[3] == 0.0 && r[2] == 0.0);
    }

    /// A small deterministic generator, so the graph is the same on every run.
    fn lcg(state: &mut u64) -> u32 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*state >> 33) as u32
    }

    #[test]
    fn push_agrees_with_power_iteration_within_its_tolerance() {
        // A random graph with hubs, dangling nodes and isolated ones; three seeds.
        let n = 600usize;
        let mut state = 7u64;
        let mut edges = Vec::new();
        for _ in 0..2400 {
            let from = lcg(&mut state) % 500; // 500..600 never point anywhere
            let to = if lcg(&mut state).is_multiple_of(4) {
                lcg(&mut state) % 10
            } else {
                lcg(&mut state) % n as u32
            };
            edges.push((from, to));
        }
        let mut seed = vec![0.0f32; n];
        seed[3] = 1.0;
        seed[42] = 0.5;
        seed[550] = 0.25;
        let exact = pagerank(&Transitions::new(n, &edges), Some(&seed), 500);
        for tolerance in [1e-5f32, 1e-6, 1e-7] {
            let pushed = personalised(&Neighbours::new(n, &edges), &seed, tolerance);
            let l1: f32 = exact.iter().zip(&pushed).map(|(a, b)| (a - b).abs()).sum();
            let bound = tolerance * (edges.len() + n) as f32 + 1e-4;
            assert!(l1 <= bound, "tolerance {tolerance}: L1 {l1} > {bound}");
            // Push never overshoots: what is left unspread is only ever missing.
            assert!(exact.iter().zip(&pushed).all(|(a, b)| *b <= a + 1e-5));
        }
        // The order of the best nodes is the exact one.
        let top = |r: &[f32]| {
            let mut v: Vec<u32> = (0..n as u32).collect();
            v.sort_by(|&a, &b| r[b as usize].total_cmp(&r[a as usize]).then(a.cmp(&b)));
            v.truncate(10);
            v
        };
        let pushed = personalised(&Neighbours::new(n, &edges), &seed, PUSH_TOLERANCE);
        assert_eq!(top(&exact), top(&pushed));
    }

    #[test]
    fn push_without_seeds_or_with_the_wrong_length_is_all_zero() {
        let walk = Neighbours::new(3, &[(0, 1), (1, 2)]);
        assert!(
            personalised(&walk, &[0.0; 3], PUSH_TOLERANCE)
                .iter()
                .all(|&x| x == 0.0)
        );
        assert!(
            personalised(&walk, &[1.0; 2], PUSH_TOLERANCE)
                .iter()
                .all(|&x| x == 0.0)
        );
        assert!(
            personalised(&walk, &[f32::NAN, 0.0, 0.0], PUSH_TOLERANCE)
                .iter()
                .all(|&x| x == 0.0)
        );
    }
}
