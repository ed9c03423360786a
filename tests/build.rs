//! Generates the gRPC test service from `proto/orders.proto`, with the protoc that the
//! protoc-bin-vendored crate ships, so the tests need nothing installed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/orders.proto");
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    tonic_prost_build::configure().compile_with_config(
        config,
        &["proto/orders.proto"],
        &["proto"],
    )?;
    Ok(())
}
