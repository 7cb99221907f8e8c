//! A file's references, stored compactly.
//!
//! A repository holds about ten references per definition (kafka: 1.5 million), and they stay
//! resident for incremental relinking. As structs of three boxed strings they were the largest
//! resident structure (kafka: 157 MB of "parsed files"). Here each distinct string of a file is
//! kept once in a string table and a reference is 24 bytes of ids; readers get a [`Reference`]
//! view of borrowed strings.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::RefKind;

/// No string / no scope.
const NONE: u32 = u32::MAX;

/// A use of a name, unresolved: the linker turns it into an edge (or counts it unresolved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reference<'a> {
    pub kind: RefKind,
    pub name: &'a str,
    /// What stood before the name: `self`, `this`, `pkg`, `Type`, `crate::a::b`, `obj`.
    pub receiver: Option<&'a str>,
    /// The receiver's type when the parser could tell it locally (`x = Foo()`, `r *Router`).
    pub receiver_type: Option<&'a str>,
    pub line: u32,
    /// Index of the innermost definition containing the reference.
    pub scope: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stored {
    kind: RefKind,
    name: u32,
    receiver: u32,
    receiver_type: u32,
    line: u32,
    scope: u32,
}

/// The references of one file, in the order the parser found them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct References {
    /// Every distinct string, concatenated.
    text: String,
    /// `ends[i]`: where string `i` ends in `text` (it starts where string `i - 1` ends).
    ends: Vec<u32>,
    items: Vec<Stored>,
}

impl References {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<Reference<'_>> {
        self.items.get(i).map(|s| self.view(s))
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter {
            refs: self,
            items: self.items.iter(),
        }
    }

    /// The references of the given kinds, in order; the others are skipped before their
    /// strings are looked up (the symbol tables read only the few that name a base).
    pub fn of_kinds<'a>(
        &'a self,
        kinds: &'a [RefKind],
    ) -> impl Iterator<Item = Reference<'a>> + 'a {
        self.items
            .iter()
            .filter(move |s| kinds.contains(&s.kind))
            .map(move |s| self.view(s))
    }

    /// Moves reference `i` to another scope (regions take the module-level references they
    /// hold).
    pub fn set_scope(&mut self, i: usize, scope: Option<u32>) {
        if let Some(s) = self.items.get_mut(i) {
            s.scope = scope.unwrap_or(NONE);
        }
    }

    /// Every distinct string the references use (names, receivers, receiver types), once.
    pub fn strings(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.ends.len() as u32).filter_map(|id| self.string(id))
    }

    /// The same strings concatenated: one substring search over it rules out a file whose
    /// references hold a word nowhere (most files, for any one word).
    pub fn concatenated(&self) -> &str {
        &self.text
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity()
            + self.ends.capacity() * size_of::<u32>()
            + self.items.capacity() * size_of::<Stored>()
    }

    fn string(&self, id: u32) -> Option<&str> {
        if id == NONE {
            return None;
        }
        let end = *self.ends.get(id as usize)? as usize;
        let start = match id {
            0 => 0,
            _ => self.ends[id as usize - 1] as usize,
        };
        self.text.get(start..end)
    }

    fn view(&self, s: &Stored) -> Reference<'_> {
        Reference {
            kind: s.kind,
            name: self.string(s.name).unwrap_or(""),
            receiver: self.string(s.receiver),
            receiver_type: self.string(s.receiver_type),
            line: s.line,
            scope: (s.scope != NONE).then_some(s.scope),
        }
    }
}

impl<'a> IntoIterator for &'a References {
    type Item = Reference<'a>;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The references of a file in order, as views.
pub struct Iter<'a> {
    refs: &'a References,
    items: std::slice::Iter<'a, Stored>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Reference<'a>;

