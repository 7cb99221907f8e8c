//! A JSON-RPC 2.0 guard between stdin/stdout and the MCP server: every request that has an id
//! gets an answer, even one the server's framing would drop. Lines that are not JSON (or not
//! UTF-8) get a parse error (-32700); JSON that is not a valid request gets an invalid-request
//! error (-32600) carrying its id; a lone UTF-16 surrogate escape, which strict JSON parsers
//! reject, is replaced by U+FFFD so the request is served. Everything else passes through
//! untouched. Output lines from the server and from the guard never interleave.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// What to do with one input line.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand this line to the server.
    Pass(String),
    /// Answer with this line; the server never sees the input.
    Answer(String),
    /// Nothing to do (a blank line).
    Skip,
}

fn error(id: Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// Replaces `\uD800`–`\uDFFF` escapes that are not part of a surrogate pair by `\uFFFD`.
fn repair_lone_surrogates(line: &str) -> Option<String> {
    let b = line.as_bytes();
    let hex = |i: usize| -> Option<u32> {
        let s = line.get(i..i + 4)?;
        u32::from_str_radix(s, 16).ok()
    };
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    let mut changed = false;
    let mut last = 0;
    while i + 5 < b.len() {
        // An escape: a backslash preceded by an even number of backslashes.
        if b[i] == b'\\' && b[i + 1] == b'u' {
            let run = b[..i].iter().rev().take_while(|&&c| c == b'\\').count();
            if run % 2 == 0
                && let Some(u) = hex(i + 2)
            {
                let high = (0xD800..0xDC00).contains(&u);
                let low = (0xDC00..0xE000).contains(&u);
                let paired = high
                    && b.get(i + 6) == Some(&b'\\')
                    && b.get(i + 7) == Some(&b'u')
                    && hex(i + 8).is_some_and(|v| (0xDC00..0xE000).contains(&v));
                if paired {
                    i += 12;
                    continue;
                }
                if high || low {
                    out.push_str(&line[last..i]);
                    out.push_str("\\uFFFD");
                    i += 6;
                    last = i;
                    changed = true;
                    continue;
                }
            }
            i += 2;
            continue;
        }
        i += 1;
    }
    if !changed {
        return None;
    }
    out.push_str(&line[last..]);
    Some(out)
}

/// Judges one input line (without its line break).
pub fn judge(bytes: &[u8]) -> Verdict {
    let Ok(line) = std::str::from_utf8(bytes) else {
        return Verdict::Answer(error(
            Value::Null,
            -32700,
            "Parse error: the line is not valid UTF-8",
        ));
    };
    if line.trim().is_empty() {
        return Verdict::Skip;
    }
    let (line, value) = match serde_json::from_str::<Value>(line) {
        Ok(v) => (line.to_string(), v),
        Err(e) => match repair_lone_surrogates(line)
            .and_then(|r| serde_json::from_str::<Value>(&r).ok().map(|v| (r, v)))
        {
            Some(repaired) => repaired,
            None => {
                return Verdict::Answer(error(Value::Null, -32700, &format!("Parse error: {e}")));
            }
        },
    };
    let Value::Object(msg) = &value else {
        let what = if value.is_array() {
            "batches are not supported"
        } else {
            "a request is a JSON object"
        };
        return Verdict::Answer(error(
            Value::Null,
            -32600,
            &format!("Invalid request: {what}"),
        ));
    };
    // A response from the client (to a server request) has no method; pass it on.
    if !msg.contains_key("method") && (msg.contains_key("result") || msg.contains_key("error")) {
        return Verdict::Pass(line);
    }
    let id = msg.get("id").cloned();
    let id_ok = matches!(id, None | Some(Value::String(_)) | Some(Value::Number(_)));
    let problem = if msg.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        Some("\"jsonrpc\" must be \"2.0\"")
    } else if !msg.get("method").is_some_and(Value::is_string) {
        Some("\"method\" must be a string")
    } else if msg
        .get("params")
        .is_some_and(|p| !p.is_object() && !p.is_array())
    {
        Some("\"params\" must be an object or an array")
    } else if !id_ok {
        Some("\"id\" must be a string or a number")
    } else {
        None
    };
    match problem {
        // A notification (a method, no id) gets no answer, valid or not. Anything else
        // without an id (`{}`, a stray object) is answered with a null id: the sender may be
        // waiting for something.
        Some(_) if id.is_none() && msg.get("method").is_some_and(Value::is_string) => Verdict::Skip,
        Some(p) => Verdict::Answer(error(
            if id_ok {
                id.unwrap_or(Value::Null)
            } else {
                Value::Null
            },
            -32600,
            &format!("Invalid request: {p}"),
        )),
        None => Verdict::Pass(line),
    }
}

