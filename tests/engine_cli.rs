//! `fittokd inspect`, `query` and `expand` run as processes on repositories written to disk.

use fittok_e2e::{TempRepo, run, stdout};
use fittok_engine::tokens::{Encoding, count};

fn sample_repo() -> TempRepo {
    let repo = TempRepo::new("sample");
    repo.write(
        "app/config.py",
        "\"\"\"Configuration loading.\"\"\"\n\nimport json\n\n\ndef load_settings(path):\n    \"\"\"Read the YAML or JSON settings file at path and merge defaults.\"\"\"\n    with open(path) as fh:\n        data = json.load(fh)\n    return merge_defaults(data)\n\n\ndef merge_defaults(data):\n    merged = dict(DEFAULTS)\n    merged.update(data)\n    return merged\n\n\nDEFAULTS = {\"retries\": 3}\n",
    )
    .write(
        "app/http.py",
        "from .config import load_settings\n\n\nclass RetryingClient:\n    \"\"\"An HTTP client that retries failed requests with exponential backoff.\"\"\"\n\n    def __init__(self, settings_path):\n        self.settings = load_settings(settings_path)\n\n    def send(self, request):\n        for attempt in range(self.settings[\"retries\"]):\n            response = self._transport(request)\n            if response.ok:\n                return response\n            self.backoff(attempt)\n\n    def backoff(self, attempt):\n        delay = 2 ** attempt\n        return delay\n\n    def _transport(self, request):\n        raise NotImplementedError\n",
    )
    .write(
        "web/server.go",
        "package web\n\n// Serve starts the HTTP listener on the given port.\nfunc Serve(port int) error {\n\treturn listen(port)\n}\n\nfunc listen(port int) error { return nil }\n",
    )
    .write("tests/test_http.py", "from app.http import RetryingClient\n\ndef test_backoff():\n    assert RetryingClient('x').backoff(2) == 4\n")
    .write("README.md", "# Sample\n\nA sample repository.\n\n## Usage\n\nRun it.\n");
    repo
}

