//! Compile-fail tests for the attribute live in `ui/` and run from `tests/ui.rs`.
