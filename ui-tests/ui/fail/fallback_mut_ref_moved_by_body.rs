use std::io::Write;

use breaker_runtime::circuit_breaker;

fn write_all<W: Write>(mut out: W, bytes: &[u8]) -> std::io::Result<()> {
    out.write_all(bytes)
}

#[circuit_breaker(fallback = skip)]
async fn flush(out: &mut Vec<u8>) -> std::io::Result<()> {
    write_all(out, b"data")
}

async fn skip(_out: &mut Vec<u8>) -> std::io::Result<()> {
    Ok(())
}

fn main() {
    let mut out = Vec::new();
    let _ = flush(&mut out);
}