/// Runs the guard: reads `input` line by line, feeds valid lines to `server_in`, and writes
/// both the server's lines (from `server_out`) and its own answers to `output`.
pub async fn run(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
    mut server_in: impl AsyncWrite + Unpin + Send + 'static,
    server_out: impl AsyncRead + Unpin + Send + 'static,
) {
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(64);
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut line) = rx.recv().await {
            line.push(b'\n');
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    let from_server = {
        let tx = tx.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(server_out);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match lines.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                            buf.pop();
                        }
                        if tx.send(buf.clone()).await.is_err() {
                            break;
                        }
                    }
                }
            }
        })
    };
    let mut reader = BufReader::new(input);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            buf.pop();
        }
        match judge(&buf) {
            Verdict::Pass(line) => {
                let mut line = line.into_bytes();
                line.push(b'\n');
                if server_in.write_all(&line).await.is_err() {
                    break;
                }
                let _ = server_in.flush().await;
            }
            Verdict::Answer(line) => {
                if tx.send(line.into_bytes()).await.is_err() {
                    break;
                }
            }
            Verdict::Skip => {}
        }
    }
    // End of input: the server sees it too, and finishes what it has.
    let _ = server_in.shutdown().await;
    drop(server_in);
    let _ = from_server.await;
    drop(tx);
    let _ = writer.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &[u8]) -> Value {
        match judge(line) {
            Verdict::Answer(a) => serde_json::from_str(&a).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_request_with_an_id_is_answered() {
        assert_eq!(answer(b"not json")["error"]["code"], -32700);
        assert_eq!(
            answer(b"{\"id\":1,\"method\":\"x\" \xff}")["error"]["code"],
            -32700
        );
        let v = answer(br#"{"jsonrpc":"1.0","id":2,"method":"tools/list"}"#);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!(2), json!(-32600))
        );
        let v = answer(br#"[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]"#);
        assert_eq!(v["error"]["code"], -32600);
        let v = answer(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":"x"}"#);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!("a"), json!(-32600))
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"1.0","method":"note"}"#),
            Verdict::Skip
        );
        assert_eq!(judge(b"  "), Verdict::Skip);
        for shape in [&b"{}"[..], b"{\"id\":null}", b"{\"jsonrpc\":\"2.0\"}"] {
            let v = answer(shape);
            assert_eq!(
                (v["id"].clone(), v["error"]["code"].clone()),
                (Value::Null, json!(-32600))
            );
        }
        assert_eq!(
            answer(b"{\"jsonrpc\":\"2.0\",\0\"id\":1}")["error"]["code"],
            -32700
        );
    }

    #[test]
    fn valid_requests_pass_and_lone_surrogates_are_repaired() {
        let ok = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#;
        assert_eq!(
            judge(ok),
            Verdict::Pass(String::from_utf8(ok.to_vec()).unwrap())
        );
        let lone = br#"{"jsonrpc":"2.0","id":5,"method":"m","params":{"q":"a \ud800 b \\ud800 \ud83d\ude00"}}"#;
        let Verdict::Pass(repaired) = judge(lone) else {
            panic!("served")
        };
        let v: Value = serde_json::from_str(&repaired).unwrap();
        assert_eq!(v["params"]["q"], "a \u{fffd} b \\ud800 😀");
    }
}