    fn next(&mut self) -> Option<Reference<'a>> {
        self.items.next().map(|s| self.refs.view(s))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.items.size_hint()
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Fills a [`References`], each distinct string stored once.
#[derive(Default)]
pub struct ReferencesBuilder {
    refs: References,
    ids: HashMap<Box<str>, u32>,
}

impl ReferencesBuilder {
    pub fn push(&mut self, r: Reference<'_>) {
        let name = self.intern(r.name);
        let receiver = r.receiver.map_or(NONE, |s| self.intern(s));
        let receiver_type = r.receiver_type.map_or(NONE, |s| self.intern(s));
        self.refs.items.push(Stored {
            kind: r.kind,
            name,
            receiver,
            receiver_type,
            line: r.line,
            scope: r.scope.unwrap_or(NONE),
        });
    }

    pub fn finish(mut self) -> References {
        self.refs.text.shrink_to_fit();
        self.refs.ends.shrink_to_fit();
        self.refs.items.shrink_to_fit();
        self.refs
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.refs.ends.len() as u32;
        self.refs.text.push_str(s);
        self.refs.ends.push(self.refs.text.len() as u32);
        self.ids.insert(s.into(), id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference<'a>(
        name: &'a str,
        receiver: Option<&'a str>,
        receiver_type: Option<&'a str>,
        scope: Option<u32>,
    ) -> Reference<'a> {
        Reference {
            kind: RefKind::Call,
            name,
            receiver,
            receiver_type,
            line: 7,
            scope,
        }
    }

    #[test]
    fn references_read_back_as_pushed_with_each_string_stored_once() {
        let pushed = [
            reference("send", Some("client"), Some("Client"), Some(3)),
            reference("send", None, None, None),
            reference("Client", Some("client"), None, Some(0)),
            reference("", Some(""), None, Some(1)),
            reference("ünïcode", Some("Client"), Some("send"), None),
        ];
        let mut b = ReferencesBuilder::default();
        for r in pushed {
            b.push(r);
        }
        let mut refs = b.finish();
        assert_eq!(refs.iter().collect::<Vec<_>>(), pushed);
        assert_eq!(refs.text, "sendclientClientünïcode");
        assert_eq!(refs.concatenated(), refs.text);
        // Every string a reference reads, each once.
        let mut read: Vec<&str> = refs
            .iter()
            .flat_map(|r| [Some(r.name), r.receiver, r.receiver_type])
            .flatten()
            .collect();
        read.sort();
        read.dedup();
        let mut strings: Vec<&str> = refs.strings().collect();
        strings.sort();
        assert_eq!(strings, read);
        assert_eq!(refs.get(5), None);
        refs.set_scope(1, Some(9));
        refs.set_scope(0, None);
        assert_eq!(refs.get(1).map(|r| r.scope), Some(Some(9)));
        assert_eq!(refs.get(0).map(|r| r.scope), Some(None));
        let json = serde_json::to_string(&refs).expect("encodes");
        let back: References = serde_json::from_str(&json).expect("decodes");
        assert_eq!(back, refs);
    }

    #[test]
    fn references_of_some_kinds_are_those_in_order() {
        let base = |name| Reference {
            kind: RefKind::Inherits,
            ..reference(name, None, None, Some(0))
        };
        let mut b = ReferencesBuilder::default();
        for r in [
            reference("f", None, None, None),
            base("A"),
            reference("g", None, None, None),
            base("B"),
        ] {
            b.push(r);
        }
        let refs = b.finish();
        fn names<'a>(refs: &'a References, kinds: &'a [RefKind]) -> Vec<&'a str> {
            refs.of_kinds(kinds).map(|r| r.name).collect()
        }
        assert_eq!(
            names(&refs, &[RefKind::Inherits, RefKind::Implements]),
            vec!["A", "B"]
        );
        assert_eq!(names(&refs, &[RefKind::Call]), vec!["f", "g"]);
        assert!(names(&refs, &[]).is_empty());
    }

    #[test]
    fn a_damaged_table_reads_as_missing_strings_not_a_panic() {
        let refs = References {
            text: "ab".into(),
            ends: vec![1, 9],
            items: vec![Stored {
                kind: RefKind::Type,
                name: 1,
                receiver: 5,
                receiver_type: NONE,
                line: 1,
                scope: NONE,
            }],
        };
        let r = refs.get(0).expect("one reference");
        assert_eq!((r.name, r.receiver), ("", None));
    }
}
