//! The configuration a live breaker judges by, which an operator may replace while calls run.
//!
//! Kept as the words of [`Config::words`], each an atomic. The hot path reads the one option it
//! needs (the slow-call limit, the timeout) with one relaxed load, the price of the plain field
//! it replaced. What reads several options at once (the rule that opens the circuit, a
//! snapshot) reads them as a sequence lock's reader does: the words between two readings of an
//! even sequence number, so that it never judges by half of one configuration and half of the
//! next. The sequence number lives with what the first reconfiguration allocates (a breaker
//! never reconfigured has no writer, and keeps its size); the only writer is
//! [`Breaker::reconfigure`](crate::Breaker::reconfigure), under the breaker's lock, and a reader
//! that meets it mid-write does not spin but waits for that lock, which the writer holds for a
//! few stores.

use std::time::Duration;

use crate::base::name::Name;
use crate::base::sync::{AtomicU64, Ordering, fence};
use crate::core::config::{
    Config, Record, WORD_BREAK, WORD_SLOW_CALL, WORD_TIMEOUT, WORD_WINDOW, WORDS, Window,
    WindowKind, window_kind_of, window_of,
};

pub(crate) struct LiveConfig {
    /// The breaker's name: a reconfiguration never changes it.
    name: Name,
    words: [AtomicU64; WORDS],
}

impl LiveConfig {
    pub(crate) fn new(config: Config) -> LiveConfig {
        let words = config.words().map(AtomicU64::new);
        LiveConfig {
            name: config.name().clone(),
            words,
        }
    }

    pub(crate) fn name(&self) -> &Name {
        &self.name
    }

    /// The words, if no write overlapped the reading: `sequence` reads the writers' sequence
    /// number (odd while one writes, advanced by two by each), and 0 while there is none.
    pub(crate) fn try_words(&self, sequence: impl Fn() -> u64) -> Option<[u64; WORDS]> {
        let before = sequence();
        if before & 1 == 1 {
            return None;
        }
        let words = self.words.each_ref().map(|w| w.load(Ordering::Relaxed));
        // The words' loads come before the second reading of the sequence: a write that began
        // meanwhile has moved it (or, for the first write, made the sequence readable).
        fence(Ordering::Acquire);
        (sequence() == before).then_some(words)
    }

    /// The words, read by a caller that holds the breaker's lock, so no write is under way.
    pub(crate) fn settled_words(&self) -> [u64; WORDS] {
        self.words.each_ref().map(|w| w.load(Ordering::Relaxed))
    }

    /// The configuration, read by a caller that holds the breaker's lock.
    pub(crate) fn settled(&self) -> Config {
        Config::from_words(self.name.clone(), self.settled_words())
    }

    /// Replaces the configuration, its name aside. The caller holds the breaker's lock, which
    /// makes it the only writer, and `sequence` is the writers' sequence number, readable by
    /// every reader before this writes.
    pub(crate) fn store(&self, config: &Config, sequence: &AtomicU64) {
        let before = sequence.load(Ordering::Relaxed);
        sequence.store(before + 1, Ordering::Relaxed);
        // The odd sequence is visible before any new word: a reader that loads a new word and
        // then the sequence sees it moved.
        fence(Ordering::Release);
        for (word, value) in self.words.iter().zip(config.words()) {
            word.store(value, Ordering::Relaxed);
        }
        sequence.store(before + 2, Ordering::Release);
    }

    #[inline]
    fn word(&self, index: usize) -> u64 {
        // Relaxed: one option alone is always a value some configuration gave it.
        self.words[index].load(Ordering::Relaxed)
    }

    /// `slow_call` in nanoseconds, 0 when off: what the hot path compares against.
    #[inline]
    pub(crate) fn slow_call_nanos(&self) -> u64 {
        self.word(WORD_SLOW_CALL)
    }

    /// The call's timeout, if any.
    #[inline]
    pub(crate) fn timeout(&self) -> Option<Duration> {
        match self.word(WORD_TIMEOUT) {
            0 => None,
            nanos => Some(Duration::from_nanos(nanos)),
        }
    }

    /// `break_duration` in nanoseconds.
    #[inline]
    pub(crate) fn break_nanos(&self) -> u64 {
        self.word(WORD_BREAK)
    }

    /// The window's shape.
    pub(crate) fn window(&self) -> Window {
        window_of(self.word(WORD_WINDOW))
    }

    /// Whether a time window slides or clears at each edge.
    pub(crate) fn window_kind(&self) -> WindowKind {
        window_kind_of(self.word(WORD_WINDOW))
    }

    /// What the flight recorder keeps (a live breaker's `record` is always resolved).
    pub(crate) fn record(&self) -> Record {
        self.settled().record().unwrap_or(Record::DEFAULT)
    }
}
