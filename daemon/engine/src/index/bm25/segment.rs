//! One immutable run of documents: a term dictionary and postings in CSR form (one array of
//! document ids and one of term frequencies, sliced per term by offsets). Written once by
//! [`SegmentWriter`] (from texts) or [`Segment::from_postings`] (a merge), never changed after.

use std::collections::HashMap;

use crate::index::tokenize::for_each_token;
use fittok_util::hash::FnvBuild;

#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Segment {
    /// Term → its id in this segment.
    terms: HashMap<Box<str>, u32, FnvBuild>,
    /// Term id → the start of its postings in `docs`/`tfs`; one more entry than terms.
    offsets: Vec<u32>,
    /// Segment document ids, ascending within each term.
    docs: Vec<u32>,
    /// Term frequencies, aligned with `docs` (a document is at most 32 KiB of text, so a
    /// count never reaches `u16::MAX`; it saturates if it ever did).
    tfs: Vec<u16>,
    /// Tokens per segment document.
    doc_len: Vec<u32>,
}

impl Segment {
    /// Documents in this segment, live or not.
    pub fn doc_count(&self) -> usize {
        self.doc_len.len()
    }

    pub fn doc_len(&self, doc: u32) -> u32 {
        self.doc_len[doc as usize]
    }

    /// The postings of `term`: (segment doc, tf) pairs as two aligned slices.
    pub fn postings(&self, term: &str) -> Option<(&[u32], &[u16])> {
        let &t = self.terms.get(term)?;
        let (a, b) = (
            self.offsets[t as usize] as usize,
            self.offsets[t as usize + 1] as usize,
        );
        Some((&self.docs[a..b], &self.tfs[a..b]))
    }

    /// Every term with its postings.
    pub fn terms(&self) -> impl Iterator<Item = (&str, &[u32], &[u16])> {
        self.terms.iter().map(|(term, &t)| {
            let (a, b) = (
                self.offsets[t as usize] as usize,
                self.offsets[t as usize + 1] as usize,
            );
            (&**term, &self.docs[a..b], &self.tfs[a..b])
        })
    }

    pub fn heap_bytes(&self) -> usize {
        let slot = std::mem::size_of::<(Box<str>, u32)>() + 1;
        self.terms.keys().map(|t| t.len()).sum::<usize>()
            + self.terms.capacity() * slot
            + self.offsets.capacity() * 4
            + self.docs.capacity() * 4
            + self.tfs.capacity() * 2
            + self.doc_len.capacity() * 4
    }

    /// A segment from per-term postings (segment docs ascending) and document lengths.
    pub fn from_postings(
        postings: impl IntoIterator<Item = (Box<str>, Vec<(u32, u16)>)>,
        doc_len: Vec<u32>,
    ) -> Segment {
        let mut seg = Segment {
            doc_len,
            offsets: vec![0],
            ..Segment::default()
        };
        for (term, list) in postings {
            if list.is_empty() {
                continue;
            }
            let id = seg.offsets.len() as u32 - 1;
            seg.terms.insert(term, id);
            for (doc, tf) in list {
                seg.docs.push(doc);
                seg.tfs.push(tf);
            }
            seg.offsets.push(seg.docs.len() as u32);
        }
        seg.docs.shrink_to_fit();
        seg.tfs.shrink_to_fit();
        seg.offsets.shrink_to_fit();
        seg
    }
}

/// Tokenizes documents in order (the n-th added is segment document n) into a [`Segment`].
#[derive(Default)]
pub struct SegmentWriter {
    terms: HashMap<Box<str>, u32, FnvBuild>,
    postings: Vec<Vec<(u32, u16)>>,
    doc_len: Vec<u32>,
    /// The term ids seen in the current document, and each term's count in it (indexed by
    /// term id, zero between documents).
    seen: Vec<u32>,
    count: Vec<u32>,
}

impl SegmentWriter {
    pub fn add(&mut self, text: &str) -> u32 {
        let doc = self.doc_len.len() as u32;
        let mut len = 0;
        let SegmentWriter {
            terms,
            postings,
            seen,
            count,
            ..
        } = self;
        for_each_token(text, |t| {
            // Only a term never seen before allocates.
            let id = match terms.get(t) {
                Some(&id) => id,
                None => {
                    let id = postings.len() as u32;
                    terms.insert(t.into(), id);
                    postings.push(Vec::new());
                    count.push(0);
                    id
                }
            };
            if count[id as usize] == 0 {
                seen.push(id);
            }
            count[id as usize] += 1;
            len += 1;
        });
        for id in self.seen.drain(..) {
            let tf = std::mem::take(&mut self.count[id as usize]);
            self.postings[id as usize].push((doc, tf.min(u32::from(u16::MAX)) as u16));
        }
        self.doc_len.push(len);
        doc
    }

    pub fn finish(self) -> Segment {
        let SegmentWriter {
            terms,
            mut postings,
            doc_len,
            ..
        } = self;
        let mut by_id: Vec<(u32, Box<str>)> = terms.into_iter().map(|(t, id)| (id, t)).collect();
        by_id.sort_unstable_by_key(|(id, _)| *id);
        Segment::from_postings(
            by_id
                .into_iter()
                .map(|(id, t)| (t, std::mem::take(&mut postings[id as usize]))),
            doc_len,
        )
    }
}

/// Term counts of one text, as the writer would post it (for the document frequency of
/// documents that died).
pub fn distinct_terms(text: &str, mut each: impl FnMut(&str)) {
    let mut seen: std::collections::HashSet<&str, FnvBuild> = Default::default();
    let mut owned: Vec<String> = Vec::new();
    for_each_token(text, |t| owned.push(t.to_string()));
    for t in &owned {
        if seen.insert(t.as_str()) {
            each(t);
        }
    }
}
