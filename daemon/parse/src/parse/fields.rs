//! Children by field name without tree-sitter's name lookup on every call.
//!
//! `Node::child_by_field_name` resolves the name to a field id each time by scanning the
//! grammar's field names with `strncmp` (`ts_language_field_id_for_name`): 1.6 % of all samples
//! when parsing go-zero, and more for grammars with hundreds of fields. The parsers ask for a
//! few dozen names, always `'static` literals, so each (grammar, literal) pair is resolved once
//! per thread and remembered.

use std::cell::RefCell;
use std::collections::HashMap;
use std::num::NonZeroU16;

use tree_sitter::{Language, Node, TreeCursor};

/// The field ids one grammar has been asked for: (address and length of the literal) → the
/// id, if the grammar has such a field.
struct GrammarFields {
    /// Compared by its pointer (`Language`'s equality), never dereferenced here.
    language: Language,
    ids: HashMap<(usize, usize), Option<NonZeroU16>>,
}

thread_local! {
    /// One entry per grammar this thread has parsed with (at most one per language).
    static FIELD_IDS: RefCell<Vec<GrammarFields>> = const { RefCell::new(Vec::new()) };
}

fn field_id(language: &Language, name: &'static str) -> Option<NonZeroU16> {
    let key = (name.as_ptr() as usize, name.len());
    FIELD_IDS.with(|cell| {
        let mut grammars = cell.borrow_mut();
        let at = match grammars.iter().position(|g| g.language == *language) {
            Some(at) => at,
            None => {
                grammars.push(GrammarFields {
                    language: language.clone(),
                    ids: HashMap::new(),
                });
                grammars.len() - 1
            }
        };
        *grammars[at]
            .ids
            .entry(key)
            .or_insert_with(|| language.field_id_for_name(name))
    })
}

/// Field access on nodes by a `'static` field name, with the id looked up once.
pub trait Fields<'tree> {
    /// The child in field `name` (as `child_by_field_name`).
    fn field(&self, name: &'static str) -> Option<Node<'tree>>;
    /// Every child in field `name` (as `children_by_field_name`).
    fn fields<'cursor>(
        &self,
        name: &'static str,
        cursor: &'cursor mut TreeCursor<'tree>,
    ) -> impl Iterator<Item = Node<'tree>> + 'cursor
    where
        'tree: 'cursor;
}

impl<'tree> Fields<'tree> for Node<'tree> {
    fn field(&self, name: &'static str) -> Option<Node<'tree>> {
        let id = field_id(&self.language(), name)?;
        self.child_by_field_id(id.get())
    }

    fn fields<'cursor>(
        &self,
        name: &'static str,
        cursor: &'cursor mut TreeCursor<'tree>,
    ) -> impl Iterator<Item = Node<'tree>> + 'cursor
    where
        'tree: 'cursor,
    {
        field_id(&self.language(), name)
            .map(|id| self.children_by_field_id(id, cursor))
            .into_iter()
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::Fields;

    fn parse(lang: tree_sitter::Language, src: &str) -> tree_sitter::Tree {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&lang).unwrap();
        parser.parse(src, None).unwrap()
    }

    #[test]
    fn the_same_name_resolves_per_grammar() {
        // "name" has a different id in each grammar; the cache must not hand one grammar's id
        // to another.
        let py = parse(
            tree_sitter_python::LANGUAGE.into(),
            "def f(x):\n    return x\n",
        );
        let go = parse(tree_sitter_go::LANGUAGE.into(), "package p\nfunc g() {}\n");
        for _ in 0..2 {
            let f = py.root_node().child(0).unwrap();
            assert_eq!(f.field("name").map(|n| n.kind()), Some("identifier"));
            assert_eq!(
                f.field("name"),
                f.child_by_field_name("name"),
                "python def name"
            );
            let g = go.root_node().named_child(1).unwrap();
            assert_eq!(
                g.field("name"),
                g.child_by_field_name("name"),
                "go func name"
            );
            assert_eq!(g.field("name").map(|n| n.kind()), Some("identifier"));
            assert_eq!(g.field("no_such_field"), None);
        }
    }

    #[test]
    fn every_child_of_a_field() {
        let src = "package p\nvar a, b, c int\n";
        let tree = parse(tree_sitter_go::LANGUAGE.into(), src);
        let spec = tree
            .root_node()
            .named_child(1)
            .and_then(|d| d.named_child(0))
            .unwrap();
        let mut cursor = spec.walk();
        let names: Vec<&str> = spec
            .fields("name", &mut cursor)
            .map(|n| &src[n.byte_range()])
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
        let mut cursor = spec.walk();
        assert_eq!(spec.fields("no_such_field", &mut cursor).count(), 0);
    }
}