#[test]
fn inspect_reports_languages_skips_and_resolution() {
    let repo = sample_repo();
    repo.write("node_modules/dep/index.js", "function vendored() {}\n")
        .write("dist/bundle.js", "function built() {}\n")
        .write(
            "types/index.d.ts",
            "export declare function typed(): void;\n",
        )
        // A compiler's output beside its source: the declarations repeat `lib/emit.ts`.
        .write("lib/emit.ts", "export function emit(): void {}\n")
        .write("lib/emit.d.ts", "export declare function emit(): void;\n")
        .write("app/blob.py", b"\x00\x01\x02binary".as_slice())
        .write(
            "app/latin1.py",
            b"# caf\xe9\ndef latin():\n    pass\n".as_slice(),
        )
        .write("app/broken.py", "def ok():\n    pass\n\ndef broken(:\n")
        .write("ignored/skip.py", "def ignored(): pass\n")
        .write(".fittokignore", "ignored/\n")
        .write("big/huge.py", "x = 1\n".repeat(300_000))
        .write("web/app.min.js", "var a=1;".repeat(10));
    #[cfg(unix)]
    {
        let _ = std::os::unix::fs::symlink(repo.path(), repo.path().join("app/loop"));
        let _ = std::os::unix::fs::symlink("/etc/hostname", repo.path().join("app/outside.py"));
    }
    let out = run(
        "fittokd",
        &["inspect", "--json", repo.path().to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let py = &v["languages"]["python"];
    // config, http, test_http, latin1, broken — not blob (binary), huge, ignored, or the link.
    assert_eq!(py["files"], 5, "{v:#}");
    assert_eq!(py["lossy_files"], 1);
    assert!(
        py["diagnostics"].as_u64().unwrap() >= 2,
        "lossy + syntax error: {py}"
    );
    assert!(py["references"].as_u64().unwrap() > 0);
    assert!(py["resolved"].as_u64().unwrap() > 0);
    assert_eq!(py["skipped"]["binary"], 1);
    assert_eq!(py["skipped"]["too large"], 1);
    assert_eq!(v["languages"]["go"]["files"], 1);
    assert_eq!(
        v["languages"]["javascript"]["skipped"]["generated"], 1,
        "{v:#}"
    );
    let paths: Vec<&str> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert!(
        !paths
            .iter()
            .any(|p| p.contains("node_modules") || p.starts_with("dist/"))
    );
    // Hand-written declarations (no TypeScript source of their stem) are source; emitted
    // ones are skipped as generated.
    let ts = &v["languages"]["typescript"];
    assert_eq!(ts["files"], 2, "types/index.d.ts and lib/emit.ts: {v:#}");
    assert_eq!(ts["skipped"]["generated"], 1, "lib/emit.d.ts: {v:#}");
    assert!(paths.contains(&"lib/emit.d.ts"), "{paths:?}");
    #[cfg(unix)]
    assert!(
        paths.contains(&"app/outside.py"),
        "symlink reported: {paths:?}"
    );

    let text = run("fittokd", &["inspect", repo.path().to_str().unwrap()]);
    let text = stdout(&text);
    assert!(
        text.contains("python") && text.contains("resolved"),
        "{text}"
    );
}

#[test]
fn inspect_missing_path_is_a_clear_error() {
    let out = run("fittokd", &["inspect", "/nonexistent/fittok/repo"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not exist"), "{err}");
}

#[test]
fn query_finds_the_function_and_keeps_the_budget() {
    let repo = sample_repo();
    let path = repo.path().to_str().unwrap();
    let q = "How does the client retry failed requests with backoff?";
    for budget in [300usize, 800, 2000] {
        let out = run(
            "fittokd",
            &["query", path, q, "--budget", &budget.to_string()],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = stdout(&out);
        let tokens = count(Encoding::Cl100k, &text);
        assert!(tokens <= budget, "{tokens} > {budget}:\n{text}");
        assert!(text.contains("### app/http.py"), "budget {budget}:\n{text}");
        assert!(
            text.contains(&format!("{tokens} tokens")),
            "header reports the exact count"
        );
    }
    // Uncapped: the relevance cliff decides; the test file is demoted below the real code.
    let out = run("fittokd", &["query", path, q, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let first = v["nodes"][0]["path"].as_str().unwrap();
    assert_eq!(first, "app/http.py", "{v:#}");
    let names: Vec<&str> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    let unique: std::collections::HashSet<&&str> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "no node twice: {names:?}");
    assert_eq!(
        v["tokens"].as_u64().unwrap() as usize,
        count(Encoding::Cl100k, v["text"].as_str().unwrap())
    );
}

/// An excerpt of a decorated method keeps its decorator and its `def` line, indented as the
/// file has them (a user once met `@staticmethod ⋮ raise …` with the `def` nowhere).
#[test]
fn an_excerpt_of_a_decorated_method_keeps_its_def_line() {
    let repo = TempRepo::new("decorated");
    let filler: String = (0..80)
        .map(|i| format!("        part_{i} = files.get('field_{i}')\n"))
        .collect();
    repo.write(
        "upload/multipart.py",
        format!(
            "class MultipartEncoder:\n    @staticmethod\n    def encode_files(files, data):\n{filler}        \
             boundary = choose_multipart_boundary(files)\n        return boundary\n"
        ),
    );
    let path = repo.path().to_str().unwrap();
    let out = run(
        "fittokd",
        &[
            "query",
            path,
            "how is the multipart boundary chosen",
            "--budget",
            "300",
        ],
    );
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Cut to fit: part of the method's 83 lines stands for the rest.
    assert!(text.contains("⋮"), "{text}");
    assert!(text.contains("choose_multipart_boundary(files)"), "{text}");
    // A code line is `N<tab>line` on numbered lines, the line alone otherwise.
    let code = |want: &str| {
        text.lines().any(|l| {
            l == want
                || l.split_once('\t')
                    .is_some_and(|(n, r)| r == want && n.parse::<u32>().is_ok())
        })
    };
    assert!(code("    @staticmethod"), "{text}");
    assert!(code("    def encode_files(files, data):"), "{text}");
}

#[test]
fn tiny_budget_still_answers() {
    let repo = sample_repo();
    let out = run(
        "fittokd",
        &[
            "query",
            repo.path().to_str().unwrap(),
            "load settings file",
            "--budget",
            "200",
        ],
    );
    let text = stdout(&out);
    assert!(count(Encoding::Cl100k, &text) <= 200, "{text}");
    assert!(text.contains("load_settings"), "{text}");
}

#[test]
fn expand_returns_whole_nodes_and_rejects_unknown_ids() {
    let repo = sample_repo();
    let path = repo.path().to_str().unwrap();
    let out = run(
        "fittokd",
        &[
            "expand",
            "--repo",
            path,
            "app/http.py#RetryingClient.send",
            "app/config.py:6-10",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(text.contains("def send(self, request):"));
    assert!(text.contains("self.backoff(attempt)"));
    assert!(text.contains("6\tdef load_settings(path):"), "{text}");
    let bad = run("fittokd", &["expand", "--repo", path, "app/http.py#Nope"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown id"));
}

#[test]
fn savings_footer_and_budget_cap_from_the_environment() {
    let repo = sample_repo();
    // A big file around the answer, so that reading it whole costs more than the answer.
    let mut big = String::new();
    for i in 0..200 {
        big.push_str(&format!("def helper_{i}(x):\n    return x + {i}\n\n\n"));
    }
    big.push_str("def retry_backoff_client(attempt):\n    return 2 ** attempt\n");
    repo.write("app/big.py", big);
    let out = std::process::Command::new(fittok_e2e::bin("fittokd"))
        .args([
            "query",
            repo.path().to_str().unwrap(),
            "retry backoff client",
            "--semantic",
            "off",
        ])
        .env("FITTOK_SHOW_SAVINGS", "1")
        .env("FITTOK_MAX_BUDGET", "400")
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        count(Encoding::Cl100k, &text) <= 400,
        "FITTOK_MAX_BUDGET caps an uncapped call"
    );
    assert!(text.contains("tokens instead of"), "{text}");
}

/// The question every language's end-to-end test asks of its small shop repository.
const DISCOUNT_QUESTION: &str = "how is the discount for loyalty members computed?";

/// The JSON answer of `fittokd query` to [`DISCOUNT_QUESTION`] on `repo`, semantic ranking
/// off, with `extra` arguments.
fn ask_discount(repo: &TempRepo, extra: &[&str]) -> serde_json::Value {
    let path = repo.path().to_str().unwrap();
    let mut args = vec![
        "query",
        path,
        DISCOUNT_QUESTION,
        "--json",
        "--semantic",
        "off",
    ];
    args.extend_from_slice(extra);
    let out = run("fittokd", &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout(&out)).expect("json")
}

/// Asks [`DISCOUNT_QUESTION`] in process and checks the answer's first code block is
/// `first_file`'s and shows `first_code`, fenced as `fence`; and that `inspect` parsed `files`
/// files of language `lang` and resolved at least `resolved` references in it.
fn assert_right_first(
    repo: &TempRepo,
    first_file: &str,
    first_code: &str,
    fence: &str,
    lang: &str,
    files: u64,
    resolved: u64,
) {
    let path = repo.path().to_str().unwrap();
    let v = ask_discount(repo, &[]);
    let code = v["text"].as_str().unwrap();
    // The definition on its own, or inside its class shown whole on a repository this small.
    let first_block = code.split("### ").nth(1).unwrap_or_default();
    assert!(
        first_block.starts_with(first_file) && first_block.contains(first_code),
        "{code}"
    );
    assert!(code.contains(&format!("```{fence}\n")), "{code}");
    let out = run("fittokd", &["inspect", "--json", path]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let stats = &v["languages"][lang];
    assert_eq!(stats["files"], files, "{v:#}");
    assert!(stats["resolved"].as_u64().unwrap() >= resolved, "{stats}");
}

/// C#: the right method first, reached across files through namespaces.
#[test]
fn csharp_question_gets_the_right_method_first() {
    let repo = TempRepo::new("csharp");
    repo.write(
        "src/Shop/Checkout/CartService.cs",
        "using Shop.Pricing;\n\nnamespace Shop.Checkout;\n\n/// <summary>Turns a cart into an order.</summary>\npublic class CartService\n{\n    private readonly DiscountPolicy _discounts;\n\n    public CartService(DiscountPolicy discounts) { _discounts = discounts; }\n\n    public Order PlaceOrder(Cart cart)\n    {\n        var total = cart.Subtotal();\n        return new Order(total - _discounts.DiscountFor(cart));\n    }\n}\n",
    )
    .write(
        "src/Shop/Pricing/DiscountPolicy.cs",
        "namespace Shop.Pricing\n{\n    /// <summary>Decides how much a cart is discounted.</summary>\n    public class DiscountPolicy\n    {\n        /// <summary>The discount for a cart: 10 percent of the subtotal above 100, loyalty members 5 percent more.</summary>\n        public decimal DiscountFor(Cart cart)\n        {\n            var discount = cart.Subtotal() > 100m ? cart.Subtotal() * 0.10m : 0m;\n            if (cart.Customer.IsLoyaltyMember) { discount += cart.Subtotal() * 0.05m; }\n            return discount;\n        }\n    }\n}\n",
    )
    .write(
        "src/Shop/Cart.cs",
        "namespace Shop\n{\n    public class Cart\n    {\n        public Customer Customer { get; set; }\n        public decimal Subtotal() => 0m;\n    }\n}\n",
    )
    .write(
        "tests/Shop.Tests/DiscountPolicyTests.cs",
        "namespace Shop.Tests;\npublic class DiscountPolicyTests { public void DiscountForLoyaltyMembers() { new Shop.Pricing.DiscountPolicy().DiscountFor(null); } }\n",
    );
    assert_right_first(
        &repo,
        "src/Shop/Pricing/DiscountPolicy.cs",
        "public decimal DiscountFor(Cart cart)",
        "csharp",
        "csharp",
        4,
        3,
    );
}

/// Ruby: the right method first, across `require`d files.
#[test]
fn ruby_question_gets_the_right_method_first() {
    let repo = TempRepo::new("ruby");
    repo.write(
        "lib/shop/checkout.rb",
        "require \"shop/discounts\"\n\nmodule Shop\n  # Turns a cart into an order.\n  class Checkout\n    def initialize(discounts)\n      @discounts = Discounts.new\n    end\n\n    def place_order(cart)\n      total = cart.subtotal - @discounts.discount_for(cart)\n      Order.new(total)\n    end\n  end\nend\n",
    )
    .write(
        "lib/shop/discounts.rb",
        "module Shop\n  # Decides how much a cart is discounted.\n  class Discounts\n    # The discount for a cart: ten percent above 100, loyalty members five percent more.\n    def discount_for(cart)\n      discount = cart.subtotal > 100 ? cart.subtotal * 0.10 : 0\n      discount += cart.subtotal * 0.05 if cart.customer.loyalty_member?\n      discount\n    end\n  end\nend\n",
    )
    .write(
        "spec/shop/discounts_spec.rb",
        "require \"shop/discounts\"\n\nRSpec.describe Shop::Discounts do\n  it \"gives loyalty members more discount\" do\n    expect(Shop::Discounts.new.discount_for(nil)).to eq(0)\n  end\nend\n",
    );
    assert_right_first(
        &repo,
        "lib/shop/discounts.rb",
        "def discount_for(cart)",
        "ruby",
        "ruby",
        3,
        2,
    );
}

/// C: the right function first, its header included from another directory.
#[test]
fn c_question_gets_the_right_function_first() {
    let repo = TempRepo::new("clang");
    repo.write(
        "include/shop/discount.h",
        "#ifndef SHOP_DISCOUNT_H\n#define SHOP_DISCOUNT_H\n#include \"cart.h\"\ndouble discount_for(const struct cart *cart);\n#endif\n",
    )
    .write(
        "include/shop/cart.h",
        "struct cart { double subtotal; int loyalty_member; };\n",
    )
    .write(
        "src/discount.c",
        "#include <shop/discount.h>\n\n/* The discount for a cart: ten percent above 100, loyalty members five percent more. */\ndouble discount_for(const struct cart *cart) {\n  double discount = cart->subtotal > 100 ? cart->subtotal * 0.10 : 0;\n  if (cart->loyalty_member) {\n    discount += cart->subtotal * 0.05;\n  }\n  return discount;\n}\n",
    )
    .write(
        "src/checkout.c",
        "#include <shop/discount.h>\n\n/* Places an order for a cart. */\ndouble place_order(const struct cart *cart) {\n  return cart->subtotal - discount_for(cart);\n}\n",
    );
    assert_right_first(
        &repo,
        "src/discount.c",
        "double discount_for(const struct cart *cart)",
        "c",
        "c",
        4,
        1,
    );
    let out = run(
        "fittokd",
        &["inspect", "--json", repo.path().to_str().unwrap()],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("json");
    let c = &v["languages"]["c"];
    assert_eq!(
        c["imports_resolved"], c["imports"],
        "every include resolves: {c}"
    );
    // The definition comes with its prototype, from the header its callers include.
    assert_eq!(
        declarations(&repo),
        vec![(
            "include/shop/discount.h:4".to_string(),
            "double discount_for(const struct cart *cart);".to_string()
        )]
    );
}

/// The `declarations` of the answer to [`DISCOUNT_QUESTION`] at 4000 tokens: (`path:line`,
/// first line), checked against the answer's text.
fn declarations(repo: &TempRepo) -> Vec<(String, String)> {
    let v = ask_discount(repo, &["--budget", "4000"]);
    let text = v["text"].as_str().unwrap_or_default();
    let listed: Vec<(String, String)> = v["declarations"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|d| {
            let at = format!("{}:{}", d["path"].as_str().unwrap_or_default(), d["line"]);
            (
                at,
                d["text"][0].as_str().unwrap_or_default().trim().to_string(),
            )
        })
        .collect();
    for (at, first) in &listed {
        assert!(text.contains(&format!("- {at} {first}\n")), "{text}");
    }
    listed
}

/// Kotlin: the right function first, across packages.
#[test]
fn kotlin_question_gets_the_right_function_first() {
    let repo = TempRepo::new("kotlin");
    repo.write(
        "src/main/kotlin/shop/checkout/Checkout.kt",
        "package shop.checkout\n\nimport shop.pricing.Discounts\n\n/** Turns a cart into an order. */\nclass Checkout(private val discounts: Discounts) {\n    fun placeOrder(cart: Cart): Order {\n        val total = cart.subtotal - discounts.discountFor(cart)\n        return Order(total)\n    }\n}\n",
    )
    .write(
        "src/main/kotlin/shop/pricing/Discounts.kt",
        "package shop.pricing\n\n/** Decides how much a cart is discounted. */\nclass Discounts {\n    /** The discount for a cart: ten percent above 100, loyalty members five percent more. */\n    fun discountFor(cart: Cart): Double {\n        var discount = if (cart.subtotal > 100) cart.subtotal * 0.10 else 0.0\n        if (cart.customer.loyaltyMember) {\n            discount += cart.subtotal * 0.05\n        }\n        return discount\n    }\n}\n",
    )
    .write(
        "src/test/kotlin/shop/pricing/DiscountsTest.kt",
        "package shop.pricing\n\nclass DiscountsTest {\n    fun loyaltyMembersGetMore() {\n        Discounts().discountFor(Cart())\n    }\n}\n",
    );
    assert_right_first(
        &repo,
        "src/main/kotlin/shop/pricing/Discounts.kt",
        "fun discountFor(cart: Cart): Double",
        "kotlin",
        "kotlin",
        3,
        2,
    );
}

/// Scala: the right method first, across packages, with a companion object beside it.
#[test]
fn scala_question_gets_the_right_method_first() {
    let repo = TempRepo::new("scala");
    repo.write(
        "src/main/scala/shop/checkout/Checkout.scala",
        "package shop.checkout\n\nimport shop.pricing.Discounts\n\n/** Turns a cart into an order. */\nclass Checkout(discounts: Discounts) {\n  def placeOrder(cart: Cart): Order = {\n    val total = cart.subtotal - discounts.discountFor(cart)\n    Order(total)\n  }\n}\n",
    )
    .write(
        "src/main/scala/shop/pricing/Discounts.scala",
        "package shop.pricing\n\n/** Decides how much a cart is discounted. */\nclass Discounts {\n  /** The discount for a cart: ten percent above 100, loyalty members five percent more. */\n  def discountFor(cart: Cart): Double = {\n    var discount = if (cart.subtotal > 100) cart.subtotal * 0.10 else 0.0\n    if (cart.customer.loyaltyMember) {\n      discount += cart.subtotal * 0.05\n    }\n    discount\n  }\n}\n\nobject Discounts {\n  val Default = new Discounts()\n}\n",
    )
    .write(
        "src/test/scala/shop/pricing/DiscountsSpec.scala",
        "package shop.pricing\n\nclass DiscountsSpec {\n  def loyaltyMembersGetMore(): Unit = {\n    Discounts.Default.discountFor(Cart())\n  }\n}\n",
    );
    assert_right_first(
        &repo,
        "src/main/scala/shop/pricing/Discounts.scala",
        "def discountFor(cart: Cart): Double",
        "scala",
        "scala",
        3,
        2,
    );
}

/// PHP: the right method first, reached through a namespace `use`.
#[test]
fn php_question_gets_the_right_method_first() {
    let repo = TempRepo::new("php");
    repo.write(
        "src/Checkout/Checkout.php",
        "<?php\n\nnamespace Shop\\Checkout;\n\nuse Shop\\Pricing\\Discounts;\n\n/** Turns a cart into an order. */\nfinal class Checkout\n{\n    public function __construct(private Discounts $discounts) {}\n\n    public function placeOrder(Cart $cart): Order\n    {\n        $total = $cart->subtotal - $this->discounts->discountFor($cart);\n        return new Order($total);\n    }\n}\n",
    )
    .write(
        "src/Pricing/Discounts.php",
        "<?php\n\nnamespace Shop\\Pricing;\n\n/** Decides how much a cart is discounted. */\nclass Discounts\n{\n    /** The discount for a cart: ten percent above 100, loyalty members five percent more. */\n    public function discountFor(Cart $cart): float\n    {\n        $discount = $cart->subtotal > 100 ? $cart->subtotal * 0.10 : 0.0;\n        if ($cart->customer->loyaltyMember) {\n            $discount += $cart->subtotal * 0.05;\n        }\n        return $discount;\n    }\n}\n",
    )
    .write(
        "tests/Pricing/DiscountsTest.php",
        "<?php\n\nnamespace Shop\\Tests\\Pricing;\n\nuse Shop\\Pricing\\Discounts;\n\nclass DiscountsTest\n{\n    public function testLoyaltyMembersGetMore(): void\n    {\n        (new Discounts())->discountFor(new Cart());\n    }\n}\n",
    );
    assert_right_first(
        &repo,
        "src/Pricing/Discounts.php",
        "public function discountFor(Cart $cart): float",
        "php",
        "php",
        3,
        2,
    );
}

/// Swift: the right method first, in another target reached by `import`.
#[test]
fn swift_question_gets_the_right_method_first() {
    let repo = TempRepo::new("swift");
    repo.write(
        "Sources/Checkout/Checkout.swift",
        "import Pricing\n\n/// Turns a cart into an order.\nstruct Checkout {\n    let discounts: Discounts\n\n    func placeOrder(cart: Cart) -> Order {\n        let total = cart.subtotal - discounts.discountFor(cart: cart)\n        return Order(total: total)\n    }\n}\n",
    )
    .write(
        "Sources/Pricing/Discounts.swift",
        "/// Decides how much a cart is discounted.\npublic struct Discounts {\n    /// The discount for a cart: ten percent above 100, loyalty members five percent more.\n    public func discountFor(cart: Cart) -> Double {\n        var discount = cart.subtotal > 100 ? cart.subtotal * 0.10 : 0\n        if cart.customer.loyaltyMember {\n            discount += cart.subtotal * 0.05\n        }\n        return discount\n    }\n}\n",
    )
    .write(
        "Tests/PricingTests/DiscountsTests.swift",
        "import XCTest\n@testable import Pricing\n\nfinal class DiscountsTests: XCTestCase {\n    func testLoyaltyMembersGetMore() {\n        _ = Discounts().discountFor(cart: Cart())\n    }\n}\n",
    );
    assert_right_first(
        &repo,
        "Sources/Pricing/Discounts.swift",
        "public func discountFor(cart: Cart) -> Double",
        "swift",
        "swift",
        3,
        2,
    );
}

/// C++: the right member first, defined out of line from its class's header.
#[test]
fn cpp_question_gets_the_right_member_first() {
    let repo = TempRepo::new("cpp");
    repo.write(
        "include/shop/discounts.h",
        "#pragma once\n#include <string>\n\nnamespace shop {\n\nstruct Cart;\n\n/// Decides how much a cart is discounted.\nclass Discounts {\n public:\n  double discount_for(const Cart& cart) const;\n};\n\n}  // namespace shop\n",
    )
    .write(
        "src/discounts.cc",
        "#include \"shop/discounts.h\"\n#include \"shop/cart.h\"\n\nnamespace shop {\n\n// The discount for a cart: ten percent above 100, loyalty members five percent more.\ndouble Discounts::discount_for(const Cart& cart) const {\n  double discount = cart.subtotal > 100 ? cart.subtotal * 0.10 : 0;\n  if (cart.customer.loyalty_member) {\n    discount += cart.subtotal * 0.05;\n  }\n  return discount;\n}\n\n}  // namespace shop\n",
    )
    .write(
        "include/shop/cart.h",
        "#pragma once\nnamespace shop {\nstruct Customer { bool loyalty_member; };\nstruct Cart { double subtotal; Customer customer; };\n}\n",
    )
    .write(
        "src/checkout.cc",
        "#include \"shop/discounts.h\"\n#include \"shop/cart.h\"\n\nnamespace shop {\n\n/// Places an order for a cart.\ndouble place_order(const Cart& cart, const Discounts& discounts) {\n  return cart.subtotal - discounts.discount_for(cart);\n}\n\n}  // namespace shop\n",
    )
    .write(
        "test/discounts_test.cc",
        "#include \"shop/discounts.h\"\nTEST(Discounts, LoyaltyMembersGetMore) {\n  shop::Discounts d;\n  EXPECT_EQ(d.discount_for(shop::Cart{}), 0);\n}\n",
    );
    assert_right_first(
        &repo,
        "src/discounts.cc",
        "double Discounts::discount_for(const Cart& cart) const",
        "cpp",
        "cpp",
        5,
        2,
    );
    // The class declaring the method is small enough to be shown whole here, so its
    // declaration is not listed again.
    assert_eq!(declarations(&repo), vec![]);
}
