//! Secrets recognised by their own shape: provider key formats, private keys, tokens in
//! headers, and the credentials part of URLs. Each rule names the capture group that holds
//! the secret, so what surrounds it (a URL's user and host, a header's scheme) stays readable.

use std::sync::OnceLock;

use regex::Regex;

pub(super) struct Rule {
    pub kind: &'static str,
    pub re: Regex,
    /// The capture group holding the secret (0 = the whole match).
    pub group: usize,
    /// What the captured value must also pass (random-looking, not a placeholder).
    pub check: Check,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// The format alone is specific enough.
    None,
    /// A generic shape (a bearer token): the value must look random.
    Random,
    /// A URL's password: anything but a placeholder.
    NotPlaceholder,
}

pub(super) fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let rule = |kind, pattern: &str, group, check| {
            // Every pattern is a literal of this file, checked by the tests: a failure here is
            // a programming error, and the rule is left out rather than taking the daemon down.
            Regex::new(pattern).ok().map(|re| Rule {
                kind,
                re,
                group,
                check,
            })
        };
        use Check::*;
        [
            rule("private_key", r"-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----", 0, None),
            rule("aws_access_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[0-9A-Z]{16}\b", 0, None),
            rule("aws_secret_key", r#"(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})\b"#, 1, None),
            rule("github_token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{60,}\b", 0, None),
            rule("gitlab_token", r"\bgl(?:pat|ptt|rt|dt)-[A-Za-z0-9_\-]{20,}\b", 0, None),
            rule("slack_token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}\b", 0, None),
            rule("slack_webhook", r"https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+", 0, None),
            rule("discord_webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]{20,}", 0, None),
            rule("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}\b", 0, None),
            rule("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b", 0, None),
            rule("google_oauth_secret", r"\bGOCSPX-[A-Za-z0-9_\-]{28}\b", 0, None),
            rule("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}T3BlbkFJ[A-Za-z0-9_\-]{16,}\b|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}", 0, None),
            rule("anthropic_key", r"\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_\-]{80,}", 0, None),
            rule("huggingface_token", r"\bhf_[A-Za-z]{34}\b", 0, None),
            rule("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", 0, None),
            rule("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}", 0, None),
            rule("dockerhub_token", r"\bdckr_pat_[A-Za-z0-9_\-]{20,}", 0, None),
            rule("sendgrid_key", r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b", 0, None),
            rule("twilio_key", r"\bSK[0-9a-fA-F]{32}\b", 0, None),
            rule("azure_storage_key", r"(?i)AccountKey\s*=\s*([A-Za-z0-9+/]{86}==)", 1, None),
            rule("azure_client_secret", r"\b[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}\b", 0, None),
            rule("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", 0, None),
            rule("digitalocean_token", r"\bdo[por]_v1_[a-f0-9]{64}\b", 0, None),
            rule("square_token", r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,43}\b", 0, None),
            rule("telegram_bot_token", r"\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}\b", 0, None),
            rule("age_secret_key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b", 0, None),
            rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0, None),
            rule("bearer_token", r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9\-._~+/]{20,}=*)", 1, Random),
            rule("basic_auth", r"\bBasic\s+([A-Za-z0-9+/]{16,}={0,2})", 1, Random),
            // The password of any URL with a scheme: an empty user (`redis://:pw@host`) and a
            // password holding `@` or `:` (the last `@` before the host ends it).
            rule(
                "connection_password",
                r#"\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://[^\s:/@'"`<>]*:([^\s'"`<>/]+)@[A-Za-z0-9\-._~%\[\]]+"#,
                1,
                NotPlaceholder,
            ),
        ]
        .into_iter()
        .flatten()
        .collect()
    })
}
