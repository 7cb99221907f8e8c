//! Real-format fake secrets (generated here, so no secret-looking literal is committed) and
//! look-alikes that are not secrets; precision and recall over both.

use super::*;

struct Gen(crate::testing::Rng);

impl Gen {
    fn pick(&mut self, alphabet: &str, n: usize) -> String {
        let chars: Vec<char> = alphabet.chars().collect();
        (0..n).map(|_| *self.0.pick(&chars)).collect()
    }
}

const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// (line of code, kind expected) — every one a secret.
fn secrets() -> Vec<(String, &'static str)> {
    let mut g = Gen(crate::testing::Rng::new(0x5EC2E7));
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
        // Shapes a keyword-blind scanner misses: low entropy, passphrases, `/`, URLs with an
        // empty user or an `@` in the password, Java constants.
        (
            "    'PASSWORD': 'hunter2hunter2',".to_string(),
            "assigned_secret",
        ),
        (
            "db_password = \"correct horse battery staple\"".to_string(),
            "assigned_secret",
        ),
        (
            format!(
                "client_secret = \"{}/{}\"",
                g.pick(ALNUM, 12),
                g.pick(ALNUM, 12)
            ),
            "assigned_secret",
        ),
        (
            "CACHE_URL = \"redis://:s3cretpass@cache:6379/0\"".to_string(),
            "connection_password",
        ),
        (
            "url = \"postgresql://app:p@ss:w0rd@db.internal:5432/app\"".to_string(),
            "connection_password",
        ),
        (
            "    private static final String DB_PASS = \"Winter2024\";".to_string(),
            "assigned_secret",
        ),
        ("$password = 'letmein99';".to_string(), "assigned_secret"),
        (
            "define('DB_PASSWORD', 'qwerty123');".to_string(),
            "assigned_secret",
        ),
        (
            "builder.setPassword(\"tiger-Scott7\")".to_string(),
            "assigned_secret",
        ),
        (
            "let apiKey = \"k3y-for-prod\"".to_string(),
            "assigned_secret",
        ),
        (
            "password: str = \"swordfish42\"".to_string(),
            "assigned_secret",
        ),
        // Provider formats.
        (format!("NPM_TOKEN=npm_{}", g.pick(ALNUM, 36)), "npm_token"),
        (
            format!("password = pypi-AgEIcHlwaS5vcmc{}", b64url(&mut g, 60)),
            "pypi_token",
        ),
        (
            format!("docker login -p dckr_pat_{}", b64url(&mut g, 27)),
            "dockerhub_token",
        ),
        (
            format!(
                "conn = \"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={}==;\"",
                g.pick(B64, 86)
            ),
            "azure_storage_key",
        ),
        (
            format!("twilio_key = \"SK{}\"", g.pick("0123456789abcdef", 32)),
            "twilio_key",
        ),
        (
            format!(
                "SENDGRID = \"SG.{}.{}\"",
                b64url(&mut g, 22),
                b64url(&mut g, 43)
            ),
            "sendgrid_key",
        ),
        (
            format!(
                "client = OpenAI(api_key=\"sk-proj-{}T3BlbkFJ{}\")",
                b64url(&mut g, 40),
                b64url(&mut g, 40)
            ),
            "openai_key",
        ),
        (
            format!("ANTHROPIC = \"sk-ant-api03-{}AA\"", b64url(&mut g, 93)),
            "anthropic_key",
        ),
        (
            format!(
                "HF = \"hf_{}\"",
                g.pick("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 34)
            ),
            "huggingface_token",
        ),
        (
            format!("curl -H \"Authorization: Bearer {}\"", b64url(&mut g, 40)),
            "bearer_token",
        ),
    ]
}

/// Lines from configuration, shell and Markdown files (read with [`Dialect::Config`]), each a
/// secret: unquoted values are literals there.
fn config_secrets() -> Vec<(String, &'static str)> {
    let mut g = Gen(crate::testing::Rng::new(0xC0F16));
    vec![
        (
            format!("export API_TOKEN={}", g.pick(ALNUM, 24)),
            "assigned_secret",
        ),
        ("  password: hunter2hunter2".to_string(), "assigned_secret"),
        ("db.password=Sup3rS3cret!".to_string(), "assigned_secret"),
        ("smtp_pass = mailpass2024".to_string(), "assigned_secret"),
        (
            format!("AUTH_TOKEN={} ./deploy.sh", g.pick(ALNUM, 20)),
            "assigned_secret",
        ),
    ]
}

