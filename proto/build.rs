fn main() -> Result<(), Box<dyn std::error::Error>> {
    // protoc from crates.io: a new machine needs no system protoc.
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // SAFETY: the build script is single-threaded at this point.
    unsafe { std::env::set_var("PROTOC", protoc) };
    println!("cargo:rerun-if-changed=fittok.proto");
    // Status replies print as JSON (`fittok status --json`) straight from the message, so the
    // JSON never lists fields by hand.
    tonic_prost_build::configure()
        .type_attribute("fittok.v1.StatusReply", "#[derive(serde::Serialize)]")
        .type_attribute("fittok.v1.RepoStatus", "#[derive(serde::Serialize)]")
        .type_attribute("fittok.v1.Setting", "#[derive(serde::Serialize)]")
        .type_attribute("fittok.v1.MemoryPart", "#[derive(serde::Serialize)]")
        .type_attribute("fittok.v1.GrammarStatus", "#[derive(serde::Serialize)]")
        .compile_protos(&["fittok.proto"], &["."])?;
    Ok(())
}
