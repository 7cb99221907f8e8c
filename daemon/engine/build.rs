//! FITTOK_SOURCE_ID: a hash of the sources a snapshot's indexes come from (`snapshot.rs`
//! combines it with the graph's and the parser's), so a snapshot is only read by a build that
//! would have written the same one. Ranking, packing and rendering are left out: they read a
//! snapshot, they do not shape it.

fn main() {
    fittok_util::source_id::emit(
        "FITTOK_SOURCE_ID",
        &["src/index", "src/snapshot.rs", "Cargo.toml", "build.rs"],
    );
}
