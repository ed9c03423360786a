//! The breaker where other crates meet it, each behind its feature: tower and tonic middleware,
//! `IsFailure` for http, reqwest and gRPC answers, the `metrics` facade, an OpenTelemetry meter,
//! serde, the operator's HTTP endpoint, and a configuration file applied to live breakers.

#[cfg(feature = "config-file")]
pub mod config_file;
#[cfg(feature = "http-endpoint")]
pub mod endpoint;
#[cfg(any(feature = "tonic", all(feature = "tower", feature = "http")))]
pub(crate) mod grpc;
#[cfg(feature = "http")]
pub(crate) mod http;
#[cfg(feature = "metrics")]
pub mod metrics;
#[cfg(feature = "opentelemetry")]
pub mod opentelemetry;
#[cfg(feature = "serde")]
pub(crate) mod saved_json;
#[cfg(feature = "serde")]
pub(crate) mod serialize;
#[cfg(feature = "tonic")]
pub mod tonic;
#[cfg(feature = "tower")]
pub mod tower;
