// Only `emit` is used here; `parse_id` is for the crates reading the hash back.
#[allow(dead_code)]
#[path = "src/source_id.rs"]
mod source_id;

fn main() {
    source_id::emit("FITTOK_SOURCE_ID", &["src", "Cargo.toml", "build.rs"]);
}