/// Lines that look like secrets to a careless scanner but are not.
fn look_alikes() -> Vec<String> {
    let mut g = Gen(crate::testing::Rng::new(0xA11CE));
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
        "password = getpass.getpass(\"Password: \")".into(),
        "    password: Optional[str] = None".into(),
        "  password: string;".into(),
        "token = self._tokens[0]".into(),
        "token = \"IDENT\"".into(),
        "if token == \"(\":".into(),
        "label = {\"password\": \"Passwort\"}".into(),
        "\"password\": \"Mot de passe\",".into(),
        "error = \"Invalid password, try again.\"".into(),
        "password = os.environ.get(\"DB_PASSWORD\", \"\")".into(),
        "secret_key = settings.SECRET_KEY".into(),
        "API_TOKEN: ${{ secrets.API_TOKEN }}".into(),
        "auth = \"basic\"".into(),
        "export GITHUB_TOKEN=$(gh auth token)".into(),
        "- `password`: the user's password, checked against the hash.".into(),
        "password = <your password>".into(),
        "REQUIRED_FIELDS = ('password', 'username')".into(),
        "token_type: bearer".into(),
        "pwd = \"/home/user/project\"".into(),
        "getPassword(\"default\")".into(),
        "auth_token: Option<String>,".into(),
        "url = \"postgres://user:${DB_PASSWORD}@localhost/app\"".into(),
        "git clone git@github.com:psf/requests.git".into(),
        "Bearer tokens are sent in the Authorization header of every request.".into(),
        "header = \"Bearer \" + token".into(),
        "keyboard = \"qwertyuiopasdfgh\"".into(),
        "    \"pbkdf2-password\": \"1.2.1\",".into(),
        "Never pass :data:`~flask.current_app` as sender to a signal.".into(),
        "    (\"PASS\", \"not-keyword\"),".into(),
        "fetch(url, { credentials: 'omit' })".into(),
        ".append(\", for type token: \").append(token.toString()).append('.');".into(),
        "auth: str = \"/auth\"".into(),
    ]
}

#[test]
fn precision_and_recall_on_the_corpus() {
    // Code lines are also secrets read as configuration; look-alikes are checked in both.
    let cases: Vec<(String, &str, Dialect)> = secrets()
        .into_iter()
        .flat_map(|(t, k)| [(t.clone(), k, Dialect::Code), (t, k, Dialect::Config)])
        .chain(
            config_secrets()
                .into_iter()
                .map(|(t, k)| (t, k, Dialect::Config)),
        )
        .collect();
    let negatives = look_alikes();
    let mut tp = 0;
    let mut missed = Vec::new();
    for (text, kind, dialect) in &cases {
        let f = find(text, *dialect);
        if f.len() == 1 && f[0].kind == *kind {
            tp += 1;
        } else {
            missed.push((text.clone(), dialect, f));
        }
    }
    let mut fp = Vec::new();
    for text in &negatives {
        for dialect in [Dialect::Code, Dialect::Config] {
            let f = find(text, dialect);
            if !f.is_empty() {
                fp.push((text.clone(), dialect, f));
            }
        }
    }
    let recall = tp as f64 / cases.len() as f64;
    let precision = tp as f64 / (tp + fp.len()).max(1) as f64;
    eprintln!(
        "scrubber: recall {:.1}% ({tp}/{}), precision {:.1}% ({} false positives in {} look-alikes × 2 dialects)",
        recall * 100.0,
        cases.len(),
        precision * 100.0,
        fp.len(),
        negatives.len()
    );
    assert!(missed.is_empty(), "missed: {missed:#?}");
    assert!(fp.is_empty(), "false positives: {fp:#?}");
}

#[test]
fn unquoted_values_are_code_in_source_files() {
    // `TOKEN=abc123def` in Python assigns a variable, not a literal.
    assert!(find("API_TOKEN=abc123def456", Dialect::Code).is_empty());
    assert_eq!(find("API_TOKEN=abc123def456", Dialect::Config).len(), 1);
}

#[test]
fn invalid_utf8_is_scrubbed_in_its_valid_runs() {
    let mut bytes = b"x = 1\n\xff\xfe\n".to_vec();
    bytes.extend_from_slice(format!("password = \"{}\"\n", "Tr0ub4dor&3x").as_bytes());
    let out = scrub_bytes("legacy.py", bytes.clone());
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("[REDACTED:assigned_secret]"), "{text}");
    assert!(!text.contains("Tr0ub4dor"));
    assert_eq!(&out[6..8], b"\xff\xfe", "the other bytes stay as they were");
}

#[test]
fn scrubbing_keeps_lines_and_hides_values() {
    let all: Vec<String> = secrets().into_iter().map(|(t, _)| t).collect();
    let text = format!("def connect():\n{}\n    return 1\n", all.join("\n"));
    let (clean, found) = scrub(&text, Dialect::Code);
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

#[test]
fn the_random_key_rule_finds_on_keyword_lines_what_it_finds_in_the_whole_text() {
    let mut g = Gen(crate::testing::Rng::new(7));
    let mut lines: Vec<String> = secrets().into_iter().map(|(t, _)| t).collect();
    lines.extend(look_alikes());
    lines.extend([
        // The value on the line after its name, and two on one line.
        format!("api_key_prod =\n    \"{}\"", g.pick(ALNUM, 24)),
        format!(
            "secret_v2 = \"{}\"; token_b = \"{}\"",
            g.pick(ALNUM, 20),
            g.pick(ALNUM, 20)
        ),
        format!("x = 1\nmy_access_key_id :\n\n  '{}'", g.pick(ALNUM, 30)),
    ]);
    let text = lines.join("\n");
    let found = find(&text, Dialect::Code);
    let rule = random_key_rule().unwrap();
    let mut whole_text = 0;
    for caps in rule.captures_iter(&text) {
        let Some(m) = caps.get(1).filter(|m| looks_random(m.as_str())) else {
            continue;
        };
        whole_text += 1;
        assert!(
            found
                .iter()
                .any(|f| f.start <= m.start() && m.end() <= f.end),
            "{} not found",
            m.as_str()
        );
    }
    assert!(whole_text >= 4, "the corpus exercises the rule");
}
