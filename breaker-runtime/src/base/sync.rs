//! The atomics and the lock of the concurrent core: std's (and portable-atomic's 128-bit
//! atomic), or loom's when the core is model-checked with `RUSTFLAGS="--cfg breaker_loom"`.

#[cfg(not(breaker_loom))]
pub(crate) use portable_atomic::AtomicU128;
#[cfg(not(breaker_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
#[cfg(not(breaker_loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

#[cfg(breaker_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
#[cfg(breaker_loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};

/// loom has no 128-bit atomic; a loom mutex gives the model the same atomicity.
#[cfg(breaker_loom)]
pub(crate) struct AtomicU128(loom::sync::Mutex<u128>);

#[cfg(breaker_loom)]
impl AtomicU128 {
    pub(crate) fn new(value: u128) -> Self {
        AtomicU128(loom::sync::Mutex::new(value))
    }

    pub(crate) fn load(&self, _: Ordering) -> u128 {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn swap(&self, new: u128, _: Ordering) -> u128 {
        let mut value = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        std::mem::replace(&mut *value, new)
    }

    pub(crate) fn compare_exchange_weak(
        &self,
        current: u128,
        new: u128,
        _: Ordering,
        _: Ordering,
    ) -> Result<u128, u128> {
        let mut value = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *value == current {
            *value = new;
            Ok(current)
        } else {
            Err(*value)
        }
    }
}
