//! What several test binaries share.

#![allow(dead_code)]

pub mod arbitrary;
pub mod tasks;
