#!/usr/bin/env python3
"""Writes tests/fixtures/minilm_reference.json: all-MiniLM-L6-v2 vectors computed by
sentence-transformers (the reference implementation) for a handful of texts, so the Rust
embedder can be checked against them (cosine >= 0.9999).

    python3 -m venv /tmp/st && /tmp/st/bin/pip install sentence-transformers
    /tmp/st/bin/python scripts/reference-vectors.py .model/all-MiniLM-L6-v2
"""
import json
import sys
from pathlib import Path

from sentence_transformers import SentenceTransformer

TEXTS = [
    "How do I parse a configuration file?",
    "def load_settings(path):\n    with open(path) as fh:\n        return json.load(fh)",
    "impl fmt::Display for Point { fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, \"({}, {})\", self.x, self.y) } }",
    "export const handler = async (req, res) => { res.send(await db.find(req.params.id)); };",
    "public final class Greeter { public String greet(String name) { return \"Hello \" + name; } }",
    "café naïve 東京 データベース 🚀 emoji",
    "",
    " ".join(["the retry loop backs off exponentially before giving up on the request"] * 40),
]

model_dir = Path(sys.argv[1] if len(sys.argv) > 1 else ".model/all-MiniLM-L6-v2")
model = SentenceTransformer(str(model_dir), device="cpu")
model.max_seq_length = 256
vectors = model.encode(TEXTS, normalize_embeddings=True)
out = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "minilm_reference.json"
out.write_text(json.dumps(
    {"model": "sentence-transformers/all-MiniLM-L6-v2", "max_seq_length": 256,
     "texts": TEXTS, "vectors": [[round(float(x), 7) for x in v] for v in vectors]},
))
print(f"wrote {out}")
