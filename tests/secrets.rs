//! Secrets never leave the daemon: the shapes a keyword-blind scanner misses, planted in code,
//! configuration and Markdown, are redacted in answers (text and JSON), expansions, the graph
//! page and the codebase map; secret files are never read; the pre-commit scanner finds them.

use fittok_e2e::{DaemonEnv, TempRepo, ok, stderr, stdout};

#[test]
fn secrets_never_leave_the_daemon() {
    let env = DaemonEnv::new("secrets");
    let repo = TempRepo::new("secrets");
    // Built at run time: no secret-looking literal in the repository.
    let key = format!("AKIA{}", "QZ7XK2M4P9WB3T6Y");
    let source = format!(
        "import boto3\n\n\ndef upload_report(path):\n    \"\"\"Upload the nightly report to the bucket.\"\"\"\n    client = boto3.client(\"s3\", aws_access_key_id=\"{key}\")\n    return client.upload_file(path, \"reports\", path)\n"
    );
    repo.write("jobs/report.py", &source)
        .write(".env.py", format!("SECRET = \"{key}\"\n"));
    let path = repo.path().to_str().unwrap();
    let ask = |env: &DaemonEnv| {
        ok(&env.fittok(&[
            "query",
            path,
            "how is the nightly report uploaded",
            "--budget",
            "800",
        ]))
    };
    let a = ask(&env);
    assert!(
        a.contains("def upload_report") && a.contains("[REDACTED:aws_access_key]"),
        "{a}"
    );
    assert!(!a.contains(&key), "the key left the daemon:\n{a}");
    let x = ok(&env.fittok(&["expand", "--repo", path, "jobs/report.py:1-7"]));
    assert!(!x.contains(&key) && x.contains("7\t"), "{x}");
    let j = ok(&env.fittok(&["query", path, "SECRET", "--json"]));
    assert!(!j.contains(".env.py"), "secret files are never indexed");
    // The pre-commit scanner.
    let scan = env.fittok(&[
        "scrub",
        repo.path().join("jobs/report.py").to_str().unwrap(),
    ]);
    assert_eq!(scan.status.code(), Some(1));
    assert!(
        stdout(&scan).contains("report.py:6 aws_access_key AKIA…(20)"),
        "{}",
        stdout(&scan)
    );
    let clean = env.fittok(&[
        "scrub",
        repo.path()
            .join("jobs/report.py")
            .to_str()
            .unwrap()
            .replace("report", "nothing")
            .as_str(),
    ]);
    // A file a pre-commit hook names but that is gone (a deletion) holds no secret: said,
    // skipped, and no finding. One that cannot be read exits 5, never "secrets found".
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert!(
        stderr(&clean).contains("does not exist; skipped"),
        "{}",
        stderr(&clean)
    );
    let unreadable = env.fittok(&["scrub", repo.path().join("jobs").to_str().unwrap()]);
    assert_eq!(unreadable.status.code(), Some(5), "{}", stderr(&unreadable));
    assert!(
        !stderr(&unreadable).contains("secrets found"),
        "{}",
        stderr(&unreadable)
    );
    // Off on request.
    let off = DaemonEnv::new("secrets-off").env("FITTOK_SCRUB", "false");
    let a = ask(&off);
    assert!(
        a.contains(&key),
        "FITTOK_SCRUB=false shows the source as it is"
    );
}

/// Every planted value, and the file it sits in: what must never appear in any output.
fn plant(repo: &TempRepo) -> Vec<&'static str> {
    repo.write(
        "app/settings.py",
        concat!(
            "\"\"\"Database and cache settings for the web app.\"\"\"\n\n",
            "DATABASES = {\n    'default': {\n        'NAME': 'app',\n        'PASSWORD': 'hunter2hunter2',\n    }\n}\n",
            "db_password = \"correct horse battery staple\"\n",
            "client_secret = \"Zq81vXc/7Lm2Pw9\"\n",
            "CACHE_URL = \"redis://:s3cretpass@cache:6379/0\"\n",
            "DATABASE_URL = \"postgresql://app:p@ssw0rd!@db.internal:5432/app\"\n\n\n",
            "def database_settings():\n    \"\"\"The database settings the app connects with.\"\"\"\n    return DATABASES['default']\n\n\n",
            // In a signature, which the parse cache stores.
            "def connect(user, db_password=\"hunter2hunter2\"):\n    return (user, db_password)\n",
        ),
    )
    .write(
        "src/main/java/app/Db.java",
        "package app;\n\n/** Opens the database connection. */\npublic class Db {\n    private static final String DB_PASS = \"Winter2024x\";\n\n    public String connectDatabase() {\n        return \"db:\" + DB_PASS.length();\n    }\n}\n",
    )
    .write(
        "docs/deploy.md",
        "# Deploying the database\n\nSet the token before deploying the database:\n\n```sh\nexport API_TOKEN=tok3nValue9\n```\n\nThe database settings in `config.yml`:\n\n```yaml\ndatabase:\n  user: app\n  password: yamlPassw0rd\n```\n",
    );
    vec![
        "hunter2hunter2",
        "correct horse battery staple",
        "Zq81vXc/7Lm2Pw9",
        "s3cretpass",
        "p@ssw0rd!",
        "Winter2024x",
        "tok3nValue9",
        "yamlPassw0rd",
    ]
}

#[test]
fn every_planted_shape_is_redacted_everywhere() {
    let env = DaemonEnv::new("secrets-shapes");
    let repo = TempRepo::new("secrets-shapes");
    let planted = plant(&repo);
    let path = repo.path().to_str().unwrap();
    let leaks = |what: &str, out: &str| {
        for p in &planted {
            assert!(!out.contains(p), "{what} shows {p:?}:\n{out}");
        }
    };
    let q = "database settings password connection deploy token";
    let answer = ok(&env.fittok(&["query", path, q, "--budget", "0"]));
    assert!(
        answer.contains("[REDACTED:") && answer.contains("database_settings"),
        "{answer}"
    );
    leaks("an answer", &answer);
    leaks(
        "a JSON answer",
        &ok(&env.fittok(&["query", path, q, "--json", "--budget", "0"])),
    );
    for id in [
        "app/settings.py:1-20",
        "src/main/java/app/Db.java:1-10",
        "docs/deploy.md:1-20",
    ] {
        let x = ok(&env.fittok(&["expand", "--repo", path, id]));
        assert!(x.contains("[REDACTED:"), "{id}: {x}");
        leaks("an expansion", &x);
    }
    leaks("the map", &ok(&env.fittok(&["map", path])));
    let page_dir = TempRepo::new("secrets-graph");
    let out = env
        .cmd("fittok")
        .args(["graph", path, "--query", q])
        .current_dir(page_dir.path())
        .output()
        .unwrap();
    ok(&out);
    for entry in std::fs::read_dir(page_dir.path()).unwrap().flatten() {
        leaks(
            "the graph page",
            &std::fs::read_to_string(entry.path()).unwrap_or_default(),
        );
    }
    // Nor does the cache on disk hold them (parses and snapshots are made from scrubbed text).
    ok(&env.fittok(&["daemon", "stop"]));
    let mut cached = 0;
    let snapshots = std::fs::read_dir(env.cache.join("snapshots"))
        .into_iter()
        .flatten()
        .flatten();
    for entry in std::fs::read_dir(&env.cache)
        .unwrap()
        .flatten()
        .chain(snapshots)
    {
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        cached += bytes.len();
        leaks("the cache", &String::from_utf8_lossy(&bytes));
    }
    assert!(cached > 0, "the cache was written");
}
