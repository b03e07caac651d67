//! The explored graph the liveness checker decides `eventually` rows on: every reachable state
//! once, as its fingerprint, with its edges in action order and their fairness classes, stored
//! lean (packed small integers, arrays grown by an eighth). The compact engine builds it while it
//! searches; the liveness checker builds its own when it explores alone.

use std::mem::size_of;
use std::ops::Range;

/// No node, edge or position.
pub(crate) const NO: u32 = u32::MAX;

/// Edges a graph may hold: a product node's parent link keeps an edge index in 31 bits.
pub(crate) const MAX_EDGES: usize = 1 << 31;

/// The explored graph: every reachable state once, by id (breadth-first insertion order, so no
/// hash shows in the output), as its 64-bit fingerprint, with its outgoing edges in action
/// order. The states themselves are not kept: a lasso is rebuilt by taking its actions again
/// from the initial state, finding each edge's action as the edge's place among the state's
/// successors inside the boundary.
pub struct Graph<S> {
    /// The initial state, where a lasso's actions are taken again from.
    pub(crate) init: Option<S>,
    /// Each state's fingerprint, by id (filled in when the exploration ends).
    pub(crate) prints: Vec<u64>,
    /// Per state, bit `2r`: row `r`'s goal holds there; bit `2r + 1`: its trigger does.
    pub(crate) marks: Small,
    /// Edges of state `i` are `first[i]..first[i + 1]` (one more entry than expanded states).
    pub(crate) first: Vec<u32>,
    /// Each edge's target state.
    pub(crate) targets: Vec<u32>,
    /// Each edge's fairness classes, as an index into `class_sets`: two edges a byte (the even
    /// edge in the low half) while the graph has at most 16 class sets, one a byte after.
    class_of: Vec<u8>,
    /// Whether `class_of` holds two edges a byte.
    narrow: bool,
    /// The distinct sets of fairness classes of the edges (at most 256).
    class_sets: Vec<u32>,
    /// Per state, the fairness classes with an enabled action there.
    pub(crate) enabled: Small,
}

impl<S> Default for Graph<S> {
    fn default() -> Graph<S> {
        Graph {
            init: None,
            prints: Vec::new(),
            marks: Small::default(),
            first: vec![0],
            targets: Vec::new(),
            class_of: Vec::new(),
            narrow: true,
            class_sets: Vec::new(),
            enabled: Small::default(),
        }
    }
}

impl<S> Graph<S> {
    /// Bytes counted per state while exploring: its edge offset, enabled classes and marks (a
    /// byte each for the last two while their values fit in one, [`Small`]); the fingerprint
    /// by id, 8 more, is added once the exploration ends.
    pub(crate) fn state_bytes(&self) -> usize {
        size_of::<u32>() + self.enabled.width() + self.marks.width()
    }
    /// Bytes counted per edge at most: its target and its class set's index (half a byte while
    /// the graph has at most 16 class sets, [`Graph::edge_bytes`]).
    pub(crate) const EDGE_BYTES: usize = size_of::<u32>() + size_of::<u8>();

    /// States stored (marked).
    pub(crate) fn len(&self) -> usize {
        self.marks.len()
    }

    /// Edges stored.
    pub(crate) fn edges(&self) -> usize {
        self.targets.len()
    }

    /// Edges stored, the bytes a stored state takes while exploring, and the bytes the edges
    /// take, as the memory budget counts them.
    pub(crate) fn counted(&self) -> (usize, usize, usize) {
        (self.edges(), self.state_bytes(), self.edge_bytes())
    }

    /// The bytes the edges take: their targets and their class sets' indices.
    pub(crate) fn edge_bytes(&self) -> usize {
        self.targets.len() * size_of::<u32>() + self.class_of.len()
    }

    /// The edge indices of `state`.
    pub(crate) fn out(&self, state: usize) -> Range<usize> {
        self.first[state] as usize..self.first[state + 1] as usize
    }

    pub(crate) fn is_terminal(&self, state: usize) -> bool {
        self.first[state] == self.first[state + 1]
    }

    /// The fairness classes of edge `edge`.
    pub(crate) fn classes(&self, edge: usize) -> u32 {
        self.class_sets[self.set_of(edge)]
    }

    /// The index of edge `edge`'s class set.
    pub(crate) fn set_of(&self, edge: usize) -> usize {
        usize::from(if self.narrow {
            self.class_of[edge / 2] >> (edge % 2 * 4) & 0xf
        } else {
            self.class_of[edge]
        })
    }

