//! The state machine: the packed state word, the configuration it runs by, the windows and
//! probe slots it judges with, the [`Breaker`](crate::Breaker) itself, and the call path
//! (permit, timeout, classify, record). It announces transitions and call events to whoever
//! subscribed; it calls nothing above it.

pub(crate) mod breaker;
pub(crate) mod call;
pub(crate) mod config;
pub(crate) mod events;
pub(crate) mod injection;
pub(crate) mod live_config;
pub(crate) mod opening;
pub(crate) mod probes;
pub(crate) mod saved;
pub(crate) mod state;
pub mod trace;
pub(crate) mod window;
