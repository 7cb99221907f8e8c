fn main() {
    fittok_util::source_id::emit("FITTOK_SOURCE_ID", &["src", "Cargo.toml", "build.rs"]);
}
