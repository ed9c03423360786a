//! The comparison with peer crates is being written; see hot_path.rs meanwhile.
fn main() {}
