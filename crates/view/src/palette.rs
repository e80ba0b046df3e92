//! The colours of the top-down level-1 categories, one definition for
//! every picture perfq draws: the HTML page's bars, time line and flame
//! graph, and `perfq flamegraph --color topdown`'s SVG.
//!
//! Okabe and Ito's colour-blind-safe palette. Of its colours these four
//! stay furthest apart under protan and deutan vision (any two can meet in
//! a flame graph), and dark text stays legible on each; green for the
//! useful work, vermillion for the wasted, as users know them.

/// Each level-1 node's colour (red, green, blue), by node name.
pub const CATEGORIES: &[(&str, (u8, u8, u8))] = &[
    ("retiring", (0x00, 0x9E, 0x73)),        // bluish green
    ("bad_speculation", (0xD5, 0x5E, 0x00)), // vermillion
    ("frontend_bound", (0x56, 0xB4, 0xE9)),  // sky blue
    ("backend_bound", (0xF0, 0xE4, 0x42)),   // yellow
    ("smt_contention", (0xCC, 0x79, 0xA7)),  // reddish purple (AMD's fifth)
];

/// The colour of frames and rows without top-down numbers.
pub const NO_TOPDOWN: (u8, u8, u8) = (0xA0, 0xA0, 0xA0);

/// A level-1 node's colour, if it is one.
pub fn category(node: &str) -> Option<(u8, u8, u8)> {
    CATEGORIES.iter().find(|c| c.0 == node).map(|c| c.1)
}
