//! Real-format fake secrets (generated here, so no secret-looking literal is committed) and
//! look-alikes that are not secrets; precision and recall over both.

use super::*;

struct Gen(u64);

impl Gen {
    fn pick(&mut self, alphabet: &str, n: usize) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        (0..n)
            .map(|_| {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                chars[(self.0 % chars.len() as u64) as usize]
            })
            .collect()
    }
}

const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// (line of code, kind expected) — every one a secret.
fn secrets() -> Vec<(String, &'static str)> {
    let mut g = Gen(0x5EC2E7);
    let b64url = |g: &mut Gen, n| {
        g.pick(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
            n,
        )
    };
    vec![
        (
            format!("aws_access_key_id = \"AKIA{}\"", g.pick(UPPER_DIGITS, 16)),
            "aws_access_key",
        ),
        (
            format!("AWS_SECRET_ACCESS_KEY={}", g.pick(B64, 40)),
            "aws_secret_key",
        ),
        (
            format!("    token: \"ghp_{}\",", g.pick(ALNUM, 36)),
            "github_token",
        ),
        (
            format!("let pat = \"github_pat_{}\";", g.pick(ALNUM, 70)),
            "github_token",
        ),
        (
            format!("GITLAB_TOKEN = 'glpat-{}'", g.pick(ALNUM, 20)),
            "gitlab_token",
        ),
        (
            format!(
                "slack_bot = \"xoxb-{}-{}\"",
                g.pick("0123456789", 12),
                g.pick(ALNUM, 24)
            ),
            "slack_token",
        ),
        (
            format!(
                "url = \"https://hooks.slack.com/services/T{}/B{}/{}\"",
                g.pick(UPPER_DIGITS, 8),
                g.pick(UPPER_DIGITS, 8),
                g.pick(ALNUM, 24)
            ),
            "slack_webhook",
        ),
        (
            format!("stripe.api_key = \"sk_live_{}\"", g.pick(ALNUM, 24)),
            "stripe_key",
        ),
        (
            format!("const KEY = \"AIza{}\";", b64url(&mut g, 35)),
            "google_api_key",
        ),
        (
            format!(
                "auth = \"eyJ{}.eyJ{}.{}\"",
                b64url(&mut g, 20),
                b64url(&mut g, 40),
                b64url(&mut g, 43)
            ),
            "jwt",
        ),
        (
            format!(
                "DATABASE_URL = \"postgres://admin:{}@db.internal:5432/app\"",
                g.pick(ALNUM, 14)
            ),
            "connection_password",
        ),
        (
            format!("API_KEY = \"{}\"", g.pick("0123456789abcdef", 32)),
            "assigned_secret",
        ),
        (
            format!("client_secret: '{}'", g.pick(ALNUM, 24)),
            "assigned_secret",
        ),
        ("password = \"Tr0ub4dor&3x\"".to_string(), "assigned_secret"),
        (
            "DB_PASSWORD=\"hunter2!XYZ9\"".to_string(),
            "assigned_secret",
        ),
        (
            format!("self.auth_token = \"{}\"", g.pick(ALNUM, 30)),
            "assigned_secret",
        ),
        (
            format!(
                "-----BEGIN RSA PRIVATE KEY-----\n{}\n{}\n-----END RSA PRIVATE KEY-----",
                g.pick(B64, 64),
                g.pick(B64, 64)
            ),
            "private_key",
        ),
        (
            format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
                g.pick(B64, 70)
            ),
            "private_key",
        ),
    ]
}

/// Lines that look like secrets to a careless scanner but are not.
fn look_alikes() -> Vec<String> {
    let mut g = Gen(0xA11CE);
    vec![
        "version = \"1.2.3.4\"".into(),
        "api_key = os.environ[\"API_KEY\"]".into(),
        "token = \"your-token-here\"".into(),
        "password = \"changeme\"".into(),
        "secret_name = \"database_password\"".into(),
        "// Keys start with AKIA followed by sixteen characters".into(),
        format!("sha = \"{}\"", g.pick("0123456789abcdef", 40)),
        "token_url = \"https://oauth2.googleapis.com/token\"".into(),
        "const TOKEN_TYPE = \"Bearer\";".into(),
        format!("uuid = \"{}-{}\"", g.pick("0123456789abcdef", 8), g.pick("0123456789abcdef", 12)),
        "password_hash_algorithm = \"argon2id\"".into(),
        "url = \"postgres://localhost:5432/db\"".into(),
        "private_key_path = \"/etc/ssl/private/server.pem\"".into(),
        "// a JWT starts with eyJ".into(),
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----".into(),
        "jwt_secret_env = \"JWT_SECRET\"".into(),
        "password: ${DB_PASSWORD}".into(),
        "api_token = \"{{ vault_api_token }}\"".into(),
        "if token == \"\" { return }".into(),
        "let secretary = \"Margaret Hamilton\";".into(),
        "ip = \"192.168.100.200\"".into(),
        "TOKEN_LENGTH = \"32\"".into(),
    ]
}

#[test]
fn precision_and_recall_on_the_corpus() {
    let positives = secrets();
    let negatives = look_alikes();
    let mut tp = 0;
    let mut fn_ = Vec::new();
    for (text, kind) in &positives {
        let f = find(text);
        if f.len() == 1 && f[0].kind == *kind {
            tp += 1;
        } else {
            fn_.push((text.clone(), f));
        }
    }
    let mut fp = Vec::new();
    for text in &negatives {
        let f = find(text);
        if !f.is_empty() {
            fp.push((text.clone(), f));
        }
    }
    let recall = tp as f64 / positives.len() as f64;
    let precision = tp as f64 / (tp + fp.len()) as f64;
    eprintln!(
        "scrubber: recall {:.1}% ({tp}/{}), precision {:.1}% ({} false positives in {} look-alikes)",
        recall * 100.0,
        positives.len(),
        precision * 100.0,
        fp.len(),
        negatives.len()
    );
    assert!(fn_.is_empty(), "missed: {fn_:#?}");
    assert!(fp.is_empty(), "false positives: {fp:#?}");
}

#[test]
fn scrubbing_keeps_lines_and_hides_values() {
    let all: Vec<String> = secrets().into_iter().map(|(t, _)| t).collect();
    let text = format!("def connect():\n{}\n    return 1\n", all.join("\n"));
    let (clean, found) = scrub(&text);
    assert_eq!(found.len(), all.len());
    assert_eq!(
        clean.lines().count(),
        text.lines().count(),
        "line numbers do not move"
    );
    for f in &found {
        let secret = &text[f.start..f.end];
        for piece in secret.lines().filter(|l| l.len() >= 8) {
            assert!(!clean.contains(piece), "{piece} survived");
        }
    }
    assert!(
        clean.contains("[REDACTED:aws_access_key]") && clean.contains("[REDACTED:private_key]")
    );
    assert!(clean.contains("postgres://admin:[REDACTED:connection_password]@db.internal"));
    assert!(
        is_secret_file(".env.production")
            && is_secret_file("id_rsa")
            && is_secret_file("server.KEY")
    );
    assert!(!is_secret_file("environment.py"));
}
