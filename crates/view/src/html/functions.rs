//! The page's functions: those of the kept call-tree nodes, then those
//! with a threshold of total samples, numbered anew; and their self and
//! total sums per interval, as the query layer gives them
//! (`perfq_query::function_sums`: the views' sums, not the page's own).

use std::collections::HashMap;

use perfq_query::function_sums;
use perfq_query::stack_counts::{StackCounts, Unplaced};
use serde::Serialize;

use super::call_tree::{CallTree, Pruned};
use crate::Error;

/// Per (interval, tree function), each once: self and total samples,
/// self and total periods.
pub(super) type Sums = Vec<((u64, u32), [u64; 4])>;

/// What [`tree_and_sums`] makes: the samples placed, the call tree and
/// its cut, and the sums per interval of the functions with a threshold
/// of total samples, by the tree's function ids, with how many functions
/// with samples have fewer.
pub(super) struct Made {
    pub counted: StackCounts,
    pub tree: CallTree,
    pub pruned: Pruned,
    pub sums: Sums,
    pub below: u64,
}

/// `read`'s samples placed among the sampled stacks and summed per
/// function (on a thread of their own), while the call tree is made from
/// the stacks alone (on this one) and then cut to the nodes with `prune`
/// of the samples or more, once the samples' count per stack is there:
/// making the tree overlaps placing the samples, and cutting it overlaps
/// summing them. A function of the sums the tree lacks is added to it,
/// after those it has.
pub(super) fn tree_and_sums(read: Unplaced, prune: f64) -> Result<Made, Error> {
    let stacks = read.stacks().clone();
    // The counts per stack and the threshold, handed over once placed
    // (dropped unsent where placing fails).
    let (hand, take) = std::sync::mpsc::sync_channel::<(Vec<u64>, u64)>(1);
    let (made, placed) = perfq_ids::beside(
        || {
            let tree = CallTree::of(stacks);
            let (per_stack, threshold) = take.recv().ok()?;
            let pruned = Pruned::new(&tree, &per_stack, threshold);
            Some((tree, pruned))
        },
        move || -> Result<_, Error> {
            let counted = read.place()?;
            // Nodes and functions with fewer samples than this are left out.
            let threshold = ((prune * counted.all as f64).ceil() as u64).max(1);
            let _ = hand.send((Pruned::samples_per_stack(&counted), threshold));
            let summed = function_sums::of_counts_by_id(&counted, threshold);
            Ok((counted, summed))
        },
    );
    let (counted, summed) = placed?;
    let Some((mut tree, pruned)) = made else {
        return Err(Error::Query(perfq_query::Error::Shape(
            "the call tree's thread was not handed the samples' counts".into(),
        )));
    };
    let (sums, below) = on_tree(summed, &mut tree);
    Ok(Made {
        counted,
        tree,
        pruned,
        sums,
        below,
    })
}

/// `summed` by the tree's function ids, and how many functions were left
/// out.
fn on_tree(summed: function_sums::IdSums, tree: &mut CallTree) -> (Sums, u64) {
    let function_sums::IdSums { rows, below } = summed;
    let mut sums = Sums::with_capacity(rows.len());
    for r in &rows {
        let sum = [
            r.self_samples,
            r.total_samples,
            r.self_period,
            r.total_period,
        ];
        sums.push(((r.bucket, tree.tree_function(r.function)), sum));
    }
    (sums, below)
}

/// The shown functions' sums as the page reads them: columns, fields in
/// the order a JSON object's keys are written (sorted).
#[derive(Serialize)]
pub(super) struct SumColumns {
    bucket: Vec<u64>,
    r#fn: Vec<usize>,
    #[serde(rename = "self")]
    own: Vec<u64>,
    self_period: Vec<u64>,
    total: Vec<u64>,
    total_period: Vec<u64>,
}

/// The functions the page lists.
pub(super) struct Shown {
    /// (symbol, DSO), by the page's id.
    pub(super) functions: Vec<(String, String)>,
    /// Each tree function's page id (`usize::MAX`: not shown).
    renumber: Vec<usize>,
    /// Functions with samples left out.
    pub(super) dropped: usize,
}

impl Shown {
    /// The functions of the kept nodes, in node order, then the others
    /// with sums (those with enough total samples), in tree order;
    /// `below` functions with samples were left out.
    pub(super) fn choose(tree: &CallTree, pruned: &Pruned, sums: &Sums, below: u64) -> Self {
        let mut summed = vec![false; tree.functions()];
        for ((_, f), _) in sums {
            summed[*f as usize] = true;
        }
        let mut shown = Shown {
            functions: Vec::new(),
            renumber: vec![usize::MAX; tree.functions()],
            dropped: below as usize,
        };
        for &f in pruned.function.iter().skip(1) {
            shown.show(tree, f);
        }
        for (f, &has) in (0..).zip(&summed) {
            if has {
                shown.show(tree, f);
            }
        }
        shown
    }

    fn show(&mut self, tree: &CallTree, f: u32) {
        let at = &mut self.renumber[f as usize];
        if *at == usize::MAX {
            *at = self.functions.len();
            self.functions.push(tree.names(f));
        }
    }

    /// The kept nodes' functions as page ids (-1: the root).
    pub(super) fn nodes(&self, pruned: &Pruned) -> Vec<i64> {
        let id = |f: u32| match self.renumber.get(f as usize) {
            Some(&n) if n != usize::MAX => n as i64,
            _ => -1,
        };
        pruned.function.iter().map(|&f| id(f)).collect()
    }

    /// The shown functions' sums, as the page reads them: columns, by
    /// interval and then function.
    pub(super) fn sums(&self, sums: Sums) -> SumColumns {
        let mut sums: Vec<_> = sums
            .into_iter()
            .filter(|((_, f), _)| self.renumber[*f as usize] != usize::MAX)
            .map(|((b, f), v)| ((b, self.renumber[f as usize]), v))
            .collect();
        sums.sort_unstable();
        SumColumns {
            bucket: sums.iter().map(|c| c.0 .0).collect(),
            r#fn: sums.iter().map(|c| c.0 .1).collect(),
            own: sums.iter().map(|c| c.1[0]).collect(),
            self_period: sums.iter().map(|c| c.1[2]).collect(),
            total: sums.iter().map(|c| c.1[1]).collect(),
            total_period: sums.iter().map(|c| c.1[3]).collect(),
        }
    }

    /// Each shown function's page id, by (symbol, DSO).
    pub(super) fn ids(&self) -> HashMap<(String, String), usize> {
        self.functions
            .iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), i))
            .collect()
    }
}
