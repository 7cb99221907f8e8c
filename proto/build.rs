fn main() -> Result<(), Box<dyn std::error::Error>> {
    // protoc from crates.io: a new machine needs no system protoc.
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // SAFETY: the build script is single-threaded at this point.
    unsafe { std::env::set_var("PROTOC", protoc) };
    println!("cargo:rerun-if-changed=fittok.proto");
    tonic_prost_build::configure().compile_protos(&["fittok.proto"], &["."])?;
    Ok(())
}