    /// Adds an edge to `target`, of an action in `classes`, to the state being expanded.
    pub(crate) fn push_edge(&mut self, target: u32, classes: u32) {
        let edge = self.targets.len();
        let last = edge.checked_sub(1).map_or(0, |e| self.set_of(e));
        let set = match self.class_sets.get(last) {
            Some(&same) if same == classes => last,
            _ => self.class_set(classes),
        };
        if self.narrow && set >= 16 {
            // A 17th class set: one edge a byte from now on.
            self.class_of = (0..edge).map(|e| self.set_of(e) as u8).collect();
            self.narrow = false;
        }
        push_lean(&mut self.targets, target);
        if self.narrow && edge % 2 == 1 {
            *self.class_of.last_mut().expect("the even edge's byte") |= (set as u8) << 4;
        } else {
            push_lean(&mut self.class_of, set as u8);
        }
    }

    /// The index of `classes` among the graph's class sets, added if new.
    pub(crate) fn class_set(&mut self, classes: u32) -> usize {
        match self.class_sets.iter().position(|&c| c == classes) {
            Some(set) => set,
            None => {
                assert!(
                    self.class_sets.len() < 256,
                    "at most 256 distinct sets of fairness classes"
                );
                self.class_sets.push(classes);
                self.class_sets.len() - 1
            }
        }
    }

    /// Ends the expansion of the next state: its edges are those pushed since the last call.
    pub(crate) fn end_state(&mut self, enabled: u32) {
        self.enabled.push(enabled);
        push_lean(&mut self.first, self.targets.len() as u32);
    }

    /// The state whose edges include `edge`.
    pub(crate) fn source(&self, edge: usize) -> usize {
        self.first.partition_point(|&f| f as usize <= edge) - 1
    }

    /// The bytes [`check_bounded`] counts for the finished graph, fingerprints stored by id.
    pub(crate) fn bytes(&self) -> u64 {
        (self.len() * (self.state_bytes() + size_of::<u64>()) + self.edge_bytes()) as u64
    }
}

/// Per-state values of up to 32 bits (a state's marks, its enabled fairness classes), a byte
/// each while every value fits in one, then four: most systems have few rows and few classes.
#[derive(Default)]
pub(crate) struct Small {
    bytes: Vec<u8>,
    words: Vec<u32>,
    wide: bool,
}

impl Small {
    /// Appends `value`, widening every value stored to four bytes the first time one does not
    /// fit in a byte.
    pub(crate) fn push(&mut self, value: u32) {
        if !self.wide && value > u32::from(u8::MAX) {
            self.words = self.bytes.iter().map(|&b| u32::from(b)).collect();
            self.bytes = Vec::new();
            self.wide = true;
        }
        if self.wide {
            push_lean(&mut self.words, value);
        } else {
            push_lean(&mut self.bytes, value as u8);
        }
    }

    pub(crate) fn get(&self, index: usize) -> u32 {
        if self.wide {
            self.words[index]
        } else {
            self.bytes[index].into()
        }
    }

    pub(crate) fn len(&self) -> usize {
        if self.wide {
            self.words.len()
        } else {
            self.bytes.len()
        }
    }

    /// Bytes each value takes.
    pub(crate) fn width(&self) -> usize {
        if self.wide {
            size_of::<u32>()
        } else {
            size_of::<u8>()
        }
    }
}

/// Pushes `item`, growing `items` when it is full by an eighth once it holds a million or more
/// (not doubling): a large exploration's arrays then hold at most an eighth more than they use.
/// Growing a large array this often costs little: the allocator moves its pages (`mremap` on
/// Linux) rather than copying them.
pub(crate) fn push_lean<T>(items: &mut Vec<T>, item: T) {
    let len = items.len();
    if len == items.capacity() {
        items.reserve_exact(if len < 1 << 20 { len.max(256) } else { len / 8 });
    }
    items.push(item);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small values read back as pushed, a byte each until one needs more, then four each.
    #[test]
    fn small_values_widen_once() {
        let mut small = Small::default();
        let values = [0, 7, 255, 1, 256, 3, u32::MAX, 9];
        for (i, &value) in values.iter().enumerate() {
            small.push(value);
            assert_eq!(small.width(), if i < 4 { 1 } else { 4 });
            assert_eq!(small.len(), i + 1);
        }
        for (i, &value) in values.iter().enumerate() {
            assert_eq!(small.get(i), value);
        }
    }

    /// Edges' class sets read back as pushed, two a byte up to 16 sets and one a byte after the
    /// 17th, and the bytes counted are the bytes held.
    #[test]
    fn class_sets_read_back_packed_then_wide() {
        let mut graph: Graph<()> = Graph::default();
        let mut pushed = Vec::new();
        for edge in 0..101u32 {
            // Runs of one set, so that the last edge's set is found without a search too.
            let classes = if edge < 60 { edge / 4 } else { edge / 3 };
            graph.push_edge(edge, classes);
            pushed.push(classes);
            if edge == 58 {
                assert!(graph.narrow);
                assert_eq!(graph.edge_bytes(), 59 * 4 + 30);
            }
        }
        assert!(!graph.narrow);
        assert_eq!(graph.edge_bytes(), 101 * 5);
        for (edge, &classes) in pushed.iter().enumerate() {
            assert_eq!(graph.classes(edge), classes, "edge {edge}");
        }
    }
}
