/// Per grammar, in [`Grammar`](crate::Grammar)'s order: its crate, the directory of its
/// `parser.c` inside the crate, and the function it exports. `build.rs` `include!`s this file,
/// so the build and the library name the grammars once.
pub const GRAMMARS: [(&str, &str, &str); 8] = [
    ("tree-sitter-c", "src", "tree_sitter_c"),
    ("tree-sitter-cpp", "src", "tree_sitter_cpp"),
    ("tree-sitter-c-sharp", "src", "tree_sitter_c_sharp"),
    ("tree-sitter-ruby", "src", "tree_sitter_ruby"),
    ("tree-sitter-php", "php/src", "tree_sitter_php"),
    ("tree-sitter-kotlin-ng", "src", "tree_sitter_kotlin"),
    ("tree-sitter-scala", "src", "tree_sitter_scala"),
    ("tree-sitter-swift", "src", "tree_sitter_swift"),
];
