//! Splitting at headings: sections kept inline or linked, and runs of sections grouped one
//! level down when even their links are too many for the node.

use super::{Planner, Section, join, slug};
use crate::scan::Line;

impl Planner<'_> {
    pub(super) fn split_sections(
        &mut self,
        lines: &[Line],
        preamble_end: usize,
        sections: &[Section],
        dir: &str,
        stem: &str,
        depth: usize,
    ) -> String {
        let soft = self.opts.soft;
        let mut preamble = join(&lines[..preamble_end]);
        // A preamble too big to sit beside the section links goes down a level whole.
        if self.est(&preamble) > soft / 2 {
            let link = self.child(&preamble, dir, stem, "introduction", depth);
            preamble = link;
        }
        let full: Vec<String> = sections
            .iter()
            .map(|s| join(&lines[s.start..s.end]))
            .collect();
        let full_tokens: Vec<usize> = full.iter().map(|t| self.est(t)).collect();
        let teasers: Vec<String> = sections.iter().map(|s| self.teaser(lines, s)).collect();
        // Levels 3–4: the model says which sections matter most; they stay nearest the root.
        let advised: Vec<f32> = {
            let briefs: Vec<String> = sections
                .iter()
                .map(|s| {
                    let first = lines[s.start + s.head..s.end]
                        .iter()
                        .find(|l| !l.blank)
                        .map_or("", |l| l.text.trim());
                    format!(
                        "{} — {}",
                        s.title,
                        first.chars().take(120).collect::<String>()
                    )
                })
                .collect();
            let task = self.opts.query.clone();
            let order = if self.advisor.is_some() {
                self.advise(|a| a.importance(&briefs, task.as_deref()))
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            let mut p = vec![0.0; sections.len()];
            for (rank, &i) in order.iter().enumerate() {
                if let Some(slot) = p.get_mut(i) {
                    *slot = (slot as &f32).max(1.0 - rank as f32 / order.len().max(1) as f32);
                }
            }
            p
        };
        // A linked section in the parent: heading, teaser, link (annotation ~ 30 characters).
        let linked: Vec<String> = sections
            .iter()
            .zip(&teasers)
            .map(|(s, t)| {
                let head = join(&lines[s.start..s.start + s.head]);
                let t = if t.is_empty() {
                    String::new()
                } else {
                    format!("\n{t}")
                };
                format!(
                    "{head}{t}\n→ [{stem}/{0}.md]({stem}/{0}.md) (~1,000 tokens)\n\n",
                    slug(&s.title)
                )
            })
            .collect();
        let linked_tokens: Vec<usize> = linked.iter().map(|t| self.est(t)).collect();
        let base = self.est(&preamble);
        let all_linked: usize = base + linked_tokens.iter().sum::<usize>();
        // Even two sections go down as bare links when their headings and teasers alone are
        // over soft (found by the fit_plan fuzzer: two 900-character headings kept the root
        // over hard beside their links).
        if all_linked > soft && sections.len() >= 2 {
            return self.group(&preamble, sections, &full, &full_tokens, dir, stem, depth);
        }
        // Inline: preferred sections first, then the smallest, while the root stays under soft;
        // the inline threshold shrinks step by step if even that is too much.
        let mut inline = vec![false; sections.len()];
        let mut order: Vec<usize> = (0..sections.len()).collect();
        let prio: Vec<f32> = (0..sections.len())
            .map(|i| {
                self.priority(&full[i], &lines[sections[i].start..sections[i].end])
                    + 10.0 * advised[i]
            })
            .collect();
        order.sort_by(|&a, &b| {
            prio[b]
                .total_cmp(&prio[a])
                .then(full_tokens[a].cmp(&full_tokens[b]))
        });
        let mut size = all_linked;
        let mut threshold = self.opts.inline_threshold;
        loop {
            for &i in &order {
                if inline[i] {
                    continue;
                }
                let gain = full_tokens[i].saturating_sub(linked_tokens[i]);
                let small = full_tokens[i] <= threshold || prio[i] > 0.0;
                let trivial = gain < self.opts.trivial_extension;
                if (small || trivial) && size + gain <= soft {
                    inline[i] = true;
                    size += gain;
                }
            }
            if size <= soft || threshold <= self.opts.inline_reduction {
                break;
            }
            threshold -= self.opts.inline_reduction;
        }
        let links: Vec<Option<String>> = sections
            .iter()
            .enumerate()
            .map(|(i, s)| {
                (!inline[i]).then(|| self.child(&full[i], dir, stem, &slug(&s.title), depth))
            })
            .collect();
        // Teasers are a courtesy: when they would take the node over soft, they go.
        let assemble = |with_teasers: bool| {
            let mut out = preamble.clone();
            for (i, s) in sections.iter().enumerate() {
                let Some(link) = &links[i] else {
                    out.push_str(&full[i]);
                    continue;
                };
                out.push_str(&join(&lines[s.start..s.start + s.head]));
                out.push('\n');
                if with_teasers && !teasers[i].is_empty() {
                    out.push_str(&teasers[i]);
                    out.push('\n');
                }
                out.push_str(link);
                out.push('\n');
            }
            out
        };
        let out = assemble(true);
        if self.est(&out) <= soft {
            return out;
        }
        assemble(false)
    }

    /// Too many sections for their links to fit: consecutive runs go down a level together.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn group(
        &mut self,
        preamble: &str,
        sections: &[Section],
        full: &[String],
        full_tokens: &[usize],
        dir: &str,
        stem: &str,
        depth: usize,
    ) -> String {
        let total: usize = full_tokens.iter().sum();
        let link_cost = self.link_cost(stem);
        let room = self
            .opts
            .soft
            .saturating_sub(self.est(preamble))
            .max(link_cost * 2);
        // As few groups as keep each near the soft size, as many as their links allow.
        let mut groups = total
            .div_ceil(self.opts.soft * 4 / 5)
            .clamp(2, (room / link_cost).max(2))
            .min(sections.len());
        // `link_cost` guesses a name's length; the real names can be longer (two titles cut to
        // 24 characters each). Plan with them, and with fewer, larger groups while the bare
        // links would not fit beside the preamble: each group is fitted in turn, so the tree
        // gains a level instead of the root going over.
        let runs = loop {
            let runs = plan_runs(full_tokens, groups);
            let links: usize = runs
                .iter()
                .map(|&(i, j)| {
                    let name = format!("{}-99", run_name(sections, i, j));
                    // +1: an estimate rounds down per piece, not per file.
                    self.est(&format!(
                        "→ [{stem}/{name}.md]({stem}/{name}.md) (~99,999 tokens)\n"
                    )) + 1
                })
                .sum();
            if links <= room || groups <= 2 {
                break runs;
            }
            groups = (groups * room / links).clamp(2, groups - 1);
        };
        let mut built: Vec<(String, String, String)> = Vec::new();
        let mut out = preamble.to_string();
        if !out.is_empty() && !out.ends_with("\n\n") {
            out.push('\n');
        }
        for (i, j) in runs {
            let text: String = full[i..j].concat();
            let name = run_name(sections, i, j);
            // An inserted heading names the run and lists what it holds, so the root is an
            // overview rather than a bare list of links (dropped again if it does not fit).
            let (heading, titles) = if j - i > 1 {
                let level = sections[i].level.clamp(1, 6) as usize;
                let titles: Vec<&str> = sections[i..j].iter().map(|s| s.title.as_str()).collect();
                let shown: Vec<&str> = titles.iter().take(12).copied().collect();
                let more = if titles.len() > 12 {
                    format!(" … ({} sections)", titles.len())
                } else {
                    String::new()
                };
                (
                    format!(
                        "{} {} … {}\n\n",
                        "#".repeat(level),
                        titles[0],
                        titles[titles.len() - 1]
                    ),
                    format!("{}{more}\n\n", shown.join(" · ")),
                )
            } else {
                (String::new(), String::new())
            };
            let link = self.child(&text, dir, stem, &name, depth);
            built.push((heading, titles, link));
        }
        // The fullest overview that fits: headings and titles, headings alone, links alone.
        for detail in [2, 1, 0] {
            let mut root = out.clone();
            for (heading, titles, link) in &built {
                if detail >= 1 {
                    root.push_str(heading);
                }
                if detail >= 2 {
                    root.push_str(titles);
                }
                root.push_str(link);
                if detail >= 1 {
                    root.push('\n');
                }
            }
            if detail == 0 || self.est(&root) <= self.opts.soft {
                return root;
            }
        }
        out
    }
}

/// Consecutive runs `(start, end)` of about `total / groups` tokens each, at least two.
fn plan_runs(full_tokens: &[usize], groups: usize) -> Vec<(usize, usize)> {
    let total: usize = full_tokens.iter().sum();
    let target = total.div_ceil(groups.max(1));
    let n = full_tokens.len();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < n {
        let mut j = i;
        let mut size = 0;
        while j < n && (j == i || size + full_tokens[j] <= target) {
            size += full_tokens[j];
            j += 1;
        }
        // Keep at least two groups, so the child is smaller than this node.
        if i == 0 && j == n {
            j = (n / 2).max(1);
        }
        runs.push((i, j));
        i = j;
    }
    runs
}

/// A run's name: its section's slug, or the first and last sections' slugs cut short.
fn run_name(sections: &[Section], i: usize, j: usize) -> String {
    if j - i == 1 {
        slug(&sections[i].title)
    } else {
        let (a, b) = (slug(&sections[i].title), slug(&sections[j - 1].title));
        let cut = |s: &str| s.chars().take(24).collect::<String>();
        format!("{}--{}", cut(&a), cut(&b))
    }
}
