//! How `suggest` walks the space: every point when the space fits the budget; otherwise a grid,
//! then refinement around the front.
//!
//! - **Grid**: every other rung of `threshold`, `window` and `timeout` (the options that decide
//!   when the circuit opens), every other option at the current value.
//! - **Refinement**: each point on the front (in the front's order) has its neighbours tried:
//!   every knob moved one rung either way. New points on the front have theirs tried in turn.
//!   When a round brings nothing new to the front, the steps widen (two rungs, then three) while
//!   the budget lasts.
//!
//! Everything is in a fixed order, and points are told apart by their spelling, so the same
//! trace and the same request give the same front.

use std::collections::HashSet;

use super::knobs::{Knob, Ladders, Point};

/// The points to try next, given those tried and the front among them; an empty batch ends
/// the search.
pub(super) struct Walk {
    /// The knobs the search may move.
    free: Vec<Knob>,
    /// Points handed out, whether they could be built or not.
    seen: HashSet<Point>,
    /// Front points whose neighbours at `step` were handed out.
    expanded: HashSet<(Point, usize)>,
    step: usize,
    /// Whether every point of the space was handed out at once.
    pub exhaustive: bool,
}

impl Walk {
    /// The first batch: the whole space if it has at most `budget` points, the grid otherwise.
    pub(super) fn start(ladders: &Ladders, free: Vec<Knob>, budget: usize) -> (Walk, Vec<Point>) {
        let size = free
            .iter()
            .try_fold(1usize, |size, &knob| size.checked_mul(ladders.len(knob)));
        let exhaustive = size.is_some_and(|size| size <= budget);
        let stride = |knob: Knob| {
            let coarse = matches!(knob, Knob::Threshold | Knob::Window | Knob::Timeout);
            match (exhaustive, coarse) {
                (true, _) => Some(1),
                (false, true) => Some(2),
                (false, false) => None,
            }
        };
        let mut points = vec![ladders.current()];
        for &knob in &free {
            let Some(stride) = stride(knob) else { continue };
            points = points
                .into_iter()
                .flat_map(|point| {
                    (0..ladders.len(knob)).step_by(stride).map(move |at| {
                        let mut moved = point;
                        moved.0[knob as usize] = at;
                        moved
                    })
                })
                .collect();
        }
        let mut walk = Walk {
            free,
            seen: HashSet::new(),
            expanded: HashSet::new(),
            step: 1,
            exhaustive,
        };
        let points = walk.unseen(points);
        (walk, points)
    }

    /// The next batch: the neighbours of the front's points not yet tried, widening the step
    /// when the front brought none.
    pub(super) fn next(&mut self, ladders: &Ladders, front: &[Point]) -> Vec<Point> {
        if self.exhaustive {
            return Vec::new();
        }
        let widest = Knob::ALL.iter().map(|&k| ladders.len(k)).max().unwrap_or(1);
        while self.step < widest {
            let mut batch = Vec::new();
            for &point in front {
                if !self.expanded.insert((point, self.step)) {
                    continue;
                }
                for &knob in &self.free {
                    for steps in [-(self.step as isize), self.step as isize] {
                        batch.extend(ladders.moved(point, knob, steps));
                    }
                }
            }
            let batch = self.unseen(batch);
            if !batch.is_empty() {
                return batch;
            }
            self.step += 1;
        }
        Vec::new()
    }

    /// A round brought new points to the front: their neighbours come first, one rung away.
    pub(super) fn front_moved(&mut self) {
        self.step = 1;
    }

    fn unseen(&mut self, points: Vec<Point>) -> Vec<Point> {
        points
            .into_iter()
            .filter(|point| self.seen.insert(*point))
            .collect()
    }
}

/// The knobs free to move: all but those kept.
pub(super) fn free(keep: &[Knob]) -> Vec<Knob> {
    Knob::ALL
        .into_iter()
        .filter(|knob| !keep.contains(knob))
        .collect()
}
