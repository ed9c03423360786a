#![deny(warnings)]

use std::borrow::Cow;
use std::fmt::Display;
use std::io;

use breaker_runtime::{BreakerError, IsFailure, circuit_breaker};

#[derive(Debug, IsFailure)]
#[allow(dead_code)]
enum AppError {
    Down,
    #[breaker(transparent)]
    Breaker(BreakerError),
}

impl From<BreakerError> for AppError {
    fn from(error: BreakerError) -> Self {
        AppError::Breaker(error)
    }
}

type Result<T, E = AppError> = std::result::Result<T, E>;

#[circuit_breaker]
async fn through_alias() -> Result<u32> {
    Ok(1)
}

#[circuit_breaker(fallback = read_cached)]
async fn read(path: &str) -> io::Result<String> {
    Ok(path.to_owned())
}

async fn read_cached(_path: &str) -> io::Result<String> {
    Ok(String::new())
}

#[circuit_breaker]
async fn borrowed(text: &str) -> Result<Cow<'_, str>> {
    Ok(Cow::Borrowed(text))
}

#[circuit_breaker]
async fn fully_qualified() -> ::core::result::Result<(), ::breaker_runtime::BreakerError> {
    Ok(())
}

#[circuit_breaker]
async fn opaque_ok() -> Result<impl Display> {
    Ok(1)
}

#[circuit_breaker(fallback = opaque_later)]
async fn opaque_with_fallback() -> io::Result<Box<dyn Display + Send>> {
    Ok(Box::new(1))
}

async fn opaque_later() -> io::Result<Box<dyn Display + Send>> {
    Ok(Box::new(0))
}

struct Session {
    id: u32,
}

impl Session {
    #[circuit_breaker]
    async fn open(id: u32) -> Result<Self> {
        Ok(Self { id })
    }

    #[circuit_breaker]
    async fn id(&self) -> Result<u32> {
        Ok(self.id)
    }
}

struct Labelled<T> {
    label: T,
}

impl<T: Display + Sync> Labelled<T> {
    #[circuit_breaker]
    async fn render(&self) -> Result<String> {
        Ok(self.label.to_string())
    }

    #[circuit_breaker(fallback = render_later)]
    async fn render_or_later(&self, suffix: &str) -> Result<String> {
        Ok(format!("{}{suffix}", self.label))
    }

    async fn render_later(&self, suffix: &str) -> Result<String> {
        Ok(suffix.to_owned())
    }
}

fn main() {
    let _ = through_alias();
    let _ = read("a");
    let _ = borrowed("a");
    let _ = fully_qualified();
    let _ = opaque_ok();
    let _ = opaque_with_fallback();
    let _ = Session::open(1);
    let _ = Session { id: 1 }.id();
    let labelled = Labelled { label: 1 };
    let _ = labelled.render();
    let _ = labelled.render_or_later("!");
}
