//! Fallbacks the runtime provides.
//!
//! | file | its job |
//! |---|---|
//! | `stale.rs` | the last good answer for the same arguments, no older than a bound |

pub(crate) mod stale;
